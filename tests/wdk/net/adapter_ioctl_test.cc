// SPDX-License-Identifier: Apache-2.0
// adapter_ioctl_test.cc - softndk's adapter control driven with IRPs
// (softndk_wdk/ndk_ioctl.h): completion routines and IoStatus, buffer
// sizing, IoCancelIrp, close completing queued requests, and cancel races.
#include <softndk_wdk/ndk_ioctl.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "kit_fixture.h"

namespace wdknet {
namespace {

// One IRP sent to the adapter-control device and what its completion
// routine saw.
struct Call {
  PIRP irp = nullptr;
  std::atomic<int> completions{0};
  std::atomic<NTSTATUS> status{STATUS_PENDING};
  std::atomic<ULONG_PTR> info{0};
  alignas(8) UCHAR buffer[4096] = {};

  static NTSTATUS done(PDEVICE_OBJECT, PIRP irp, PVOID ctx) {
    auto* c = static_cast<Call*>(ctx);
    c->info = irp->IoStatus.Information;
    c->status = irp->IoStatus.Status;
    c->completions.fetch_add(1);
    return STATUS_MORE_PROCESSING_REQUIRED;  // the test frees the IRP
  }
  bool finished(int ms = 5000) {
    return eventually([&] { return completions.load() > 0; }, ms);
  }
  ~Call() {
    if (irp != nullptr && completions.load() > 0) IoFreeIrp(irp);
  }
};

class AdapterIoctl : public KitTest {
 protected:
  void SetUp() override {
    KitTest::SetUp();
    dev_ = SoftNdkWdkAdapterControlDevice();
    ASSERT_NE(dev_, nullptr);
  }

  // Sends `code` with `in` (in_len bytes) and room for out_len bytes.
  NTSTATUS send(Call& c, ULONG code, const void* in, ULONG in_len, ULONG out_len,
                UCHAR major = IRP_MJ_INTERNAL_DEVICE_CONTROL) {
    std::memcpy(c.buffer, in, in_len);
    c.irp = IoAllocateIrp(dev_->StackSize, FALSE);
    EXPECT_NE(c.irp, nullptr);
    PIO_STACK_LOCATION sl = IoGetNextIrpStackLocation(c.irp);
    sl->MajorFunction = major;
    sl->Parameters.DeviceIoControl.IoControlCode = code;
    sl->Parameters.DeviceIoControl.InputBufferLength = in_len;
    sl->Parameters.DeviceIoControl.OutputBufferLength = out_len;
    c.irp->AssociatedIrp.SystemBuffer = c.buffer;
    IoSetCompletionRoutine(c.irp, Call::done, &c, TRUE, TRUE, TRUE);
    return IoCallDriver(dev_, c.irp);
  }
  NTSTATUS send_adapter(Call& c, ULONG code, NDK_ADAPTER* a, ULONG out_len = 0) {
    SOFTNDK_IOCTL_ADAPTER in{a};
    return send(c, code, &in, sizeof in, out_len);
  }
  NTSTATUS send_port(Call& c, ULONG code, NDK_ADAPTER* a, ULONG out_len) {
    SOFTNDK_IOCTL_PORT in{};
    in.Adapter = a;
    in.PortNumber = SOFTNDK_PORT_NUMBER;
    return send(c, code, &in, sizeof in, out_len);
  }
  static void fail_adapter(NDK_ADAPTER* a) {
    SOFTNDK_FAULT f{SoftNdkFaultFatalAdapterError, 0, 0};
    ASSERT_EQ(SoftNdkInjectAdapterFault(a, &f), STATUS_SUCCESS);
  }

