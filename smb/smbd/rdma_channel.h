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
// peer's IRD allows. A READ's Writes need not be waited for before its
// response: the mover takes their completions through the transport's
// completion handler and keeps their buffer busy until then.
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
  // `staging`: how many staging buffers of `buffer_size` bytes the mover
  // may use (each registered on first use). With more than one, a READ's
  // RDMA Writes may be posted without waiting (post_write_to) while the
  // next request is served from another buffer. Registers the mover as
  // the transport's completion handler (one mover per transport).
  RdmaMover(Transport& t, uint32_t buffer_size, unsigned staging = 1);
  ~RdmaMover();
  RdmaMover(const RdmaMover&) = delete;
  RdmaMover& operator=(const RdmaMover&) = delete;

  // Makes a staging buffer with no transfer in flight the current one and
  // returns it: an idle registered one, else a new one while fewer than
  // `staging` exist, else the first to finish (a bounded wait, the
  // transport's timeout). Throws TransportError when a posted transfer
  // failed or did not complete in time.
  uint8_t* acquire();
  uint8_t* data() const { return cur_->buf->data(); }
  uint32_t size() const { return size_; }
  // Writes data()[0, len) into the descriptors, in order, and waits.
  void write_to(std::span<const BufferDescriptor> d, uint32_t len);
  // Posts the RDMA Writes of data()[0, len) into the descriptors and
  // returns without waiting for their completions; the buffer stays busy
  // until they come (through the transport's completion handler, whatever
  // call polls the CQ). A Send posted after this reaches the peer after the
  // Writes' data (RDMAP orders an RDMA Write before a later Send on the
  // same connection), so the READ response may follow at once. A failed
  // Write is thrown by a later acquire() or wait_idle() (the connection is
  // broken then: the response Send behind it is flushed, never delivered).
  void post_write_to(std::span<const BufferDescriptor> d, uint32_t len);
  // The same Writes out of memory the caller registered instead of a
  // staging buffer: `source` (at least `len` bytes, local token
  // `source_token`). The current staging buffer's bookkeeping carries them
  // (acquire() first); waits, so that the caller may look at what the
  // transfer met (ndk-smbd's mapped READs: a file cut under the mapping)
  // before it answers.
  void write_from(std::span<const BufferDescriptor> d, uint32_t len, const uint8_t* source,
                  uint32_t source_token);
  // Reads `len` bytes from the descriptors, in order, into data()[0, len).
  void read_from(std::span<const BufferDescriptor> d, uint32_t len);
  // The same Reads into memory the caller registered instead of a staging
  // buffer: `sink` (at least `len` bytes, registered with
  // NDK_MR_FLAG_RDMA_READ_SINK | ALLOW_LOCAL_WRITE, local token
  // `sink_token`). The current staging buffer's bookkeeping carries them
  // (acquire() first); waits. For a WRITE read straight into the file's
  // page cache (ndk-smbd's mapped windows).
  void read_into(std::span<const BufferDescriptor> d, uint32_t len, uint8_t* sink,
                 uint32_t sink_token);
  // The same Reads in pieces of at most `piece` bytes (0: the adapter's
  // largest transfer), with up to max_reads_in_flight() in flight, handing
  // each run of bytes that has arrived to `consume(offset, n)` (in order,
  // contiguous, [0, len) in all) while later pieces are still on the wire:
  // a WRITE's pwrite() of piece k overlaps the transfer of piece k+1 (the
  // engine moves the data on its own thread). A send queue completes in
  // order, so the pieces done are the first (posted - pending). When
  // `consume` returns false nothing more is posted or consumed; the Reads
  // already posted are waited for (the buffer is theirs until then) and
  // read_streamed returns false. A failed Read is a TransportError.
  template <typename Consume>
  bool read_streamed(std::span<const BufferDescriptor> d, uint32_t len, uint32_t piece,
                     Consume&& consume) {
    return read_streamed_impl(
        d, len, piece,
        [](void* c, uint32_t off, uint32_t n) { return (*static_cast<Consume*>(c))(off, n); },
        &consume);
  }
  // Waits (bounded) until no transfer of any buffer is in flight.
  void wait_idle();
  unsigned in_flight() const { return in_flight_; }
  unsigned staging_registered() const;
  uint64_t reads_posted() const { return reads_; }
  uint64_t writes_posted() const { return writes_; }
  // Writes still in flight when the next request was taken: the overlap
  // that post_write_to bought.
  uint64_t writes_overlapped() const { return overlapped_; }
  uint32_t max_reads_seen_in_flight() const { return max_in_flight_; }

 private:
  struct Op {
    unsigned pending = 0;
    NTSTATUS status = STATUS_SUCCESS;
  };
  struct Staging {
    std::unique_ptr<tools::Buffer> buf;
    Op op;
    uint64_t posted_at = 0;  // order of the last post (the oldest finishes first)
  };
  static bool on_completion(void* arg, const NDK_RESULT_EX& r);
  bool read_streamed_impl(std::span<const BufferDescriptor> d, uint32_t len, uint32_t piece,
                          bool (*consume)(void*, uint32_t, uint32_t), void* arg);
  void check_transfer(std::span<const BufferDescriptor> d, uint32_t len);
  uint32_t chunk_max() const;
  // The local side of a transfer: `sink` (with its token) or, when null,
  // the current staging buffer.
  void post(std::span<const BufferDescriptor> d, uint32_t len, bool read, tools::Deadline dl,
            uint8_t* sink = nullptr, uint32_t sink_token = 0);
  void wait_op(Op& op, tools::Deadline dl, const char* what);
  void check(Op& op, const char* what);
  [[noreturn]] void fail_ndk(const char* what, NTSTATUS st);
  Transport& t_;
  uint32_t size_;
  std::vector<Staging> staging_;  // sized once: the ops' addresses are request contexts
  Staging* cur_ = nullptr;
  unsigned in_flight_ = 0;
  uint64_t posts_ = 0;
  uint64_t reads_ = 0, writes_ = 0, overlapped_ = 0;
  uint32_t max_in_flight_ = 0;
};

}  // namespace smbd
