// SPDX-License-Identifier: Apache-2.0
// client.h - an SMB 3.x client over SMB Direct (smb/smbd): NEGOTIATE (3.0,
// 3.0.2, 3.1.1 with the SHA-512 preauth integrity hash), SESSION_SETUP with
// NTLMSSP/NTLMv2 (a user and password, or guest), AES-CMAC signing with the
// SP800-108 keys when the server or the user requires it, TREE_CONNECT,
// CREATE/CLOSE, READ/WRITE inline or through the RDMA channel
// (SMB2_CHANNEL_RDMA_V1[_INVALIDATE], buffers fast-registered per I/O from a
// pool registered once), QUERY_INFO and QUERY_DIRECTORY.
//
// One thread drives a Client (like the transport under it). Every wait is
// bounded by Options::timeout_s and names what it waited for. Failures are
// thrown as ClientError carrying the ndk-smb exit code that says what
// happened (client_error.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "client_error.h"
#include "rdma_channel.h"
#include "smb2/create.h"
#include "smb2/file_info.h"
#include "smb2/keys.h"
#include "transport.h"

namespace smb::client {

namespace tools = softndk::tools;

enum class Channel { kInline, kRdma, kRdmaInvalidate };
const char* channel_name(Channel c);

struct Options {
  std::string host;
  uint16_t port = 5445;
  std::string share;
  std::string user, password, domain;
  bool guest = false;
  std::vector<uint16_t> dialects = {0x0311, 0x0302, 0x0300};
  bool require_signing = false;
  // Refuse ksmbd's signature of RDMA READ responses (over its RFC 1002
  // length prefix too) instead of accepting it (client.cc).
  bool strict_signing = false;
  Channel channel = Channel::kRdmaInvalidate;
  // READ/WRITE of at most this many bytes go inline even on an RDMA channel
  // (cifs' rdma_readwrite_threshold is the same 4 KiB).
  uint32_t rdma_threshold = 4096;
  uint32_t io_size = 1u << 20;  // largest READ/WRITE (capped by the server's limits)
  unsigned slots = 1;           // I/O buffers: the most READ/WRITEs in flight
  double timeout_s = 30;        // every wait for a response
  smbd::TransportConfig transport;
};

struct Stats {
  uint64_t rdma_reads = 0, rdma_read_bytes = 0;    // READs the server answered by RDMA Write
  uint64_t rdma_writes = 0, rdma_write_bytes = 0;  // WRITEs whose data it pulled by RDMA Read
  uint64_t inline_reads = 0, inline_writes = 0;
  uint64_t signed_sent = 0, signatures_verified = 0;
  uint64_t ksmbd_read_signatures = 0;  // RDMA READ responses signed ksmbd's way
  uint64_t unverified_errors = 0;      // failure responses whose signature did not verify
};

class Client {
 public:
  // Made first, connected second: when connect() fails (negotiate, session
  // setup, tree connect), the caller still holds the Client and with it the
  // connection, so it can say what failed and bound the teardown
  // (Adapter::limit_teardown) before the Client goes.
  explicit Client(const Options& o);
  // SMB Direct connection, NEGOTIATE, SESSION_SETUP, TREE_CONNECT, the I/O
  // buffers. Once only.
  void connect(tools::Adapter& a, const tools::SockAddr& local, const tools::SockAddr& peer);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  uint16_t dialect() const { return dialect_; }
  bool signing() const { return signing_; }
  bool guest() const { return guest_; }
  Channel channel() const { return channel_; }
  uint32_t io_size() const { return io_size_; }
  unsigned slots() const { return unsigned(slot_mem_.size()); }
  const Stats& stats() const { return stats_; }
  // False until connect() has an SMB Direct connection (and after a failed
  // one): transport() needs one.
  bool has_transport() const { return t_ != nullptr; }
  const smbd::Transport& transport() const { return *t_; }
  uint64_t remote_invalidations() const { return pool_ ? pool_->remote_invalidations() : 0; }
  uint64_t local_invalidations() const { return pool_ ? pool_->local_invalidations() : 0; }
  // Notes for the user (a channel the dialect cannot do, ...).
  const std::vector<std::string>& notes() const { return notes_; }

  // CREATE; `path` uses '/' or '\\', relative to the share ("" = its root).
  smb2::FileId open(const std::string& path, uint32_t access, uint32_t disposition,
                    uint32_t options, smb2::CreateResponse* info = nullptr);
  void close(const smb2::FileId& f);
  smb2::NetworkOpenInformation query_network_open(const smb2::FileId& f);
  smb2::StandardInformation query_standard(const smb2::FileId& f);
  std::vector<smb2::DirectoryEntry> list(const smb2::FileId& dir);
  void flush(const smb2::FileId& f);
  void echo();

