// SPDX-License-Identifier: Apache-2.0
// adapter.h - one open NDK adapter instance bound to one Linux interface.
//
// The adapter is the root of the object tree. It owns:
//   - the progress engine (util::Engine, EngineThreads reactors) on which
//     every asynchronous completion and event callback runs;
//   - the provider: the data-path engine behind the object model
//     (provider/provider.h), chosen by the probe list at open;
//   - the negotiated NDK version and the NDK_ADAPTER_INFO limits;
//   - the STag table (every MR/MW/privileged token of this instance);
//   - resource caps, counters, fault hooks and the fatal-error state;
//   - the registry of live objects and the quarantine of closed ones;
//   - the IRP-style control queues (fatal-event and port-event requests).
// Several opens of one interface give independent instances; only the
// exclusive port capabilities (port_caps.h) are shared between them. Like
// the miniport adapters of one RNIC, their objects work together: a QP of
// one instance may use another's CQs, be accepted or connected through
// another's listener or connector, and connect from another's shared
// endpoint (same_interface()).
#pragma once

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "ndk/netdev.h"
#include "ndk/object.h"
#include "ndk/provider_names.h"
#include "softndk/softndk.h"
#include "util/pcap_writer.h"
#include "util/reactor.h"

namespace softndk::ndk {

// Limits softndk reports in NDK_ADAPTER_INFO (docs/ndk-objects.md explains
// each choice).
struct Limits {
  static constexpr uint32_t kVendorId = 0x534e44;  // "SND": softndk's own id
  static constexpr uint32_t kDeviceId = 1;
  static constexpr uint64_t kMaxRegistrationSize = 1ull << 40;  // 1 TiB
  static constexpr uint64_t kMaxWindowSize = 1ull << 40;
  static constexpr uint32_t kFrmrPageCount = 256;  // FR MRs of 1 MiB are cheapest
  static constexpr uint32_t kMaxFrPages = 65536;   // 256 MiB per fast-register MR
  static constexpr uint32_t kMaxInitiatorSge = 16;
  static constexpr uint32_t kMaxReceiveSge = 16;
  static constexpr uint32_t kMaxReadSge = 1;                // iWARP: one sink STag per Read Request
  static constexpr uint32_t kMaxTransferLength = 1u << 30;  // 1 GiB
  static constexpr uint32_t kMaxInlineData = provider::kMaxInlineData;
  static constexpr uint32_t kMaxIrd = 128;  // siw's maximum
  static constexpr uint32_t kMaxOrd = 128;
  static constexpr uint32_t kMaxQueueDepth = 16384;
  static constexpr uint32_t kMaxSrqDepth = 16384;
  static constexpr uint32_t kMaxCqDepth = 65536;
  static constexpr uint32_t kLargeRequestThreshold = 16384;
  static constexpr uint32_t kMaxPrivateData = 252;  // 256 (siw) - 4 (MPA v2 IRD/ORD)
  static constexpr uint32_t kDefaultCap = 65536;
  static constexpr size_t kQuarantine = 1024;
};

// "QP", "CQ", ... for messages.
const char* object_type_name(NDK_OBJECT_TYPE t);

// The adapter's consumer-visible handle; same layout as Handle<Ndk> so that
// kind checks work across all handles. Allocated apart from the adapter so
// that it can outlive it in a small process-wide quarantine (double close).
struct AdapterHandle {
  NDK_ADAPTER ndk;
  std::atomic<uint32_t> magic;
  Adapter* self;
};

// The status for a trace file that could not be created (errno).
inline NTSTATUS trace_open_status(int err) {
  return err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOSPC
             ? STATUS_INSUFFICIENT_RESOURCES
             : STATUS_INVALID_PARAMETER;
}

class Adapter {
 public:
  // SoftNdkOpenAdapter.
  static NTSTATUS open(const char* name_or_address, NDK_VERSION version,
                       const SOFTNDK_OPEN_PARAMETERS* params, Adapter** out);
  ~Adapter();

  NDK_ADAPTER* ndk() { return &handle_->ndk; }
  // Handle validation with the statuses of check_handle() (object.h).
  static NTSTATUS from(const void* p, Adapter** out);

