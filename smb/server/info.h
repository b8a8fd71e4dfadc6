// SPDX-License-Identifier: Apache-2.0
// info.h - MS-FSCC information classes built from a struct stat / statvfs:
// the file classes of QUERY_INFO (2.4), the file-system classes (2.5) and
// the directory entries of QUERY_DIRECTORY. Only the classes Linux cifs asks
// for are built; the rest answer STATUS_INVALID_INFO_CLASS / NOT_SUPPORTED.
#pragma once

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cstdint>
#include <string>
#include <vector>

namespace smb::server {

struct FileTimes {
  uint64_t creation = 0, access = 0, write = 0, change = 0;
  uint64_t allocation = 0, eof = 0;
  uint32_t attributes = 0;
};
FileTimes times_of(const struct stat& st);

// File classes (InfoType 1). Returns an NTSTATUS; `out` the encoded class.
// `delete_pending` feeds FileStandardInformation.
// `name`: the open's path from the share root ("\\" for the root), as
// FileAllInformation ends with it (cifs refuses the class without a name).
uint32_t file_info(uint8_t info_class, const struct stat& st, bool delete_pending,
                   const std::string& name, std::vector<uint8_t>* out);
// File-system classes (InfoType 2).
uint32_t fs_info(uint8_t info_class, const struct statvfs& vfs, const struct stat& root,
                 std::vector<uint8_t>* out);

// One directory entry of `info_class` (1, 2, 3, 12, 37, 38) appended to
// `out` at an 8-byte boundary, its NextEntryOffset left 0 (the caller links
// the previous one). False for a class we do not build.
bool dir_entry(uint8_t info_class, const std::string& name, const struct stat& st,
               std::vector<uint8_t>* out);
bool dir_class_supported(uint8_t info_class);

}  // namespace smb::server
