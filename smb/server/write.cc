// SPDX-License-Identifier: Apache-2.0
// write.cc - ndk-smbd's WRITE (MS-SMB2 3.3.5.13): inline, and over the RDMA
// channel three ways:
//  * copied (the default): the RDMA Read into a staging buffer, then
//    pwrite() (two copies);
//  * mapped (ServerConfig::map_rewrites: pages written that many times
//    before; ServerConfig::map_writes: every WRITE): the file is extended
//    and its blocks reserved first (fallocate), then the RDMA Read lands
//    straight in the file's page-cache pages through a mapped, registered
//    window the process keeps (file_window.h): one copy, out of the
//    client; where a file cannot be mapped for writing, copied;
//  * in pieces (ServerConfig::write_chunk): each piece pwrite()n while the
//    next ones are on the wire.
// The copy path is pipelined (ServerConfig::write_pipeline, the default):
// the RDMA Read lands in one of a few bounce buffers, a worker thread
// pwrite()s it while the connection serves the next request, and the
// WRITE is answered once written (write_pipeline.h).
#include "smb2/write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "connection.h"
#include "file_window.h"
#include "nt_status.h"
#include "smb2/error_response.h"
#include "smb2/read.h"
#include "smbd/buffer_descriptor.h"
#include "smbd/le.h"
#include "write_pipeline.h"