  // --- For every object and for the connection/data-path layers -----------
  NDK_VERSION version() const { return version_; }
  const NDK_ADAPTER_INFO& info() const { return info_; }
  const NetDevice& device() const { return dev_; }
  // True for this instance and for every other open of the same interface
  // (same ifindex in the same network namespace): their objects may be
  // combined, as on one RNIC. Objects of another interface may not.
  bool same_interface(const Adapter* other) const;
  util::Engine& engine() { return *engine_; }
  // The engine behind this instance (provider/provider.h; ndk/provider_list.h).
  provider::Provider& provider() { return *provider_; }
  // Which backend serves this instance, its device and why (ndkinfo;
  // docs/verbs.md, "Choosing the backend").
  struct BackendReport {
    ULONG backend = SOFTNDK_BACKEND_IWARP_SW;
    std::string device;  // "siw0 [siw, iWARP]"; empty for the software engine
    std::string why;
  };
  const BackendReport& backend() const { return backend_; }
  void post(util::Reactor::Task task) { engine_->primary().post(std::move(task)); }
  StagTable& stags() { return stags_; }
  bool dead() const { return fatal_.load(std::memory_order_acquire); }
  bool async_create() const { return flags_ & SOFTNDK_OPEN_FLAG_ASYNC_CREATE; }
  bool async_close() const { return flags_ & SOFTNDK_OPEN_FLAG_ASYNC_CLOSE; }
  bool fr_rekey() const { return flags_ & SOFTNDK_OPEN_FLAG_FR_REKEY; }
  const SOFTNDK_OPEN_PARAMETERS& params() const { return params_; }
  // SOFTNDK_MPA_HOLDOFF_MS at open (0 if unset): tcp::ConnSettings::
  // initiator_holdoff for this adapter's outgoing connections.
  uint32_t mpa_holdoff_ms() const { return mpa_holdoff_ms_; }
  // The first bound of a silent peer's wake-up (rdmap::StreamOptions::
  // wake_silent_after) in ms: -1 automatic (from the MPA round trip), 0 off.
  int32_t silent_wake_ms() const { return silent_wake_ms_; }
  // SOFTNDK_TCP_CONGESTION at open ("" if unset): tcp::ConnSettings::
  // congestion for this adapter's connections, both directions.
  const std::string& tcp_congestion() const { return tcp_congestion_; }
  // SOFTNDK_SAMEHOST (docs/samehost.md; on unless "off"): look for a
  // same-host peer after MPA and move the stream and payloads off TCP.
  bool samehost() const { return samehost_; }

  // Resource caps: reserve before creating, unreserve on failure (retire()
  // unreserves for published objects).
  bool reserve(Resource r);
  void unreserve(Resource r);

  // Object registry. publish() after construction; retire() is called by
  // Object once its close has fully completed.
  void publish(Object* o);
  void retire(Object* o);
  // Delivers a freshly created object: STATUS_SUCCESS with *out, or (async
  // create) STATUS_PENDING and NdkCreateCompletion on the engine.
  NTSTATUS deliver_created(Object* o, NDK_FN_CREATE_COMPLETION cb, void* ctx, void** out);
  // Ends an asynchronous request (RegisterMr, ResizeCq, ...) that finished
  // inline with `status`: returned as is, or, with ASYNC_CREATE and success,
  // STATUS_PENDING and the completion on the engine (holding `o`).
  NTSTATUS finish_request(Object* o, NDK_FN_REQUEST_COMPLETION cb, void* ctx, NTSTATUS status);

  // Counters (SOFTNDK_COUNTERS, counters.h). The connection layer bumps
  // these and the QP's own together; the data-path counts live in the QPs
  // and are summed here when read.
  Counters& counters() { return counters_; }
  void read_counters(SOFTNDK_COUNTERS* out);
  void reset_counters();  // SOFTNDK_MODIFY_ADAPTER_COUNTERS_RESET

  // Adapter-wide pcap trace (SOFTNDK_MODIFY_ADAPTER_TRACE): the file every
  // stream of this instance writes to, or null.
  std::shared_ptr<util::PcapFile> trace_file();

  // Fault hook: true when this registration must fail (FailNthRegistration).
  bool registration_fault();

