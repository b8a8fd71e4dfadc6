// SPDX-License-Identifier: Apache-2.0
// connection_state.cc - what a connection can tell of itself: whether and
// why it ended (Terminates, resets), a silent peer, the negotiated MPA
// parameters, TCP state, the path its data takes and the peer's address.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "ndkapp/softndk_entry.h"
#include "session_internal.h"

namespace softndk::tools {

bool Connection::peer_disconnected() const {
  std::lock_guard lk(events_->m);
  return events_->disconnected;
}

bool Connection::wait_disconnected(double seconds) const {
  std::unique_lock lk(events_->m);
  return events_->cv.wait_until(lk, deadline_in(seconds), [&] { return events_->disconnected; });
}

bool Connection::info(SOFTNDK_CONNECTION_INFO& out) const {
  if (&SoftNdkQueryConnectionInfo == nullptr) return false;
  return SoftNdkQueryConnectionInfo(conn_, &out) == STATUS_SUCCESS;
}

namespace {

// "LLP layer, MPA CRC error (0x00020002)" for a SOFTNDK_CONNECTION_INFO
// Terminate (layer<<16 | etype<<8 | code; RFC 5040 4.8 layers).
std::string terminate_text(ULONG code) {
  if (code == 0x00FFFFFF) return "a Terminate that could not be parsed";
  static const char* const kLayers[] = {"RDMAP", "DDP", "LLP"};
  ULONG layer = code >> 16;
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08X", static_cast<unsigned>(code));
  const char* name = SoftNdkTerminateName(code);
  std::string s = layer < 3 ? std::string(kLayers[layer]) + " layer" : "unknown layer";
  return s + ", " + (name ? name : "unknown error") + " (" + hex + ")";
}

}  // namespace

std::string Connection::end_cause() const {
  SOFTNDK_CONNECTION_INFO ci{};
  if (info(ci)) {
    // What this side sent explains the end best: it saw the error first.
    if (ci.LastTerminateSent != 0xFFFFFFFF)
      return "sent a Terminate: " + terminate_text(ci.LastTerminateSent);
    if (ci.LastTerminateReceived != 0xFFFFFFFF)
      return "the peer sent a Terminate: " + terminate_text(ci.LastTerminateReceived);
  }
  std::lock_guard lk(events_->m);
  if (events_->disconnected && events_->reason != 0) {
    auto st = static_cast<NTSTATUS>(events_->reason);
    if (st == STATUS_CONNECTION_RESET || st == STATUS_CONNECTION_ABORTED)
      return "connection reset (" + status_name(st) + ")";
    return "connection lost (" + status_name(st) + ")";
  }
  return "";
}

std::string with_end_cause(const std::string& what, const Connection* c) {
  std::string cause = c ? c->end_cause() : "";
  return cause.empty() ? what : what + ": " + cause;
}

std::string Connection::silence() const {
  SOFTNDK_PEER_ACTIVITY a{};
  a.Size = sizeof a;
  if (conn_ == nullptr || SoftNdkQueryPeerActivity(conn_, &a) != STATUS_SUCCESS) return "";
  return silent_peer_text(a);
}

void throw_if_silent(const std::string& what, const Connection* c) {
  if (c == nullptr) return;
  std::string s = c->silence();
  if (!s.empty()) throw PeerSilentError(what + ": " + s);
}

bool Connection::tcp_info(SOFTNDK_TCP_INFO& out) const {
  out = SOFTNDK_TCP_INFO{};
  out.Size = sizeof out;
  return SoftNdkQueryConnectionTcpInfo(conn_, &out) == STATUS_SUCCESS;
}

bool Connection::path_info(SOFTNDK_PATH_INFO& out) const {
  out = SOFTNDK_PATH_INFO{};
  out.Size = sizeof out;
  return SoftNdkQueryConnectionPath(conn_, &out) == STATUS_SUCCESS;
}

std::string Connection::path_text(double settle_seconds) const {
  SOFTNDK_PATH_INFO pi{};
  if (!path_info(pi)) return "";
  // The rendezvous runs beside the first messages; it ends within the
  // library's grace (docs/samehost.md), so a short bounded wait gives the
  // path the data takes rather than "probing".
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(settle_seconds);
  while (pi.Path == SOFTNDK_PATH_PROBING && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!path_info(pi)) return "";
  }
  const char* name = SoftNdkPathName(pi.Path);
  std::string s = name ? name : "unknown (" + std::to_string(pi.Path) + ")";
  if (pi.Path == SOFTNDK_PATH_PROBING) {
    char b[64];
    std::snprintf(b, sizeof b, " (no answer within %g s)", settle_seconds);
    return s + b;
  }
  const char* why = SoftNdkPathReasonName(pi.Reason);
  if (pi.Path == SOFTNDK_PATH_TCP && why != nullptr) s += std::string(" (") + why + ")";
  // The FPDU stream itself on the same-host ring (docs/samehost.md 4).
  if (pi.RingIn || pi.RingOut)
    s += pi.RingIn && pi.RingOut ? " (ring)" : pi.RingOut ? " (ring out)" : " (ring in)";
  // Shared memory (--shm-buffers) copied from a mapping, by either end.
  if (pi.MappedDescriptors > 0 || pi.SegmentDescriptorsSent > 0) s += " (mapped)";
  return s;
}

SockAddr Connection::peer_address() const {
  SockAddr s;
  ULONG len = sizeof s.ss;
  if (conn_->Dispatch->NdkGetPeerAddress(conn_, s.sa(), &len) == STATUS_SUCCESS)
    s.len = static_cast<socklen_t>(len);
  return s;
}
}  // namespace softndk::tools
