// SPDX-License-Identifier: Apache-2.0
// child_process.h - running another benchmark program (iperf3, ucx_perftest)
// as a reference beside softndk: PATH lookup, a free loopback port, fork+exec
// with its output captured, and bounded waits. Nothing here blocks without a
// deadline; a child that outlives it is killed.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace softndk::baseline {

// True if `prog` is an executable file in a PATH directory.
bool on_path(const std::string& prog);

// An ephemeral TCP port on 127.0.0.1 that was free a moment ago (racy: a
// collision makes the child fail with its own message), or -1.
int free_port();

// fork+exec of argv with `env` added to the environment; stdout to a pipe
// whose read end goes to *out_fd (if out_fd), stderr to /dev/null.
// Returns the pid, or -1.
pid_t spawn(const std::vector<std::string>& argv, int* out_fd,
            const std::vector<std::pair<std::string, std::string>>& env = {});

// Waits up to timeout_s for the child, then kills it (SIGKILL). Returns its
// wait status.
int reap(pid_t pid, double timeout_s);

// Runs argv to completion (at most timeout_s, then killed) and returns what
// it printed on stdout.
std::string run_capture(const std::vector<std::string>& argv, double timeout_s,
                        const std::vector<std::pair<std::string, std::string>>& env = {});

}  // namespace softndk::baseline
