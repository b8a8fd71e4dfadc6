// SPDX-License-Identifier: Apache-2.0
// watchdog.h - the last line of "never hang": a process-wide deadline.
//
// Every wait in the tools has its own timeout, but a library call that never
// returns (a blocking adapter close, a bug) would still hang the process. The
// watchdog prints one line naming the phase it was in and _exit()s with the
// given code when the deadline passes.
#pragma once

#include <chrono>
#include <string>

namespace softndk::tools {

// Starts (or moves) the deadline; seconds <= 0 disarms it.
void watchdog_arm(double seconds, std::string tool, int exit_code = 3);
// Names what the process is doing, for the timeout message.
void watchdog_phase(const std::string& phase);
void watchdog_disarm();
// Moves an armed deadline to now + the armed number of seconds (a sign of
// progress); cheap enough to call once a second.
void watchdog_kick();

}  // namespace softndk::tools
