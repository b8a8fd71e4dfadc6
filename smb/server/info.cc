// SPDX-License-Identifier: Apache-2.0
#include "info.h"

#include <algorithm>

#include "nt_status.h"
#include "ntlm/ntlmv2.h"
#include "share.h"
#include "smbd/le.h"

namespace smb::server {

namespace le = smbd::le;

namespace {

uint8_t* grow(std::vector<uint8_t>* out, size_t n) {
  const size_t at = out->size();
  out->resize(at + n, 0);
  return out->data() + at;
}

// A reply that starts empty: assign, not resize (gcc 12 -O2 warns
// -Warray-bounds about resize's move of the zero old bytes, a false positive).
uint8_t* fresh(std::vector<uint8_t>* out, size_t n) {
  out->assign(n, 0);
  return out->data();
}

// A file without its owner's write bit is FILE_ATTRIBUTE_READONLY (cifs
// shows it without write permission; SET_INFO's attribute sets the bit).
uint32_t attributes(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return kAttrDirectory;
  return kAttrArchive | ((st.st_mode & S_IWUSR) ? 0 : kAttrReadonly);
}

// 4 times + attributes + reserved: FileBasicInformation (2.4.7).
void basic(uint8_t* p, const FileTimes& t) {
  le::store64(p, t.creation);
  le::store64(p + 8, t.access);
  le::store64(p + 16, t.write);
  le::store64(p + 24, t.change);
  le::store32(p + 32, t.attributes);
}

// An open file whose last name is gone (unlinked through another open:
// st_nlink 0) is what Windows calls delete pending with its link still
// counted: NumberOfLinks 1, DeletePending TRUE (cifs logs "bogus file nlink
// value 0" for 0 and takes 1 anyway).
void standard(uint8_t* p, const struct stat& st, const FileTimes& t, bool del) {
  le::store64(p, t.allocation);
  le::store64(p + 8, t.eof);
  le::store32(p + 16, std::max<uint32_t>(1, uint32_t(st.st_nlink)));
  p[20] = del || st.st_nlink == 0;
  p[21] = S_ISDIR(st.st_mode);
}

}  // namespace

FileTimes times_of(const struct stat& st) {
  FileTimes t;
  // Linux has no birth time in struct stat: the change time stands in.
  t.creation = filetime(st.st_ctim);
  t.access = filetime(st.st_atim);
  t.write = filetime(st.st_mtim);
  t.change = filetime(st.st_ctim);
  t.eof = S_ISDIR(st.st_mode) ? 0 : uint64_t(st.st_size);
  t.allocation = S_ISDIR(st.st_mode) ? 0 : uint64_t(st.st_blocks) * 512;
  t.attributes = attributes(st);
  return t;
}

uint32_t file_info(uint8_t cls, const struct stat& st, bool del, const std::string& name,
                   std::vector<uint8_t>* out) {
  const FileTimes t = times_of(st);
  out->clear();
  switch (cls) {
    case 4:  // FileBasicInformation
      basic(fresh(out, 40), t);
      return nt::kSuccess;
    case 5:  // FileStandardInformation
      standard(fresh(out, 24), st, t, del);
      return nt::kSuccess;
    case 6:  // FileInternalInformation
      le::store64(fresh(out, 8), uint64_t(st.st_ino));
      return nt::kSuccess;
    case 7:  // FileEaInformation
      fresh(out, 4);
      return nt::kSuccess;
    case 14:  // FilePositionInformation
      fresh(out, 8);
      return nt::kSuccess;
    case 18: {  // FileAllInformation: basic, standard, internal, EA, access,
                // position, mode, alignment, name (empty)
      uint8_t* p = fresh(out, 100);
      basic(p, t);
      standard(p + 40, st, t, del);
      le::store64(p + 64, uint64_t(st.st_ino));
      le::store32(p + 76, 0x001F01FF);  // AccessFlags: FILE_ALL_ACCESS
      const auto n = ntlm::utf16le(name);
      le::store32(out->data() + 96, uint32_t(n.size()));
      out->insert(out->end(), n.begin(), n.end());
      return nt::kSuccess;
    }
    case 34: {  // FileNetworkOpenInformation
      uint8_t* p = fresh(out, 56);
      le::store64(p, t.creation);
      le::store64(p + 8, t.access);
      le::store64(p + 16, t.write);
      le::store64(p + 24, t.change);
      le::store64(p + 32, t.allocation);
      le::store64(p + 40, t.eof);
      le::store32(p + 48, t.attributes);
      return nt::kSuccess;
    }
    case 35:  // FileAttributeTagInformation
      le::store32(fresh(out, 8), t.attributes);
      return nt::kSuccess;
    default:
      return nt::kInvalidInfoClass;
  }
}

uint32_t fs_info(uint8_t cls, const struct statvfs& v, const struct stat& root,
                 std::vector<uint8_t>* out) {
  out->clear();
  const uint64_t unit = v.f_frsize ? v.f_frsize : 4096;
  switch (cls) {
    case 1: {  // FileFsVolumeInformation, label "ndk-smbd"
      const auto label = ntlm::utf16le("ndk-smbd");
      uint8_t* p = fresh(out, 18);
      le::store64(p, filetime(root.st_ctim));
      le::store32(p + 8, uint32_t(root.st_dev));
      le::store32(p + 12, uint32_t(label.size()));
      out->insert(out->end(), label.begin(), label.end());
      return nt::kSuccess;
    }
    case 3: {  // FileFsSizeInformation
      uint8_t* p = fresh(out, 24);
      le::store64(p, v.f_blocks);
      le::store64(p + 8, v.f_bavail);
      le::store32(p + 16, uint32_t(unit / 512));
      le::store32(p + 20, 512);
      return nt::kSuccess;
    }
    case 4: {  // FileFsDeviceInformation: FILE_DEVICE_DISK
      uint8_t* p = fresh(out, 8);
      le::store32(p, 0x07);
      le::store32(p + 4, 0x20);  // FILE_DEVICE_IS_MOUNTED
      return nt::kSuccess;
    }
    case 5: {  // FileFsAttributeInformation
      const auto name = ntlm::utf16le("ndk-smbd");
      uint8_t* p = fresh(out, 12);
      // FILE_CASE_SENSITIVE_SEARCH | FILE_CASE_PRESERVED_NAMES | FILE_UNICODE_ON_DISK
      le::store32(p, 0x1 | 0x2 | 0x4);
      le::store32(p + 4, 255);
      le::store32(p + 8, uint32_t(name.size()));
      out->insert(out->end(), name.begin(), name.end());
      return nt::kSuccess;
    }
    case 7: {  // FileFsFullSizeInformation
      uint8_t* p = fresh(out, 32);
      le::store64(p, v.f_blocks);
      le::store64(p + 8, v.f_bavail);
      le::store64(p + 16, v.f_bfree);
      le::store32(p + 24, uint32_t(unit / 512));
      le::store32(p + 28, 512);
      return nt::kSuccess;
    }
    case 11: {  // FileFsSectorSizeInformation
      uint8_t* p = fresh(out, 28);
      for (int i = 0; i < 4; ++i) le::store32(p + 4 * i, 512);
      le::store32(p + 16, 0x3);  // ALIGNED_DEVICE | PARTITION_ALIGNED_ON_DEVICE
      return nt::kSuccess;
    }
    default:
      return nt::kInvalidInfoClass;
  }
}

bool dir_class_supported(uint8_t c) {
  return c == 1 || c == 2 || c == 3 || c == 12 || c == 37 || c == 38;
}

bool dir_entry(uint8_t cls, const std::string& name, const struct stat& st,
               std::vector<uint8_t>* out) {
  if (!dir_class_supported(cls)) return false;
  while (out->size() % 8) out->push_back(0);
  const auto n = ntlm::utf16le(name);
  const FileTimes t = times_of(st);
  size_t fixed = 0;
  switch (cls) {
    case 1:
      fixed = 64;
      break;
    case 2:
      fixed = 68;
      break;
    case 3:
      fixed = 94;
      break;
    case 12:
      fixed = 12;
      break;
    case 37:
      fixed = 104;
      break;
    case 38:
      fixed = 80;
      break;
  }
  const size_t at = out->size();
  grow(out, fixed);
  uint8_t* p = out->data() + at;
  if (cls == 12) {
    le::store32(p + 8, uint32_t(n.size()));
  } else {
    le::store64(p + 8, t.creation);
    le::store64(p + 16, t.access);
    le::store64(p + 24, t.write);
    le::store64(p + 32, t.change);
    le::store64(p + 40, t.eof);
    le::store64(p + 48, t.allocation);
    le::store32(p + 56, t.attributes);
    le::store32(p + 60, uint32_t(n.size()));
    if (cls == 37) le::store64(p + 96, uint64_t(st.st_ino));
    if (cls == 38) le::store64(p + 72, uint64_t(st.st_ino));
  }
  out->insert(out->end(), n.begin(), n.end());
  return true;
}

}  // namespace smb::server
