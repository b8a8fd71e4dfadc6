// SPDX-License-Identifier: Apache-2.0
// rdma_channel.h - the RDMA channel as SMB3 uses it (MS-SMB2 2.2.19/2.2.21
// SMB2_CHANNEL_RDMA_V1[_INVALIDATE], MS-SMBD 2.2.3.1 descriptors).
//
// Client side, BufferPool: I/O buffers registered once as a page list
// (NdkBuildLAM) with fast-register MRs per slot, as smbdirect.sys does;
// each I/O fast-registers its slot (NdkFastRegister) and hands the peer
// SMB_DIRECT_BUFFER_DESCRIPTOR_V1s. An MR covers at most the adapter's
// FRMRPageCount pages, so a slot larger than that is several MRs and an I/O
// over it a list of descriptors (MS-SMB2 2.2.19/2.2.21 allow one or more).
// After the reply the slot is released: the reply was a Send with
// Invalidate of exactly the first descriptor's token (checked; MS-SMB2: the
// server invalidates that one) and the client invalidates the others, or
// the client invalidates them all itself (NdkInvalidate).
//
// Server side, RdmaMover: RDMA Write of READ data into the client's
// descriptors and RDMA Read of WRITE data from them, bounded by the
// negotiated MaxReadWriteSize and with no more Reads in flight than the
// peer's IRD allows.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "buffer_descriptor.h"
#include "transport.h"

namespace smbd {

class BufferPool {
 public:
  // `slot_size` is rounded up to whole pages. `max_mr_bytes`: the most one
  // MR (one descriptor) covers; 0 is the adapter's FRMRPageCount pages, the
  // limit NDK gives its consumers. A larger value works only where the
  // provider accepts longer page lists (tests that want one descriptor per
  // slot; softndk's software engine takes them).
  BufferPool(Transport& t, unsigned count, uint32_t slot_size, uint32_t max_mr_bytes = 0);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  unsigned count() const { return unsigned(slots_.size()); }
  uint32_t slot_size() const { return slot_size_; }
  uint32_t mr_size() const { return mr_size_; }
  uint8_t* data(unsigned slot) const;
  // Fast-registers the first `len` bytes of the slot for the peer: to write
  // into (our READ) or to read from (our WRITE). One descriptor per MR the
  // bytes span, in order.
  std::vector<BufferDescriptor> expose(unsigned slot, uint32_t len, bool peer_writes);
  // Ends the slot's exposure after the reply. `invalidated`: the token the
  // reply's Send with Invalidate named (0: a plain Send). A token that is
  // not the slot's first descriptor's is a protocol violation
  // (TransportError); every MR the reply did not invalidate is invalidated
  // locally before the slot can be reused.
  void release(unsigned slot, uint32_t invalidated);
  bool exposed(unsigned slot) const { return slots_[slot].exposed > 0; }
  uint64_t local_invalidations() const { return local_invalidations_; }
  uint64_t remote_invalidations() const { return remote_invalidations_; }

 private:
  struct Piece {
    NDK_MR* mr = nullptr;
    uint32_t token = 0;
  };
  struct Slot {
    std::vector<Piece> pieces;
    unsigned exposed = 0;  // how many leading pieces the peer may use
  };
  void wait_op(const char* what);
  Transport& t_;
  uint32_t slot_size_, mr_size_;
  std::unique_ptr<tools::Buffer> region_;
  std::vector<uint8_t> lam_;
  std::vector<Slot> slots_;
  struct Op {
    unsigned pending = 0;
    NTSTATUS status = STATUS_SUCCESS;
  } op_;
  uint64_t local_invalidations_ = 0, remote_invalidations_ = 0;
};

class RdmaMover {
 public:
  RdmaMover(Transport& t, uint32_t buffer_size);
  uint8_t* data() const { return buf_->data(); }
  uint32_t size() const { return uint32_t(buf_->size()); }
  // Writes data()[0, len) into the descriptors, in order.
  void write_to(std::span<const BufferDescriptor> d, uint32_t len);
  // Reads `len` bytes from the descriptors, in order, into data()[0, len).
  void read_from(std::span<const BufferDescriptor> d, uint32_t len);
  uint64_t reads_posted() const { return reads_; }
  uint64_t writes_posted() const { return writes_; }
  uint32_t max_reads_seen_in_flight() const { return max_in_flight_; }

 private:
  void move(std::span<const BufferDescriptor> d, uint32_t len, bool read);
  Transport& t_;
  std::unique_ptr<tools::Buffer> buf_;
  struct Op {
    unsigned pending = 0;
    NTSTATUS status = STATUS_SUCCESS;
  } op_;
  uint64_t reads_ = 0, writes_ = 0;
  uint32_t max_in_flight_ = 0;
};

}  // namespace smbd