  PDEVICE_OBJECT dev_ = nullptr;
};

TEST_F(AdapterIoctl, DeviceIsFoundByName) {
  UNICODE_STRING name;
  RtlInitUnicodeString(&name, SOFTNDK_ADAPTER_CONTROL_DEVICE_NAME);
  PFILE_OBJECT file = nullptr;
  PDEVICE_OBJECT dev = nullptr;
  ASSERT_EQ(IoGetDeviceObjectPointer(&name, 0, &file, &dev), STATUS_SUCCESS);
  EXPECT_EQ(dev, dev_);
  if (file != nullptr) ObDereferenceObject(file);
}

TEST_F(AdapterIoctl, QueriesSizeTheirBuffers) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  Call small;
  send_adapter(small, IOCTL_SOFTNDK_QUERY_ADAPTER, a, 4);
  ASSERT_TRUE(small.finished());
  EXPECT_EQ(small.status.load(), STATUS_BUFFER_TOO_SMALL);
  ULONG need = static_cast<ULONG>(small.info.load());
  ASSERT_GT(need, sizeof(SOFTNDK_ADAPTER_ATTR) - sizeof(SOFTNDK_PORT_ATTR));
  ASSERT_LE(need, sizeof small.buffer);

  Call full;
  send_adapter(full, IOCTL_SOFTNDK_QUERY_ADAPTER, a, need);
  ASSERT_TRUE(full.finished());
  EXPECT_EQ(full.status.load(), STATUS_SUCCESS);
  EXPECT_EQ(full.info.load(), need);
  auto* attr = reinterpret_cast<SOFTNDK_ADAPTER_ATTR*>(full.buffer);
  EXPECT_EQ(attr->Size, need);
  EXPECT_EQ(attr->PortCount, 1u);
  EXPECT_EQ(attr->Info.RdmaTechnology, NdkiWarp);

  Call port_small, port;
  send_port(port_small, IOCTL_SOFTNDK_QUERY_PORT, a, 0);
  ASSERT_TRUE(port_small.finished());
  EXPECT_EQ(port_small.status.load(), STATUS_BUFFER_TOO_SMALL);
  ULONG port_need = static_cast<ULONG>(port_small.info.load());
  send_port(port, IOCTL_SOFTNDK_QUERY_PORT, a, port_need);
  ASSERT_TRUE(port.finished());
  EXPECT_EQ(port.status.load(), STATUS_SUCCESS);
  auto* pattr = reinterpret_cast<SOFTNDK_PORT_ATTR*>(port.buffer);
  EXPECT_EQ(pattr->IfIndex, lo_);
  EXPECT_STREQ(pattr->IfName, "lo");

