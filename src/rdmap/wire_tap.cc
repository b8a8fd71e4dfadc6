// SPDX-License-Identifier: Apache-2.0
// rdmap/wire_tap.cc - see wire_tap.h.
#include "rdmap/wire_tap.h"

#include <cstring>

namespace softndk::rdmap {

namespace {
sockaddr_storage storage(const tcp::SockAddr& a) {
  sockaddr_storage ss{};
  std::memcpy(&ss, &a.ss, a.len);
  return ss;
}
}  // namespace

WireTap::WireTap(std::shared_ptr<util::PcapFile> file, const tcp::Connection& conn,
                 std::span<const uint8_t> sent_rtr, bool from_start)
    : file_(std::move(file)),
      flow_(storage(conn.local()), storage(conn.peer()), conn.role() == tcp::Role::kInitiator),
      key_(util::flow_key(storage(conn.local()), storage(conn.peer()))),
      owner_(file_->claim(key_)),
      tx_live_(from_start),
      rx_live_(from_start) {
  if (!owner_) return;  // the other end records this connection
  const bool initiator = conn.role() == tcp::Role::kInitiator;
  flow_.handshake(*file_);
  // The Request goes initiator -> responder, the Reply back.
  if (!conn.mpa_request().empty()) flow_.data(*file_, initiator, conn.mpa_request());
  if (!conn.mpa_reply().empty()) flow_.data(*file_, !initiator, conn.mpa_reply());
  if (from_start && initiator && !sent_rtr.empty()) flow_.data(*file_, true, sent_rtr);
}

WireTap::~WireTap() {
  if (owner_) file_->unclaim(key_);
}

}  // namespace softndk::rdmap