  // Pipelined I/O through slot buffers (slots() of them, io_size() bytes
  // each): fill slot_data() and start a WRITE, or start a READ and find the
  // bytes there after finish(). finish() returns the bytes moved (a READ
  // at or past the end of file: 0).
  //
  // With `data`, a READ's bytes are not copied: *data is where they are,
  // the slot's buffer (RDMA channel) or the response message itself
  // (inline READ), valid until the next call into the Client; the slot's
  // buffer is then left as it was. Without it an inline READ's bytes are
  // copied into the slot. None of these calls allocates memory once the
  // first few I/Os have run (no allocation per I/O).
  uint8_t* slot_data(unsigned slot);
  uint64_t start_read(const smb2::FileId& f, uint64_t offset, uint32_t len, unsigned slot);
  uint64_t start_write(const smb2::FileId& f, uint64_t offset, uint32_t len, unsigned slot);
  uint32_t finish(uint64_t id, std::span<const uint8_t>* data = nullptr);

  // TREE_DISCONNECT, LOGOFF, SMB Direct disconnect; bounded, errors ignored.
  void logoff();

 private:
  struct Response {
    std::vector<uint8_t> msg;
    smb2::Header h;
    uint32_t invalidated = 0;
    bool bad_signature = false;  // a failure whose signature did not verify (receive_one)
    bool held = false;           // in stash_: received, not yet taken by wait()
  };
  struct Io {
    unsigned slot = 0;
    bool read = false, rdma = false;
    uint32_t len = 0;
    uint32_t token = 0;  // the RDMA buffer's token the server may invalidate
  };
  void negotiate();
  void session_setup();
  void tree_connect();
  // Fills in the header of `msg` (its first 64 bytes), signs it when the
  // session signs, sends it; returns its MessageId.
  uint64_t send(std::vector<uint8_t>& msg, uint16_t command, uint32_t len_for_charge = 0);
  // The response to `id` (interim STATUS_PENDING answers skipped): an
  // entry of stash_, valid until the next receive.
  const Response& wait(uint64_t id, uint16_t command);
  // wait() + status check: a failure status becomes a ClientError.
  Response call(std::vector<uint8_t>& msg, uint16_t command, uint32_t len_for_charge = 0);
  void receive_one(const char* what, uint64_t id);
  bool ksmbd_rdma_read_signature(const smb2::Header& h, std::span<const uint8_t> m);
  [[noreturn]] void status_error(uint16_t command, uint32_t status, const char* what);
  std::vector<uint8_t> header_only();
  // req_, cleared to a blank header: the READ/WRITE requests are built in
  // it (its capacity reused; no allocation per I/O).
  std::vector<uint8_t>& request_buffer();

  Options o_;
  std::unique_ptr<smbd::Transport> t_;
  std::unique_ptr<smbd::BufferPool> pool_;
  std::vector<std::vector<uint8_t>> slot_mem_;  // inline channel: the slots' bytes
  Channel channel_ = Channel::kInline;
  uint16_t dialect_ = 0;
  uint32_t max_read_ = 0, max_write_ = 0, max_transact_ = 0;
  bool large_mtu_ = false;
  uint32_t io_size_ = 0;
  uint64_t next_id_ = 0;
  uint32_t credits_ = 1;
  uint32_t in_flight_ = 0;  // requests sent, final response not yet received
  uint64_t session_id_ = 0;
  uint32_t tree_id_ = 0;
  bool signing_ = false, guest_ = false;
  bool has_signing_key_ = false;  // an authenticated (not guest) session
  smb2::Key16 signing_key_{};
  smb2::Hash512 preauth_{};
  // Responses received and not yet taken; the entries keep their
  // messages' capacity for later ones (receive() swaps vectors).
  std::vector<Response> stash_;
  std::vector<std::pair<uint64_t, Io>> io_;  // I/Os started, by MessageId (a few: slots)
  std::vector<uint8_t> req_;
  std::vector<std::string> notes_;
  Stats stats_;
};

// "a/b" -> UTF-16LE "a\b" (no leading separator).
std::vector<uint8_t> smb_path(const std::string& path);
std::string utf8_from_utf16le(std::span<const uint8_t> s);
// A dialect as text ("3.1.1") and back (0 if unknown).
std::string dialect_name(uint16_t d);
uint16_t dialect_from(const std::string& s);

}  // namespace smb::client
