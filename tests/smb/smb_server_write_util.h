// SPDX-License-Identifier: Apache-2.0
// smb_server_write_util.h - what ndk-smbd's WRITE tests share: a session
// with a new file open, the server's configuration, a file's bytes, a WRITE
// message sent without waiting for its answer.
#pragma once

#include "smb2/read.h"
#include "smb2/set_info.h"
#include "smb_server_harness.h"

namespace smb_server_write_test {

using namespace smb_server_test;

inline constexpr uint32_t kMiB = 1u << 20;

// 3.0.2, authenticated as smbtest, the share connected, `name` opened with
// `disposition` (2: FILE_CREATE): its file id.
inline std::array<uint8_t, 16> open_new_file(Client& c, const std::string& name,
                                             uint32_t disposition = 2) {
  smb2::NegotiateRequest nq;
  nq.dialects = {smb2::kDialect300, smb2::kDialect302};
  EXPECT_EQ(c.call(smb2::kNegotiate,
                   Client::body([&](auto* m) { smb2::append_negotiate_request(nq, m); })),
            nt::kSuccess);
  EXPECT_EQ(authenticate_as(c, "Pw-good"), nt::kSuccess);
  smb2::TreeConnectRequest tq;
  auto path = ntlm::utf16le("\\\\127.0.0.1\\share");
  tq.path = path;
  EXPECT_EQ(c.call(smb2::kTreeConnect,
                   Client::body([&](auto* m) { smb2::append_tree_connect_request(tq, m); })),
            nt::kSuccess);
  EXPECT_EQ(c.call(smb2::kCreate, create_body(name, disposition)), nt::kSuccess);
  std::array<uint8_t, 16> id{};
  if (c.last.size() >= 64 + 80) std::copy(c.last.begin() + 128, c.last.begin() + 144, id.begin());
  return id;
}

// The defaults a user gets, with 4 MiB I/Os and WRITEs read in pieces of
// `write_chunk` bytes (0: whole).
inline server::ServerConfig config(uint32_t write_chunk) {
  server::ServerConfig cfg;
  cfg.users["smbtest"] = "Pw-good";
  cfg.max_io = 4 * kMiB;
  cfg.write_chunk = write_chunk;
  return cfg;
}

inline std::vector<uint8_t> file_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// The FileId of a CREATE response's 16 bytes.
inline smb2::FileId file_id(const std::array<uint8_t, 16>& id) {
  return {le::load64(id.data()), le::load64(id.data() + 8)};
}

// An inline READ of `len` bytes at `at`: its status, and in `data` the
// bytes it answered (empty on a failure).
inline uint32_t read_inline(Client& c, const std::array<uint8_t, 16>& id, uint64_t at, uint32_t len,
                            std::vector<uint8_t>* data) {
  smb2::ReadRequest rq;
  rq.length = len;
  rq.offset = at;
  rq.file_id = file_id(id);
  const uint32_t st =
      c.call(smb2::kRead, Client::body([&](auto* m) { smb2::append_read_request(rq, m); }));
  data->clear();
  if (st != nt::kSuccess) return st;
  smb2::ReadResponse rs;
  EXPECT_EQ(smb2::parse_read_response(c.last, &rs), smb2::ParseError::kNone);
  data->assign(rs.data.begin(), rs.data.end());
  return st;
}

// One I/O of a table of offsets and lengths (the mapped READ and WRITE
// tests walk such tables).
struct FileRange {
  uint64_t at;
  uint32_t len;
};

// One WRITE over the RDMA channel (V1_INVALIDATE) of `len` bytes at `at`
// from slot 0 of `pool`, filled from `want[at, at + len)` (grown as
// needed, the bytes made from `seed`); its status.
inline uint32_t write_at(Client& c, smbd::BufferPool& pool, const std::array<uint8_t, 16>& id,
                         uint64_t at, uint32_t len, std::vector<uint8_t>* want, uint8_t seed) {
  if (want->size() < at + len) want->resize(at + len, 0);
  for (uint32_t i = 0; i < len; ++i) (*want)[at + i] = uint8_t(i * 13 + (i >> 10) + seed);
  std::memcpy(pool.data(0), want->data() + at, len);
  auto d = pool.expose(0, len, false);
  std::vector<uint8_t> body = io_body_list(true, id, len, d);
  le::store64(body.data() + 8, at);
  const uint32_t st = c.call(smb2::kWrite, body);
  EXPECT_EQ(c.invalidated, d[0].token);
  pool.release(0, c.invalidated);
  if (st == nt::kSuccess) {
    EXPECT_EQ(le::load32(c.last.data() + 64 + 4), len) << "at " << at;
  }
  return st;
}

// One READ over the RDMA channel (V1_INVALIDATE) of `len` bytes at `at`
// into slot 0 of `pool`: its status, and in `data` the bytes the answer
// says were written (DataRemaining; empty on a failure). The slot is
// zeroed first, so bytes the server did not write show.
inline uint32_t read_rdma(Client& c, smbd::BufferPool& pool, const std::array<uint8_t, 16>& id,
                          uint64_t at, uint32_t len, std::vector<uint8_t>* data) {
  std::memset(pool.data(0), 0, len);
  auto d = pool.expose(0, len, true);
  std::vector<uint8_t> body = io_body_list(false, id, len, d);
  le::store64(body.data() + 8, at);
  const uint32_t st = c.call(smb2::kRead, body);
  EXPECT_EQ(c.invalidated, d[0].token);  // whatever the status
  pool.release(0, c.invalidated);
  data->clear();
  if (st != nt::kSuccess) return st;
  smb2::ReadResponse rs;
  EXPECT_EQ(smb2::parse_read_response(c.last, &rs), smb2::ParseError::kNone);
  EXPECT_LE(rs.data_remaining, len);
  data->assign(pool.data(0), pool.data(0) + std::min(rs.data_remaining, len));
  return st;
}

// SET_INFO FileEndOfFileInformation of `size` bytes: its status.
inline uint32_t set_end_of_file(Client& c, const std::array<uint8_t, 16>& id, uint64_t size) {
  std::vector<uint8_t> eof(8);
  le::store64(eof.data(), size);
  smb2::SetInfoRequest sq;
  sq.info_class = 20;
  sq.file_id = file_id(id);
  sq.buffer = eof;
  return c.call(smb2::kSetInfo,
                Client::body([&](auto* m) { smb2::append_set_info_request(sq, m); }));
}

// A request message (header + body) of command `cmd` with message id
// `mid`, unsigned.
inline std::vector<uint8_t> request_message(const Client& c, uint16_t cmd, uint64_t mid,
                                            const std::vector<uint8_t>& body) {
  smb2::Header h;
  h.command = cmd;
  h.credits = 8;
  h.message_id = mid;
  h.session_id = c.session;
  h.tree_id = c.tree;
  std::vector<uint8_t> m;
  smb2::append_header(h, &m);
  m.insert(m.end(), body.begin(), body.end());
  return m;
}

// A WRITE request message (header + body) with message id `mid`.
inline std::vector<uint8_t> write_message(const Client& c, uint64_t mid,
                                          std::vector<uint8_t> body) {
  return request_message(c, smb2::kWrite, mid, body);
}

// The largest offset + 1 a file of this file system takes: ftruncate(2)
// refuses a size past it.
inline uint64_t largest_file_size(const fs::path& scratch) {
  const int fd = ::open(scratch.c_str(), O_CREAT | O_RDWR, 0600);
  EXPECT_GE(fd, 0);
  uint64_t lo = 0, hi = uint64_t(INT64_MAX);
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (ftruncate(fd, off_t(mid)) == 0)
      lo = mid;
    else
      hi = mid - 1;
  }
  ::close(fd);
  fs::remove(scratch);
  return lo;
}

