// SPDX-License-Identifier: Apache-2.0
// connection.h - one SMB2/3 connection of ndk-smbd over an MS-SMBD
// transport: NEGOTIATE (3.0, 3.0.2, 3.1.1 with its preauth integrity hash
// and signing key), SESSION_SETUP (NTLMSSP raw or in
// SPNEGO; NTLMv2 users from a file, guest optional), TREE_CONNECT (the one
// share and IPC$), IOCTL validate-negotiate, CREATE/CLOSE, READ/WRITE
// inline and over the RDMA channel, QUERY_INFO/SET_INFO, QUERY_DIRECTORY,
// FLUSH, ECHO, LOGOFF, TREE_DISCONNECT, LOCK (byte-range locks, locks.h),
// compounded requests. CHANGE_NOTIFY gets STATUS_NOT_SUPPORTED, an
// OPLOCK_BREAK acknowledgment the
// status of MS-SMB2 3.3.5.22 (nothing is ever granted), an FSCTL other than
// validate-negotiate the status of 3.3.5.15, and a command code SMB2 does
// not define ends the connection (3.3.5.2.6). One thread serves a
// connection; a worker of its own writes its pipelined WRITEs
// (write_pipeline.h).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ntlm/ntlmssp.h"
#include "read_window.h"
#include "share.h"
#include "smb2/command.h"
#include "smb2/header.h"
#include "smb2/keys.h"
#include "smbd/rdma_channel.h"
#include "smbd/transport.h"

namespace smb::server {

struct ServerConfig {
  std::string share_name = "share";
  bool guest = false;
  std::map<std::string, std::string> users;  // lower-case user name -> password
  uint32_t max_io = 1u << 20;                // MaxRead/WriteSize (and the RDMA buffer)
  // RDMA staging buffers of max_io bytes per connection, registered as
  // needed: a READ's buffer stays busy until its RDMA Writes complete,
  // which the server does not wait for before the response.
  unsigned staging_buffers = 4;
  // A WRITE over the RDMA channel is read whole, then written (0), or in
  // pieces of this many bytes, each written to the file while the next
  // ones are on the wire. Off by default: on softndk's same-host path the
  // pieces measured no faster (docs/smb-direct-performance.md).
  uint32_t write_chunk = 0;
  // A WRITE over the RDMA channel is read into a staging buffer, then
  // pwrite() (false), or straight into the file's page-cache pages through
  // a mapped, registered window the process keeps for the file (true,
  // file_window.h; where the file cannot be mapped for writing, the copy
  // anyway). Off by default: a window's first store to each page costs a
  // page fault, which on the measured host made WRITEs of fresh data
  // several times slower; rewrites through a warm window were 2-3x faster
  // (docs/smb-direct-performance.md, fifth round). write_chunk > 0 takes
  // the pieced path instead.
  bool map_writes = false;
  // Without map_writes: a WRITE over the RDMA channel is mapped as above
  // once every page it covers has had this many WRITEs (0: never), counted
  // per window of the file across opens and connections
  // (file_window.h). The first WRITEs of a page (a file written once: cp,
  // dd) are copied; a page rewritten again and again goes through the
  // mapping, whose page fault it then pays once.
  unsigned map_rewrites = 0;
  // A WRITE over the RDMA channel is RDMA-Read into one of this many bounce
  // buffers (max_io bytes each, per connection) and pwrite()n by a worker
  // thread while the connection serves the next request: up to this many
  // WRITEs of a connection in flight, each answered when written
  // (write_pipeline.h). 0: read and write each WRITE in turn on the
  // connection's thread, as before. Applies to the copy path only
  // (write_chunk 0, map_writes off, map_rewrites 0).
  unsigned write_pipeline = 2;
  // A small READ answered in place is copied out of a read-only mapping of
  // its file once its open has had ReadWindow::kMapAfter of them, instead
  // of pread(): read_window.h. On the measured host a system call was a
  // quarter of a 4 KiB QD1 READ. A READ over the RDMA channel is written
  // straight out of the file's mapped window (file_window.h), instead of
  // pread() into a staging buffer first. false: pread() for both.
  bool map_reads = true;
  std::array<uint8_t, 16> server_guid{};
  bool trace = false;  // one stderr line per request: command, message id, status
};

struct ServerStats {
  std::atomic<uint64_t> connections{0}, sessions{0}, logon_failures{0};
  std::atomic<uint64_t> rdma_reads{0}, rdma_writes{0}, inline_reads{0}, inline_writes{0};
  std::atomic<uint64_t> bytes_read{0}, bytes_written{0}, send_invalidates{0};
  std::atomic<uint64_t> not_supported{0};
  // SMB2 LOCK requests that took their ranges, and those refused for a
  // conflict (STATUS_LOCK_NOT_GRANTED).
  std::atomic<uint64_t> locks_granted{0}, locks_refused{0};
  std::atomic<uint64_t> signed_responses{0}, sessions_311{0}, bad_signatures{0};
  // Buffer descriptors the RDMA READs and WRITEs named (more than one each
  // when the client's buffer spans several registrations).
  std::atomic<uint64_t> rdma_descriptors{0};
  // RDMA Read requests the WRITEs took (more than one each when a WRITE
  // is read in pieces, ServerConfig::write_chunk), and the most in flight
  // at once.
  std::atomic<uint64_t> rdma_read_requests{0};
  std::atomic<uint32_t> rdma_reads_in_flight_max{0};
  // RDMA WRITEs read straight into the file's pages (ServerConfig::map_writes).
  std::atomic<uint64_t> mapped_writes{0};
  // In-place READs copied out of their file's mapping (ServerConfig::map_reads).
  std::atomic<uint64_t> mapped_reads{0};
  // Mapped WRITEs failed because another process cut the file under their
  // window while the data was placed (file_window.h, fault_guard).
  std::atomic<uint64_t> mapped_write_faults{0};
  // READs over the RDMA channel whose Writes left from the file's mapped
  // window (ServerConfig::map_reads), and those failed because another
  // process cut the file under it meanwhile.
  std::atomic<uint64_t> mapped_rdma_reads{0}, mapped_read_faults{0};
  // WRITEs handed to a connection's write pipeline (ServerConfig::
  // write_pipeline), and those that first waited for one in flight to
  // finish because every bounce buffer was taken.
  std::atomic<uint64_t> pipelined_writes{0}, pipeline_waits{0};
};

class FileWindows;
class WritePipeline;

// Loads "user:password" lines ('#' comments, blank lines). Throws
// std::runtime_error naming the file and line.
std::map<std::string, std::string> load_users(const std::string& path);

class Connection {
 public:
  Connection(const ServerConfig& cfg, const Share& share, smbd::Transport& t, ServerStats& stats);
  ~Connection();
  // Serves until the peer disconnects, a protocol error, or `stop`.
  // Returns why it ended.
  std::string serve(const std::atomic<bool>& stop);