namespace smb::server {

using namespace smb::smb2;

namespace {

constexpr size_t kMaxDescriptors = 16;

// Puts back the size a failed mapped WRITE extended the file from
// (`before`), unless the file is no longer the size the WRITE made it
// (`made`): then someone else changed it meanwhile, and theirs stands.
void restore_size(int fd, uint64_t before, uint64_t made) {
  if (made <= before) return;
  struct stat sb {};
  if (fstat(fd, &sb) == 0 && uint64_t(sb.st_size) == made) {
    (void)!ftruncate(fd, off_t(before));
    ReadWindow::size_changed();
  }
}

}  // namespace

bool Connection::may_pipeline() const {
  return single_ && cfg_.write_pipeline > 0 && cfg_.write_chunk == 0 && !cfg_.map_writes &&
         cfg_.map_rewrites == 0 && !pipe_failed_;
}

WritePipeline* Connection::pipeline() {
  if (!pipe_ && !pipe_failed_) {
    try {
      pipe_ =
          std::make_unique<WritePipeline>(t_.adapter(), t_.pd(), cfg_.max_io, cfg_.write_pipeline);
    } catch (const std::exception& e) {
      // No buffers or no thread: WRITEs one at a time, as without it.
      pipe_failed_ = true;
      std::fprintf(stderr, "ndk-smbd: no write pipeline (%s): WRITEs served one at a time\n",
                   e.what());
    }
  }
  return pipe_.get();
}

// The RDMA Read of a WRITE into a free bounce buffer (answering the oldest
// WRITE in flight first when every one is taken), then the WRITE handed to
// the pipeline's worker: kSuccess with deferred_ set (answered later), or
// the status of a WRITE that failed before (answered now).
uint32_t Connection::write_pipelined(int fd, std::span<const smbd::BufferDescriptor> d,
                                     uint64_t off, uint32_t len, uint32_t* inv) {
  WritePipeline& p = *pipe_;
  int slot = p.free_slot();
  if (slot < 0) {
    ++stats_.pipeline_waits;
    answer_writes(1);
    slot = p.free_slot();
    if (slot < 0) throw smbd::TransportError(smbd::Error::kNone, "write pipeline: no free buffer");
  }
  const uint64_t reads_before = mover().reads_posted();
  try {
    mover().acquire();  // the staging buffer's bookkeeping carries the Reads
    mover().read_into(d, len, p.data(slot), p.token(slot));
  } catch (const smbd::TransportError&) {
    throw;
  } catch (const std::exception&) {
    return nt::kIoDeviceError;
  }
  ++stats_.rdma_reads;
  ++stats_.pipelined_writes;
  stats_.rdma_descriptors += d.size();
  stats_.rdma_read_requests += mover().reads_posted() - reads_before;
  WritePipeline::Answer a;
  a.header = later_header_;
  a.key = later_key_;
  a.invalidate = *inv;
  *inv = 0;  // with the answer
  p.submit(slot, fd, off, len, a);
  deferred_ = true;
  return nt::kSuccess;
}

void Connection::answer_writes(int wait) {
  if (!pipe_) return;
  std::vector<WritePipeline::Done> done;
  // A pwrite() to a local file takes milliseconds at most; the transport's
  // transfer bound (60 s) says when one is stuck.
  const double tmo = t_.transfer_timeout_s();
  for (;;) {
    done.clear();
    const bool w = wait > 0 && pipe_->in_flight() > 0;
    if (!pipe_->collect(&done, w, softndk::tools::deadline_in(tmo)))
      throw smbd::TransportError(smbd::Error::kNone, "a WRITE's pwrite() did not finish within " +
                                                         std::to_string(int(tmo)) + " s");
    for (const auto& x : done) {
      answer_.assign(x.answer.header.begin(), x.answer.header.end());
      const auto rh = std::span<uint8_t>(answer_).first(smb2::kHeaderSize);
      smbd::le::store32(rh.data() + 8, x.status);
      std::vector<uint8_t> body;
      if (x.status == nt::kSuccess) {
        stats_.bytes_written += x.written;
        WriteResponse rs;
        rs.count = x.written;
        append_write_response(rs, &body);
      } else {
        append_error_response(&body);
      }
      answer_.insert(answer_.end(), body.begin(), body.end());
      if (x.answer.key) {
        smbd::le::store32(answer_.data() + 16,
                          smbd::le::load32(answer_.data() + 16) | smb2::kFlagSigned);
        sign(*x.answer.key, answer_);
        ++stats_.signed_responses;
      }
      if (cfg_.trace)
        std::fprintf(stderr, "ndk-smbd: cmd %u mid %llu (pipelined) -> 0x%08x (%zu bytes)\n",
                     kWrite, (unsigned long long)smbd::le::load64(answer_.data() + 24), x.status,
                     body.size());
      if (x.answer.invalidate) ++stats_.send_invalidates;
      t_.send(answer_, x.answer.invalidate ? &x.answer.invalidate : nullptr);
    }
    if (wait == 0 || (wait == 1 && !done.empty()) || pipe_->in_flight() == 0) return;
  }
}

void Connection::end_writes() {
  if (!pipe_) return;
  try {
    // Written and answered while the connection lasts (a stop, a request
    // that ends it); after the transport ended, written only.
    if (!t_.ended() && pipe_->in_flight()) answer_writes(2);
  } catch (const std::exception&) {
  }
  pipe_->finish(t_.ended() ? t_.transfer_timeout_s() : 0.0);
}

FileWindows& Connection::windows() {
  if (!windows_) windows_ = std::make_unique<FileWindows>(t_, cfg_.max_io);
  return *windows_;
}

// The mapped path. False when it does not apply to this WRITE (nothing
// done, the file as it was: the copy path serves it); true when it served
// it, with its status in *status.
bool Connection::write_mapped(Open& o, std::span<const smbd::BufferDescriptor> d, uint64_t off,
                              uint32_t len, uint32_t* status) {
  struct stat sb {};
  if (fstat(o.fd, &sb) != 0) return false;
  // Copied unless every page of it was written map_rewrites times before
  // (by any open or connection, as long as its window is kept): a page's
  // first store through the mapping costs more than pwrite()ing it
  // several times (docs/smb-direct.md, "WRITE straight into the page
  // cache"). --map-writes maps every WRITE.
  if (!windows().rewritten(o.fd, sb, off, len, cfg_.map_writes ? 0 : cfg_.map_rewrites))
    return false;
  const uint64_t before = uint64_t(sb.st_size), made = std::max(before, off + len);
  // Blocks reserved and the size extended before any byte goes through the
  // mapping: a store into a hole that finds no free block, or into a page
  // past the end of the file, is a fault (SIGBUS, or EFAULT in the kernel's
  // copy), not an error status. fallocate also updates the file's times as
  // write(2) would (Linux's file_modified). Any failure (a read-only open:
  // EBADF; a file system without it: EOPNOTSUPP; ENOSPC, EFBIG) leaves the
  // WRITE to the copy path, which answers it exactly as before.
  if (fallocate(o.fd, 0, off_t(off), off_t(len)) != 0) {
    const int e = errno;
    restore_size(o.fd, before, made);
    if (e == EBADF || e == EOPNOTSUPP || e == ENODEV || e == ENOSYS || e == EPERM)
      o.mappable = false;
    return false;
  }
  FileWindows::Sink s;
  if (!windows().sink(o.fd, sb, off, len, &s)) {
    restore_size(o.fd, before, made);
    o.mappable = false;  // no shared writable mapping, or it cannot be registered
    return false;
  }
  try {
    mover().acquire();  // the staging buffer's bookkeeping carries the Reads
    mover().read_into(d, len, s.at, s.token);
  } catch (const smbd::TransportError&) {
    // The connection is over; the bytes already in the file's pages (inside
    // its old size) stay, the size the WRITE added goes.
    restore_size(o.fd, before, made);
    throw;
  } catch (const std::exception&) {
    windows().faulted(s);
    restore_size(o.fd, before, made);
    *status = nt::kIoDeviceError;
    return true;
  }
  if (windows().faulted(s)) {
    // Another process cut the file while the data was placed: the bytes
    // past its new end went to anonymous pages (fault_guard), not to the
    // file. The size is theirs; the WRITE failed.
    ++stats_.mapped_write_faults;
    *status = nt::kUnexpectedIoError;
    return true;
  }
  ++stats_.mapped_writes;
  *status = nt::kSuccess;
  return true;
}

uint32_t Connection::write(std::span<const uint8_t> m, std::vector<uint8_t>* out, uint32_t* inv) {
  WriteRequest rq;
  if (parse_write_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  const bool rdma = rq.channel == kChannelRdmaV1 || rq.channel == kChannelRdmaV1Invalidate;
  if (rq.channel && !rdma) return nt::kInvalidParameter;
  if (!channel_valid_for_dialect(rq.channel)) return nt::kInvalidParameter;
  std::vector<smbd::BufferDescriptor> d;
  uint64_t total = 0;
  if (rdma) {
    if (smbd::parse_buffer_descriptors(rq.channel_info, kMaxDescriptors, &d, &total) !=
        smbd::Error::kNone)
      return nt::kInvalidParameter;
    // The answer invalidates the client's buffer whatever its status (as
    // for READ, file_ops.cc).
    if (rq.channel == kChannelRdmaV1Invalidate) *inv = d[0].token;
  }
  Open* o = find_open(rq.file_id);
  if (!o) return nt::kFileClosed;
  if (o->dir) return nt::kInvalidDeviceRequest;
  // Served here, not pipelined: after the WRITEs in flight (this one may
  // overlap them), as any other request.
  auto after_pipelined = [&] {
    if (pipe_ && pipe_->in_flight()) answer_writes(2);
  };
  // Writes data to the file at rq.offset + at; 0 or the errno status.
  uint32_t failed = nt::kSuccess;
  auto put_at = [&](const uint8_t* p, size_t n, uint64_t at) {
    size_t put = 0;
    while (put < n) {
      ssize_t k = pwrite(o->fd, p + put, n - put, off_t(rq.offset + at + put));
      if (k < 0) {
        if (errno == EINTR) continue;
        failed = status_from_errno(errno);
        return false;
      }
      put += size_t(k);
    }
    return true;
  };
  size_t put = 0;
  if (rdma) {
    const uint32_t len = rq.remaining_bytes;  // 3.3.5.13: the bytes to read by RDMA
    if (!rq.data.empty() || len > cfg_.max_io || total < len) return nt::kInvalidParameter;
    if (rq.offset > uint64_t(INT64_MAX) - len) return nt::kInvalidParameter;
    if (len > 0 && may_pipeline() && pipeline())
      return write_pipelined(o->fd, d, rq.offset, len, inv);
    after_pipelined();
    const uint64_t reads_before = mover().reads_posted();
    uint32_t st = nt::kSuccess;
    const bool may_map = cfg_.map_writes || cfg_.map_rewrites > 0;
    if (may_map && cfg_.write_chunk == 0 && len > 0 && o->mappable &&
        write_mapped(*o, d, rq.offset, len, &st)) {
      if (st != nt::kSuccess) return st;
      put = len;
    } else {
      try {
        const uint8_t* buf = mover().acquire();
        if (cfg_.write_chunk == 0) {
          // The whole WRITE arrives, then one pwrite.
          mover().read_from(d, len);
          if (put_at(buf, len, 0)) put = len;
        } else {
          // Each piece goes to the file while the next ones are on the wire.
          mover().read_streamed(d, len, cfg_.write_chunk, [&](uint32_t off, uint32_t n) {
            if (!put_at(buf + off, n, off)) return false;
            put += n;
            return true;
          });
        }
      } catch (const smbd::TransportError&) {
        throw;
      } catch (const std::exception&) {
        return nt::kIoDeviceError;
      }
    }
    ++stats_.rdma_reads;
    stats_.rdma_descriptors += d.size();
    stats_.rdma_read_requests += mover().reads_posted() - reads_before;
    const uint32_t most = mover().max_reads_seen_in_flight();
    uint32_t seen = stats_.rdma_reads_in_flight_max.load();
    while (seen < most && !stats_.rdma_reads_in_flight_max.compare_exchange_weak(seen, most)) {
    }
  } else {
    after_pipelined();
    ++stats_.inline_writes;
    if (rq.offset > uint64_t(INT64_MAX) - rq.data.size()) return nt::kInvalidParameter;
    if (put_at(rq.data.data(), rq.data.size(), 0)) put = rq.data.size();
  }
  if (failed != nt::kSuccess) return failed;
  stats_.bytes_written += put;
  WriteResponse rs;
  rs.count = uint32_t(put);
  append_write_response(rs, out);
  return nt::kSuccess;
}

}  // namespace smb::server
