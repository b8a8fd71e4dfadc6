// SPDX-License-Identifier: Apache-2.0
// ndkinfo_test.cc - the ndkinfo tool as a script would use it: run it,
// parse its JSON, check its exit codes (docs/ndkinfo.md).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "util/netns.h"

namespace {

namespace netns = softndk::test::netns;

using json = nlohmann::json;

struct ToolRun {
  int rc = -1;
  std::string out;  // stdout only; stderr goes to the test log
};

ToolRun ndkinfo_cmd(const std::string& cmd) {
  ToolRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

ToolRun ndkinfo(const std::string& args) {
  return ndkinfo_cmd(std::string(NDKINFO_PATH) + " " + args);
}

ToolRun ndkinfo_in(const netns::NetNs& ns, const std::string& args) {
  return ndkinfo_cmd(ns.exec(NDKINFO_PATH) + " " + args);
}

const json* find_adapter(const json& doc, const std::string& name) {
  for (const auto& a : doc.at("adapters")) {
    if (a.at("name") == name) return &a;
  }
  return nullptr;
}

bool contains(const json& array, const std::string& s) {
  for (const auto& v : array) {
    if (v == s) return true;
  }
  return false;
}

TEST(NdkInfoJson, ListsLoopbackWith127001AndSaneLimits) {
  const ToolRun r = ndkinfo("--json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("schema_version"), 1);
  const json* lo = find_adapter(doc, "lo");
  ASSERT_NE(lo, nullptr) << r.out;
  EXPECT_TRUE(contains(lo->at("addresses"), "127.0.0.1"));
  EXPECT_TRUE(lo->at("error").is_null());
  EXPECT_EQ(lo->at("port_state"), "ACTIVE");
  EXPECT_GT(lo->at("mtu").get<uint32_t>(), 0u);

  const json& info = lo->at("info");
  EXPECT_EQ(info.at("rdma_technology"), "iWARP");
  EXPECT_EQ(info.at("ndk_version").get<std::string>().substr(0, 2), "2.");
  for (const char* key :
       {"max_initiator_queue_depth", "max_receive_queue_depth", "max_cq_depth",
        "max_initiator_request_sge", "max_receive_request_sge", "max_inbound_read_limit",
        "max_outbound_read_limit", "max_registration_size", "max_transfer_length"}) {
    EXPECT_GT(info.at(key).get<uint64_t>(), 0u) << key;
  }
  // Limits that bound one another.
  EXPECT_LE(info.at("max_read_request_sge").get<uint64_t>(),
            info.at("max_initiator_request_sge").get<uint64_t>());
  EXPECT_LT(info.at("max_cq_depth").get<uint64_t>(), 1ull << 32);
  EXPECT_TRUE(info.at("adapter_flags_decoded").is_array());

  ASSERT_EQ(lo->at("ports").size(), 1u);
  const json& port = lo->at("ports")[0];
  EXPECT_EQ(port.at("number"), 1);
  EXPECT_EQ(port.at("state"), "ACTIVE");
  EXPECT_EQ(port.at("ifname"), "lo");
  EXPECT_TRUE(contains(port.at("addresses"), "127.0.0.1"));
  EXPECT_TRUE(lo->at("counters").is_object());
  // The engine serving it and why (SoftNdkQueryBackend): lo has no RDMA
  // device, so software iWARP whatever the host has.
  const json& be = lo->at("backend");
  EXPECT_EQ(be.at("name"), "iwarp-sw") << be;
  EXPECT_EQ(be.at("device"), "") << be;
  EXPECT_NE(be.at("why").get<std::string>().find("software iWARP"), std::string::npos) << be;
  EXPECT_EQ(be.at("fast_register").get<std::string>().rfind("software", 0), 0u) << be;
}

// Every addressed interface is an adapter, not just lo: in a namespace of
// its own with lo and one veth end carrying an IPv4 address, ndkinfo lists
// exactly those two (a veth end without an address is not listed).
TEST(NdkInfoJson, ListsEveryAddressedInterfaceOfItsNamespace) {
  if (!netns::available()) GTEST_SKIP() << "needs root and iproute2";
  netns::NetNs a, b;
  ASSERT_TRUE(a.ok() && b.ok());
  netns::Veth v(a, b);
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(v.addr_a("10.77.3.1/24"));
  const ToolRun r = ndkinfo_in(a, "--json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc.at("adapters").size(), 2u) << r.out;
  const json* lo = find_adapter(doc, "lo");
  ASSERT_NE(lo, nullptr) << r.out;
  EXPECT_TRUE(contains(lo->at("addresses"), "127.0.0.1"));
  const json* veth = find_adapter(doc, v.a());
  ASSERT_NE(veth, nullptr) << r.out;
  EXPECT_TRUE(contains(veth->at("addresses"), "10.77.3.1")) << r.out;
  EXPECT_EQ(veth->at("port_state"), "ACTIVE") << r.out;
  EXPECT_EQ(find_adapter(doc, v.b()), nullptr);  // other namespace
  // The same namespace, interface down: still listed, port DOWN.
  ASSERT_EQ(netns::sh(a.exec("ip link set " + v.a() + " down")), 0);
  const ToolRun down = ndkinfo_in(a, "--json");
  ASSERT_EQ(down.rc, 0) << down.out;
  const json down_doc = json::parse(down.out);
  const json* vd = find_adapter(down_doc, v.a());
  ASSERT_NE(vd, nullptr) << down.out;
  EXPECT_EQ(vd->at("port_state"), "DOWN") << down.out;
}

// The MPA CRC policy and why (docs/wire.md, "CRC by default off-host"): on
// lo every peer is host-local; an adapter with a routable address asks for
// CRC off-host by default; the switches (here through SOFTNDK_MPA_FLAGS)
// force either way or restore the old rule.
TEST(NdkInfoJson, ShowsTheCrcPolicyAndWhy) {
  const json doc = json::parse(ndkinfo("-d lo --json").out);
  const json& mpa = doc.at("adapters").at(0).at("mpa");
  EXPECT_EQ(mpa.at("crc"), "off_host");
  EXPECT_NE(mpa.at("crc_why").get<std::string>().find("host-local"), std::string::npos) << mpa;
  const std::string bin = std::string(NDKINFO_PATH) + " -d lo --json";
  auto key = [&](const char* flags) {
    const ToolRun r = ndkinfo_cmd(std::string("SOFTNDK_MPA_FLAGS=") + flags + " " + bin);
    return json::parse(r.out).at("adapters").at(0).at("mpa");
  };
  EXPECT_EQ(key("49").at("crc"), "required");    // CRC_REQUIRED | RTR_WRITE | RTR_READ
  EXPECT_EQ(key("50").at("crc"), "strict_off");  // CRC_STRICT_OFF | ...
  EXPECT_EQ(key("56").at("crc"), "when_asked");  // CRC_WHEN_ASKED | ...
  EXPECT_EQ(key("56").at("flags"), 56);
  if (!netns::available()) GTEST_SKIP() << "needs root and iproute2 for the off-host part";
  netns::NetNs a, b;
  netns::Veth v(a, b);
  ASSERT_TRUE(a.ok() && b.ok() && v.ok() && v.addr_a("10.77.4.1/24"));
  const ToolRun r = ndkinfo_in(a, "-d " + v.a() + " --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const json vdoc = json::parse(r.out);  // named: `vm` refers into it
  const json& vm = vdoc.at("adapters").at(0).at("mpa");
  EXPECT_EQ(vm.at("crc"), "off_host");
  EXPECT_NE(vm.at("crc_why").get<std::string>().find("leave the host"), std::string::npos) << vm;
  const ToolRun text = ndkinfo_in(a, "-d " + v.a());
  EXPECT_NE(text.out.find("crc"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("requested by default"), std::string::npos) << text.out;
}

TEST(NdkInfoJson, EveryAdapterHasTheStableKeys) {
  const ToolRun r = ndkinfo("--json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const json doc = json::parse(r.out);  // named: a range-for temporary would dangle
  for (const auto& a : doc.at("adapters")) {
    for (const char* key : {"name", "ifindex", "port_state", "mtu", "addresses", "info", "ports",
                            "counters", "error"}) {
      EXPECT_TRUE(a.contains(key)) << key << " missing in " << a.dump();
    }
    EXPECT_FALSE(a.at("addresses").empty()) << a.at("name");
  }
}

TEST(NdkInfoJson, DeviceByAddressSelectsLoopbackOnly) {
  const ToolRun r = ndkinfo("--json -d 127.0.0.1");
  ASSERT_EQ(r.rc, 0) << r.out;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc.at("adapters").size(), 1u);
  EXPECT_EQ(doc.at("adapters")[0].at("name"), "lo");
}

TEST(NdkInfoJson, ListOnlyHasNamesAndAddresses) {
  const ToolRun r = ndkinfo("--list --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const json doc = json::parse(r.out);
  const json* lo = find_adapter(doc, "lo");
  ASSERT_NE(lo, nullptr);
  EXPECT_TRUE(contains(lo->at("addresses"), "127.0.0.1"));
  EXPECT_FALSE(lo->contains("info"));
}

TEST(NdkInfoText, ListPrintsOneNamePerLine) {
  const ToolRun r = ndkinfo("-l");
  ASSERT_EQ(r.rc, 0);
  EXPECT_NE(("\n" + r.out).find("\nlo\n"), std::string::npos) << r.out;
}

TEST(NdkInfoText, VerboseShowsEveryLimitAndDecodedFlags) {
  const ToolRun brief = ndkinfo("-d lo");
  const ToolRun verbose = ndkinfo("-v -d lo");
  ASSERT_EQ(brief.rc, 0);
  ASSERT_EQ(verbose.rc, 0);
  EXPECT_NE(brief.out.find("adapter: lo"), std::string::npos) << brief.out;
  EXPECT_NE(brief.out.find("127.0.0.1"), std::string::npos);
  EXPECT_EQ(brief.out.find("max_callee_data:"), std::string::npos);
  for (const char* key : {"max_callee_data:", "max_srq_depth:", "adapter_flags_decoded:",
                          "capabilities:", "counters:", "rdma_in_octets:"}) {
    EXPECT_NE(verbose.out.find(key), std::string::npos) << key;
  }
}

TEST(NdkInfoExit, UnknownDeviceIs1) {
  EXPECT_EQ(ndkinfo("-d softndk-no-such-if0 2>/dev/null").rc, 1);
  const ToolRun r = ndkinfo("--json -d 192.0.2.250 2>/dev/null");
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(json::parse(r.out).at("adapters").empty());  // still valid JSON
}

TEST(NdkInfoExit, UsageErrorIs2AndHelpIs0) {
  EXPECT_EQ(ndkinfo("--no-such-option 2>/dev/null").rc, 2);
  EXPECT_EQ(ndkinfo("-d 2>/dev/null").rc, 2);  // missing value
  const ToolRun help = ndkinfo("--help");
  EXPECT_EQ(help.rc, 0);
  EXPECT_NE(help.out.find("--json"), std::string::npos);
}

}  // namespace
