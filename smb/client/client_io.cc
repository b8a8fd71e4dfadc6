// SPDX-License-Identifier: Apache-2.0
// client_io.cc - the file operations of the client: CREATE/CLOSE, QUERY_INFO,
// QUERY_DIRECTORY, FLUSH, ECHO, and READ/WRITE inline or through the RDMA
// channel.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "client.h"
#include "smb2/close.h"
#include "smb2/echo.h"
#include "smb2/flush.h"
#include "smb2/query_directory.h"
#include "smb2/query_info.h"
#include "smb2/read.h"
#include "smb2/write.h"

namespace smb::client {

namespace {
constexpr uint32_t kStatusEndOfFile = 0xC0000011;
constexpr uint32_t kStatusNoMoreFiles = 0x80000006;
[[noreturn]] void protocol_error(const std::string& what) {
  throw ClientError(kExitProtocol, "protocol error: " + what);
}
void check(smb2::ParseError e, const char* what) {
  if (e != smb2::ParseError::kNone)
    protocol_error(std::string(what) + ": " + smb2::parse_error_name(e));
}
}  // namespace

smb2::FileId Client::open(const std::string& path, uint32_t access, uint32_t disposition,
                          uint32_t options, smb2::CreateResponse* info) {
  auto m = header_only();
  smb2::CreateRequest rq;
  rq.desired_access = access | smb2::kSynchronize;
  rq.share_access = smb2::kShareRead | smb2::kShareWrite | smb2::kShareDelete;
  rq.create_disposition = disposition;
  rq.create_options = options;
  rq.name = smb_path(path);
  smb2::append_create_request(rq, &m);
  Response r = wait(send(m, smb2::kCreate), smb2::kCreate);
  if (r.h.status != 0) status_error(smb2::kCreate, r.h.status, ("of '" + path + "'").c_str());
  smb2::CreateResponse rs;
  check(smb2::parse_create_response(r.msg, &rs), "CREATE response");
  if (info) *info = rs;
  return rs.file_id;
}

void Client::close(const smb2::FileId& f) {
  auto m = header_only();
  smb2::append_close_request(smb2::CloseRequest{.file_id = f}, &m);
  Response r = call(m, smb2::kClose);
  smb2::CloseResponse rs;
  check(smb2::parse_close_response(r.msg, &rs), "CLOSE response");
}

smb2::NetworkOpenInformation Client::query_network_open(const smb2::FileId& f) {
  auto m = header_only();
  smb2::QueryInfoRequest q;
  q.info_type = smb2::kInfoFile;
  q.file_info_class = smb2::kFileNetworkOpenInformation;
  q.output_buffer_length = smb2::kNetworkOpenInformationSize;
  q.file_id = f;
  smb2::append_query_info_request(q, &m);
  Response r = call(m, smb2::kQueryInfo);
  std::span<const uint8_t> out;
  check(smb2::parse_query_info_response(r.msg, &out), "QUERY_INFO response");
  smb2::NetworkOpenInformation n;
  check(smb2::parse_network_open_information(out, &n), "FileNetworkOpenInformation");
  return n;
}

smb2::StandardInformation Client::query_standard(const smb2::FileId& f) {
  auto m = header_only();
  smb2::QueryInfoRequest q;
  q.info_type = smb2::kInfoFile;
  q.file_info_class = smb2::kFileStandardInformation;
  q.output_buffer_length = smb2::kStandardInformationSize;
  q.file_id = f;
  smb2::append_query_info_request(q, &m);
  Response r = call(m, smb2::kQueryInfo);
  std::span<const uint8_t> out;
  check(smb2::parse_query_info_response(r.msg, &out), "QUERY_INFO response");
  smb2::StandardInformation s;
  check(smb2::parse_standard_information(out, &s), "FileStandardInformation");
  return s;
}

std::vector<smb2::DirectoryEntry> Client::list(const smb2::FileId& dir) {
  std::vector<smb2::DirectoryEntry> all;
  const uint32_t out_len = std::min<uint32_t>(65536, max_transact_);
  for (int round = 0;; ++round) {
    if (round > 100000) protocol_error("QUERY_DIRECTORY never said STATUS_NO_MORE_FILES");
    auto m = header_only();
    smb2::QueryDirectoryRequest q;
    q.file_information_class = smb2::kFileIdBothDirectoryInformation;
    q.flags = round == 0 ? smb2::kRestartScans : 0;
    q.file_id = dir;
    q.pattern = smb_path("*");
    q.output_buffer_length = out_len;
    smb2::append_query_directory_request(q, &m);
    Response r = wait(send(m, smb2::kQueryDirectory, out_len), smb2::kQueryDirectory);
    if (r.h.status == kStatusNoMoreFiles) break;
    if (r.h.status != 0) status_error(smb2::kQueryDirectory, r.h.status, "");
    std::span<const uint8_t> out;
    check(smb2::parse_query_directory_response(r.msg, &out), "QUERY_DIRECTORY response");
    std::vector<smb2::DirectoryEntry> part;
    check(smb2::parse_directory_entries(smb2::kFileIdBothDirectoryInformation, out, 65536, &part),
          "FileIdBothDirectoryInformation");
    if (part.empty()) break;
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

void Client::flush(const smb2::FileId& f) {
  auto m = header_only();
  smb2::append_flush_request(smb2::FlushRequest{.file_id = f}, &m);
  Response r = call(m, smb2::kFlush);
  check(smb2::parse_flush_response(r.msg), "FLUSH response");
}

void Client::echo() {
  auto m = header_only();
  smb2::append_echo(&m);
  Response r = call(m, smb2::kEcho);
  check(smb2::parse_echo(r.msg), "ECHO response");
}

uint8_t* Client::slot_data(unsigned slot) {
  return pool_ ? pool_->data(slot) : slot_mem_[slot].data();
}

uint64_t Client::start_read(const smb2::FileId& f, uint64_t offset, uint32_t len, unsigned slot) {
  if (len > io_size_ || slot >= slots()) throw ClientError(kExitLocal, "read beyond a slot");
  auto& m = request_buffer();
  smb2::ReadRequest rq;
  rq.length = len;
  rq.offset = offset;
  rq.file_id = f;
  // Inline only what one SMB Direct message can bring back.
  const auto& n = t_->negotiated();
  const uint32_t inline_max = std::min(n.max_fragmented_send_size, n.max_fragmented_receive_size);
  Io io{slot, true, pool_ && (len > o_.rdma_threshold || len + 512 > inline_max), len};
  if (io.rdma) {
    rq.channel = channel_ == Channel::kRdma ? smb2::kChannelRdmaV1 : smb2::kChannelRdmaV1Invalidate;
    // One descriptor per registration the slot's bytes span (an I/O larger
    // than the adapter's FRMRPageCount pages takes several).
    const auto d = pool_->expose(slot, len, true);
    io.token = d.front().token;
    smbd::append_buffer_descriptors(d, &rq.channel_info);
  }
  smb2::append_read_request(rq, &m);
  const uint64_t id = send(m, smb2::kRead, len);
  io_.emplace_back(id, io);
  return id;
}

uint64_t Client::start_write(const smb2::FileId& f, uint64_t offset, uint32_t len, unsigned slot) {
  if (len > io_size_ || slot >= slots()) throw ClientError(kExitLocal, "write beyond a slot");
  auto& m = request_buffer();
  smb2::WriteRequest rq;
  rq.offset = offset;
  rq.file_id = f;
  const auto& n = t_->negotiated();
  const uint32_t inline_max = std::min(n.max_fragmented_send_size, n.max_fragmented_receive_size);
  Io io{slot, false, pool_ && (len > o_.rdma_threshold || len + 512 > inline_max), len};
  if (io.rdma) {
    rq.channel = channel_ == Channel::kRdma ? smb2::kChannelRdmaV1 : smb2::kChannelRdmaV1Invalidate;
    rq.remaining_bytes = len;
    // One descriptor per registration the slot's bytes span (an I/O larger
    // than the adapter's FRMRPageCount pages takes several).
    const auto d = pool_->expose(slot, len, false);
    io.token = d.front().token;
    smbd::append_buffer_descriptors(d, &rq.channel_info);
  } else {
    rq.data = std::span<const uint8_t>(slot_data(slot), len);
  }
  smb2::append_write_request(rq, &m);
  const uint64_t id = send(m, smb2::kWrite, len);
  io_.emplace_back(id, io);
  return id;
}

uint32_t Client::finish(uint64_t id, std::span<const uint8_t>* data) {
  auto it = std::find_if(io_.begin(), io_.end(), [id](const auto& e) { return e.first == id; });
  if (it == io_.end()) throw ClientError(kExitLocal, "finish of an I/O that was not started");
  const Io io = it->second;
  io_.erase(it);
  if (data) *data = {};
  const Response& r = wait(id, io.read ? smb2::kRead : smb2::kWrite);
  // The slot's exposure ends with the reply, whatever its status: checks the
  // token a Send with Invalidate named, or invalidates locally.
  if (io.rdma) {
    // A Send with Invalidate of a token that is not this buffer's (its first
    // descriptor's) is the server's protocol error, not a transport one.
    if (r.invalidated && r.invalidated != io.token)
      protocol_error("the " + std::string(io.read ? "READ" : "WRITE") +
                     " response invalidated token " + std::to_string(r.invalidated) +
                     ", not its buffer's " + std::to_string(io.token));
    pool_->release(io.slot, r.invalidated);
  }
  if (io.read && r.h.status == kStatusEndOfFile) return 0;
  if (r.h.status != 0) status_error(io.read ? smb2::kRead : smb2::kWrite, r.h.status, "");
  if (io.read) {
    smb2::ReadResponse rs;
    check(smb2::parse_read_response(r.msg, &rs), "READ response");
    if (io.rdma) {
      if (!rs.data.empty()) protocol_error("READ over the RDMA channel answered with inline data");
      if (rs.data_remaining > io.len) protocol_error("READ: DataRemaining beyond the buffer");
      ++stats_.rdma_reads;
      stats_.rdma_read_bytes += rs.data_remaining;
      if (data) *data = {slot_data(io.slot), rs.data_remaining};
      return rs.data_remaining;
    }
    if (rs.data.size() > io.len) protocol_error("READ: more data than asked for");
    // Handed over where it is (the message stays in stash_ until the next
    // receive), or copied into the slot for a caller that wants it there.
    if (data)
      *data = rs.data;
    else
      std::memcpy(slot_data(io.slot), rs.data.data(), rs.data.size());
    ++stats_.inline_reads;
    return uint32_t(rs.data.size());
  }
  smb2::WriteResponse ws;
  check(smb2::parse_write_response(r.msg, &ws), "WRITE response");
  if (ws.count > io.len) protocol_error("WRITE: Count beyond the bytes sent");
  if (io.rdma) {
    ++stats_.rdma_writes;
    stats_.rdma_write_bytes += ws.count;
  } else {
    ++stats_.inline_writes;
  }
  return ws.count;
}

std::string nt_status_name(uint32_t s) {
  switch (s) {
    case 0x00000000:
      return "STATUS_SUCCESS";
    case 0x80000006:
      return "STATUS_NO_MORE_FILES";
    case 0xC0000008:
      return "STATUS_INVALID_HANDLE";
    case 0xC000000D:
      return "STATUS_INVALID_PARAMETER";
    case 0xC000000F:
      return "STATUS_NO_SUCH_FILE";
    case 0xC0000010:
      return "STATUS_INVALID_DEVICE_REQUEST";
    case 0xC0000011:
      return "STATUS_END_OF_FILE";
    case 0xC0000016:
      return "STATUS_MORE_PROCESSING_REQUIRED";
    case 0xC0000022:
      return "STATUS_ACCESS_DENIED";
    case 0xC0000033:
      return "STATUS_OBJECT_NAME_INVALID";
    case 0xC0000034:
      return "STATUS_OBJECT_NAME_NOT_FOUND";
    case 0xC0000035:
      return "STATUS_OBJECT_NAME_COLLISION";
    case 0xC000003A:
      return "STATUS_OBJECT_PATH_NOT_FOUND";
    case 0xC0000043:
      return "STATUS_SHARING_VIOLATION";
    case 0xC000006D:
      return "STATUS_LOGON_FAILURE";
    case 0xC0000071:
      return "STATUS_PASSWORD_EXPIRED";
    case 0xC0000072:
      return "STATUS_ACCOUNT_DISABLED";
    case 0xC00000BA:
      return "STATUS_FILE_IS_A_DIRECTORY";
    case 0xC00000BB:
      return "STATUS_NOT_SUPPORTED";
    case 0xC00000CC:
      return "STATUS_BAD_NETWORK_NAME";
    case 0xC0000101:
      return "STATUS_DIRECTORY_NOT_EMPTY";
    case 0xC0000103:
      return "STATUS_NOT_A_DIRECTORY";
    case 0xC000007F:
      return "STATUS_DISK_FULL";
    case 0xC0000203:
      return "STATUS_USER_SESSION_DELETED";
    case 0xC000035C:
      return "STATUS_NETWORK_SESSION_EXPIRED";
    case 0xC0000005:
      return "STATUS_ACCESS_VIOLATION";
  }
  char b[32];
  std::snprintf(b, sizeof b, "NTSTATUS 0x%08x", s);
  return b;
}

}  // namespace smb::client
