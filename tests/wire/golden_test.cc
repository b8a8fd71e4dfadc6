// SPDX-License-Identifier: Apache-2.0
// Golden tests: every MPA frame and FPDU in the siw captures
// (../shared/interop/captures) is parsed with the codec, its fields are
// compared with the iwarp-decode.py lines of the .txt beside the pcap, CRCs
// are verified where negotiated, and re-encoding reproduces the exact bytes.
// The stream parser is fed the same bytes in the TCP segment pieces they
// arrived in. Set SOFTNDK_WRITE_SEEDS=<dir> to dump fuzz seeds from the captures.
// GCC 12 reports a false -Wmaybe-uninitialized inside <regex> (std::function
// in the regex compiler) when built with sanitizers and optimisation. Clang
// has no such warning (and would warn about the unknown name).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "ddp/fpdu_builder.h"
#include "ddp/stream_parser.h"
#include "mpa/mpa_frame.h"
#include "pcap_reader.h"
#include "test_util.h"

namespace softndk::wire {
namespace {
namespace fs = std::filesystem;
using test::to_hex;

using Fields = std::map<std::string, std::string>;
struct Item {
  uint32_t frame = 0;
  bool i2r = true;
  Fields f;  // includes "kind"
};
struct TxtConnection {
  std::string initiator, responder;
  std::vector<Item> items;
  bool crc_checked = false;
};

std::string hx(uint64_t v, int width = 0) {
  char b[32];
  if (width)
    std::snprintf(b, sizeof b, "0x%0*" PRIx64, width, v);
  else
    std::snprintf(b, sizeof b, "0x%" PRIx64, v);
  return b;
}

// Parses section 1 (iwarp-decode.py) of a capture's .txt.
std::vector<TxtConnection> parse_txt(const std::string& path) {
  std::ifstream in(path);
  std::vector<TxtConnection> conns;
  static const std::regex conn_re(R"(^TCP connection (\S+) \(initiator\) -> (\S+) \(responder\))");
  static const std::regex frame_re(R"(^frame\s+(\d+)\s+(I->R|R->I)\s+(.*)$)");
  static const std::regex mpa_re(
      R"(MPA (REQUEST|REPLY)\s+rev=(\d+)\s+M=(\d) C=(\d) R=(\d) S/enhanced=(\d) res=(0x[0-9a-f]+)\s+pd_len=(\d+)\s+pd=(\S+))");
  static const std::regex fpdu_re(
      R"(FPDU\s+(\d+) B \(ULPDU\s+(\d+), pad (\d+)\)\s+(.+?)\s+DDPv(\d+) RDMAPv(\d+) (.*)$)");
  static const std::regex garbage_re(R"((\d+) bytes that are not an MPA request: ([0-9a-f]+))");
  static const std::regex payload_re(R"(payload (\d+) B)");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("### 2", 0) == 0) break;
    std::smatch m;
    if (std::regex_search(line, m, conn_re)) {
      conns.push_back({m[1], m[2], {}, false});
      continue;
    }
    if (line.find("-- summary: CRC negotiated (checked)") != std::string::npos && !conns.empty())
      conns.back().crc_checked = true;
    if (!std::regex_search(line, m, frame_re) || conns.empty()) continue;
    Item it;
    it.frame = static_cast<uint32_t>(std::stoul(m[1]));
    it.i2r = m[2] == "I->R";
    const std::string rest = m[3];
    std::smatch r;
    if (std::regex_search(rest, r, mpa_re)) {
      it.f = {{"kind", "MPA " + r[1].str()},
              {"rev", r[2]},
              {"M", r[3]},
              {"C", r[4]},
              {"R", r[5]},
              {"enhanced", r[6]},
              {"res", r[7]},
              {"pd_len", r[8]},
              {"pd", r[9]}};
    } else if (std::regex_search(rest, r, fpdu_re)) {
      it.f = {{"kind", "FPDU"}, {"size", r[1]}, {"ulpdu", r[2]}, {"pad", r[3]},
              {"name", r[4]},   {"ddpv", r[5]}, {"rdmapv", r[6]}};
      std::istringstream toks(r[7].str());
      std::string tok, prefix;
      while (toks >> tok) {
        if (tok == "sink" || tok == "source") prefix = tok + ".";
        const auto eq = tok.find('=');
        if (eq != std::string::npos) {
          std::string key = tok.substr(0, eq);
          if (key == "STag" || key == "TO") key = prefix + key;
          it.f[key] = tok.substr(eq + 1);
        }
      }
      std::smatch pm;
      const std::string tail = r[7].str();
      if (std::regex_search(tail, pm, payload_re)) it.f["payload"] = pm[1];
      if (tail.find("(ok:") != std::string::npos) it.f["crc_ok"] = "1";
    } else if (std::regex_search(rest, r, garbage_re)) {
      it.f = {{"kind", "GARBAGE"}, {"len", r[1]}, {"hex", r[2]}};
    } else {
      continue;  // TCP FIN etc.
    }
    conns.back().items.push_back(std::move(it));
  }
  return conns;
}

