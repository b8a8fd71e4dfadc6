// SPDX-License-Identifier: Apache-2.0
// report.cc - gathering one adapter's facts with the public C API.
#include "report.h"

#include <arpa/inet.h>
#include <net/if.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

namespace ndkinfo {
namespace {

// The queries complete inline today, but the API allows STATUS_PENDING. A
// pending query is waited for at most kQueryWait; past that the tool reports
// STATUS_IO_TIMEOUT and leaves the request's memory (the buffer the provider
// writes and the request itself) to the completion, which may still come.
constexpr auto kQueryWait = std::chrono::seconds(10);

struct PendingQuery {
  SOFTNDK_REQUEST req{};
  std::vector<unsigned char> buf;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  // The completion's reference: dropped when the request completes.
  std::shared_ptr<PendingQuery> self;

  static void on_complete(SOFTNDK_REQUEST* req) {
    auto* q = static_cast<PendingQuery*>(req->Context);
    std::shared_ptr<PendingQuery> keep;
    {
      std::lock_guard lk(q->mu);
      q->done = true;
      keep.swap(q->self);  // freed after the unlock if the tool gave up
      q->cv.notify_all();
    }
  }
};

NTSTATUS finish(NTSTATUS status, const std::shared_ptr<PendingQuery>& q) {
  std::unique_lock lk(q->mu);
  if (status != STATUS_PENDING) {
    q->self.reset();  // completed inline: no callback will come
    return status;
  }
  if (!q->cv.wait_for(lk, kQueryWait, [&] { return q->done; })) return STATUS_IO_TIMEOUT;
  return q->req.Status;
}

void fail(AdapterReport& r, const char* call, NTSTATUS status) {
  if (r.failed_call.empty()) {
    r.failed_call = call;
    r.failed_status = status;
  }
}

void query_port(NDK_ADAPTER* adapter, AdapterReport& r) {
  // Start with room for the enumerated addresses; grow to the size the
  // provider reports if it has more.
  size_t size =
      sizeof(SOFTNDK_PORT_ATTR) + SOFTNDK_MAX_ADAPTER_ADDRESSES * sizeof(sockaddr_storage);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto q = std::make_shared<PendingQuery>();
    q->buf.resize(size);
    auto* attr = reinterpret_cast<SOFTNDK_PORT_ATTR*>(q->buf.data());
    q->req.Completion = PendingQuery::on_complete;
    q->req.Context = q.get();
    q->self = q;
    const NTSTATUS st =
        finish(SoftNdkQueryPort(adapter, SOFTNDK_PORT_NUMBER, size, attr, &q->req), q);
    if (st == STATUS_IO_TIMEOUT) {
      std::fprintf(stderr, "ndkinfo: SoftNdkQueryPort did not complete within %lld s\n",
                   static_cast<long long>(kQueryWait.count()));
    }
    if (st == STATUS_BUFFER_OVERFLOW && attr->Size > size) {
      size = attr->Size;
      continue;
    }
    if (!NT_SUCCESS(st)) return fail(r, "SoftNdkQueryPort", st);
    r.port = *attr;
    const size_t fixed = offsetof(SOFTNDK_PORT_ATTR, Addresses);
    const size_t room = (size - fixed) / sizeof(sockaddr_storage);
    for (size_t i = 0; i < attr->AddressCount && i < room; ++i) {
      r.port_addresses.push_back(address_text(attr->Addresses[i]));
    }
    return;
  }
  fail(r, "SoftNdkQueryPort", STATUS_BUFFER_OVERFLOW);
}

}  // namespace

std::string address_text(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2] = {};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof(buf));
    return buf;
  }
  if (ss.ss_family == AF_INET6) {
    const auto& sin6 = reinterpret_cast<const sockaddr_in6&>(ss);
    inet_ntop(AF_INET6, &sin6.sin6_addr, buf, sizeof(buf));
    std::string s = buf;
    if (sin6.sin6_scope_id != 0) {
      char name[IF_NAMESIZE] = {};
      s += "%";
      s += if_indextoname(sin6.sin6_scope_id, name) ? name : std::to_string(sin6.sin6_scope_id);
    }
    return s;
  }
  return "";
}

