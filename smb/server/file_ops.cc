// SPDX-License-Identifier: Apache-2.0
// file_ops.cc - ndk-smbd's file commands: CREATE, CLOSE, FLUSH and READ
// (inline and over the RDMA channel). WRITE is in write.cc; QUERY_INFO,
// SET_INFO, QUERY_DIRECTORY and LOCK are in info_ops.cc. Every path goes
// through Share (confined to the export).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "connection.h"
#include "file_window.h"
#include "info.h"
#include "nt_status.h"
#include "smb2/close.h"
#include "smb2/create.h"
#include "smb2/flush.h"
#include "smb2/ioctl.h"
#include "smb2/keys.h"
#include "smb2/read.h"
#include "smbd/buffer_descriptor.h"
#include "smbd/le.h"

namespace smb::server {

namespace le = smbd::le;
using namespace smb::smb2;

namespace {

// CreateDisposition / CreateOptions / CreateAction (MS-SMB2 2.2.13, 2.2.14).
constexpr uint32_t kSupersede = 0, kOpen = 1, kCreate = 2, kOpenIf = 3, kOverwrite = 4,
                   kOverwriteIf = 5;
constexpr uint32_t kDirectoryFile = 0x1, kNonDirectoryFile = 0x40, kDeleteOnClose = 0x1000;
constexpr uint32_t kActionSuperseded = 0, kActionOpened = 1, kActionCreated = 2,
                   kActionOverwritten = 3;
constexpr size_t kMaxDescriptors = 16;

FileId id_of(uint64_t key) { return FileId{key, key}; }

// The times, sizes and attributes CREATE and CLOSE answers share.
template <class Response>
void put_times(const FileTimes& t, Response* r) {
  r->creation_time = t.creation;
  r->last_access_time = t.access;
  r->last_write_time = t.write;
  r->change_time = t.change;
  r->allocation_size = t.allocation;
  r->end_of_file = t.eof;
  r->file_attributes = t.attributes;
}

uint32_t errno_status() { return status_from_errno(errno); }

}  // namespace

Connection::Open* Connection::find_open(const FileId& id) {
  // A related request names the compound's file with the all-ones FileId.
  const FileId use = id == kNoFileId ? cur_file_ : id;
  auto it = opens_.find(use.persistent);
  if (it == opens_.end() || use.volatile_ != it->first || it->second.session != cur_session_)
    return nullptr;
  cur_file_ = use;
  return &it->second;
}

void Connection::close_open(uint64_t key) {
  auto it = opens_.find(key);
  if (it == opens_.end()) return;
  Open& o = it->second;
  share_.locks().release({this, key});
  if (o.delete_on_close) {
    // Only the file this open has: its name may since name another one
    // (renamed by another connection, replaced meanwhile).
    std::string leaf;
    int parent = share_.open_parent(o.rel, &leaf);
    struct stat mine {
    }, named{};
    if (parent >= 0 && fstat(o.fd, &mine) == 0 &&
        fstatat(parent, leaf.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        mine.st_dev == named.st_dev && mine.st_ino == named.st_ino)
      unlinkat(parent, leaf.c_str(), o.dir ? AT_REMOVEDIR : 0);
    if (parent >= 0) ::close(parent);
  }
  if (windows_) windows_->drop(key);
  if (o.fd >= 0) ::close(o.fd);
  opens_.erase(it);
}

uint32_t Connection::create(const smb2::Header&, std::span<const uint8_t> m,
                            std::vector<uint8_t>* out) {
  CreateRequest rq;
  if (parse_create_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  std::string rel;
  if (uint32_t st = share_path(rq.name, &rel); st != nt::kSuccess) return st;
  if (rq.create_disposition > kOverwriteIf) return nt::kInvalidParameter;
  if (opens_.size() >= kMaxOpens) return nt::kInsufficientResources;
  uint32_t action = kActionOpened;
  int fd = share_.open_beneath(rel, O_PATH);
  struct stat st {};
  if (fd >= 0) {
    if (fstat(fd, &st) != 0) {
      ::close(fd);
      return errno_status();
    }
    ::close(fd);
    fd = -1;
    const bool dir = S_ISDIR(st.st_mode);
    if (!dir && !S_ISREG(st.st_mode)) return nt::kAccessDenied;  // devices, fifos, sockets
    if (rq.create_disposition == kCreate) return nt::kObjectNameCollision;
    if ((rq.create_options & kDirectoryFile) && !dir) return nt::kNotADirectory;
    if ((rq.create_options & kNonDirectoryFile) && dir) return nt::kFileIsADirectory;
    if (dir) {
      if (rq.create_disposition != kOpen && rq.create_disposition != kOpenIf)
        return nt::kInvalidParameter;
      fd = share_.open_beneath(rel, O_RDONLY | O_DIRECTORY);
    } else {
      fd = share_.open_beneath(rel, O_RDWR);
      if (fd == -EACCES) fd = share_.open_beneath(rel, O_RDONLY);
      if (fd >= 0 && (rq.create_disposition == kSupersede || rq.create_disposition == kOverwrite ||
                      rq.create_disposition == kOverwriteIf)) {
        if (ftruncate(fd, 0) != 0) {
          const uint32_t s = errno_status();
          ::close(fd);
          return s;
        }
        ReadWindow::size_changed();  // after: a READ then sees the new size
        action = rq.create_disposition == kSupersede ? kActionSuperseded : kActionOverwritten;
      }
    }
    if (fd < 0) return status_from_errno(-fd);
  } else {
    if (fd != -ENOENT) return status_from_errno(-fd);
    if (rq.create_disposition == kOpen || rq.create_disposition == kOverwrite)
      return nt::kObjectNameNotFound;
    if (rel.empty()) return nt::kObjectNameCollision;
    if (rq.create_options & kDirectoryFile) {
      std::string leaf;
      int parent = share_.open_parent(rel, &leaf);
      if (parent < 0)
        return parent == -ENOENT ? nt::kObjectPathNotFound : status_from_errno(-parent);
      const int r = mkdirat(parent, leaf.c_str(), 0755);
      const int e = errno;
      ::close(parent);
      if (r != 0) return status_from_errno(e);
      fd = share_.open_beneath(rel, O_RDONLY | O_DIRECTORY);
    } else {
      fd = share_.open_beneath(rel, O_RDWR | O_CREAT | O_EXCL, 0644);
      if (fd == -ENOENT) return nt::kObjectPathNotFound;
    }
    if (fd < 0) return status_from_errno(-fd);
    action = kActionCreated;
  }
  if (fstat(fd, &st) != 0) {
    const uint32_t s = errno_status();
    ::close(fd);
    return s;
  }
  const uint64_t key = next_open_++;
  Open& o = opens_[key];
  o.fd = fd;
  o.rel = rel;
  o.dir = S_ISDIR(st.st_mode);
  o.delete_on_close = rq.create_options & kDeleteOnClose;
  o.tree = cur_tree_;
  o.session = cur_session_;
  if (o.delete_on_close && o.dir && !dir_empty(fd)) {
    close_open(key);
    return nt::kDirectoryNotEmpty;
  }
  cur_file_ = id_of(key);
  CreateResponse rs;
  rs.create_action = action;
  put_times(times_of(st), &rs);
  rs.file_id = cur_file_;
  append_create_response(rs, out);  // no oplock, no create contexts
  return nt::kSuccess;
}

uint32_t Connection::close(std::span<const uint8_t> m, std::vector<uint8_t>* out) {
  CloseRequest rq;
  if (parse_close_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  Open* o = find_open(rq.file_id);
  if (!o) return nt::kFileClosed;
  struct stat st {};
  CloseResponse rs;
  if (fstat(o->fd, &st) == 0 && (rq.flags & kClosePostqueryAttrib)) {
    rs.flags = kClosePostqueryAttrib;
    put_times(times_of(st), &rs);
  }
  close_open(cur_file_.persistent);
  append_close_response(rs, out);
  return nt::kSuccess;
}

uint32_t Connection::flush(std::span<const uint8_t> m, std::vector<uint8_t>* out) {
  FlushRequest rq;
  if (parse_flush_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  Open* o = find_open(rq.file_id);
  if (!o) return nt::kFileClosed;
  if (fsync(o->fd) != 0 && errno != EINVAL) return errno_status();
  append_flush_response(out);
  return nt::kSuccess;
}

// MS-SMB2 3.3.5.12 (READ) and 3.3.5.13 (WRITE): at dialect 3.0 the only
// RDMA channel is SMB2_CHANNEL_RDMA_V1; SMB2_CHANNEL_RDMA_V1_INVALIDATE
// (remote invalidation) came with 3.0.2, so a 3.0 request asking for it is
// failed with STATUS_INVALID_PARAMETER, before any RDMA operation and
// without a Send with Invalidate (the token is not ours to invalidate).
bool Connection::channel_valid_for_dialect(uint32_t channel) const {
  return !(channel == kChannelRdmaV1Invalidate && dialect_ == 0x0300);
}

uint32_t Connection::read(std::span<const uint8_t> m, std::vector<uint8_t>* out, uint32_t* inv) {
  ReadRequest rq;
  if (parse_read_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  const bool rdma = rq.channel == kChannelRdmaV1 || rq.channel == kChannelRdmaV1Invalidate;
  if (rq.channel && !rdma) return nt::kInvalidParameter;
  if (!channel_valid_for_dialect(rq.channel)) return nt::kInvalidParameter;
  std::vector<smbd::BufferDescriptor> d;
  if (rdma) {
    uint64_t total = 0;
    if (smbd::parse_buffer_descriptors(rq.channel_info, kMaxDescriptors, &d, &total) !=
        smbd::Error::kNone)
      return nt::kInvalidParameter;
    // The answer invalidates the client's buffer whatever its status: a
    // client that asked for remote invalidation (cifs with 3.0.2) never
    // invalidates it itself and cannot reuse it otherwise.
    if (rq.channel == kChannelRdmaV1Invalidate) *inv = d[0].token;
    if (total < rq.length) return nt::kInvalidParameter;
  } else if (rq.length + 80 > t_.negotiated().max_fragmented_send_size) {
    return nt::kInvalidParameter;  // too large to answer inline: the client must use RDMA
  }
  Open* o = find_open(rq.file_id);
  if (!o) return nt::kFileClosed;
  if (o->dir) return nt::kInvalidDeviceRequest;
  if (rq.length > cfg_.max_io || rq.offset > uint64_t(INT64_MAX) - rq.length)
    return nt::kInvalidParameter;
  if (rdma && cfg_.map_reads && o->read_mappable) {
    uint32_t status = 0, moved = 0;
    if (read_mapped(*o, d, rq.offset, rq.length, rq.minimum_count, &status, &moved)) {
      if (status != nt::kSuccess) return status;
      stats_.bytes_read += moved;
      ++stats_.rdma_writes;
      ++stats_.mapped_rdma_reads;
      stats_.rdma_descriptors += d.size();
      ReadResponse rs;
      rs.data_remaining = moved;
      append_read_response(rs, out);
      return nt::kSuccess;
    }
  }
  std::vector<uint8_t> inline_buf;
  // A free staging buffer: the previous READs' Writes may still be in flight.
  uint8_t* buf = rdma ? mover().acquire() : (inline_buf.resize(rq.length), inline_buf.data());
  size_t got = 0;
  while (got < rq.length) {
    ssize_t k = pread(o->fd, buf + got, rq.length - got, off_t(rq.offset + got));
    if (k < 0) {
      if (errno == EINTR) continue;
      return errno_status();
    }
    if (k == 0) break;
    got += size_t(k);
  }
  if ((got == 0 && rq.length) || got < rq.minimum_count) return nt::kEndOfFile;
  stats_.bytes_read += got;
  if (rdma) {
    try {
      // Not waited for: the response Send below is delivered after the
      // Writes' data (RDMAP ordering), and the next request's pread
      // overlaps the client's side of the transfer.
      if (cfg_.staging_buffers > 1)
        mover().post_write_to(d, uint32_t(got));
      else
        mover().write_to(d, uint32_t(got));
    } catch (const smbd::TransportError&) {
      throw;
    } catch (const std::exception&) {
      return nt::kIoDeviceError;
    }
    ++stats_.rdma_writes;
    stats_.rdma_descriptors += d.size();
    // 80 bytes, no padding: Linux cifs takes the rest of the PDU as the
    // next message (docs/smb-direct.md); the codec appends no padding.
    ReadResponse rs;
    rs.data_remaining = uint32_t(got);
    append_read_response(rs, out);
  } else {
    ++stats_.inline_reads;
    ReadResponse rs;
    rs.data = std::span(inline_buf).first(got);
    append_read_response(rs, out);
  }
  return nt::kSuccess;
}

// The mapped path of a READ over the RDMA channel: the Writes leave from
// the file's pages through a window the process keeps mapped and this
// connection registered (file_window.h): one copy of the data (into the
// client) where the copy path has two (pread() into a staging buffer, then
// the Write). The Writes are waited for before the answer, so that a file
// cut under the window by another process meanwhile (a fault caught by
// fault_guard: the bytes sent were an anonymous page's zeros) fails the
// READ instead of answering it. False: nothing sent, the pread() path
// serves it (a READ is repeatable).
bool Connection::read_mapped(Open& o, std::span<const smbd::BufferDescriptor> d, uint64_t off,
                             uint32_t len, uint32_t minimum, uint32_t* status, uint32_t* moved) {
  struct stat sb {};
  if (fstat(o.fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return false;
  // Only bytes inside the file: a page of the mapping past its end is a
  // fault, not a short read.
  const uint64_t size = uint64_t(sb.st_size);
  const uint32_t got = off >= size ? 0 : uint32_t(std::min<uint64_t>(len, size - off));
  if ((got == 0 && len) || got < minimum) {
    *status = nt::kEndOfFile;
    return true;
  }
  if (got == 0) return false;  // a READ of nothing: the plain path answers it
  FileWindows::Sink s;
  if (!windows().source(o.fd, sb, off, got, &s)) {
    o.read_mappable = false;  // no mapping (a write-only open), or not registered
    return false;
  }
  try {
    mover().acquire();  // the staging buffer's bookkeeping carries the Writes
    mover().write_from(d, got, s.at, s.token);
  } catch (const smbd::TransportError&) {
    throw;
  } catch (const std::exception&) {
    windows().faulted(s);
    *status = nt::kIoDeviceError;
    return true;
  }
  if (windows().faulted(s)) {
    ++stats_.mapped_read_faults;
    *status = nt::kUnexpectedIoError;
    return true;
  }
  *moved = got;
  *status = nt::kSuccess;
  return true;
}

// A lone inline READ answered from its send slot: the file's bytes are
// pread() straight into the registered send buffer behind the response's
// header and fixed part, signed there when the request was, and posted as
// one SMB Direct segment: one copy of the data, no heap allocation. The
// general path (serve() -> dispatch() -> read()) built the same response
// in three vectors (pread buffer, body, response: two more 4 KiB copies
// and about four allocations per READ; docs/smb-direct-performance.md,
// "Latency").
// Anything else (a compound, an RDMA channel, a failure status, a
// response larger than one segment, a signature that does not verify)
// returns false with nothing sent, and serve() takes the general path,
// which gives it its answer (a READ is repeatable: its pread() again).
bool Connection::read_in_place(std::span<const uint8_t> msg) {
  Header h;
  if (!negotiated_ || parse_header(msg, &h) != ParseError::kNone || h.command != kRead ||
      h.next_command != 0 || (h.flags & (kFlagResponse | kFlagRelated)))
    return false;
  auto s = sessions_.find(h.session_id);
  if (s == sessions_.end() || !s->second.valid) return false;
  auto t = trees_.find(h.tree_id);
  if (t == trees_.end() || t->second.ipc) return false;
  // 3.3.5.2.4, as signature_ok(): a signed request of a session with a key
  // must verify; one that does not is the general path's to count and
  // refuse. Its response is signed (3.3.4.1.1).
  const bool sign = (h.flags & kFlagSigned) && s->second.has_key;
  if (sign && !verify(s->second.signing_key, msg)) return false;
  ReadRequest rq;
  if (parse_read_request(msg, &rq) != ParseError::kNone || rq.channel != kChannelNone) return false;
  constexpr size_t kHead = kHeaderSize + kReadResponseHeadSize;
  if (rq.length == 0 || kHead + rq.length > t_.send_capacity() || rq.length > cfg_.max_io ||
      rq.offset > uint64_t(INT64_MAX) - rq.length)
    return false;
  // What serve() sets for a request that is not related (find_open checks
  // the session).
  cur_session_ = h.session_id;
  cur_tree_ = h.tree_id;
  cur_file_ = kNoFileId;
  Open* o = find_open(rq.file_id);
  if (!o || o->dir) return false;
  const std::span<uint8_t> slot = t_.begin_send();
  uint8_t* data = slot.data() + kHead;
  size_t got = 0;
  int64_t mapped = -1;
  if (cfg_.map_reads) {
    if (!o->read_window) o->read_window = std::make_unique<ReadWindow>();
    mapped = o->read_window->copy(o->fd, rq.offset, rq.length, data);
  }
  if (mapped >= 0) {
    got = size_t(mapped);
    ++stats_.mapped_reads;
  }
  while (mapped < 0 && got < rq.length) {
    const ssize_t k = pread(o->fd, data + got, rq.length - got, off_t(rq.offset + got));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += size_t(k);
  }
  if (got == 0 || got < rq.minimum_count) {  // an error or the end of the file
    t_.abandon_send();
    return false;
  }
  Header rh = h;
  rh.flags = kFlagResponse;
  rh.status = nt::kSuccess;
  rh.signature = {};
  rh.credits = uint16_t(std::clamp<uint16_t>(h.credits, 1, 128));  // as serve()
  store_header(rh, slot.data());
  store_read_response_head(ReadResponse{}, uint32_t(got), slot.data() + kHeaderSize);
  const std::span<uint8_t> resp = slot.first(kHead + got);
  if (sign) {
    le::store32(resp.data() + 16, le::load32(resp.data() + 16) | kFlagSigned);
    smb2::sign(s->second.signing_key, resp);
    ++stats_.signed_responses;
  }
  ++stats_.inline_reads;
  stats_.bytes_read += got;
  if (cfg_.trace)
    std::fprintf(stderr, "ndk-smbd: cmd %u mid %llu -> 0x%08x (%zu bytes, in place)\n", h.command,
                 (unsigned long long)h.message_id, nt::kSuccess, resp.size() - kHeaderSize);
  t_.commit_send(resp.size());
  return true;
}

}  // namespace smb::server
