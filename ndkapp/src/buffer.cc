// SPDX-License-Identifier: Apache-2.0
// buffer.cc - a page-aligned buffer (anonymous or same-host shared memory)
// registered as one memory region, deregistered and freed in order.
#include <sys/mman.h>

#include <algorithm>
#include <string>

#include "session_internal.h"

namespace softndk::tools {

Buffer::Buffer(Adapter& a, Pd& pd, size_t length, ULONG mr_flags, bool shared)
    : a_(a), shared_(shared), length_(length) {
  size_t alloc = (std::max<size_t>(length, 1) + 4095) & ~size_t{4095};
  if (shared) {
    void* p = nullptr;
    NTSTATUS st = SoftNdkAllocateSharedMemory(alloc, &p);
    if (st != STATUS_SUCCESS)
      throw ToolError("SoftNdkAllocateSharedMemory of " + std::to_string(alloc) +
                      " bytes: " + status_name(st));
    data_ = static_cast<uint8_t*>(p);  // zeroed
  } else {
    // Anonymous pages: zeroed and committed only when touched, so a
    // server's buffers for a peer still in its handshake cost address
    // space, not memory (HandshakeGate).
    void* m = mmap(nullptr, alloc, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
      throw ToolError("out of memory for a " + std::to_string(length) + "-byte buffer");
    data_ = static_cast<uint8_t*>(m);
  }
  auto* p = new Pending;
  NDK_MR* mr = nullptr;
  NTSTATUS st = pd.get()->Dispatch->NdkCreateMr(pd.get(), FALSE, &Pending::on_create, p, &mr);
  NDK_OBJECT_HEADER* obj = nullptr;
  st = Pending::finish(p, st, a.timeout(), &obj);
  if (st != STATUS_SUCCESS) throw_status("NdkCreateMr", st);
  mr_ = mr ? mr : reinterpret_cast<NDK_MR*>(obj);
  mdl_.Next = nullptr;
  mdl_.VirtualAddress = data_;
  mdl_.ByteCount = alloc;
  p = new Pending;
  st = mr_->Dispatch->NdkRegisterMr(mr_, &mdl_, alloc, mr_flags, &Pending::on_request, p);
  st = Pending::finish(p, st, a.timeout());
  if (st != STATUS_SUCCESS)
    throw_status("NdkRegisterMr of " + std::to_string(length) + " bytes", st);
  registered_ = true;
  ltoken_ = mr_->Dispatch->NdkGetLocalTokenFromMr(mr_);
  rtoken_ = mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_);
}

Buffer::~Buffer() {
  bool freed_ok = true;
  if (mr_) {
    if (registered_) {
      auto* p = Pending::try_make();
      if (p) {
        NTSTATUS st = mr_->Dispatch->NdkDeregisterMr(mr_, &Pending::on_request, p);
        freed_ok = Pending::finish(p, st, a_.close_timeout()) != STATUS_IO_TIMEOUT;
      } else {
        freed_ok = false;  // out of memory: the close below still goes
      }
    }
    freed_ok =
        close_object(&mr_->Header, mr_->Dispatch->NdkCloseMr, a_.close_timeout()) && freed_ok;
  }
  // Memory still registered (a close that timed out) is leaked, not freed.
  if (!freed_ok) return;
  if (shared_) {
    SoftNdkFreeSharedMemory(data_);
  } else {
    munmap(data_, (std::max<size_t>(length_, 1) + 4095) & ~size_t{4095});
  }
}

NDK_SGE Buffer::sge(size_t offset, size_t length) const {
  NDK_SGE s{};
  s.VirtualAddress = data_ + offset;
  s.Length = static_cast<ULONG>(length);
  s.MemoryRegionToken = ltoken_;
  return s;
}
}  // namespace softndk::tools
