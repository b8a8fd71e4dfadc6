// SPDX-License-Identifier: Apache-2.0
// ping_fault_client.cc - an rping client that breaks its own connection on
// purpose, for the ndkping server's exit-code tests (e2e_ndkping_server_test):
//   ping_fault_client PORT corrupt   CRC on, the first advertisement goes out
//                                    with a bit flipped (SoftNdkFaultCorruptTx):
//                                    the server's CRC check fails and it sends
//                                    an LLP Terminate
//   ping_fault_client PORT reset     the connection is aborted with a TCP RST
//                                    right after it is established
// It prints how its own side saw the end (end_cause) and exits 0 when the
// connection did end, 1 otherwise.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "ndkapp/session.h"
#include "ndkping/ping_endpoint.h"

using namespace softndk;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ping_fault_client PORT corrupt|reset\n");
    return 2;
  }
  try {
    std::string mode = argv[2];
    tools::SockAddr server, local;
    std::string e;
    if (!tools::resolve("127.0.0.1", static_cast<uint16_t>(std::atoi(argv[1])), server, e) ||
        !tools::resolve("127.0.0.1", 0, local, e))
      throw tools::ToolError(e);
    tools::AdapterOptions ao;
    ao.crc = mode == "corrupt" ? 1 : -1;
    ao.timeout_s = 10;
    tools::Adapter adapter(ao);
    ndkping::Endpoint ep(adapter, 64, true);
    auto conn =
        tools::Connection::connect(adapter, ep.qp(), local, server, 1, 1, {}, nullptr, nullptr);
    ep.attach(*conn);
    SOFTNDK_FAULT f{};
    f.Type = mode == "corrupt" ? SoftNdkFaultCorruptTx : SoftNdkFaultResetConnection;
    f.Count = 1;
    NTSTATUS st = SoftNdkInjectConnectionFault(conn->get(), &f);
    if (st != STATUS_SUCCESS) throw tools::ToolError("inject: " + std::to_string(st));
    if (mode == "corrupt") {
      ep.post_send_info({ep.start().va(), ep.start().remote_token(), 64});
      if (ep.wait(ndkping::kRecv, 10) >= 0) throw tools::ToolError("the server answered");
    }
    std::cout << "ended: " << ep.end_cause() << "\n";
    return 0;
  } catch (const std::exception& ex) {
    std::cerr << "ping_fault_client: " << ex.what() << "\n";
    return 1;
  }
}
