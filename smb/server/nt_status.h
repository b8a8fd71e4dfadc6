// SPDX-License-Identifier: Apache-2.0
// nt_status.h - the NTSTATUS values ([MS-ERREF] 2.3.1) ndk-smbd answers with.
#pragma once

#include <cstdint>

namespace smb::nt {

inline constexpr uint32_t kSuccess = 0x00000000;
inline constexpr uint32_t kBufferOverflow = 0x80000005;
inline constexpr uint32_t kNoMoreFiles = 0x80000006;
inline constexpr uint32_t kUnsuccessful = 0xC0000001;
inline constexpr uint32_t kInvalidInfoClass = 0xC0000003;
inline constexpr uint32_t kInfoLengthMismatch = 0xC0000004;
inline constexpr uint32_t kInvalidHandle = 0xC0000008;
inline constexpr uint32_t kInvalidParameter = 0xC000000D;
inline constexpr uint32_t kNoSuchFile = 0xC000000F;
inline constexpr uint32_t kInvalidDeviceRequest = 0xC0000010;
inline constexpr uint32_t kEndOfFile = 0xC0000011;
inline constexpr uint32_t kMoreProcessingRequired = 0xC0000016;
inline constexpr uint32_t kAccessDenied = 0xC0000022;
inline constexpr uint32_t kObjectNameInvalid = 0xC0000033;
inline constexpr uint32_t kObjectNameNotFound = 0xC0000034;
inline constexpr uint32_t kObjectNameCollision = 0xC0000035;
inline constexpr uint32_t kObjectPathNotFound = 0xC000003A;
inline constexpr uint32_t kLockNotGranted = 0xC0000055;  // cifs: EACCES
inline constexpr uint32_t kDeletePending = 0xC0000056;
inline constexpr uint32_t kLogonFailure = 0xC000006D;
inline constexpr uint32_t kRangeNotLocked = 0xC000007E;
inline constexpr uint32_t kDiskFull = 0xC000007F;
inline constexpr uint32_t kFileTooLarge = 0xC0000904;  // past the file system's largest file
inline constexpr uint32_t kInsufficientResources = 0xC000009A;
inline constexpr uint32_t kFileIsADirectory = 0xC00000BA;
inline constexpr uint32_t kUnexpectedIoError = 0xC00000E9;
inline constexpr uint32_t kNotSupported = 0xC00000BB;
inline constexpr uint32_t kNetworkNameDeleted = 0xC00000C9;
inline constexpr uint32_t kBadNetworkName = 0xC00000CC;
inline constexpr uint32_t kDirectoryNotEmpty = 0xC0000101;
inline constexpr uint32_t kNotADirectory = 0xC0000103;
inline constexpr uint32_t kFileClosed = 0xC0000128;
inline constexpr uint32_t kFsDriverRequired = 0xC000019C;
inline constexpr uint32_t kInvalidDeviceState = 0xC0000184;
inline constexpr uint32_t kInvalidLockRange = 0xC00001A1;
inline constexpr uint32_t kIoDeviceError = 0xC0000185;
inline constexpr uint32_t kUserSessionDeleted = 0xC0000203;

}  // namespace smb::nt
