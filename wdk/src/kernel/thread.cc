// SPDX-License-Identifier: Apache-2.0
// System threads (PsCreateSystemThread), their handles and waitable thread
// objects, object references (softndk_wdk/io.h). A thread object is a
// dispatcher object signaled when the thread ends.
#include <pthread.h>

#include <atomic>
#include <mutex>
#include <new>
#include <unordered_map>

#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/bugcheck.h"
#include "kernel/device.h"
#include "kernel/dispatcher.h"
#include "kernel/registry_store.h"

using namespace softndk::wdk;

namespace {

struct KitThread {
  DISPATCHER_HEADER Header;  // first: the object is waitable
  std::atomic<int> refs{1};  // the handle's reference
  PKSTART_ROUTINE routine = nullptr;
  PVOID context = nullptr;
  const void* site = nullptr;
};

std::mutex g_mutex;
std::unordered_map<KitThread*, bool>& Threads() {  // -> still running
  static auto* m = new std::unordered_map<KitThread*, bool>;
  return *m;
}
thread_local KitThread* t_self = nullptr;

void Unref(KitThread* t) {
  if (t->refs.fetch_sub(1) != 1) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  Threads().erase(t);
  delete t;
}

void Exit(KitThread* t) {
  // No longer running before waiters wake: they may check for leaks next.
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    Threads()[t] = false;
  }
  {
    std::lock_guard<std::mutex> d(DispatcherLock());
    t->Header.SignalState = 1;
    DispatcherBroadcast();
  }
  Unref(t);  // the thread's own reference
}

void* Start(void* arg) {
  auto* t = static_cast<KitThread*>(arg);
  t_self = t;
  PrepareThreadForFaults();
  SetCurrentIrql(PASSIVE_LEVEL);
  t->routine(t->context);
  Exit(t);
  return nullptr;
}

KitThread* Lookup(PVOID p) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto* t = static_cast<KitThread*>(p);
  return Threads().count(t) ? t : nullptr;
}

ULONG ReportThreadLeaks() {
  std::lock_guard<std::mutex> lock(g_mutex);
  ULONG n = 0;
  for (auto& [t, running] : Threads()) {
    if (!running) continue;
    n++;
    Report(SoftNdkWdkRuleLeak, "PsCreateSystemThread", t->site,
           "system thread %p (routine %s) still running", static_cast<void*>(t),
           DescribeAddress(reinterpret_cast<const void*>(t->routine)).c_str());
  }
  return n;
}

const bool kRegistered = (RegisterLeakReporter("thread", ReportThreadLeaks), true);

}  // namespace

extern "C" {

NTSTATUS PsCreateSystemThread(PHANDLE ThreadHandle, ULONG DesiredAccess,
                              POBJECT_ATTRIBUTES ObjectAttributes, HANDLE ProcessHandle,
                              PCLIENT_ID ClientId, PKSTART_ROUTINE StartRoutine,
                              PVOID StartContext) {
  (void)DesiredAccess;
  (void)ObjectAttributes;
  (void)ProcessHandle;
  (void)kRegistered;
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(PASSIVE_LEVEL, "PsCreateSystemThread", site);
  if (ThreadHandle == nullptr || StartRoutine == nullptr) return STATUS_INVALID_PARAMETER;
  auto* t = new (std::nothrow) KitThread{};
  if (t == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
  t->Header.Type = kThreadObject;
  t->Header.Magic = kDispatcherMagic;
  t->Header.SignalState = 0;
  t->refs = 2;  // the handle and the running thread
  t->routine = StartRoutine;
  t->context = StartContext;
  t->site = site;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    Threads()[t] = true;
  }
  pthread_t tid;
  if (pthread_create(&tid, nullptr, Start, t) != 0) {
    std::lock_guard<std::mutex> lock(g_mutex);
    Threads().erase(t);
    delete t;
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  pthread_detach(tid);
  if (ClientId != nullptr) {
    ClientId->UniqueProcess = PsGetCurrentProcessId();
    ClientId->UniqueThread = t;
  }
  *ThreadHandle = t;
  return STATUS_SUCCESS;
}

NTSTATUS PsTerminateSystemThread(NTSTATUS ExitStatus) {
  (void)ExitStatus;
  if (t_self == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, "PsTerminateSystemThread", SOFTNDK_WDK_SITE(),
           "not called on a thread from PsCreateSystemThread");
    return STATUS_INVALID_PARAMETER;
  }
  Exit(t_self);
  pthread_exit(nullptr);
}

NTSTATUS ObReferenceObjectByHandle(HANDLE Handle, ACCESS_MASK DesiredAccess, PVOID ObjectType,
                                   KPROCESSOR_MODE AccessMode, PVOID* Object,
                                   PVOID HandleInformation) {
  (void)DesiredAccess;
  (void)ObjectType;
  (void)AccessMode;
  (void)HandleInformation;
  KitThread* t = Lookup(Handle);
  if (t == nullptr) return STATUS_INVALID_HANDLE;
  t->refs.fetch_add(1);
  *Object = t;
  return STATUS_SUCCESS;
}

NTSTATUS ZwClose(HANDLE Handle) {
  if (CloseRegistryHandle(Handle)) return STATUS_SUCCESS;  // registry_store.cc
  KitThread* t = Lookup(Handle);
  if (t == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, "ZwClose", SOFTNDK_WDK_SITE(),
           "%p is not an open handle", Handle);
    return STATUS_INVALID_HANDLE;
  }
  Unref(t);
  return STATUS_SUCCESS;
}

VOID ObDereferenceObject(PVOID Object) {
  if (KitThread* t = Lookup(Object)) {
    Unref(t);
    return;
  }
  ReleaseFileObject(Object);  // other objects are not reference counted here
}

}  // extern "C"