  Call event_small;
  send_port(event_small, IOCTL_SOFTNDK_GET_PORT_EVENT, a, 2);
  ASSERT_TRUE(event_small.finished());
  EXPECT_EQ(event_small.status.load(), STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(event_small.info.load(), sizeof(ULONG));
}

// The way a driver usually sends one: IoBuildDeviceIoControlRequest, then
// wait on the event; the I/O manager copies the answer back.
TEST_F(AdapterIoctl, WorksWithIoBuildDeviceIoControlRequest) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  auto ask = [&](ULONG out_len, UCHAR* out, IO_STATUS_BLOCK* iosb) {
    KEVENT done;
    KeInitializeEvent(&done, NotificationEvent, FALSE);
    SOFTNDK_IOCTL_ADAPTER in{a};
    PIRP irp = IoBuildDeviceIoControlRequest(IOCTL_SOFTNDK_QUERY_ADAPTER, dev_, &in, sizeof in, out,
                                             out_len, TRUE, &done, iosb);
    ASSERT_NE(irp, nullptr);
    if (IoCallDriver(dev_, irp) == STATUS_PENDING) {
      KeWaitForSingleObject(&done, Executive, KernelMode, FALSE, nullptr);
    }
  };
  UCHAR out[4096];
  std::memset(out, 0xee, sizeof out);
  IO_STATUS_BLOCK iosb{};
  ask(8, out, &iosb);
  EXPECT_EQ(iosb.Status, STATUS_BUFFER_TOO_SMALL);
  ULONG need = static_cast<ULONG>(iosb.Information);
  EXPECT_GT(need, 8u);
  EXPECT_EQ(out[0], 0xee);  // an error copies nothing back
  ask(need, out, &iosb);
  EXPECT_EQ(iosb.Status, STATUS_SUCCESS);
  EXPECT_EQ(iosb.Information, need);
  EXPECT_EQ(reinterpret_cast<SOFTNDK_ADAPTER_ATTR*>(out)->Size, need);
  EXPECT_EQ(out[need], 0xee);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
}

TEST_F(AdapterIoctl, ModifiesAdapterAndPort) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  Call reset, set, clear, bad;
  SOFTNDK_IOCTL_MODIFY_ADAPTER ma{};
  ma.Adapter = a;
  ma.Flags = SOFTNDK_MODIFY_ADAPTER_COUNTERS_RESET;
  send(reset, IOCTL_SOFTNDK_MODIFY_ADAPTER, &ma, sizeof ma, 0);
  SOFTNDK_IOCTL_MODIFY_PORT mp{};
  mp.Adapter = a;
  mp.PortNumber = SOFTNDK_PORT_NUMBER;
  mp.Flags = SOFTNDK_MODIFY_PORT_SET_CAPS;
  mp.Modify.SetCapabilities = SOFTNDK_PORT_CAP_TRACE_OWNER;
  send(set, IOCTL_SOFTNDK_MODIFY_PORT, &mp, sizeof mp, 0);
  mp.Flags = SOFTNDK_MODIFY_PORT_CLEAR_CAPS;
  mp.Modify.ClearCapabilities = SOFTNDK_PORT_CAP_TRACE_OWNER;
  send(clear, IOCTL_SOFTNDK_MODIFY_PORT, &mp, sizeof mp, 0);
  mp.Flags = 0x80;
  send(bad, IOCTL_SOFTNDK_MODIFY_PORT, &mp, sizeof mp, 0);
  for (Call* c : {&reset, &set, &clear, &bad}) ASSERT_TRUE(c->finished());
  EXPECT_EQ(reset.status.load(), STATUS_SUCCESS);
  EXPECT_EQ(set.status.load(), STATUS_SUCCESS);
  EXPECT_EQ(clear.status.load(), STATUS_SUCCESS);
  EXPECT_EQ(bad.status.load(), STATUS_INVALID_PARAMETER);
}

TEST_F(AdapterIoctl, BadRequestsAreRefused) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  Call unknown, short_input, stranger, read;
  send_adapter(unknown, SOFTNDK_IOCTL(77), a);
  SOFTNDK_IOCTL_ADAPTER in{a};
  send(short_input, IOCTL_SOFTNDK_QUERY_ADAPTER, &in, 4, 64);
  int not_an_adapter = 0;
  send_adapter(stranger, IOCTL_SOFTNDK_GET_FATAL_EVENT,
               reinterpret_cast<NDK_ADAPTER*>(&not_an_adapter));
  send(read, IOCTL_SOFTNDK_QUERY_ADAPTER, &in, sizeof in, 64, IRP_MJ_READ);
  for (Call* c : {&unknown, &short_input, &stranger, &read}) ASSERT_TRUE(c->finished());
  EXPECT_EQ(unknown.status.load(), STATUS_INVALID_DEVICE_REQUEST);
  EXPECT_EQ(short_input.status.load(), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(stranger.status.load(), STATUS_INVALID_HANDLE);
  EXPECT_EQ(read.status.load(), STATUS_INVALID_DEVICE_REQUEST);
}