Fields mpa_fields(const MpaFrame& f) {
  return {{"kind", f.type == MpaFrameType::kRequest ? "MPA REQUEST" : "MPA REPLY"},
          {"rev", std::to_string(f.rev)},
          {"M", f.markers() ? "1" : "0"},
          {"C", f.crc() ? "1" : "0"},
          {"R", f.reject() ? "1" : "0"},
          {"enhanced", f.enhanced() ? "1" : "0"},
          {"res", hx(f.reserved_bits())},
          {"pd_len", std::to_string(f.private_data.size())},
          {"pd", f.private_data.empty() ? "-" : to_hex(f.private_data)}};
}

Fields fpdu_fields(const FpduView& v, bool crc) {
  const DdpHeader& h = v.hdr;
  Fields f = {{"kind", "FPDU"},
              {"size", std::to_string(v.wire_size())},
              {"ulpdu", std::to_string(v.ulpdu_len)},
              {"pad", std::to_string(v.pad)},
              {"name", opcode_name(h.opcode_value())},
              {"ddpv", std::to_string(h.ddp_version())},
              {"rdmapv", std::to_string(h.rdmap_version())},
              {"T", h.tagged() ? "1" : "0"},
              {"L", h.last() ? "1" : "0"},
              {"payload", std::to_string(v.payload.size())},
              {"CRC", to_hex(v.bytes.last(4))}};
  if (h.tagged()) {
    f["STag"] = hx(h.stag, 8);
    f["TO"] = hx(h.to);
  } else {
    f["QN"] = std::to_string(h.qn);
    f["MSN"] = std::to_string(h.msn);
    f["MO"] = std::to_string(h.mo);
    // Send with Invalidate: the decoder prints the STag it invalidates.
    if (h.opcode() == Opcode::kSendInvalidate || h.opcode() == Opcode::kSendSolicitedInvalidate)
      f["STag"] = hx(h.invalidate_stag(), 8);
  }
  if (h.opcode() == Opcode::kReadRequest) {
    const auto r = *decode_read_request(v.body);
    f["sink.STag"] = hx(r.sink_stag, 8);
    f["sink.TO"] = hx(r.sink_to);
    f["size"] = std::to_string(r.size);  // the .txt reuses "size" for the read size
    f["source.STag"] = hx(r.source_stag, 8);
    f["source.TO"] = hx(r.source_to);
  }
  if (crc) {
    f["crc_ok"] = "1";
    f["crc32c"] = hx(v.crc_computed, 8);
  }
  return f;
}

