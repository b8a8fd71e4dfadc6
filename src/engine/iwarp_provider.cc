// SPDX-License-Identifier: Apache-2.0
// engine/iwarp_provider.cc - the software iWARP engine behind the provider
// interface: the adapter's open parameters as connection settings, and
// connect / listen / shared endpoints over the TCP transport.
#include "engine/iwarp_provider.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "engine/iwarp_connection.h"
#include "rdmap/terminate.h"
#include "transport/samehost/samehost_segments.h"

namespace softndk::engine {

namespace {

// Listen backlog of every listener (the kernel's queue of finished TCP
// handshakes; the MPA exchange has its own bound, max_pending_handshakes).
constexpr int kBacklog = 128;

// The adapter's SOFTNDK_OPEN_PARAMETERS as transport settings.
tcp::ConnSettings conn_settings(const provider::ProviderConfig& c) {
  const SOFTNDK_OPEN_PARAMETERS& p = c.params;
  tcp::ConnSettings s;
  s.mpa.revision = static_cast<uint8_t>(p.MpaRevision == 0 ? 2 : p.MpaRevision);
  s.mpa.crc_required = (p.MpaFlags & SOFTNDK_MPA_CRC_REQUIRED) != 0;
  s.mpa.crc_strict_off = (p.MpaFlags & SOFTNDK_MPA_CRC_STRICT_OFF) != 0;
  // Unless a switch says otherwise, CRC on connections that leave the host.
  s.crc_off_host = (p.MpaFlags & (SOFTNDK_MPA_CRC_REQUIRED | SOFTNDK_MPA_CRC_STRICT_OFF |
                                  SOFTNDK_MPA_CRC_WHEN_ASKED)) == 0;
  // P2P by default: it is what gives NDK's connection semantics (the
  // accept waits for the peer's CompleteConnect). Opting out is explicit.
  s.mpa.peer_to_peer = (p.MpaFlags & SOFTNDK_MPA_NO_PEER_TO_PEER) == 0;
  uint8_t rtr = static_cast<uint8_t>((p.MpaFlags >> 4) & 0x7);
  if (rtr != 0) s.mpa.rtr_types = rtr;
  s.mpa.max_ird = static_cast<uint16_t>(c.info.MaxInboundReadLimit);
  s.mpa.max_ord = static_cast<uint16_t>(c.info.MaxOutboundReadLimit);
  if (p.ConnectTimeoutMs != 0) {
    s.connect_timeout = std::chrono::milliseconds(p.ConnectTimeoutMs);
    // NdkAccept fails with STATUS_IO_TIMEOUT when the peer does not call
    // NdkCompleteConnect: the same bound as the active side's.
    s.rtr_timeout = s.connect_timeout;
  }
  if (p.DisconnectTimeoutMs != 0)
    s.disconnect_timeout = std::chrono::milliseconds(p.DisconnectTimeoutMs);
  s.initiator_holdoff = std::chrono::milliseconds(c.mpa_holdoff_ms);
  s.congestion = c.tcp_congestion;
  return s;
}

class IwarpProvider final : public provider::Provider {
 public:
  explicit IwarpProvider(const provider::ProviderConfig& c)
      : engine_(*c.engine), settings_{conn_settings(c), c.samehost, c.silent_wake_ms} {}

  const char* name() const override { return "iwarp"; }

  NTSTATUS connect(provider::ConnectArgs args, std::function<void(provider::ConnectResult)> done,
                   std::shared_ptr<provider::ActiveConnect>* out) override {
    tcp::ConnectArgs a;
    a.dst = args.dst;
    a.src = args.src;
    if (args.shared) a.shared = static_cast<IwarpSharedEndpoint&>(*args.shared).endpoint();
    a.ird = args.ird;
    a.ord = args.ord;
    a.private_data = std::move(args.private_data);
    const bool sh = settings_.samehost;
    const int32_t wake = settings_.silent_wake_ms;
    std::shared_ptr<tcp::ActiveConnect> ac;
    NTSTATUS st = tcp::ActiveConnect::start(
        engine_.pick(), settings_.conn, std::move(a),
        [done = std::move(done), sh, wake](tcp::ConnectResult r) {
          provider::ConnectResult pr;
          pr.status = r.status;
          pr.rejected = r.mpa == mpa::Status::kRejected;
          pr.peer_private_data = std::move(r.peer_private_data);
          pr.setup_phase = r.phase == tcp::SetupPhase::kTcp   ? SOFTNDK_SETUP_TCP
                           : r.phase == tcp::SetupPhase::kMpa ? SOFTNDK_SETUP_MPA
                                                              : SOFTNDK_SETUP_AFTER_MPA;
          if (r.connection)
            pr.connection = std::make_shared<IwarpConnection>(r.connection, sh, wake);
          done(std::move(pr));
        },
        &ac);
    if (ac) *out = std::make_shared<IwarpActiveConnect>(std::move(ac));
    return st;
  }

  NTSTATUS listen(const provider::Address& addr,
                  std::function<void(std::shared_ptr<provider::IncomingConnection>)> on_request,
                  std::shared_ptr<provider::Listener>* out) override {
    const bool sh = settings_.samehost;
    std::shared_ptr<tcp::Listener> tl;
    NTSTATUS st = tcp::Listener::create(
        engine_, settings_.conn, addr, kBacklog,
        [on_request = std::move(on_request), sh](std::shared_ptr<tcp::PendingConnection> p) {
          on_request(std::make_shared<IwarpIncoming>(std::move(p), sh));
        },
        &tl);
    if (st == STATUS_SUCCESS) *out = std::make_shared<IwarpListener>(std::move(tl));
    return st;
  }

  NTSTATUS create_shared_endpoint(const provider::Address& addr,
                                  std::shared_ptr<provider::SharedEndpoint>* out) override {
    std::shared_ptr<tcp::SharedEndpoint> ep;
    NTSTATUS st = tcp::SharedEndpoint::create(addr, &ep);
    if (st == STATUS_SUCCESS) *out = std::make_shared<IwarpSharedEndpoint>(std::move(ep));
    return st;
  }

 private:
  util::Engine& engine_;
  const IwarpSettings settings_;
};

bool probe(const provider::ProviderConfig& c) { return c.engine != nullptr; }

NTSTATUS open(const provider::ProviderConfig& c, std::unique_ptr<provider::Provider>* out) {
  if (c.engine == nullptr) return STATUS_INVALID_PARAMETER;
  *out = std::make_unique<IwarpProvider>(c);
  return STATUS_SUCCESS;
}

}  // namespace

provider::ProviderEntry iwarp_entry() { return {"iwarp", &probe, &open}; }

bool iwarp_congestion_allowed(const std::string& name) { return tcp::congestion_allowed(name); }

int iwarp_shared_segment_alloc(size_t bytes, void** out) {
  return samehost::shared_segment_alloc(bytes, out);
}

int iwarp_shared_segment_free(void* address) { return samehost::shared_segment_free(address); }

const char* iwarp_terminate_code_name(uint32_t code) {
  if (code == 0xFFFFFFFFu || (code >> 16) > 2) return nullptr;
  wire::TerminateCode c;
  c.layer = static_cast<wire::TermLayer>(code >> 16);
  c.etype = static_cast<uint8_t>((code >> 8) & 0xFF);
  c.code = static_cast<uint8_t>(code & 0xFF);
  if (!wire::terminate_code_known(c)) return nullptr;
  return wire::terminate_code_name(c);
}

}  // namespace softndk::engine
