// SPDX-License-Identifier: Apache-2.0
// ping_options.cc - rping's flags (-s -c -a -p -C -S -v -V -d -P) in CLI11.
#include "ndkping/ping_options.h"

#include <CLI/CLI.hpp>

#include "ndkapp/version.h"
#include "ndkping/rping_msg.h"

namespace softndk::ndkping {

int parse_ping_options(int argc, const char* const* argv, PingOptions& o, std::string& text) {
  CLI::App app{
      "ndkping - rping-compatible ping over softndk (NDKPI on software iWARP).\n"
      "  ndkping -s [-vVd] [-S size] [-C count] [-a addr] [-p port] [-P]\n"
      "  ndkping -c [-vVd] [-S size] [-C count] -a addr [-p port]",
      "ndkping"};
  app.add_flag("-s", o.server, "server");
  app.add_flag("-c", o.client, "client");
  app.add_option("-a", o.address, "address (client: the server; server: where to listen)");
  app.add_option("-p", o.port, "port (default 7174)");
  app.add_option("-C", o.count, "ping count (default 0: forever)");
  app.add_option("-S", o.size, "ping data size")->check(CLI::Range(kRpingMinSize, kRpingMaxSize));
  app.add_flag("-v", o.verbose, "display ping data to stdout");
  app.add_flag("-V", o.validate, "validate ping data");
  app.add_flag("-d", o.debug, "debug printfs");
  app.add_flag("-P", o.persistent, "persistent server mode: serve clients until killed");
  app.add_option("--max-clients", o.max_clients,
                 "-P: clients served at once; more are refused (default 64)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-handshakes", o.max_handshakes,
                 "-P: connections still in their handshake at once; they take no client slot "
                 "and each ends after --timeout (default 256)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--timeout", o.timeout, "seconds a step may take (default 10)")
      ->check(CLI::Range(0.1, 3600.0));
  app.set_version_flag("--version", softndk::tools::version_text("ndkping"),
                       "print the softndk version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    text = app.help();
    return 0;
  } catch (const CLI::CallForVersion& e) {
    text = std::string(e.what()) + "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string m = e.what();
    if (auto nl = m.find('\n'); nl != std::string::npos) m.resize(nl);
    text = m + " (see ndkping --help)";
    return 2;
  }
  if (o.server == o.client) {
    text = "give exactly one of -s (server) and -c (client)";
    return 2;
  }
  if (o.client && o.address.empty()) {
    text = "-c needs the server's address (-a)";
    return 2;
  }
  if (o.client && o.persistent) {
    text = "-P is a server option";
    return 2;
  }
  return -1;
}

}  // namespace softndk::ndkping
