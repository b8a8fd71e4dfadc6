// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the NVMe/RDMA command capsule parser and the Connect
// data / RDMA CM private data parsers on arbitrary bytes. Checks that a
// usable in-capsule descriptor lies within the received bytes and that a
// keyed one keeps the 24-bit length.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "nvmf_capsule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  auto p = nvmf::parse_capsule(in);
  if (p.fatal != (size < nvmf::kSqeSize)) std::abort();
  if (p.status == 0 && !p.fatal) {
    if (p.kind == nvmf::DataKind::kInCapsule &&
        (p.address < nvmf::kSqeSize || p.address > size || p.length > size - p.address))
      std::abort();
    if (p.kind == nvmf::DataKind::kKeyed && (p.length == 0 || p.length > nvmf::kKeyedSglMaxLength))
      std::abort();
  }
  auto c = nvmf::parse_connect_data(in);
  if (c.info && (c.info->subnqn.empty() || c.info->subnqn.size() >= nvmf::kNqnMax)) std::abort();
  auto r = nvmf::parse_cm_request(in, nvmf::CmLimits{});
  if (!r.req && r.reject == 0) std::abort();
  if (size >= nvmf::kSqeSize) {
    nvmf::Sqe s;
    std::memcpy(&s, data, sizeof s);
    auto f = nvmf::get_log_fields(s);
    if (f.numd == 0) std::abort();
  }
  return 0;
}
