// SPDX-License-Identifier: Apache-2.0
// stop_signal.h - Ctrl-C for the tools that stop in order (servers that
// close their connections, ndk-nvme load that prints its report and shuts
// the controller down): the first SIGINT or SIGTERM asks for the orderly
// stop and says so on stderr; a second one ends the process at once (an
// orderly stop that hangs on a peer must not keep the user waiting).
#pragma once

#include <atomic>

namespace softndk::tools {

// Installs the handlers for SIGINT and SIGTERM. The first signal sets
// `*flag` (the tool's loops watch it) and writes "<tool>: stopping (press
// Ctrl-C again to quit at once)"; the second writes "<tool>: second signal,
// quitting at once" and calls _exit(forced_exit_code). `tool` is copied;
// `flag` must live as long as the process (a static).
void install_stop_signals(const char* tool, std::atomic<bool>* flag, int forced_exit_code);

}  // namespace softndk::tools