  // --- Blocking close (SoftNdkCloseAdapter) and the control API -----------
  // Waits at most close_bound_ms() for the objects to finish closing; past
  // it, names each one still alive on stderr and returns with the adapter
  // kept (leaked) and its handle closed (softndk.h, SoftNdkCloseAdapter).
  void close_blocking();
  static constexpr uint32_t kCloseGraceMs = 5000;
  uint32_t close_bound_ms() const;
  NTSTATUS close_async(SOFTNDK_REQUEST* req);
  NTSTATUS get_fatal_event(SOFTNDK_REQUEST* req);
  NTSTATUS get_port_event(UCHAR port, SOFTNDK_REQUEST* req);
  NTSTATUS cancel_request(SOFTNDK_REQUEST* req);
  NTSTATUS query_adapter(SIZE_T size, SOFTNDK_ADAPTER_ATTR* attr, SOFTNDK_REQUEST* req);
  NTSTATUS query_port(UCHAR port, SIZE_T size, SOFTNDK_PORT_ATTR* attr, SOFTNDK_REQUEST* req);
  NTSTATUS modify_adapter(ULONG flags, const SOFTNDK_MODIFY_ADAPTER* m, SOFTNDK_REQUEST* req);
  NTSTATUS modify_port(UCHAR port, ULONG flags, const SOFTNDK_MODIFY_PORT* m, SOFTNDK_REQUEST* req);
  NTSTATUS inject_fault(const SOFTNDK_FAULT* fault);
  NTSTATUS query_info(NDK_ADAPTER_INFO* info, ULONG* size);

  // Port state changes (NetMonitor thread; tests call it directly).
  void on_net_event(NetEvent ev);
  // Fatal error: QPs to error and flushed, CQs failed, fatal requests done.
  void raise_fatal();

  size_t live_objects();

 private:
  Adapter() = default;
  void fill_port_attr(std::vector<unsigned char>* buf);
  void cancel_all_requests();
  void complete_request_async(SOFTNDK_REQUEST* req, NTSTATUS status, ULONG_PTR info);
  std::vector<Object*> snapshot_live();
  bool wait_until_empty();  // false: gave up after close_bound_ms(), reported

  AdapterHandle* handle_ = nullptr;
  NetDevice dev_;
  uint64_t netns_ = 0;  // inode of the network namespace the interface was found in
  NDK_VERSION version_{};
  SOFTNDK_OPEN_PARAMETERS params_{};
  uint32_t mpa_holdoff_ms_ = 0;
  int32_t silent_wake_ms_ = -1;
  std::string tcp_congestion_;
  BackendReport backend_;
  bool samehost_ = false;
  uint32_t flags_ = 0;
  NDK_ADAPTER_INFO info_{};
  std::unique_ptr<util::Engine> engine_;
  std::unique_ptr<provider::Provider> provider_;  // uses engine_
  StagTable stags_;
  std::atomic<uint32_t> used_[static_cast<int>(Resource::kCount)]{};
  uint32_t caps_[static_cast<int>(Resource::kCount)]{};
  std::atomic<bool> fatal_{false};
  std::atomic<uint32_t> fail_registration_in_{0};  // 0: no fault armed
  Counters counters_;  // data-path counts: those of retired QPs (objects_mu_)
  // Data-path counts of the QPs live at the last reset, subtracted when the
  // counters are read (objects_mu_; only the four RDMA fields are used).
  SOFTNDK_COUNTERS data_path_base_{};
  std::mutex trace_mu_;
  std::shared_ptr<util::PcapFile> trace_;  // trace_mu_
  uint64_t monitor_id_ = 0;
  std::atomic<uint32_t> port_state_{SoftNdkPortStateDown};

  std::mutex objects_mu_;  // guards the three below
  std::unordered_set<Object*> live_;
  std::deque<std::unique_ptr<Object>> quarantine_;
  bool shutting_down_ = false;  // no quarantine eviction during close
  std::condition_variable objects_cv_;

  std::mutex ctl_mu_;  // guards the control queues
  std::deque<SOFTNDK_REQUEST*> fatal_reqs_;
  std::deque<SOFTNDK_REQUEST*> port_reqs_;
  bool closed_ = false;                    // close_async succeeded: no new requests
  std::atomic<uint32_t> ctl_inflight_{0};  // posted request completions
};

}  // namespace softndk::ndk