std::string status_text(NTSTATUS status) {
  if (const char* name = SoftNdkStatusName(status)) return name;
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08X", static_cast<unsigned>(status));
  return buf;
}

bool enumerate(std::vector<SOFTNDK_ADAPTER_DESC>& out, NTSTATUS* status) {
  // Interfaces may appear between the two calls; retry a few times.
  ULONG count = 0;
  NTSTATUS st = SoftNdkEnumerateAdapters(nullptr, &count);
  for (int attempt = 0; attempt < 5 && st == STATUS_BUFFER_TOO_SMALL; ++attempt) {
    out.assign(count, SOFTNDK_ADAPTER_DESC{});
    st = SoftNdkEnumerateAdapters(out.data(), &count);
  }
  *status = st;
  if (!NT_SUCCESS(st)) return false;
  out.resize(count);
  return true;
}

AdapterReport collect(const SOFTNDK_ADAPTER_DESC& desc) {
  AdapterReport r;
  r.desc = desc;
  for (ULONG i = 0; i < desc.AddressCount && i < SOFTNDK_MAX_ADAPTER_ADDRESSES; ++i) {
    r.addresses.push_back(address_text(desc.Addresses[i]));
  }
  NDK_ADAPTER* adapter = nullptr;
  const NDK_VERSION version{NDK_VERSION_MAJOR, NDK_VERSION_MINOR};
  NTSTATUS st = SoftNdkOpenAdapter(desc.IfName, version, nullptr, &adapter);
  if (!NT_SUCCESS(st) || adapter == nullptr) {
    fail(r, "SoftNdkOpenAdapter", st);
    return r;
  }
  NDK_ADAPTER_INFO info{};
  ULONG size = sizeof(info);
  st = adapter->Dispatch->NdkQueryAdapterInfo(adapter, &info, &size);
  if (NT_SUCCESS(st)) {
    r.info = info;
  } else {
    fail(r, "NdkQueryAdapterInfo", st);
  }
  query_port(adapter, r);
  SOFTNDK_BACKEND_INFO backend{};
  backend.Size = sizeof backend;
  st = SoftNdkQueryBackend(adapter, &backend);
  if (NT_SUCCESS(st)) {
    r.backend = backend;
  } else {
    fail(r, "SoftNdkQueryBackend", st);
  }
  SOFTNDK_COUNTERS counters{};
  st = SoftNdkQueryAdapterCounters(adapter, &counters);
  if (NT_SUCCESS(st)) {
    r.counters = counters;
  } else {
    fail(r, "SoftNdkQueryAdapterCounters", st);
  }
  // Only the fixed part is wanted (the MPA flags): a short buffer gives
  // STATUS_BUFFER_OVERFLOW with the leading bytes filled.
  alignas(SOFTNDK_ADAPTER_ATTR) unsigned char attr_buf[offsetof(SOFTNDK_ADAPTER_ATTR, Ports)] = {};
  SOFTNDK_REQUEST req{};
  st = SoftNdkQueryAdapter(adapter, sizeof attr_buf,
                           reinterpret_cast<SOFTNDK_ADAPTER_ATTR*>(attr_buf), &req);
  if (st == STATUS_SUCCESS || st == STATUS_BUFFER_OVERFLOW) {
    r.mpa_flags = reinterpret_cast<SOFTNDK_ADAPTER_ATTR*>(attr_buf)->MpaFlags;
    r.samehost =
        (reinterpret_cast<SOFTNDK_ADAPTER_ATTR*>(attr_buf)->Flags & SOFTNDK_ADAPTER_SAMEHOST) != 0;
  } else {
    fail(r, "SoftNdkQueryAdapter", st);
  }
  SoftNdkCloseAdapter(adapter);
  return r;
}

}  // namespace ndkinfo