TEST_F(AdapterIoctl, FatalEventRequestsCompleteOnAFatalError) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  Call first, second, port;
  EXPECT_EQ(send_adapter(first, IOCTL_SOFTNDK_GET_FATAL_EVENT, a), STATUS_PENDING);
  EXPECT_EQ(send_adapter(second, IOCTL_SOFTNDK_GET_FATAL_EVENT, a), STATUS_PENDING);
  EXPECT_FALSE(first.finished(50));
  fail_adapter(a);
  ASSERT_TRUE(first.finished());
  ASSERT_TRUE(second.finished());
  EXPECT_EQ(first.status.load(), STATUS_SUCCESS);
  EXPECT_EQ(second.status.load(), STATUS_SUCCESS);
  Call late;
  send_adapter(late, IOCTL_SOFTNDK_GET_FATAL_EVENT, a);  // already failed: at once
  ASSERT_TRUE(late.finished());
  EXPECT_EQ(late.status.load(), STATUS_SUCCESS);
  send_port(port, IOCTL_SOFTNDK_GET_PORT_EVENT, a, sizeof(ULONG));
  ASSERT_TRUE(port.finished());
  EXPECT_EQ(port.status.load(), STATUS_FILE_FORCED_CLOSED);
  for (Call* c : {&first, &second, &late, &port}) EXPECT_EQ(c->completions.load(), 1);
}

TEST_F(AdapterIoctl, CancelCompletesAQueuedRequestWithCancelled) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  Call fatal, port;
  EXPECT_EQ(send_adapter(fatal, IOCTL_SOFTNDK_GET_FATAL_EVENT, a), STATUS_PENDING);
  EXPECT_EQ(send_port(port, IOCTL_SOFTNDK_GET_PORT_EVENT, a, sizeof(ULONG)), STATUS_PENDING);
  EXPECT_TRUE(IoCancelIrp(fatal.irp));
  ASSERT_TRUE(fatal.finished());
  EXPECT_EQ(fatal.status.load(), STATUS_CANCELLED);
  EXPECT_EQ(fatal.info.load(), 0u);
  EXPECT_FALSE(port.finished(20));  // the other one stays queued
  EXPECT_TRUE(IoCancelIrp(port.irp));
  ASSERT_TRUE(port.finished());
  EXPECT_EQ(port.status.load(), STATUS_CANCELLED);
  EXPECT_EQ(fatal.completions.load(), 1);
  EXPECT_EQ(port.completions.load(), 1);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
}

TEST_F(AdapterIoctl, ClosingTheAdapterCancelsEveryQueuedRequest) {
  NDK_ADAPTER* a = open_lo(0, false);
  ASSERT_NE(a, nullptr);
  Call f1, f2, p1;
  send_adapter(f1, IOCTL_SOFTNDK_GET_FATAL_EVENT, a);
  send_adapter(f2, IOCTL_SOFTNDK_GET_FATAL_EVENT, a);
  send_port(p1, IOCTL_SOFTNDK_GET_PORT_EVENT, a, sizeof(ULONG));
  ndk_.WskCloseNdkAdapter(prov_.Client, a);
  for (Call* c : {&f1, &f2, &p1}) {
    ASSERT_TRUE(c->finished());
    EXPECT_EQ(c->status.load(), STATUS_CANCELLED);
    EXPECT_EQ(c->completions.load(), 1);
  }
  Call after;
  send_adapter(after, IOCTL_SOFTNDK_GET_FATAL_EVENT, a);
  ASSERT_TRUE(after.finished());
  EXPECT_EQ(after.status.load(), STATUS_INVALID_HANDLE);
}