 private:
  struct Session {
    bool valid = false, guest = false, has_key = false, spnego = false;
    // The client's SESSION_SETUP asked for signing (SecurityMode
    // SIGNING_REQUIRED): Session.SigningRequired of MS-SMB2 3.3.5.5.
    bool signing_required = false;
    // Sign the final SESSION_SETUP response: signing_required, or any
    // authenticated 3.1.1 session (MS-SMB2 3.3.5.5.3).
    bool sign_final = false;
    // 3.1.1: PreauthSession.PreauthIntegrityHashValue (3.3.5.5), from the
    // connection's value after NEGOTIATE through every SESSION_SETUP
    // request and every STATUS_MORE_PROCESSING_REQUIRED response.
    smb2::Hash512 preauth{};
    std::array<uint8_t, 8> challenge{};
    ntlm::ChallengeMessage sent;
    smb2::Key16 signing_key{};
  };
  struct Tree {
    bool ipc = false;
  };
  struct Open {
    int fd = -1;
    std::string rel;
    bool dir = false, delete_on_close = false;
    bool mappable = true;  // false: a mapped WRITE failed to set up (write.cc)
    // false: a mapped READ failed to set up (file_ops.cc): pread() for good.
    bool read_mappable = true;
    // Its in-place READs, mapped once it has had many (read_window.h).
    std::unique_ptr<ReadWindow> read_window;
    uint32_t tree = 0;
    uint64_t session = 0;
    std::vector<std::string> listing;  // QUERY_DIRECTORY state
    size_t listed = 0;
    bool listing_ready = false;
  };
  // One request of a compound; builds its response body into `out` and
  // returns the status. `inv` gets a token to invalidate with the Send.
  uint32_t dispatch(const smb2::Header& h, std::span<const uint8_t> m, std::vector<uint8_t>* out,
                    uint32_t* inv);
  uint32_t negotiate(std::span<const uint8_t> m, std::vector<uint8_t>* out);
  // The response to one request is final (header and body as sent): the
  // 3.1.1 preauth integrity hash takes in NEGOTIATE and SESSION_SETUP
  // responses (3.3.5.4, 3.3.5.5).
  void response_built(const smb2::Header& h, uint32_t status, std::span<const uint8_t> response);
  uint32_t session_setup(const smb2::Header& h, std::span<const uint8_t> m,
                         std::vector<uint8_t>* out);
  uint32_t tree_connect(const smb2::Header& h, std::span<const uint8_t> m,
                        std::vector<uint8_t>* out);
  uint32_t ioctl(std::span<const uint8_t> m, std::vector<uint8_t>* out);
  uint32_t oplock_break(std::span<const uint8_t> m);
  // file_ops.cc (QUERY_INFO, SET_INFO, QUERY_DIRECTORY, LOCK: info_ops.cc)
  uint32_t create(const smb2::Header& h, std::span<const uint8_t> m, std::vector<uint8_t>* out);
  uint32_t close(std::span<const uint8_t> m, std::vector<uint8_t>* out);
  uint32_t flush(std::span<const uint8_t> m, std::vector<uint8_t>* out);
  uint32_t read(std::span<const uint8_t> m, std::vector<uint8_t>* out, uint32_t* inv);
  // A READ over the RDMA channel written out of the file's mapped window
  // (file_ops.cc): false when it does not apply (the pread() path serves
  // it); true with its status and the bytes moved.
  bool read_mapped(Open& o, std::span<const smbd::BufferDescriptor> d, uint64_t off, uint32_t len,
                   uint32_t minimum, uint32_t* status, uint32_t* moved);
  // A lone inline READ answered in its send slot (file_ops.cc); false:
  // nothing sent, the general path answers it.
  bool read_in_place(std::span<const uint8_t> msg);
  // write.cc
  uint32_t write(std::span<const uint8_t> m, std::vector<uint8_t>* out, uint32_t* inv);
  bool write_mapped(Open& o, std::span<const smbd::BufferDescriptor> d, uint64_t off, uint32_t len,
                    uint32_t* status);
  FileWindows& windows();
  // write_pipeline.h: whether this WRITE may go through the pipeline (a
  // request alone in its message, the copy path), the pipeline (null when
  // it cannot be had), a WRITE handed to it (the response is sent later),
  // and the answers of those finished: `wait` 0 none, 1 the oldest, 2 all.
  bool may_pipeline() const;
  WritePipeline* pipeline();
  uint32_t write_pipelined(int fd, std::span<const smbd::BufferDescriptor> d, uint64_t off,
                           uint32_t len, uint32_t* inv);
  void answer_writes(int wait);
  // The serve loop, and the end of every way out of it: the WRITEs in
  // flight written, and answered while the transport lasts.
  std::string serve_requests(const std::atomic<bool>& stop);
  void end_writes();
  bool channel_valid_for_dialect(uint32_t channel) const;  // MS-SMB2 3.3.5.12/13
  uint32_t query_info(std::span<const uint8_t> m, std::vector<uint8_t>* out);
  uint32_t set_info(std::span<const uint8_t> m, std::vector<uint8_t>* out);
  uint32_t query_directory(std::span<const uint8_t> m, std::vector<uint8_t>* out);
  uint32_t lock(std::span<const uint8_t> m, std::vector<uint8_t>* out);
  // SET_INFO's FileRenameInformation / FileLinkInformation (info_ops.cc).
  uint32_t rename_or_link(Open* o, std::span<const uint8_t> b, bool link);
  bool cancel_ignored(const smb2::Header& h);
  bool signature_ok(const smb2::Header& h, std::span<const uint8_t> m);
  Open* find_open(const smb2::FileId& id);
  void close_open(uint64_t key);
  smbd::RdmaMover& mover();

