// SPDX-License-Identifier: Apache-2.0
// client_error.h - ndk-smb's exit codes (docs/tools.md, the man page) and the
// error that carries one, with the NT status the server answered (if any).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace smb::client {

inline constexpr int kExitOk = 0;
inline constexpr int kExitLocal = 1;      // local failure: file, adapter, resources
inline constexpr int kExitUsage = 2;      // bad command line
inline constexpr int kExitTransport = 3;  // connect refused, SMB Direct error, disconnect, timeout
inline constexpr int kExitAuth = 4;       // the server refused the session (logon failure)
inline constexpr int kExitShare = 5;      // no such share (STATUS_BAD_NETWORK_NAME) or refused
inline constexpr int kExitStatus = 6;     // a file operation failed with an NT status
inline constexpr int kExitVerify = 7;     // data read back differs from what was written
inline constexpr int kExitProtocol = 8;   // the server broke SMB2 (malformed answer, signature)

class ClientError : public std::runtime_error {
 public:
  ClientError(int exit_code, const std::string& what, uint32_t status = 0)
      : std::runtime_error(what), exit_code_(exit_code), status_(status) {}
  int exit_code() const { return exit_code_; }
  uint32_t status() const { return status_; }

 private:
  int exit_code_;
  uint32_t status_;
};

// The name of an NT status the SMB2 servers answer with ("STATUS_LOGON_FAILURE").
std::string nt_status_name(uint32_t status);

}  // namespace smb::client