TEST_F(AdapterIoctl, IrpCloseIsBusyWhileObjectsAreOpenThenCancelsAndCloses) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  NDK_CQ* cq = make_cq(a);
  ASSERT_NE(cq, nullptr);
  Call fatal, busy;
  send_adapter(fatal, IOCTL_SOFTNDK_GET_FATAL_EVENT, a);
  send_adapter(busy, IOCTL_SOFTNDK_CLOSE_ADAPTER, a);
  ASSERT_TRUE(busy.finished());
  EXPECT_EQ(busy.status.load(), STATUS_DEVICE_BUSY);
  EXPECT_FALSE(fatal.finished(20));  // still queued, still cancellable
  close(cq);

  Call port, closed;
  send_port(port, IOCTL_SOFTNDK_GET_PORT_EVENT, a, sizeof(ULONG));
  send_adapter(closed, IOCTL_SOFTNDK_CLOSE_ADAPTER, a);
  ASSERT_TRUE(closed.finished());
  EXPECT_EQ(closed.status.load(), STATUS_SUCCESS);
  std::erase(adapters_, a);
  for (Call* c : {&fatal, &port}) {
    ASSERT_TRUE(c->finished());
    EXPECT_EQ(c->status.load(), STATUS_CANCELLED);
  }
  Call after;
  send_adapter(after, IOCTL_SOFTNDK_QUERY_ADAPTER, a, 64);
  ASSERT_TRUE(after.finished());
  EXPECT_EQ(after.status.load(), STATUS_INVALID_HANDLE);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
  ndk_.WskCloseNdkAdapter(prov_.Client, a);  // closed already: reported, not followed
  EXPECT_EQ(reports(SoftNdkWdkRuleInvalidParameter), 1u);
}

// ---- races (bounded) ---------------------------------------------------------

TEST_F(AdapterIoctl, CancelRightAfterQueueingAlwaysCompletesOnce) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  for (int i = 0; i < 300; ++i) {
    Call c;
    send_adapter(c, IOCTL_SOFTNDK_GET_FATAL_EVENT, a);
    std::thread t([&] { IoCancelIrp(c.irp); });
    t.join();
    ASSERT_TRUE(c.finished()) << "iteration " << i;
    EXPECT_EQ(c.status.load(), STATUS_CANCELLED);
    EXPECT_EQ(c.completions.load(), 1);
  }
}

TEST_F(AdapterIoctl, CancelRacingAFatalErrorCompletesOnce) {
  for (int i = 0; i < 40; ++i) {
    NDK_ADAPTER* a = open_lo(0, false);
    ASSERT_NE(a, nullptr);
    Call c;
    send_adapter(c, IOCTL_SOFTNDK_GET_FATAL_EVENT, a);
    std::thread canceller([&] { IoCancelIrp(c.irp); });
    std::thread failer([&] { fail_adapter(a); });
    canceller.join();
    failer.join();
    ASSERT_TRUE(c.finished()) << "iteration " << i;
    EXPECT_TRUE(c.status.load() == STATUS_SUCCESS || c.status.load() == STATUS_CANCELLED);
    EXPECT_EQ(c.completions.load(), 1);
    ndk_.WskCloseNdkAdapter(prov_.Client, a);
  }
}

TEST_F(AdapterIoctl, CancelRacingTheCloseCompletesOnce) {
  for (int i = 0; i < 40; ++i) {
    NDK_ADAPTER* a = open_lo(0, false);
    ASSERT_NE(a, nullptr);
    Call f, p, closing;
    send_adapter(f, IOCTL_SOFTNDK_GET_FATAL_EVENT, a);
    send_port(p, IOCTL_SOFTNDK_GET_PORT_EVENT, a, sizeof(ULONG));
    std::thread canceller([&] {
      IoCancelIrp(p.irp);
      IoCancelIrp(f.irp);
    });
    if (i % 2 == 0) {
      ndk_.WskCloseNdkAdapter(prov_.Client, a);
    } else {
      send_adapter(closing, IOCTL_SOFTNDK_CLOSE_ADAPTER, a);
      ASSERT_TRUE(closing.finished());
      EXPECT_EQ(closing.status.load(), STATUS_SUCCESS);
    }
    canceller.join();
    for (Call* c : {&f, &p}) {
      ASSERT_TRUE(c->finished()) << "iteration " << i;
      EXPECT_EQ(c->status.load(), STATUS_CANCELLED);
      EXPECT_EQ(c->completions.load(), 1);
    }
  }
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
}

}  // namespace
}  // namespace wdknet
