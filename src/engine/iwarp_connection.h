// SPDX-License-Identifier: Apache-2.0
// engine/iwarp_connection.h - the provider interface's connection classes
// over the TCP transport: each wraps one object of src/transport/tcp and
// starts the RDMAP stream (src/rdmap) when the object model hands a QP over.
#pragma once

#include <memory>
#include <vector>

#include "provider/provider.h"
#include "transport/tcp/connection.h"
#include "transport/tcp/connector.h"
#include "transport/tcp/listener.h"

namespace softndk::engine {

// What every connection of one provider shares: its settings.
struct IwarpSettings {
  tcp::ConnSettings conn;
  bool samehost = true;         // SOFTNDK_SAMEHOST
  int32_t silent_wake_ms = -1;  // provider::ProviderConfig::silent_wake_ms
};

class IwarpConnection final : public provider::Connection {
 public:
  IwarpConnection(std::shared_ptr<tcp::Connection> c, bool samehost, int32_t silent_wake_ms = 0);
  const provider::ConnectionFacts& facts() const override { return facts_; }
  const std::vector<uint8_t>& peer_private_data() const override;
  bool closed() const override { return c_->closed(); }
  void post(std::function<void()> fn) override;
  std::shared_ptr<provider::QpEngine> start(provider::QpHost* qp, bool initiator) override;
  void on_peer_close(std::function<void(NTSTATUS)> cb) override;
  void disconnect(std::function<void(NTSTATUS)> cb) override;
  void abort() override { c_->abort(); }
  bool tcp_info(SOFTNDK_TCP_INFO* out) const override;

 private:
  const std::shared_ptr<tcp::Connection> c_;
  const bool samehost_;
  const int32_t silent_wake_ms_;
  provider::ConnectionFacts facts_;
};

class IwarpActiveConnect final : public provider::ActiveConnect {
 public:
  explicit IwarpActiveConnect(std::shared_ptr<tcp::ActiveConnect> a) : a_(std::move(a)) {}
  void cancel() override { a_->cancel(); }

 private:
  const std::shared_ptr<tcp::ActiveConnect> a_;
};

class IwarpIncoming final : public provider::IncomingConnection {
 public:
  IwarpIncoming(std::shared_ptr<tcp::PendingConnection> p, bool samehost);
  const provider::ConnectionFacts& request() const override { return facts_; }
  const std::vector<uint8_t>& private_data() const override;
  NTSTATUS accept(provider::QpHost* qp, uint16_t ird, uint16_t ord,
                  std::vector<uint8_t> private_data,
                  std::function<void(NTSTATUS, std::shared_ptr<provider::Connection>)> cb) override;
  NTSTATUS reject(std::span<const uint8_t> private_data) override;
  void abandon() override { p_->abandon(); }

 private:
  const std::shared_ptr<tcp::PendingConnection> p_;
  const bool samehost_;
  provider::ConnectionFacts facts_;
};

class IwarpListener final : public provider::Listener {
 public:
  explicit IwarpListener(std::shared_ptr<tcp::Listener> l) : l_(std::move(l)) {}
  provider::Address local() const override { return l_->local(); }
  void pause(bool paused) override { l_->pause(paused); }
  void close() override { l_->close(); }

 private:
  const std::shared_ptr<tcp::Listener> l_;
};

class IwarpSharedEndpoint final : public provider::SharedEndpoint {
 public:
  explicit IwarpSharedEndpoint(std::shared_ptr<tcp::SharedEndpoint> e) : e_(std::move(e)) {}
  provider::Address local() const override { return e_->local(); }
  const std::shared_ptr<tcp::SharedEndpoint>& endpoint() const { return e_; }

 private:
  const std::shared_ptr<tcp::SharedEndpoint> e_;
};

}  // namespace softndk::engine
