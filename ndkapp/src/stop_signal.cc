// SPDX-License-Identifier: Apache-2.0
// stop_signal.cc - the first SIGINT/SIGTERM stops in order, the second at
// once. The handler only stores to a lock-free atomic, write()s a message
// built beforehand and calls _exit: all async-signal-safe.
#include "ndkapp/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace softndk::tools {

namespace {

static_assert(std::atomic<bool>::is_always_lock_free);
std::atomic<bool>* g_flag = nullptr;
std::atomic<int> g_signals{0};
int g_forced = 130;
char g_first[160], g_second[160];
size_t g_first_len = 0, g_second_len = 0;

void on_stop_signal(int) {
  if (g_signals.fetch_add(1) == 0) {
    if (g_flag != nullptr) g_flag->store(true);
    (void)!write(STDERR_FILENO, g_first, g_first_len);
    return;
  }
  (void)!write(STDERR_FILENO, g_second, g_second_len);
  _exit(g_forced);
}

}  // namespace

void install_stop_signals(const char* tool, std::atomic<bool>* flag, int forced_exit_code) {
  g_flag = flag;
  g_forced = forced_exit_code;
  std::snprintf(g_first, sizeof g_first, "%s: stopping (press Ctrl-C again to quit at once)\n",
                tool);
  std::snprintf(g_second, sizeof g_second, "%s: second signal, quitting at once\n", tool);
  g_first_len = std::strlen(g_first);
  g_second_len = std::strlen(g_second);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace softndk::tools
