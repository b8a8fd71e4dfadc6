// SPDX-License-Identifier: Apache-2.0
// proc.h - run a tool as a child process with a time limit, for the CLI and
// end-to-end tests: stdout and stderr captured to files, killed (by its own
// pid) when the limit passes, so no test can hang.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace tools_test {

struct ProcResult {
  int exit_code = -1;  // -1: killed at the time limit or by a signal
  bool timed_out = false;
  std::string out, err;
};

class Proc {
 public:
  // Starts argv[0] with the arguments; does not wait.
  explicit Proc(const std::vector<std::string>& argv);
  ~Proc();  // kills the child if it still runs
  // Waits up to `seconds`; on timeout kills the child (SIGKILL).
  ProcResult wait(double seconds);
  void kill_now();
  // Sends `sig` to the child by its pid (SIGSTOP, SIGCONT); false once reaped.
  bool signal(int sig);
  // Waits until the child's stderr so far contains `text` (true), or it
  // exited, or `seconds` passed (false). The child keeps running.
  bool wait_for_err(const std::string& text, double seconds);
  pid_t pid() const { return pid_; }
  // What the child wrote to stderr so far (while it runs).
  std::string err_so_far() const;
  // What the child wrote to stdout so far.
  std::string out_so_far() const;

 private:
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
  bool reaped_ = false;
};

// Starts and waits.
ProcResult run(const std::vector<std::string>& argv, double seconds);

// A TCP port nobody uses on 127.0.0.1 right now, picked at random below the
// kernel's ephemeral range (so that no connect() takes it meanwhile).
int free_port();

// Waits (at most `seconds`) until a socket listens on TCP `port`, read
// from /proc/net/tcp so that no connection disturbs the server; false if
// none did in time.
bool wait_tcp_listening(int port, double seconds = 20);

// A TCP listener on 127.0.0.1 that never accepts and never answers: the
// kernel completes the handshake, so a client's connect succeeds and its
// MPA Request goes unanswered - a host that does not answer, on loopback.
class SilentListener {
 public:
  SilentListener();
  ~SilentListener();
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Number of lines in s (a trailing newline does not start a new line).
int count_lines(const std::string& s);

// True if python3's xml.etree parses the file (or xmllint accepts it).
bool xml_well_formed(const std::string& path, std::string* why = nullptr);

}  // namespace tools_test
