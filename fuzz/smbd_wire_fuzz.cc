// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the MS-SMBD parsers (negotiate request/response, data
// transfer message, reassembly, buffer descriptor lists, IRD/ORD header) and
// the SMB2 header / NEGOTIATE response parsers on
// arbitrary bytes. Checks that an accepted data message's payload lies within
// the input and that reassembly never grows past the fragment limit.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "buffer_descriptor.h"
#include "data_message.h"
#include "ird_ord.h"
#include "negotiate.h"
#include "reassembly.h"
#include "smb2/negotiate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  smbd::NegotiateRequest rq;
  if (smbd::parse_negotiate_request(in, &rq) == smbd::Error::kNone &&
      (rq.credits_requested == 0 || rq.max_fragmented_size < smbd::kMinFragmentedSize))
    std::abort();
  smbd::NegotiateResponse rs;
  if (smbd::parse_negotiate_response(in, 1364, &rs) == smbd::Error::kNone &&
      rs.preferred_send_size > 1364)
    std::abort();
  constexpr uint32_t kMaxFrag = 1u << 17;
  smbd::Reassembler r(kMaxFrag);
  // The input as a sequence of messages: a 1-byte length prefix each.
  size_t off = 0;
  while (off < size) {
    size_t n = std::min<size_t>(data[off], size - off - 1);
    auto msg = in.subspan(off + 1, n);
    off += 1 + n;
    smbd::DataMessage m;
    if (smbd::parse_data_message(msg, kMaxFrag, &m) != smbd::Error::kNone) continue;
    if (m.payload.size() && (m.payload.data() < msg.data() ||
                             m.payload.data() + m.payload.size() > msg.data() + msg.size()))
      std::abort();
    smbd::Error e;
    r.add(m, &e);
    if (r.message().size() > kMaxFrag) std::abort();
    if (e != smbd::Error::kNone) break;
  }
  std::vector<smbd::BufferDescriptor> list;
  uint64_t total = 0;
  if (smbd::parse_buffer_descriptors(in, 64, &list, &total) == smbd::Error::kNone &&
      list.size() * smbd::kBufferDescriptorSize != size)
    std::abort();
  smbd::IrdOrd io;
  if (smbd::parse_ird_ord(in, &io) == smbd::Error::kNone && (io.ird == 0 || io.ord == 0))
    std::abort();
  smb::smb2::NegotiateResponse nr;
  if (smb::smb2::parse_negotiate_response(in, &nr) == smb::smb2::ParseError::kNone &&
      !nr.security_buffer.empty() &&
      (nr.security_buffer.data() < data ||
       nr.security_buffer.data() + nr.security_buffer.size() > data + size))
    std::abort();
  smb::smb2::Header hd;
  smb::smb2::parse_header(in, &hd);
  return 0;
}
