// SPDX-License-Identifier: Apache-2.0
// ndk-smbd's metadata commands as Linux cifs uses them beyond copies
// (tests/interop/smb_cifs_cases.sh, cifs_posix, is the same against the
// real client): SMB2 LOCK (byte-range locks between two opens, as flock()
// and fcntl() send them), SET_INFO FileLinkInformation (hard links), the
// read-only attribute (chmod a-w), a rename that opens below follow, a
// delete-on-close that only removes the file the open has, QUERY_DIRECTORY
// continuation over 1500 entries, and non-ASCII names (UTF-16 surrogate
// pairs) created and listed byte for byte. softndk <-> softndk on
// 127.0.0.1 with the codec client of smb_server_harness.h.
#include <sys/stat.h>

#include <set>

#include "locks.h"
#include "ntlm/ntlmv2_verify.h"
#include "smb2/file_info.h"
#include "smb2/lock.h"
#include "smb2/query_directory.h"
#include "smb2/query_info.h"
#include "smb2/set_info.h"
#include "smb_server_harness.h"

namespace {

using namespace smb_server_test;
using smb2::LockElement;

constexpr uint32_t kDirectoryFile = 0x1, kDeleteOnClose = 0x1000;

std::vector<uint8_t> create_with(const std::string& name, uint32_t disposition, uint32_t options) {
  auto b = create_body(name, disposition);
  le::store32(b.data() + 40, options);
  return b;
}

smb2::FileId file_id_of(const Client& c) {
  return {le::load64(c.last.data() + 64 + 64), le::load64(c.last.data() + 64 + 72)};
}

// A session on the share of a ServedShare, 3.0.2, user smbtest.
struct Session {
  explicit Session(ServedShare& s) : t(s.connect()), c(*t) {
    EXPECT_EQ(negotiate(c, {smb2::kDialect302}), nt::kSuccess);
    EXPECT_EQ(authenticate_as(c, "Pw-good"), nt::kSuccess);
    EXPECT_EQ(tree_connect(c, "\\\\127.0.0.1\\share"), nt::kSuccess);
  }
  smb2::FileId open(const std::string& name, uint32_t disposition = 1, uint32_t options = 0,
                    uint32_t* status = nullptr) {
    const uint32_t st = c.call(smb2::kCreate, create_with(name, disposition, options));
    if (status) *status = st;
    if (!status) {
      EXPECT_EQ(st, nt::kSuccess) << name;
    }
    return st == nt::kSuccess ? file_id_of(c) : smb2::FileId{};
  }
  uint32_t close(const smb2::FileId& f) {
    std::vector<uint8_t> b(24);
    le::store16(b.data(), 24);
    le::store64(b.data() + 8, f.persistent);
    le::store64(b.data() + 16, f.volatile_);
    return c.call(smb2::kClose, b);
  }
  uint32_t lock(const smb2::FileId& f, std::vector<LockElement> e) {
    smb2::LockRequest rq;
    rq.file_id = f;
    rq.locks = std::move(e);
    return c.call(smb2::kLock, Client::body([&](auto* m) { smb2::append_lock_request(rq, m); }));
  }
  uint32_t set_info(const smb2::FileId& f, uint8_t cls, const std::vector<uint8_t>& buf) {
    smb2::SetInfoRequest rq;
    rq.info_class = cls;
    rq.file_id = f;
    rq.buffer = buf;
    return c.call(smb2::kSetInfo,
                  Client::body([&](auto* m) { smb2::append_set_info_request(rq, m); }));
  }
  // The FileRenameInformation / FileLinkInformation buffer.
  static std::vector<uint8_t> name_info(const std::string& to, bool replace) {
    const auto n = ntlm::utf16le(to);
    std::vector<uint8_t> b(20);
    b[0] = replace;
    le::store32(b.data() + 16, uint32_t(n.size()));
    b.insert(b.end(), n.begin(), n.end());
    return b;
  }
  // Every entry of a directory (FileIdFullDirectoryInformation, as cifs
  // asks), `out_len` bytes per response; the number of responses in *rounds.
  std::vector<std::string> list(const smb2::FileId& d, uint32_t out_len, int* rounds,
                                const std::string& pattern = "*") {
    std::vector<std::string> names;
    *rounds = 0;
    for (int i = 0; i < 2000; ++i) {
      smb2::QueryDirectoryRequest q;
      q.file_information_class = 38;
      q.flags = i == 0 ? smb2::kRestartScans : 0;
      q.file_id = d;
      q.pattern = ntlm::utf16le(pattern);
      q.output_buffer_length = out_len;
      const uint32_t st =
          c.call(smb2::kQueryDirectory,
                 Client::body([&](auto* m) { smb2::append_query_directory_request(q, m); }));
      if (st == nt::kNoMoreFiles || (i == 0 && st == nt::kNoSuchFile)) break;
      EXPECT_EQ(st, nt::kSuccess);
      if (st != nt::kSuccess) break;
      ++*rounds;
      std::span<const uint8_t> out;
      EXPECT_EQ(smb2::parse_query_directory_response(c.last, &out), smb2::ParseError::kNone);
      EXPECT_LE(out.size(), out_len);
      std::vector<smb2::DirectoryEntry> part;
      EXPECT_EQ(smb2::parse_directory_entries(38, out, 100000, &part), smb2::ParseError::kNone);
      for (const auto& e : part) names.push_back(ntlm::utf8_from_utf16le(e.name));
    }
    return names;
  }
  std::unique_ptr<smbd::Transport> t;
  Client c;
};

server::ServerConfig config() {
  server::ServerConfig cfg;
  cfg.users["smbtest"] = "Pw-good";
  return cfg;
}

TEST(SmbLockTable, ConflictsUnlockAndRelease) {
  server::LockTable t;
  const server::LockTable::File f{1, 2};
  const server::LockTable::Owner a{&t, 1}, b{&t, 2};
  const uint32_t X = smb2::kLockExclusive | smb2::kLockFailImmediately;
  const uint32_t S = smb2::kLockShared | smb2::kLockFailImmediately;
  const uint32_t U = smb2::kLockUnlock;
  auto one = [](uint64_t o, uint64_t l, uint32_t fl) {
    return std::vector<LockElement>{{o, l, fl}};
  };
  auto many = [](std::vector<LockElement> v) { return v; };
  EXPECT_EQ(t.apply(f, a, one(0, 100, X)), nt::kSuccess);
  EXPECT_EQ(t.apply(f, b, one(50, 100, X)), nt::kLockNotGranted);
  EXPECT_EQ(t.apply(f, b, one(99, 1, S)), nt::kLockNotGranted);
  EXPECT_EQ(t.apply(f, a, one(10, 1, X)), nt::kLockNotGranted);  // not merged, even for its owner
  EXPECT_EQ(t.apply(f, b, one(100, 10, X)), nt::kSuccess);       // beside it
  EXPECT_EQ(t.apply(f, b, one(50, 0, X)), nt::kSuccess);         // zero length: no conflict
  EXPECT_EQ(t.apply({1, 3}, b, one(0, 100, X)), nt::kSuccess);   // another file
  // Unlocks must name a lock of the same owner exactly.
  EXPECT_EQ(t.apply(f, b, one(0, 100, U)), nt::kRangeNotLocked);
  EXPECT_EQ(t.apply(f, a, one(0, 99, U)), nt::kRangeNotLocked);
  EXPECT_EQ(t.apply(f, a, one(0, 100, U | smb2::kLockShared)), nt::kInvalidParameter);
  EXPECT_EQ(t.apply(f, a, one(0, 100, U)), nt::kSuccess);
  EXPECT_EQ(t.apply(f, a, one(0, 100, U)), nt::kRangeNotLocked);
  // Shared locks share; an exclusive one does not join them.
  EXPECT_EQ(t.apply(f, a, one(0, 50, S)), nt::kSuccess);
  EXPECT_EQ(t.apply(f, b, one(0, 50, S)), nt::kSuccess);
  EXPECT_EQ(t.apply(f, b, one(40, 5, X)), nt::kLockNotGranted);
  // Several elements: all with FAIL_IMMEDIATELY, all or none taken.
  EXPECT_EQ(t.apply(f, a, many({{200, 1, smb2::kLockExclusive}, {300, 1, smb2::kLockExclusive}})),
            nt::kInvalidParameter);
  const size_t before = t.count();
  EXPECT_EQ(t.apply(f, a, many({{200, 1, X}, {105, 1, X}})), nt::kLockNotGranted);  // 105: b's
  EXPECT_EQ(t.count(), before);
  EXPECT_EQ(t.apply(f, a, many({{200, 1, X}, {300, 1, X}})), nt::kSuccess);
  EXPECT_EQ(t.apply(f, a, one(0, 1, smb2::kLockShared | smb2::kLockExclusive)),
            nt::kInvalidParameter);
  // A range whose last byte would wrap around.
  EXPECT_EQ(t.apply(f, a, one(~uint64_t(0) - 1, 3, X)), nt::kInvalidLockRange);
  // flock() as cifs sends it: offset 0, length 2^63 - 1 + 1.
  EXPECT_EQ(t.apply({9, 9}, a, one(0, uint64_t(1) << 63, X)), nt::kSuccess);
  EXPECT_EQ(t.apply({9, 9}, b, one(0, uint64_t(1) << 63, X)), nt::kLockNotGranted);
  t.release(a);
  EXPECT_EQ(t.apply({9, 9}, b, one(0, uint64_t(1) << 63, X)), nt::kSuccess);
  t.release(b);
  EXPECT_EQ(t.count(), 0u);
}

TEST(SmbServerPaths, SearchPatterns) {
  EXPECT_TRUE(server::name_matches("*", "a"));
  EXPECT_TRUE(server::name_matches("*", ".hidden"));
  EXPECT_TRUE(server::name_matches("a?c", "abc"));
  EXPECT_TRUE(server::name_matches("*.txt", "x.txt"));
  EXPECT_FALSE(server::name_matches("*.txt", "x.txz"));
  // fnmatch syntax in a name is literal: cifs looks names up by pattern.
  EXPECT_TRUE(server::name_matches("file[1]", "file[1]"));
  EXPECT_FALSE(server::name_matches("file[1]", "file1"));
  EXPECT_TRUE(server::name_matches("back\\slash", "back\\slash"));
  EXPECT_TRUE(server::name_matches("<.c", "x.c"));  // DOS_STAR
}

// LOCK through the server: two opens of one file (as two processes' flock()
// and fcntl() reach ndk-smbd), the lock released at CLOSE.
TEST(SmbServerFileOps, LockBetweenOpensAndAtClose) {
  ServedShare s(config());
  Session a(s);
  const auto f1 = a.open("locked.bin", 2);
  const auto f2 = a.open("locked.bin", 1);
  const uint32_t X = smb2::kLockExclusive | smb2::kLockFailImmediately;
  EXPECT_EQ(a.lock(f1, {{0, uint64_t(1) << 63, X}}), nt::kSuccess);
  EXPECT_EQ(a.lock(f2, {{0, 1, X}}), nt::kLockNotGranted);
  // A waiting lock is refused at once too (no STATUS_PENDING: locks.h).
  EXPECT_EQ(a.lock(f2, {{0, 1, smb2::kLockExclusive}}), nt::kLockNotGranted);
  EXPECT_EQ(a.lock(f2, {{0, uint64_t(1) << 63, smb2::kLockUnlock}}), nt::kRangeNotLocked);
  EXPECT_EQ(a.lock(smb2::FileId{77, 77}, {{0, 1, X}}), nt::kFileClosed);
  EXPECT_EQ(a.close(f1), nt::kSuccess);  // its lock goes with it
  EXPECT_EQ(a.lock(f2, {{0, 1, X}}), nt::kSuccess);
  EXPECT_EQ(a.lock(f2, {{0, 1, smb2::kLockUnlock}}), nt::kSuccess);
  // A LOCK with LockCount 0 is malformed.
  std::vector<uint8_t> bad(48);
  le::store16(bad.data(), 48);
  le::store64(bad.data() + 8, f2.persistent);
  le::store64(bad.data() + 16, f2.volatile_);
  EXPECT_EQ(a.c.call(smb2::kLock, bad), nt::kInvalidParameter);
  const auto d = a.open("", 1, kDirectoryFile);
  EXPECT_EQ(a.lock(d, {{0, 1, X}}), nt::kInvalidParameter);  // a directory
  EXPECT_EQ(s.stats.locks_granted.load(), 2u);
  EXPECT_EQ(s.stats.locks_refused.load(), 2u);
  EXPECT_EQ(s.share.locks().count(), 0u);
  // A lock still held when the connection ends is dropped with it.
  EXPECT_EQ(a.lock(f2, {{5, 5, X}}), nt::kSuccess);
  EXPECT_EQ(s.share.locks().count(), 1u);
  s.stop = true;
  EXPECT_EQ(s.srv.get(), "stopped");
  EXPECT_EQ(s.share.locks().count(), 0u);
}

TEST(SmbServerFileOps, HardLinkReadOnlyRenameAndDeleteOnClose) {
  ServedShare s(config());
  Session a(s);
  const fs::path ex = s.dir.root / "export";
  std::ofstream(ex / "orig") << "content";
  auto f = a.open("orig");
  EXPECT_EQ(a.set_info(f, 11, Session::name_info("linked", false)), nt::kSuccess);
  EXPECT_EQ(fs::hard_link_count(ex / "orig"), 2u);
  EXPECT_EQ(a.set_info(f, 11, Session::name_info("linked", false)), nt::kObjectNameCollision);
  std::ofstream(ex / "other") << "x";
  EXPECT_EQ(a.set_info(f, 11, Session::name_info("other", true)), nt::kSuccess);  // replaced
  EXPECT_EQ(fs::hard_link_count(ex / "orig"), 3u);
  EXPECT_EQ(a.set_info(f, 11, Session::name_info("nodir\\x", false)), nt::kObjectPathNotFound);

  // FileBasicInformation with FILE_ATTRIBUTE_READONLY: no write bits;
  // without it (NORMAL): the owner's write bit again. Times 0: left alone.
  std::vector<uint8_t> basic(40);
  le::store32(basic.data() + 32, server::kAttrReadonly);
  EXPECT_EQ(a.set_info(f, 4, basic), nt::kSuccess);
  EXPECT_EQ(fs::status(ex / "orig").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  le::store32(basic.data() + 32, server::kAttrNormal);
  EXPECT_EQ(a.set_info(f, 4, basic), nt::kSuccess);
  EXPECT_TRUE((fs::status(ex / "orig").permissions() & fs::perms::owner_write) != fs::perms::none);

  // A directory renamed: the open below it follows (its delete on close
  // removes the file at its new path).
  fs::create_directories(ex / "d");
  std::ofstream(ex / "d" / "inner") << "i";
  auto inner = a.open("d\\inner", 1, kDeleteOnClose);
  auto dir = a.open("d", 1, kDirectoryFile);
  EXPECT_EQ(a.set_info(dir, 10, Session::name_info("d2", false)), nt::kSuccess);
  EXPECT_EQ(a.close(dir), nt::kSuccess);
  EXPECT_TRUE(fs::exists(ex / "d2" / "inner"));
  EXPECT_EQ(a.close(inner), nt::kSuccess);
  EXPECT_FALSE(fs::exists(ex / "d2" / "inner"));
  // Renaming onto an existing directory is a collision, not a crash.
  fs::create_directories(ex / "busy" / "x");
  EXPECT_EQ(a.set_info(f, 10, Session::name_info("busy", true)), nt::kObjectNameCollision);

  // Delete on close of an open whose name now names another file (renamed
  // away by someone else, replaced): that other file stays.
  auto victim = a.open("victim", 2, kDeleteOnClose);
  fs::rename(ex / "victim", ex / "moved-away");
  std::ofstream(ex / "victim") << "a new file of that name";
  EXPECT_EQ(a.close(victim), nt::kSuccess);
  EXPECT_TRUE(fs::exists(ex / "victim"));
  EXPECT_EQ(fs::file_size(ex / "victim"), 23u);
  EXPECT_EQ(a.close(f), nt::kSuccess);

  // An open whose file lost its last name (unlinked through another open,
  // as cifs's rm of an open file does): FileStandardInformation says one
  // link and delete pending, as Windows does, not 0 ("bogus file nlink").
  std::ofstream(ex / "gone") << "data";
  auto held = a.open("gone");
  auto doomed = a.open("gone", 1, kDeleteOnClose);
  EXPECT_EQ(a.close(doomed), nt::kSuccess);
  EXPECT_FALSE(fs::exists(ex / "gone"));
  smb2::QueryInfoRequest q;
  q.file_info_class = 5;  // FileStandardInformation
  q.output_buffer_length = 64;
  q.file_id = held;
  ASSERT_EQ(a.c.call(smb2::kQueryInfo,
                     Client::body([&](auto* m) { smb2::append_query_info_request(q, m); })),
            nt::kSuccess);
  std::span<const uint8_t> out;
  ASSERT_EQ(smb2::parse_query_info_response(a.c.last, &out), smb2::ParseError::kNone);
  smb2::StandardInformation si;
  ASSERT_EQ(smb2::parse_standard_information(out, &si), smb2::ParseError::kNone);
  EXPECT_EQ(si.number_of_links, 1u);
  EXPECT_TRUE(si.delete_pending);
  EXPECT_EQ(si.end_of_file, 4u);
  EXPECT_EQ(a.close(held), nt::kSuccess);
}

// 1500 entries through 64 KiB responses (several rounds, each entry once,
// "." and ".." included), then a smaller buffer; names with UTF-16
// surrogate pairs made by CREATE and listed byte for byte.
TEST(SmbServerFileOps, LargeDirectoryAndNonAsciiNames) {
  ServedShare s(config());
  Session a(s);
  const fs::path many = s.dir.root / "export" / "many";
  fs::create_directories(many);
  char n[64];
  for (int i = 0; i < 1500; ++i) {
    std::snprintf(n, sizeof n, "f%04d-a-name-of-forty-characters-or-so", i);
    std::ofstream(many / n) << i;
  }
  const auto d = a.open("many", 1, kDirectoryFile);
  int rounds = 0;
  auto names = a.list(d, 65536, &rounds);
  EXPECT_GT(rounds, 3);
  EXPECT_EQ(names.size(), 1502u);
  std::set<std::string> uniq(names.begin(), names.end());
  EXPECT_EQ(uniq.size(), names.size());
  EXPECT_TRUE(uniq.count(".") && uniq.count(".."));
  EXPECT_TRUE(uniq.count("f1499-a-name-of-forty-characters-or-so"));
  // A buffer that holds a single entry: still every entry, once.
  names = a.list(d, 200, &rounds);
  EXPECT_EQ(names.size(), 1502u);
  EXPECT_GT(rounds, 1000);  // "." and ".." share the first response
  // A pattern that matches nothing: STATUS_NO_SUCH_FILE on the first call.
  EXPECT_TRUE(a.list(d, 65536, &rounds, "nothing*").empty());
  EXPECT_EQ(a.c.last.size() >= 68 ? le::load32(a.c.last.data() + 8) : 0u, nt::kNoSuchFile);
  EXPECT_EQ(a.close(d), nt::kSuccess);

  const std::vector<std::string> odd = {"emoji-\xF0\x9F\x98\x80-\xF0\x9F\x8E\xB5",
                                        "\xF0\x9D\x84\x9E clef",
                                        "caf\xC3\xA9 na\xC3\xAFve \xE2\x82\xAC",
                                        "name with  spaces ",
                                        "file[1]",
                                        std::string(255, 'L')};
  const auto root = a.open("", 1, kDirectoryFile);
  fs::create_directories(s.dir.root / "export" / "names");
  for (const auto& name : odd) {
    const auto f = a.open("names\\" + name, 2);
    EXPECT_EQ(a.close(f), nt::kSuccess);
    EXPECT_TRUE(fs::exists(s.dir.root / "export" / "names" / name)) << name;
  }
  std::string too_long(256, 'x');
  uint32_t st = 0;
  a.open("names\\" + too_long, 2, 0, &st);
  EXPECT_EQ(st, nt::kObjectNameInvalid);
  const auto nd = a.open("names", 1, kDirectoryFile);
  names = a.list(nd, 65536, &rounds);
  for (const auto& name : odd) EXPECT_EQ(std::count(names.begin(), names.end(), name), 1) << name;
  // Looked up by its own name as the pattern, as cifs does for one file.
  EXPECT_EQ(a.list(nd, 65536, &rounds, "file[1]"), std::vector<std::string>{"file[1]"});
  EXPECT_EQ(a.close(nd), nt::kSuccess);
  EXPECT_EQ(a.close(root), nt::kSuccess);
}

}  // namespace
