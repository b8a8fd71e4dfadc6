// SPDX-License-Identifier: Apache-2.0
// child_process.cc - see child_process.h.
#include "baseline/child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace softndk::baseline {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

bool on_path(const std::string& prog) {
  const char* path = getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string f = (dir.empty() ? "." : dir) + "/" + prog;
    if (access(f.c_str(), X_OK) == 0) return true;
  }
  return false;
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

pid_t spawn(const std::vector<std::string>& argv, int* out_fd,
            const std::vector<std::pair<std::string, std::string>>& env) {
  int p[2] = {-1, -1};
  if (out_fd && pipe2(p, O_CLOEXEC) < 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDWR);
    dup2(out_fd ? p[1] : devnull, 1);
    dup2(devnull, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  if (out_fd) {
    close(p[1]);
    if (pid < 0) {
      close(p[0]);
    } else {
      *out_fd = p[0];
    }
  }
  return pid;
}

int reap(pid_t pid, double timeout_s) {
  int st = 0;
  auto end = after(timeout_s);
  while (Clock::now() < end) {
    if (waitpid(pid, &st, WNOHANG) == pid) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  return st;
}

std::string run_capture(const std::vector<std::string>& argv, double timeout_s,
                        const std::vector<std::pair<std::string, std::string>>& env) {
  int fd = -1;
  pid_t pid = spawn(argv, &fd, env);
  if (pid < 0) return {};
  std::string out;
  auto end = after(timeout_s);
  char buf[4096];
  int st = 0;
  bool exited = false;
  // Reads until EOF or until the child has exited and its pipe is drained:
  // a grandchild that inherited stdout (UCX may start helpers) must not keep
  // us waiting for EOF.
  while (Clock::now() < end) {
    pollfd pfd{fd, POLLIN, 0};
    int ready = poll(&pfd, 1, 50);
    if (ready > 0) {
      ssize_t k = read(fd, buf, sizeof buf);
      if (k <= 0) break;
      out.append(buf, static_cast<size_t>(k));
      continue;
    }
    if (exited) break;  // exited, and nothing more came within 50 ms
    exited = waitpid(pid, &st, WNOHANG) == pid;
  }
  close(fd);
  if (!exited) reap(pid, 1.0);
  return out;
}

}  // namespace softndk::baseline
