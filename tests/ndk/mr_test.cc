// SPDX-License-Identifier: Apache-2.0
// mr_test.cc - NdkCreateMr/RegisterMr/DeregisterMr/InitializeFastRegisterMr,
// tokens, MWs, the privileged token and NdkBuildLAM.
#include <vector>

#include "ndk_fixture.h"

namespace ndktest {
namespace {

using MrTest = NdkTest;
using softndk::ndk::StagInfo;

TEST_F(MrTest, RegisterGivesEqualTokensAndATableEntry) {
  NDK_PD* p = pd();
  NDK_MR* m = mr(p);
  std::vector<char> buf(8192);
  MDL mdl{nullptr, buf.data(), buf.size()};
  ASSERT_EQ(m->Dispatch->NdkRegisterMr(
                m, &mdl, buf.size(), NDK_MR_FLAG_ALLOW_REMOTE_READ | NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
                nullptr, nullptr),
            STATUS_SUCCESS);
  UINT32 local = m->Dispatch->NdkGetLocalTokenFromMr(m);
  UINT32 remote = m->Dispatch->NdkGetRemoteTokenFromMr(m);
  EXPECT_EQ(local, remote);
  EXPECT_NE(local >> 8, 0u);
  StagInfo i;
  ASSERT_TRUE(adapter()->stags().lookup(remote, &i));
  EXPECT_TRUE(i.valid);
  EXPECT_EQ(i.base, reinterpret_cast<uintptr_t>(buf.data()));
  EXPECT_EQ(i.length, buf.size());
  EXPECT_TRUE(i.access & softndk::ndk::kAccessRemoteRead);
  EXPECT_FALSE(i.access & softndk::ndk::kAccessRemoteWrite);
  // A wrong key misses.
  EXPECT_FALSE(adapter()->stags().lookup(remote ^ 1, &i));
}

TEST_F(MrTest, ReRegistrationChangesKeyAndOldTokenMisses) {
  NDK_PD* p = pd();
  NDK_MR* m = mr(p);
  char buf[64];
  MDL mdl{nullptr, buf, sizeof buf};
  ASSERT_EQ(m->Dispatch->NdkRegisterMr(m, &mdl, sizeof buf, 0, nullptr, nullptr), STATUS_SUCCESS);
  UINT32 t1 = m->Dispatch->NdkGetRemoteTokenFromMr(m);
  ASSERT_EQ(m->Dispatch->NdkDeregisterMr(m, nullptr, nullptr), STATUS_SUCCESS);
  StagInfo i;
  ASSERT_TRUE(adapter()->stags().lookup(t1, &i));
  EXPECT_FALSE(i.valid);
  ASSERT_EQ(m->Dispatch->NdkRegisterMr(m, &mdl, sizeof buf, 0, nullptr, nullptr), STATUS_SUCCESS);
  UINT32 t2 = m->Dispatch->NdkGetRemoteTokenFromMr(m);
  EXPECT_EQ(t1 >> 8, t2 >> 8);
  EXPECT_NE(t1 & 0xff, t2 & 0xff);
  EXPECT_FALSE(adapter()->stags().lookup(t1, &i));
}

TEST_F(MrTest, RegisterInvalidParameters) {
  NDK_PD* p = pd();
  NDK_MR* m = mr(p);
  char buf[256];
  MDL tail{nullptr, buf + 200, 56};
  MDL gap{&tail, buf, 100};  // 100..200 missing: not virtually contiguous
  EXPECT_EQ(m->Dispatch->NdkRegisterMr(m, &gap, 156, 0, nullptr, nullptr),
            STATUS_INVALID_PARAMETER);
  MDL one{nullptr, buf, 128};
  EXPECT_EQ(m->Dispatch->NdkRegisterMr(m, &one, 129, 0, nullptr, nullptr),
            STATUS_INVALID_PARAMETER);  // longer than the chain
  EXPECT_EQ(m->Dispatch->NdkRegisterMr(m, &one, 0, 0, nullptr, nullptr), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(m->Dispatch->NdkRegisterMr(m, nullptr, 8, 0, nullptr, nullptr),
            STATUS_INVALID_PARAMETER);
  MDL zero{nullptr, nullptr, 128};
  EXPECT_EQ(m->Dispatch->NdkRegisterMr(m, &zero, 8, 0, nullptr, nullptr),
            STATUS_INVALID_PARAMETER);  // zero-based VAs are not supported
  EXPECT_EQ(m->Dispatch->NdkRegisterMr(m, &one, 8, 0x100, nullptr, nullptr),
            STATUS_INVALID_PARAMETER);  // unknown flag
  // Still registrable with good arguments. NDK_MR_FLAG_RDMA_READ_SINK must
  // not fail the request on an adapter that reports
  // RDMA_READ_SINK_NOT_REQUIRED (NdkRegisterMr's remarks).
  EXPECT_EQ(m->Dispatch->NdkRegisterMr(m, &one, 128, NDK_MR_FLAG_RDMA_READ_SINK, nullptr, nullptr),
            STATUS_SUCCESS);
}

TEST_F(MrTest, ContiguousChainRegisters) {
  NDK_PD* p = pd();
  NDK_MR* m = mr(p);
  char buf[300];
  MDL c{nullptr, buf + 200, 100};
  MDL b{&c, buf + 100, 100};
  MDL a{&b, buf, 100};
  ASSERT_EQ(
      m->Dispatch->NdkRegisterMr(m, &a, 300, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, nullptr, nullptr),
      STATUS_SUCCESS);
  StagInfo i;
  ASSERT_TRUE(adapter()->stags().lookup(m->Dispatch->NdkGetRemoteTokenFromMr(m), &i));
  EXPECT_EQ(i.length, 300u);
  EXPECT_TRUE(i.access & softndk::ndk::kAccessRemoteWrite);
  EXPECT_TRUE(i.access & softndk::ndk::kAccessLocalWrite);  // remote write implies local write
}

TEST_F(MrTest, RegisterTwiceOrOnFastMrIsInvalidDeviceRequest) {
  NDK_PD* p = pd();
  NDK_MR* m = mr(p);
  NDK_MR* f = mr(p, true);
  char buf[64];
  MDL mdl{nullptr, buf, sizeof buf};
  EXPECT_EQ(f->Dispatch->NdkRegisterMr(f, &mdl, 64, 0, nullptr, nullptr),
            STATUS_INVALID_DEVICE_REQUEST);
  ASSERT_EQ(m->Dispatch->NdkRegisterMr(m, &mdl, 64, 0, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(m->Dispatch->NdkRegisterMr(m, &mdl, 64, 0, nullptr, nullptr),
            STATUS_INVALID_DEVICE_REQUEST);
}

TEST_F(MrTest, DeregisterUnregisteredIsInvalidDeviceRequest) {
  NDK_PD* p = pd();
  NDK_MR* m = mr(p);
  EXPECT_EQ(m->Dispatch->NdkDeregisterMr(m, nullptr, nullptr), STATUS_INVALID_DEVICE_REQUEST);
}

TEST_F(MrTest, AsyncRegisterAndDeregisterPend) {
  open(SOFTNDK_OPEN_FLAG_ASYNC_CREATE);
  NDK_PD* p = pd();
  NDK_MR* m = nullptr;
  ASSERT_EQ(softndk::create_and_wait<NDK_MR>(
                [&](auto cb, auto ctx, NDK_MR** o) {
                  return p->Dispatch->NdkCreateMr(p, FALSE, cb, ctx, o);
                },
                &m),
            STATUS_SUCCESS);
  char buf[64];
  MDL mdl{nullptr, buf, sizeof buf};
  Waiter w;
  ASSERT_EQ(m->Dispatch->NdkRegisterMr(m, &mdl, 64, 0, &Waiter::request_cb, &w), STATUS_PENDING);
  ASSERT_TRUE(w.wait());
  EXPECT_EQ(w.status(), STATUS_SUCCESS);
  w.reset();
  ASSERT_EQ(m->Dispatch->NdkDeregisterMr(m, &Waiter::request_cb, &w), STATUS_PENDING);
  ASSERT_TRUE(w.wait());
  EXPECT_EQ(w.calls(), 1);
}

TEST_F(MrTest, FailNthRegistration) {
  NDK_PD* p = pd();
  NDK_MR* m = mr(p);
  char buf[64];
  MDL mdl{nullptr, buf, sizeof buf};
  SOFTNDK_FAULT f{SoftNdkFaultFailNthRegistration, 2, 0};
  ASSERT_EQ(SoftNdkInjectAdapterFault(a_, &f), STATUS_SUCCESS);
  ASSERT_EQ(m->Dispatch->NdkRegisterMr(m, &mdl, 64, 0, nullptr, nullptr), STATUS_SUCCESS);
  ASSERT_EQ(m->Dispatch->NdkDeregisterMr(m, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(m->Dispatch->NdkRegisterMr(m, &mdl, 64, 0, nullptr, nullptr),
            STATUS_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(m->Dispatch->NdkRegisterMr(m, &mdl, 64, 0, nullptr, nullptr), STATUS_SUCCESS);
  f.Count = 0;
  EXPECT_EQ(SoftNdkInjectAdapterFault(a_, &f), STATUS_INVALID_PARAMETER);
}

TEST_F(MrTest, InitializeFastRegister) {
  NDK_PD* p = pd();
  NDK_MR* f = mr(p, true);
  NDK_MR* m = mr(p);
  EXPECT_EQ(f->Dispatch->NdkInitializeFastRegisterMr(f, 16, TRUE, nullptr, nullptr),
            STATUS_SUCCESS);
  EXPECT_EQ(f->Dispatch->NdkInitializeFastRegisterMr(f, 65537, TRUE, nullptr, nullptr),
            STATUS_IMPLEMENTATION_LIMIT);
  EXPECT_EQ(f->Dispatch->NdkInitializeFastRegisterMr(f, 0, TRUE, nullptr, nullptr),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(m->Dispatch->NdkInitializeFastRegisterMr(m, 16, TRUE, nullptr, nullptr),
            STATUS_INVALID_DEVICE_REQUEST);
  EXPECT_NE(f->Dispatch->NdkGetRemoteTokenFromMr(f), 0u);
}

TEST_F(MrTest, MrCapacity) {
  auto pp = params();
  pp.MaxMrCount = 2;
  SoftNdkCloseAdapter(a_);
  ASSERT_EQ(SoftNdkOpenAdapter(test_adapter(), kVersion, &pp, &a_), STATUS_SUCCESS);
  NDK_PD* p = pd();
  mr(p);
  mr(p);
  NDK_MR* m = nullptr;
  EXPECT_EQ(p->Dispatch->NdkCreateMr(p, FALSE, nullptr, nullptr, &m),
            STATUS_INSUFFICIENT_RESOURCES);
}

TEST_F(MrTest, PrivilegedTokenIsLocalOnly) {
  NDK_PD* p = pd();
  UINT32 tok = 0;
  p->Dispatch->NdkGetPrivilegedMemoryRegionToken(p, &tok);
  ASSERT_NE(tok, 0u);
  char buf[16];
  auto va = reinterpret_cast<uintptr_t>(buf);
  auto* impl_pd = static_cast<const void*>(nullptr);
  StagInfo i;
  ASSERT_TRUE(adapter()->stags().lookup(tok, &i));
  impl_pd = i.pd;
  EXPECT_EQ(adapter()->stags().check(tok, impl_pd, va, 16, softndk::ndk::kAccessLocalWrite),
            STATUS_SUCCESS);
  EXPECT_EQ(adapter()->stags().check(tok, impl_pd, va, 16, softndk::ndk::kAccessRemoteRead),
            STATUS_ACCESS_VIOLATION);
  EXPECT_EQ(adapter()->stags().check(tok, impl_pd, va, 16, softndk::ndk::kAccessRemoteWrite),
            STATUS_ACCESS_VIOLATION);
}

TEST_F(MrTest, MemoryWindowHasToken) {
  NDK_PD* p = pd();
  NDK_MW* w = nullptr;
  ASSERT_EQ(p->Dispatch->NdkCreateMw(p, nullptr, nullptr, &w), STATUS_SUCCESS);
  UINT32 t = w->Dispatch->NdkGetRemoteTokenFromMw(w);
  StagInfo i;
  ASSERT_TRUE(adapter()->stags().lookup(t, &i));
  EXPECT_EQ(i.kind, softndk::ndk::StagKind::kMw);
  EXPECT_FALSE(i.valid);  // valid only once bound
  EXPECT_EQ(close(w), STATUS_SUCCESS);
  EXPECT_FALSE(adapter()->stags().lookup(t, &i));
}

TEST_F(MrTest, BuildLamSizesAndPages) {
  std::vector<char> buf(3 * 4096);
  char* start = buf.data() + 100;
  MDL mdl{nullptr, start, 8192};
  ULONG size = 0, fbo = 0;
  EXPECT_EQ(a_->Dispatch->NdkBuildLAM(a_, &mdl, 8192, nullptr, nullptr, nullptr, &size, &fbo),
            STATUS_BUFFER_TOO_SMALL);
  auto va = reinterpret_cast<uintptr_t>(start);
  ULONG pages = static_cast<ULONG>(((va & 4095) + 8192 + 4095) / 4096);
  EXPECT_EQ(size, offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) + pages * 8);
  std::vector<char> lam_buf(size);
  auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam_buf.data());
  ASSERT_EQ(a_->Dispatch->NdkBuildLAM(a_, &mdl, 8192, nullptr, nullptr, lam, &size, &fbo),
            STATUS_SUCCESS);
  EXPECT_EQ(fbo, va & 4095);
  EXPECT_EQ(lam->AdapterPageCount, pages);
  EXPECT_EQ(static_cast<uintptr_t>(lam->AdapterPageArray[0].QuadPart), va & ~uintptr_t{4095});
  a_->Dispatch->NdkReleaseLAM(a_, lam);
  MDL gap2{nullptr, start + 9000, 10};
  MDL gap1{&gap2, start, 100};
  EXPECT_EQ(a_->Dispatch->NdkBuildLAM(a_, &gap1, 110, nullptr, nullptr, lam, &size, &fbo),
            STATUS_INVALID_PARAMETER);
}

}  // namespace
}  // namespace ndktest