void write_seed(const char* sub, const std::string& name, std::span<const uint8_t> b) {
  const char* dir = std::getenv("SOFTNDK_WRITE_SEEDS");
  if (!dir || b.empty()) return;
  const fs::path d = fs::path(dir) / sub;
  fs::create_directories(d);
  std::ofstream(d / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

struct DirResult {
  std::vector<Item> items;
  size_t fpdus = 0;
};

// Parses one direction's FPDU region both ways and checks re-encoding.
void parse_fpdus(const test::TcpDirection& d, size_t start, bool crc, bool i2r, DirResult& out,
                 const std::string& seed_name) {
  ParserConfig cfg;
  cfg.crc = crc;
  std::span<const uint8_t> all(d.bytes);
  std::vector<DdpHeader> one_shot;
  size_t off = start;
  std::vector<uint8_t> re(70000);
  while (off < all.size()) {
    FpduView v;
    auto r = decode_fpdu(all.subspan(off), v, cfg);
    ASSERT_FALSE(r.need_more) << "trailing partial FPDU at " << off;
    ASSERT_EQ(r.error, WireError::kNone) << to_string(r.error) << " at " << off;
    if (crc) {
      EXPECT_EQ(v.crc_field, v.crc_computed);
    } else {
      EXPECT_EQ(v.crc_field, 0u);  // siw sends zero when CRC is off
    }
    const size_t n = encode_fpdu(v.hdr, v.body, v.payload, crc, re, v.pad_bytes);
    ASSERT_EQ(n, v.wire_size());
    EXPECT_EQ(to_hex({re.data(), n}), to_hex(v.bytes)) << "re-encode at " << off;
    Item it;
    it.frame = d.frame_of[off + v.wire_size() - 1];  // the decoder names the completing frame
    it.i2r = i2r;
    it.f = fpdu_fields(v, crc);
    out.items.push_back(std::move(it));
    one_shot.push_back(v.hdr);
    off += v.wire_size();
  }
  out.fpdus = one_shot.size();
  write_seed("stream_parser", seed_name,
             test::concat({static_cast<uint8_t>(crc ? 1 : 0), 0x25, 0x07},
                          all.subspan(start, std::min<size_t>(all.size() - start, 3000))));

  // Stream parser fed in the TCP segment pieces.
  StreamParser p(cfg);
  size_t seg_i = 0, pos = start, placed = 0, done = 0;
  uint64_t payload_bytes = 0;
  std::vector<size_t> cuts;
  for (size_t e : d.segment_ends)
    if (e > start) cuts.push_back(e);
  for (size_t e : cuts) {
    std::span<const uint8_t> in = all.subspan(pos, e - pos);
    pos = e;
    for (;;) {
      Event ev = p.next(in);
      if (ev.kind == EventKind::kNeedMore) break;
      ASSERT_NE(ev.kind, EventKind::kError) << to_string(ev.error);
      if (ev.kind == EventKind::kPlacement) {
        ASSERT_LT(placed, one_shot.size());
        const DdpHeader& a = ev.segment->hdr;
        const DdpHeader& b = one_shot[placed++];
        EXPECT_EQ(a.ddp_ctrl, b.ddp_ctrl);
        EXPECT_EQ(a.rdmap_ctrl, b.rdmap_ctrl);
        EXPECT_EQ(a.stag, b.stag);
        EXPECT_EQ(a.to, b.to);
        EXPECT_EQ(a.msn, b.msn);
        EXPECT_EQ(a.mo, b.mo);
      }
      if (ev.kind == EventKind::kPayload) payload_bytes += ev.data.size();
      if (ev.kind == EventKind::kSegmentDone) ++done;
    }
    ++seg_i;
  }
  EXPECT_EQ(done, one_shot.size());
  EXPECT_EQ(p.state(), StreamParser::State::kHeader);
  (void)payload_bytes;
}

class Golden : public ::testing::TestWithParam<std::string> {};

std::vector<std::string> capture_names() {
  std::vector<std::string> v;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(SOFTNDK_CAPTURES_DIR, ec))
    if (e.path().extension() == ".pcap") v.push_back(e.path().stem().string());
  std::sort(v.begin(), v.end());
  return v;
}

TEST(GoldenCaptures, Present) {
  // CI has ../shared beside the checkout: a missing folder is a failure.
  ASSERT_TRUE(fs::is_directory(SOFTNDK_CAPTURES_DIR)) << SOFTNDK_CAPTURES_DIR;
  const auto names = capture_names();
  EXPECT_GE(names.size(), 15u);
  for (const auto& n : names)
    EXPECT_TRUE(fs::exists(fs::path(SOFTNDK_CAPTURES_DIR) / (n + ".txt"))) << n;
}

TEST_P(Golden, MatchesDecodeAndReencodes) {
  const fs::path dir = SOFTNDK_CAPTURES_DIR;
  const std::string name = GetParam();
  std::vector<test::TcpConnection> conns;
  std::string err;
  ASSERT_TRUE(test::read_tcp_connections((dir / (name + ".pcap")).string(), conns, err)) << err;
  const auto txt = parse_txt((dir / (name + ".txt")).string());
  ASSERT_FALSE(txt.empty());
  size_t matched = 0, total_items = 0;
  for (const TxtConnection& tc : txt) {
    SCOPED_TRACE(tc.initiator + " -> " + tc.responder);
    const test::TcpConnection* c = nullptr;
    for (const auto& cc : conns)
      if (cc.initiator == tc.initiator && cc.responder == tc.responder) c = &cc;
    ASSERT_NE(c, nullptr);
    ASSERT_FALSE(c->to_responder.gap);
    ASSERT_FALSE(c->to_initiator.gap);
    std::vector<Item> mine;
    // MPA frames.
    MpaFrame req{}, rep{};
    size_t req_end = 0, rep_end = 0;
    bool have_req = false, have_rep = false;
    std::span<const uint8_t> ib(c->to_responder.bytes), rb(c->to_initiator.bytes);
    if (!ib.empty()) {
      auto r = decode_mpa_frame(ib, req, MpaFrameType::kRequest);
      if (r.error == MpaError::kBadKey) {
        mine.push_back(
            {c->first_frame,
             true,  // the decoder names the SYN frame
             {{"kind", "GARBAGE"}, {"len", std::to_string(ib.size())}, {"hex", to_hex(ib)}}});
      } else {
        ASSERT_EQ(r.error, MpaError::kOk) << to_string(r.error);
        have_req = true;
        req_end = r.consumed;
        mine.push_back({c->to_responder.frame_of[r.consumed - 1], true, mpa_fields(req)});
        write_seed("mpa_frame", name + "-" + std::to_string(matched) + "-req",
                   ib.first(r.consumed));
      }
    }
    if (!rb.empty()) {
      auto r = decode_mpa_frame(rb, rep, MpaFrameType::kReply);
      ASSERT_EQ(r.error, MpaError::kOk) << to_string(r.error);
      have_rep = true;
      rep_end = r.consumed;
      mine.push_back({c->to_initiator.frame_of[r.consumed - 1], false, mpa_fields(rep)});
      write_seed("mpa_frame", name + "-" + std::to_string(matched) + "-rep", rb.first(r.consumed));
    }
    // Re-encode MPA frames, both verbatim and from their parsed fields.
    for (auto* f : {have_req ? &req : nullptr, have_rep ? &rep : nullptr}) {
      if (!f) continue;
      uint8_t out[kMpaMaxFrameSize];
      auto e = encode_mpa_frame(*f, out);
      ASSERT_EQ(e.error, MpaError::kOk);
      const auto orig = (f == &req ? ib : rb).first(f->wire_size());
      EXPECT_EQ(to_hex({out, e.size}), to_hex(orig));
      MpaFrameSpec s;
      s.type = f->type;
      s.flags = f->flags;
      s.rev = f->rev;
      if (auto v = enhanced_view(*f)) {
        s.ird_ord = v->block;
        s.ulp_private_data = v->ulp_private_data;
      } else {
        s.ulp_private_data = f->private_data;
      }
      e = encode_mpa_frame(s, out, kMpaMaxPrivateDataRfc);
      ASSERT_EQ(e.error, MpaError::kOk);
      EXPECT_EQ(to_hex({out, e.size}), to_hex(orig));
    }
    const bool crc = (have_req && req.crc()) || (have_rep && rep.crc());
    // The decoder only reports CRC for connections that carried FPDUs.
    if (tc.crc_checked) {
      EXPECT_TRUE(crc);
    }
    // FPDUs: only once both frames were exchanged and nobody asked for a reject.
    DirResult ir, ri;
    if (have_req && have_rep && !rep.reject()) {
      parse_fpdus(c->to_responder, req_end, crc, true, ir,
                  name + "-" + std::to_string(matched) + "-i2r");
      parse_fpdus(c->to_initiator, rep_end, crc, false, ri,
                  name + "-" + std::to_string(matched) + "-r2i");
    } else {
      EXPECT_EQ(ib.size(), have_req ? req_end : ib.size());
      EXPECT_EQ(rb.size(), rep_end);
    }
    mine.insert(mine.end(), ir.items.begin(), ir.items.end());
    mine.insert(mine.end(), ri.items.begin(), ri.items.end());
    // Compare per direction, in stream order.
    for (bool dir_i2r : {true, false}) {
      std::vector<const Item*> a, b;
      for (const auto& it : tc.items)
        if (it.i2r == dir_i2r) a.push_back(&it);
      for (const auto& it : mine)
        if (it.i2r == dir_i2r) b.push_back(&it);
      ASSERT_EQ(a.size(), b.size()) << (dir_i2r ? "I->R" : "R->I");
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i]->frame, b[i]->frame) << i;
        EXPECT_EQ(a[i]->f, b[i]->f) << "item " << i << " frame " << a[i]->frame;
      }
      total_items += a.size();
    }
    ++matched;
  }
  EXPECT_EQ(matched, conns.size());
  EXPECT_GT(total_items, 0u);
  RecordProperty("items", static_cast<int>(total_items));
}

INSTANTIATE_TEST_SUITE_P(Captures, Golden, ::testing::ValuesIn(capture_names()),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Golden);

}  // namespace
}  // namespace softndk::wire
