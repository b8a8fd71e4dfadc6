// SPDX-License-Identifier: Apache-2.0
// proc.cc - posix_spawn with redirected output and a bounded wait.
#include "proc.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "../util/free_port.h"  // compiled into several test folders

extern char** environ;

namespace tools_test {

namespace {
std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
int counter = 0;
}  // namespace

Proc::Proc(const std::vector<std::string>& argv) {
  std::string base =
      "/tmp/tools_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  out_path_ = base + ".out";
  err_path_ = base + ".err";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
}

Proc::~Proc() {
  kill_now();
  std::remove(out_path_.c_str());
  std::remove(err_path_.c_str());
}

void Proc::kill_now() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    reaped_ = true;
  }
}

bool Proc::signal(int sig) {
  if (pid_ <= 0 || reaped_) return false;
  return ::kill(pid_, sig) == 0;
}

bool Proc::wait_for_err(const std::string& text, double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (slurp(err_path_).find(text) != std::string::npos) return true;
    siginfo_t info{};
    bool exited = pid_ <= 0 || reaped_ ||
                  waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
                  info.si_pid != 0;
    if (exited) {
      // Exited (or gone): look once more, its last words may hold the text.
      return slurp(err_path_).find(text) != std::string::npos;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

ProcResult Proc::wait(double seconds) {
  ProcResult r;
  if (pid_ <= 0) {
    r.err = "spawn failed";
    return r;
  }
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  // Short first naps: a quick child (a client of a sequential loop) is
  // reaped within a millisecond or two; longer ones are polled every 10 ms.
  int nap_us = 200;
  while (!reaped_) {
    pid_t w = waitpid(pid_, &status, WNOHANG);
    if (w == pid_) {
      reaped_ = true;
      if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
      break;
    }
    if (std::chrono::steady_clock::now() >= end) {
      r.timed_out = true;
      kill_now();
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(nap_us));
    nap_us = std::min(nap_us * 2, 10000);
  }
  r.out = slurp(out_path_);
  r.err = slurp(err_path_);
  return r;
}

std::string Proc::err_so_far() const { return slurp(err_path_); }

std::string Proc::out_so_far() const { return slurp(out_path_); }

ProcResult run(const std::vector<std::string>& argv, double seconds) {
  Proc p(argv);
  return p.wait(seconds);
}

int free_port() { return test_util::free_port_below_ephemeral(); }

bool wait_tcp_listening(int port, double seconds) {
  char want[8];
  std::snprintf(want, sizeof want, ":%04X", port);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    std::ifstream f("/proc/net/tcp");
    std::string line;
    std::getline(f, line);  // the column names
    while (std::getline(f, line)) {
      std::istringstream in(line);
      std::string slot, local, remote, state;
      in >> slot >> local >> remote >> state;
      if (state == "0A" && local.size() > 5 && local.compare(local.size() - 5, 5, want) == 0)
        return true;
    }
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

SilentListener::SilentListener() {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::listen(fd_, 8) == 0 && ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port_ = ntohs(a.sin_port);
}

SilentListener::~SilentListener() {
  if (fd_ >= 0) ::close(fd_);
}

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  if (!s.empty() && s.back() != '\n') ++n;
  return n;
}

bool xml_well_formed(const std::string& path, std::string* why) {
  ProcResult r = run({"/usr/bin/python3", "-c",
                      "import sys, xml.etree.ElementTree as E; "
                      "root = E.parse(sys.argv[1]).getroot(); "
                      "sys.exit(0 if root.tag.endswith('svg') else 3)",
                      path},
                     30);
  if (r.exit_code == 0) return true;
  if (why) *why = r.err;
  return false;
}

}  // namespace tools_test