  const ServerConfig& cfg_;
  const Share& share_;
  smbd::Transport& t_;
  ServerStats& stats_;
  std::unique_ptr<smbd::RdmaMover> mover_;
  std::unique_ptr<FileWindows> windows_;  // after mover_: released first
  std::unique_ptr<WritePipeline> pipe_;   // after them: its buffers go first
  bool pipe_failed_ = false;              // could not be set up: one WRITE at a time
  // The request being served is alone in its message (no compound): a
  // WRITE of it may be answered later; its answer's header and key.
  bool single_ = false;
  bool deferred_ = false;  // the WRITE just served went to the pipeline
  std::array<uint8_t, 64> later_header_{};
  std::optional<smb2::Key16> later_key_;
  std::vector<uint8_t> answer_;  // an answer being built (reused)
  bool negotiated_ = false;
  uint16_t dialect_ = 0;
  uint32_t client_caps_ = 0;
  uint16_t client_security_mode_ = 0;
  std::array<uint8_t, 16> client_guid_{};
  std::vector<uint16_t> client_dialects_;
  smb2::Hash512 preauth_{};  // 3.1.1: Connection.PreauthIntegrityHashValue
  std::map<uint64_t, Session> sessions_;
  std::map<uint32_t, Tree> trees_;
  std::map<uint64_t, Open> opens_;
  uint64_t next_session_ = 1, next_open_ = 1;
  uint32_t next_tree_ = 1;
  // The compound's current session/tree/file (related requests inherit them).
  uint64_t cur_session_ = 0;
  uint32_t cur_tree_ = 0;
  smb2::FileId cur_file_{};
  bool bad_signature_logged_ = false;
  bool fatal_ = false;  // a validate-negotiate mismatch: drop the connection
  std::string fatal_reason_;
};

inline constexpr uint32_t kMaxOpens = 4096;
inline constexpr uint32_t kServerCapabilities = 0x00000004;  // SMB2_GLOBAL_CAP_LARGE_MTU

}  // namespace smb::server
