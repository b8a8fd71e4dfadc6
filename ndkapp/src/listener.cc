// SPDX-License-Identifier: Apache-2.0
// listener.cc - a listener whose connection requests queue up for a
// bounded next(); requests nobody took are refused when it closes.
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

#include "session_internal.h"

namespace softndk::tools {

struct Listener::Queue {
  std::mutex m;
  std::condition_variable cv;
  std::deque<NDK_CONNECTOR*> q;
  bool cancelled = false;
  bool closing = false;  // the listener goes: refuse what still comes
};

void Listener::on_connect(PVOID ctx, NDK_CONNECTOR* connector) {
  auto* q = static_cast<Queue*>(ctx);
  {
    std::lock_guard lk(q->m);
    if (!q->closing) {
      q->q.push_back(connector);
      q->cv.notify_all();
      return;
    }
  }
  connector->Dispatch->NdkCloseConnector(&connector->Header, nullptr, nullptr);
}

Listener::Listener(Adapter& a, const SockAddr& address) : a_(a), queue_(new Queue) {
  auto* p = new Pending;
  NDK_LISTENER* l = nullptr;
  NTSTATUS st = a.get()->Dispatch->NdkCreateListener(a.get(), &Listener::on_connect, queue_,
                                                     &Pending::on_create, p, &l);
  NDK_OBJECT_HEADER* obj = nullptr;
  st = Pending::finish(p, st, a.timeout(), &obj);
  if (st != STATUS_SUCCESS) {
    delete queue_;
    throw_status("NdkCreateListener", st);
  }
  listener_ = l ? l : reinterpret_cast<NDK_LISTENER*>(obj);
  p = new Pending;
  st =
      listener_->Dispatch->NdkListen(listener_, address.sa(), address.len, &Pending::on_request, p);
  st = Pending::finish(p, st, a.timeout());
  if (st != STATUS_SUCCESS) {
    release();
    throw ToolError(listen_failure_text(st, address.to_string()));
  }
  SockAddr bound;
  ULONG len = sizeof bound.ss;
  if (listener_->Dispatch->NdkGetLocalAddress(listener_, bound.sa(), &len) == STATUS_SUCCESS) {
    bound.len = static_cast<socklen_t>(len);
    port_ = bound.port();
  }
  if (port_ == 0) port_ = address.port();
}

void Listener::release() {
  if (!listener_) return;
  // Requests nobody took: close their connectors (which refuses them)
  // first, since a listener's close completes only once the connectors it
  // delivered are closed (NDKPI 6.1).
  std::deque<NDK_CONNECTOR*> left;
  {
    std::lock_guard lk(queue_->m);
    queue_->closing = true;
    left.swap(queue_->q);
  }
  for (NDK_CONNECTOR* c : left)
    close_object(&c->Header, c->Dispatch->NdkCloseConnector, a_.timeout());
  if (!close_object(&listener_->Header, listener_->Dispatch->NdkCloseListener, a_.timeout()))
    return;  // queue_ leaked: a connect event may still come
  delete queue_;
}

void Listener::cancel() {
  std::lock_guard lk(queue_->m);
  queue_->cancelled = true;
  queue_->cv.notify_all();
}

std::unique_ptr<Connection> Listener::next(Deadline deadline) {
  std::unique_lock lk(queue_->m);
  if (!queue_->cv.wait_until(lk, deadline, [&] { return !queue_->q.empty() || queue_->cancelled; }))
    return nullptr;
  if (queue_->cancelled) return nullptr;
  NDK_CONNECTOR* c = queue_->q.front();
  queue_->q.pop_front();
  return std::make_unique<Connection>(a_, c);
}
}  // namespace softndk::tools
