// SPDX-License-Identifier: Apache-2.0
#include "share.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "nt_status.h"
#include "ntlm/ntlmv2_verify.h"

namespace smb::server {

uint64_t filetime(const struct timespec& t) {
  return (uint64_t(t.tv_sec) + 11644473600ull) * 10000000ull + uint64_t(t.tv_nsec) / 100;
}

struct timespec from_filetime(uint64_t ft) {
  struct timespec t {};
  const uint64_t s = ft / 10000000ull;
  t.tv_sec = time_t(s >= 11644473600ull ? s - 11644473600ull : 0);
  t.tv_nsec = long(ft % 10000000ull) * 100;
  return t;
}

uint32_t status_from_errno(int e) {
  switch (e) {
    case ENOENT:
      return nt::kObjectNameNotFound;
    case ENOTDIR:
      return nt::kObjectPathNotFound;
    case EEXIST:
      return nt::kObjectNameCollision;
    case EACCES:
    case EPERM:
      return nt::kAccessDenied;
    case EISDIR:
      return nt::kFileIsADirectory;
    case ENOTEMPTY:
      return nt::kDirectoryNotEmpty;
    case ENOSPC:
      return nt::kDiskFull;
    case EFBIG:  // cifs maps STATUS_FILE_TOO_LARGE back to EFBIG
      return nt::kFileTooLarge;
    case EXDEV:  // openat2 RESOLVE_BENEATH: the path would leave the share
    case ELOOP:  // RESOLVE_NO_SYMLINKS: a symbolic link on the way
      return nt::kAccessDenied;
    case ENAMETOOLONG:
      return nt::kObjectNameInvalid;
    case EINVAL:
      return nt::kInvalidParameter;
    default:
      return nt::kUnsuccessful;
  }
}

uint32_t share_path(std::span<const uint8_t> utf16, std::string* out) {
  if (utf16.size() % 2) return nt::kObjectNameInvalid;
  std::string s = ntlm::utf8_from_utf16le(utf16);
  out->clear();
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find('\\', i);
    if (j == std::string::npos) j = s.size();
    std::string c = s.substr(i, j - i);
    i = j + 1;
    if (c.empty()) continue;  // leading '\', doubled separators
    if (c == "." || c == ".." || c.find_first_of(std::string("/:\0", 3)) != std::string::npos)
      return nt::kObjectNameInvalid;
    if (!out->empty()) *out += '/';
    *out += c;
  }
  return nt::kSuccess;
}

// A QUERY_DIRECTORY pattern (MS-FSA 2.1.4.4: '*' and '?', and the DOS
// forms '<', '>' and '"' taken as '*', '?' and '.') against a name: the
// rest of the pattern is literal, so '[' or '\\' in a name are no fnmatch
// syntax.
bool name_matches(const std::string& pattern, const std::string& name) {
  std::string p;
  for (char c : pattern) {
    if (c == '*' || c == '<')
      p += '*';
    else if (c == '?' || c == '>')
      p += '?';
    else if (c == '"')
      p += '.';
    else if (c == '[' || c == ']' || c == '\\')
      (p += '\\') += c;
    else
      p += c;
  }
  return fnmatch(p.c_str(), name.c_str(), 0) == 0;
}

bool dir_empty(int fd) {
  int d = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d < 0) return false;
  DIR* dir = fdopendir(d);
  if (!dir) {
    ::close(d);
    return false;
  }
  bool empty = true;
  while (dirent* e = readdir(dir))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      empty = false;
      break;
    }
  closedir(dir);
  return empty;
}

Share::Share(const std::string& dir) {
  root_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_ < 0)
    throw std::runtime_error("cannot open the share directory " + dir + ": " +
                             std::strerror(errno));
}

Share::~Share() {
  if (root_ >= 0) ::close(root_);
}

int Share::open_beneath(const std::string& rel, int flags, mode_t mode) const {
  struct open_how how {};
  how.flags = uint64_t(flags | O_CLOEXEC);
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const char* p = rel.empty() ? "." : rel.c_str();
  long fd = syscall(SYS_openat2, root_, p, &how, sizeof how);
  return fd < 0 ? -errno : int(fd);
}

int Share::open_parent(const std::string& rel, std::string* leaf) const {
  const size_t slash = rel.rfind('/');
  *leaf = slash == std::string::npos ? rel : rel.substr(slash + 1);
  return open_beneath(slash == std::string::npos ? "" : rel.substr(0, slash),
                      O_RDONLY | O_DIRECTORY);
}

}  // namespace smb::server
