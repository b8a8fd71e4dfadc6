// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the SMB2 command codecs (smb/smb2/<command>.h) and the
// MS-FSCC information classes on arbitrary bytes, both directions. Every
// span a parser returns must lie within the input, and a request that
// parses must survive re-encoding and parse again to the same fields.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "smb2/close.h"
#include "smb2/create.h"
#include "smb2/echo.h"
#include "smb2/file_info.h"
#include "smb2/flush.h"
#include "smb2/query_directory.h"
#include "smb2/query_info.h"
#include "smb2/read.h"
#include "smb2/write.h"

namespace {

using namespace smb::smb2;

void within(std::span<const uint8_t> s, std::span<const uint8_t> in) {
  if (!s.empty() && (s.data() < in.data() || s.data() + s.size() > in.data() + in.size()))
    std::abort();
}

// Re-encodes a parsed request behind a fresh header and parses it again.
template <typename T, typename Enc, typename Dec>
void reencode(const T& r, Enc enc, Dec dec, T* again) {
  std::vector<uint8_t> m;
  append_header(Header{}, &m);
  enc(r, &m);
  if (dec(m, again) != ParseError::kNone) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  CreateRequest cq, cq2;
  if (parse_create_request(in, &cq) == ParseError::kNone) {
    reencode(cq, append_create_request, parse_create_request, &cq2);
    if (cq2.name != cq.name || cq2.contexts != cq.contexts) std::abort();
    std::vector<CreateContext> cc;
    parse_create_contexts(cq.contexts, 32, &cc);
  }
  CreateResponse cr;
  if (parse_create_response(in, &cr) == ParseError::kNone) {
    std::vector<CreateContext> cc;
    parse_create_contexts(cr.contexts, 32, &cc);
  }
  CloseRequest clq;
  parse_close_request(in, &clq);
  CloseResponse clr;
  parse_close_response(in, &clr);
  FlushRequest fq;
  parse_flush_request(in, &fq);
  parse_flush_response(in);
  parse_echo(in);
  ReadRequest rq, rq2;
  if (parse_read_request(in, &rq) == ParseError::kNone) {
    reencode(rq, append_read_request, parse_read_request, &rq2);
    if (rq2.channel_info != rq.channel_info || rq2.length != rq.length) std::abort();
  }
  ReadResponse rr;
  if (parse_read_response(in, &rr) == ParseError::kNone) within(rr.data, in);
  WriteRequest wq, wq2;
  if (parse_write_request(in, &wq) == ParseError::kNone) {
    within(wq.data, in);
    std::vector<uint8_t> m;
    append_header(Header{}, &m);
    append_write_request(wq, &m);
    if (parse_write_request(m, &wq2) != ParseError::kNone ||
        !std::equal(wq.data.begin(), wq.data.end(), wq2.data.begin(), wq2.data.end()))
      std::abort();
  }
  WriteResponse wr;
  parse_write_response(in, &wr);
  QueryInfoRequest qi, qi2;
  if (parse_query_info_request(in, &qi) == ParseError::kNone)
    reencode(qi, append_query_info_request, parse_query_info_request, &qi2);
  QueryDirectoryRequest qd, qd2;
  if (parse_query_directory_request(in, &qd) == ParseError::kNone) {
    reencode(qd, append_query_directory_request, parse_query_directory_request, &qd2);
    if (qd2.pattern != qd.pattern) std::abort();
  }
  std::span<const uint8_t> out;
  if (parse_output_buffer_response(in, &out) == ParseError::kNone) within(out, in);
  if (parse_error_response(in, &out) == ParseError::kNone) within(out, in);
  // The information classes over the whole input.
  std::vector<DirectoryEntry> entries;
  for (uint8_t c : {kFileDirectoryInformation, kFileFullDirectoryInformation,
                    kFileIdFullDirectoryInformation, kFileIdBothDirectoryInformation})
    if (parse_directory_entries(c, in, 1024, &entries) == ParseError::kNone &&
        entries.size() > size)
      std::abort();
  NetworkOpenInformation no;
  parse_network_open_information(in, &no);
  StandardInformation si;
  parse_standard_information(in, &si);
  BasicInformation bi;
  parse_basic_information(in, &bi);
  return 0;
}
