// SPDX-License-Identifier: Apache-2.0
// session_internal.h - what the session layer's .cc files share and its
// users must not see: the one way a failed NDK call becomes a ToolError,
// and the state a connection's disconnect event writes (read both by the
// connection's set-up code and by its end_cause/wait queries).
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>

#include "ndkapp/session.h"
#include "ndkapp/status.h"

namespace softndk::tools {

// "<what>: STATUS_NAME": the text every failed create/request throws.
[[noreturn]] inline void throw_status(const std::string& what, NTSTATUS st) {
  throw ToolError(what + ": " + status_name(st));
}

struct Connection::Events {
  std::mutex m;
  std::condition_variable cv;
  bool disconnected = false;
  ULONG reason = 0;  // the _EX event's: 0 graceful (FIN), else an NTSTATUS
  Cq* interrupt = nullptr;
};

}  // namespace softndk::tools
