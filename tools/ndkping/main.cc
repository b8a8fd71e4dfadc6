// SPDX-License-Identifier: Apache-2.0
// main.cc - ndkping entry point (see docs/ndkping.md).
#include <iostream>

#include "ndkping/ping_options.h"
#include "ndkping/ping_run.h"

int main(int argc, char** argv) {
  using namespace softndk::ndkping;
  PingOptions opt;
  std::string text;
  int rc = parse_ping_options(argc, argv, opt, text);
  if (rc >= 0) {
    if (rc == 0)
      std::cout << text;
    else
      std::cerr << "ndkping: " << text << "\n";
    return rc;
  }
  return opt.server ? run_ping_server(opt, std::cout, std::cerr)
                    : run_ping_client(opt, std::cout, std::cerr);
}
