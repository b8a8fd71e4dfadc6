// status.h - NTSTATUS values as short readable names for one-line errors.
#pragma once

#include <string>

#include "softndk/ndkpi.h"

namespace softndk::tools {

// "STATUS_CONNECTION_REFUSED", or "NTSTATUS 0xC0000236" when unknown.
std::string status_name(NTSTATUS status);

// A human cause for a connect/listen failure: "connection refused (no
// listener on 10.0.0.1:18515?)". `where` is "HOST:PORT".
std::string connect_failure_text(NTSTATUS status, const std::string& where);
std::string listen_failure_text(NTSTATUS status, const std::string& where);

}  // namespace softndk::tools
