// SPDX-License-Identifier: Apache-2.0
// info_ops.cc - ndk-smbd's metadata commands: QUERY_INFO, SET_INFO (times,
// the read-only attribute, end of file, rename, hard link, delete on
// close), QUERY_DIRECTORY and LOCK. Every path goes through Share
// (confined to the export).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "connection.h"
#include "file_window.h"
#include "info.h"
#include "nt_status.h"
#include "ntlm/ntlmv2_verify.h"
#include "smb2/lock.h"
#include "smb2/query_directory.h"
#include "smb2/query_info.h"
#include "smb2/set_info.h"
#include "smbd/le.h"

namespace smb::server {

namespace le = smbd::le;
using namespace smb::smb2;

namespace {

uint32_t errno_status() { return status_from_errno(errno); }

}  // namespace

uint32_t Connection::query_info(std::span<const uint8_t> m, std::vector<uint8_t>* out) {
  QueryInfoRequest rq;
  if (parse_query_info_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  Open* o = find_open(rq.file_id);
  if (!o) return nt::kFileClosed;
  std::vector<uint8_t> data;
  uint32_t st;
  struct stat sb {};
  if (fstat(o->fd, &sb) != 0) return errno_status();
  if (rq.info_type == kInfoFile) {
    std::string name = "\\" + o->rel;
    std::replace(name.begin(), name.end(), '/', '\\');
    st = file_info(rq.file_info_class, sb, o->delete_on_close, name, &data);
  } else if (rq.info_type == kInfoFilesystem) {
    struct statvfs v {};
    if (fstatvfs(o->fd, &v) != 0) return errno_status();
    st = fs_info(rq.file_info_class, v, sb, &data);
  } else {
    ++stats_.not_supported;
    return nt::kNotSupported;  // security descriptors, quotas
  }
  if (st != nt::kSuccess) {
    ++stats_.not_supported;
    return st;
  }
  if (data.size() > rq.output_buffer_length) {
    // Classes ending in a name are cut (STATUS_BUFFER_OVERFLOW, 3.3.5.20.1);
    // a buffer too small for the fixed part is refused.
    const bool fs = rq.info_type == kInfoFilesystem;
    const bool named =
        fs ? (rq.file_info_class == 1 || rq.file_info_class == 5) : rq.file_info_class == 18;
    const size_t fixed = fs ? (rq.file_info_class == 1 ? 18 : 12) : 100;
    if (!named || rq.output_buffer_length < fixed) return nt::kInfoLengthMismatch;
    data.resize(rq.output_buffer_length);
    append_query_info_response(data, out);
    return nt::kBufferOverflow;
  }
  append_query_info_response(data, out);
  return nt::kSuccess;
}

uint32_t Connection::set_info(std::span<const uint8_t> m, std::vector<uint8_t>* out) {
  smb2::SetInfoRequest rq;
  if (smb2::parse_set_info_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  Open* o = find_open(rq.file_id);
  if (!o) return nt::kFileClosed;
  if (rq.info_type != kInfoFile) {
    ++stats_.not_supported;
    return nt::kNotSupported;
  }
  const auto& b = rq.buffer;
  switch (rq.info_class) {
    case 4: {  // FileBasicInformation: times (0 and -1 mean "leave")
      if (b.size() < 36) return nt::kInfoLengthMismatch;
      struct timespec ts[2];
      const uint64_t at = le::load64(b.data() + 8), wt = le::load64(b.data() + 16);
      auto pick = [](uint64_t ft, struct timespec* t) {
        if (ft == 0 || ft >= 0xFFFFFFFFFFFFFFFEull)
          t->tv_nsec = UTIME_OMIT;
        else
          *t = from_filetime(ft);
      };
      pick(at, &ts[0]);
      pick(wt, &ts[1]);
      if (futimens(o->fd, ts) != 0) return errno_status();
      // FILE_ATTRIBUTE_READONLY (cifs' chmod a-w / u+w without unix
      // extensions) as the owner's write bit; 0 leaves the attributes.
      const uint32_t attrs = le::load32(b.data() + 32);
      struct stat sb {};
      if (attrs && !o->dir && fstat(o->fd, &sb) == 0) {
        const mode_t want =
            (attrs & kAttrReadonly) ? sb.st_mode & ~mode_t(0222) : sb.st_mode | S_IWUSR;
        if ((want & 07777) != (sb.st_mode & 07777) && fchmod(o->fd, want & 07777) != 0)
          return errno_status();
      }
      break;
    }
    case 10:    // FileRenameInformation (SMB2 form, 2.4.37.2)
    case 11: {  // FileLinkInformation (same layout, 2.4.21.2)
      const uint32_t s = rename_or_link(o, b, rq.info_class == 11);
      if (s != nt::kSuccess) return s;
      break;
    }
    case 13:    // FileDispositionInformation
    case 64: {  // FileDispositionInformationEx (flag 0x1: delete)
      if (b.empty() || (rq.info_class == 64 && b.size() < 4)) return nt::kInfoLengthMismatch;
      const bool del = rq.info_class == 13 ? b[0] != 0 : (le::load32(b.data()) & 1) != 0;
      if (del && o->rel.empty()) return nt::kAccessDenied;  // the share root stays
      if (del && o->dir && !dir_empty(o->fd)) return nt::kDirectoryNotEmpty;
      o->delete_on_close = del;
      break;
    }
    case 19:  // FileAllocationInformation: nothing to reserve
      if (b.size() < 8) return nt::kInfoLengthMismatch;
      break;
    case 20: {  // FileEndOfFileInformation
      if (b.size() < 8) return nt::kInfoLengthMismatch;
      const uint64_t eof = le::load64(b.data());
      if (o->dir || eof > uint64_t(INT64_MAX)) return nt::kInvalidParameter;
      // The WRITE windows of this open go first: none stays over pages
      // this cuts off (they would not be written through anyway: a WRITE
      // extends the file before it maps).
      if (windows_) windows_->drop(cur_file_.persistent);
      if (ftruncate(o->fd, off_t(eof)) != 0) return errno_status();
      ReadWindow::size_changed();  // after: a READ then sees the new size
      break;
    }
    default:
      ++stats_.not_supported;
      return nt::kNotSupported;
  }
  smb2::append_set_info_response(out);
  return nt::kSuccess;
}

// FileRenameInformation and FileLinkInformation: ReplaceIfExists(1),
// Reserved(7), RootDirectory(8), FileNameLength(4), FileName (from the
// share's root; cifs sends no RootDirectory).
uint32_t Connection::rename_or_link(Open* o, std::span<const uint8_t> b, bool link) {
  if (b.size() < 20) return nt::kInfoLengthMismatch;
  const bool replace = b[0];
  const uint32_t n = le::load32(b.data() + 16);
  if (n > b.size() - 20) return nt::kInvalidParameter;
  std::string to;
  if (uint32_t s = share_path(b.subspan(20, n), &to); s != nt::kSuccess) return s;
  if (to.empty() || o->rel.empty()) return nt::kAccessDenied;
  if (link && o->dir) return nt::kFileIsADirectory;  // MS-FSA 2.1.5.15.6
  if (to == o->rel) return nt::kSuccess;             // 2.1.5.15.12: renaming to itself
  std::string from_leaf, to_leaf;
  int fp = share_.open_parent(o->rel, &from_leaf);
  if (fp < 0) return status_from_errno(-fp);
  int tp = share_.open_parent(to, &to_leaf);
  if (tp < 0) {
    ::close(fp);
    return tp == -ENOENT ? nt::kObjectPathNotFound : status_from_errno(-tp);
  }
  int r;
  if (!link) {
    r = renameat2(fp, from_leaf.c_str(), tp, to_leaf.c_str(), replace ? 0 : RENAME_NOREPLACE);
  } else {
    r = linkat(fp, from_leaf.c_str(), tp, to_leaf.c_str(), 0);
    if (r != 0 && errno == EEXIST && replace) {
      // ReplaceIfExists: a file (not a directory) of that name goes.
      struct stat t {};
      if (fstatat(tp, to_leaf.c_str(), &t, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(t.st_mode))
        errno = EEXIST;
      else if (unlinkat(tp, to_leaf.c_str(), 0) == 0)
        r = linkat(fp, from_leaf.c_str(), tp, to_leaf.c_str(), 0);
    }
  }
  const int e = errno;
  ::close(fp);
  ::close(tp);
  if (r != 0) {
    // renameat2 without RENAME_NOREPLACE and a directory in the way:
    // EISDIR/ENOTEMPTY/EEXIST are the collision MS-FSA names.
    if (e == EEXIST || (!link && replace && (e == ENOTEMPTY || e == EISDIR)))
      return nt::kObjectNameCollision;
    return status_from_errno(e);
  }
  if (link) return nt::kSuccess;
  // Every open of this connection at or below the old name follows it
  // (a later delete-on-close or FileAllInformation names the new path).
  const std::string from = o->rel;
  for (auto& [k, other] : opens_) {
    if (other.rel == from)
      other.rel = to;
    else if (other.rel.size() > from.size() && other.rel.compare(0, from.size(), from) == 0 &&
             other.rel[from.size()] == '/')
      other.rel = to + other.rel.substr(from.size());
  }
  return nt::kSuccess;
}

uint32_t Connection::query_directory(std::span<const uint8_t> m, std::vector<uint8_t>* out) {
  QueryDirectoryRequest rq;
  if (parse_query_directory_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  Open* o = find_open(rq.file_id);
  if (!o) return nt::kFileClosed;
  if (!o->dir) return nt::kInvalidParameter;
  if (!dir_class_supported(rq.file_information_class)) {
    ++stats_.not_supported;
    return nt::kInvalidInfoClass;
  }
  const std::string pattern = ntlm::utf8_from_utf16le(rq.pattern);
  if (!o->listing_ready || (rq.flags & (kRestartScans | kReopen))) {
    o->listing.clear();
    o->listed = 0;
    int d = openat(o->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0) return errno_status();
    DIR* dir = fdopendir(d);
    if (!dir) {
      ::close(d);
      return errno_status();
    }
    while (dirent* e = readdir(dir)) {
      const std::string n = e->d_name;
      if (pattern.empty() || pattern == "*" || name_matches(pattern, n)) o->listing.push_back(n);
    }
    closedir(dir);
    std::sort(o->listing.begin(), o->listing.end());
    o->listing_ready = true;
    if (o->listing.empty()) return nt::kNoSuchFile;
  }
  std::vector<uint8_t> data;
  size_t last = 0;
  bool any = false;
  while (o->listed < o->listing.size()) {
    const std::string& n = o->listing[o->listed];
    struct stat st {};
    if (fstatat(o->fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      ++o->listed;  // gone meanwhile
      continue;
    }
    std::vector<uint8_t> tmp = data;
    const size_t at = (tmp.size() + 7) & ~size_t(7);
    dir_entry(rq.file_information_class, n, st, &tmp);
    if (tmp.size() > rq.output_buffer_length) {
      if (!any) return nt::kInfoLengthMismatch;
      break;
    }
    if (any) le::store32(tmp.data() + last, uint32_t(at - last));
    data.swap(tmp);
    last = at;
    any = true;
    ++o->listed;
    if (rq.flags & kReturnSingleEntry) break;
  }
  if (!any) return nt::kNoMoreFiles;
  append_query_directory_response(data, out);
  return nt::kSuccess;
}

uint32_t Connection::lock(std::span<const uint8_t> m, std::vector<uint8_t>* out) {
  smb2::LockRequest rq;
  if (smb2::parse_lock_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  Open* o = find_open(rq.file_id);
  if (!o) return nt::kFileClosed;
  if (o->dir) return nt::kInvalidParameter;  // MS-FSA 2.1.5.7: files only
  struct stat sb {};
  if (fstat(o->fd, &sb) != 0) return errno_status();
  const uint32_t st =
      share_.locks().apply({sb.st_dev, sb.st_ino}, {this, cur_file_.persistent}, rq.locks);
  if (st == nt::kLockNotGranted) ++stats_.locks_refused;
  if (st != nt::kSuccess) return st;
  if (!(rq.locks[0].flags & smb2::kLockUnlock)) ++stats_.locks_granted;
  smb2::append_lock_response(out);
  return nt::kSuccess;
}

}  // namespace smb::server