// A request message of command `cmd` with message id `mid` (signed with
// the client's key, if it has one), sent without waiting for its answer.
inline void send_request(Client& c, uint16_t cmd, uint64_t mid, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> m = request_message(c, cmd, mid, body);
  if (c.sign_key) {
    le::store32(m.data() + 16, le::load32(m.data() + 16) | smb2::kFlagSigned);
    smb2::sign(*c.sign_key, m);
  }
  c.t.send(m);
}

struct Answer {
  smb2::Header h;
  std::vector<uint8_t> bytes;
  uint32_t invalidated = 0;
};

inline Answer next_answer(Client& c) {
  Answer a;
  EXPECT_TRUE(c.t.receive(&a.bytes, tools::deadline_in(30), &a.invalidated)) << "no answer";
  EXPECT_EQ(smb2::parse_header(a.bytes, &a.h), smb2::ParseError::kNone);
  return a;
}

// After a client went with requests in flight: the server's connection
// ends within a bound, by the transport's reason (the peer's going), not
// by a stop.
inline void expect_ended_by_the_peer(ServedShare& s) {
  ASSERT_EQ(s.srv.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the server did not end the connection";
  const std::string why = s.srv.get();
  EXPECT_NE(why, "stopped") << why;
}

}  // namespace smb_server_write_test
