// bench/wire/wire_bench.cc — cost of the wire codec relative to memcpy.
// Targets (issue 3): parse + frame < 5% of memcpy of the same bytes at 64 KiB
// payloads; CRC32c >= half of memcpy bandwidth.
//
// "payload" = one RDMA Write message of that size, segmented like siw on
// loopback (MSS 65483 -> 65480-byte FPDUs), so 64 KiB is two FPDUs and 64 B
// and 4 KiB are one. Parsing is zero-copy (buffer mode: payload events point
// into the input); framing builds iovec pieces without copying payload.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "ddp/fpdu_builder.h"
#include "ddp/stream_parser.h"
#include "mpa/crc32c.h"

using namespace softndk::wire;

namespace {

FpduSizing loopback_sizing() { return FpduSizing{65483, FpduSizingMode::kSiw}; }

std::vector<uint8_t> make_stream(size_t payload, bool crc) {
  std::vector<uint8_t> msg(payload, 0xA5);
  std::vector<uint8_t> out;
  MessageSegmenter seg(DdpHeader::tagged_hdr(Opcode::kWrite, false, 0x1200, 0x10000), payload,
                       loopback_sizing().max_payload(true));
  while (!seg.done()) {
    FpduScratch s;
    FpduPieces p;
    seg.next_fpdu(msg, crc, s, p);
    out.insert(out.end(), p.header.begin(), p.header.end());
    out.insert(out.end(), p.payload.begin(), p.payload.end());
    out.insert(out.end(), p.trailer.begin(), p.trailer.end());
  }
  return out;
}

void BM_Memcpy(benchmark::State& st) {
  const auto stream = make_stream(static_cast<size_t>(st.range(0)), false);
  std::vector<uint8_t> dst(stream.size());
  for (auto _ : st) {
    std::memcpy(dst.data(), stream.data(), stream.size());
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * stream.size()));
}

// Same copy, but from/to a 64 MiB ring so the source is not cache-resident
// (closer to copying freshly received socket data).
void BM_MemcpyCold(benchmark::State& st) {
  const size_t n = make_stream(static_cast<size_t>(st.range(0)), false).size();
  const size_t ring = size_t{64} << 20;
  std::vector<uint8_t> src(ring, 1), dst(ring, 2);
  size_t off = 0;
  for (auto _ : st) {
    std::memcpy(dst.data() + off, src.data() + off, n);
    benchmark::ClobberMemory();
    off += (n + 4095) & ~size_t{4095};
    if (off + n > ring) off = 0;
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * n));
}

template <bool kCrc>
void BM_Parse(benchmark::State& st) {
  const auto stream = make_stream(static_cast<size_t>(st.range(0)), kCrc);
  ParserConfig cfg;
  cfg.crc = kCrc;
  StreamParser p(cfg);
  for (auto _ : st) {
    std::span<const uint8_t> in(stream);
    size_t payload = 0;
    for (;;) {
      Event ev = p.next(in);
      if (ev.kind == EventKind::kNeedMore) break;
      payload += ev.data.size();
    }
    benchmark::DoNotOptimize(payload);
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * stream.size()));
}

// Sender: segmentation + header/trailer pieces (payload referenced, not copied).
template <bool kCrc>
void BM_Frame(benchmark::State& st) {
  const size_t payload = static_cast<size_t>(st.range(0));
  std::vector<uint8_t> msg(payload, 0x5A);
  const uint32_t maxp = loopback_sizing().max_payload(true);
  size_t wire = 0;
  for (auto _ : st) {
    MessageSegmenter seg(DdpHeader::tagged_hdr(Opcode::kWrite, false, 0x1200, 0x10000), payload,
                         maxp);
    wire = 0;
    while (!seg.done()) {
      FpduScratch s;
      FpduPieces pc;
      seg.next_fpdu(msg, kCrc, s, pc);
      struct iovec iov[3];
      benchmark::DoNotOptimize(pc.to_iovec(iov));
      wire += pc.size();
    }
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * wire));
}

// Parse + frame together (what the 5% target is about), without CRC.
void BM_ParseAndFrame(benchmark::State& st) {
  const size_t payload = static_cast<size_t>(st.range(0));
  const auto stream = make_stream(payload, false);
  std::vector<uint8_t> msg(payload, 0x5A);
  const uint32_t maxp = loopback_sizing().max_payload(true);
  StreamParser p;
  for (auto _ : st) {
    MessageSegmenter seg(DdpHeader::tagged_hdr(Opcode::kWrite, false, 0x1200, 0x10000), payload,
                         maxp);
    while (!seg.done()) {
      FpduScratch s;
      FpduPieces pc;
      seg.next_fpdu(msg, false, s, pc);
      benchmark::DoNotOptimize(pc.trailer.data());
    }
    std::span<const uint8_t> in(stream);
    for (;;) {
      Event ev = p.next(in);
      if (ev.kind == EventKind::kNeedMore) break;
      benchmark::DoNotOptimize(ev.data.data());
    }
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * stream.size()));
}

void BM_Crc32c(benchmark::State& st) {
  const auto stream = make_stream(static_cast<size_t>(st.range(0)), false);
  for (auto _ : st) benchmark::DoNotOptimize(crc32c(stream));
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * stream.size()));
}

}  // namespace

#define SIZES Arg(64)->Arg(4096)->Arg(65536)
BENCHMARK(BM_Memcpy)->SIZES;
BENCHMARK(BM_MemcpyCold)->SIZES;
BENCHMARK(BM_Parse<false>)->Name("BM_Parse")->SIZES;
BENCHMARK(BM_Parse<true>)->Name("BM_ParseCrc")->SIZES;
BENCHMARK(BM_Frame<false>)->Name("BM_Frame")->SIZES;
BENCHMARK(BM_Frame<true>)->Name("BM_FrameCrc")->SIZES;
BENCHMARK(BM_ParseAndFrame)->SIZES;
BENCHMARK(BM_Crc32c)->SIZES;
BENCHMARK_MAIN();
