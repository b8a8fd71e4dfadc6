// SPDX-License-Identifier: Apache-2.0
/*
 * ivx_proto.h - the small exchange between ndk_peer (softndk, host) and
 * verbs_peer (libibverbs/librdmacm on siw, guest) for the data-path cases.
 * C and C++.
 *
 * Each side registers one data buffer of S bytes (local write, remote read,
 * remote write) and keeps IVX_RECVS receives of max(S, 64) bytes posted.
 * Control messages are 32-byte Sends, all fields big-endian:
 *   ADV     both sides first: va, stag, len of the data buffer
 *   FILL    active -> passive: fill your buffer with pattern(seed), then RESULT
 *   DONE    active -> passive: op `arg` finished (write: verify your buffer
 *           against pattern(seed, len)), then RESULT
 *   EXPECT  active -> passive: the next receive is a data Send (arg = op:
 *           send or sendinv) of len bytes of pattern(seed); verify, RESULT.
 *           sendinv: va = bytes of pattern(seed) the active side RDMA-Wrote
 *           into the passive buffer just before (0: none), verified too
 *   RESULT  passive -> active: arg = op, seed = 1 ok / 0 bad, len = detail
 *           (sendinv: 1 if the receive reported the invalidated STag)
 *   BYE     active -> passive: done, disconnect
 * The active side drives: write, read, send, sendinv (in that order; sendinv
 * invalidates the passive buffer, so only invread/invwrite may follow),
 * invread (ndk_peer) / invwrite (verbs_peer): a Read / Write of the STag just
 * invalidated, which the passive side must refuse with a Terminate,
 * badwrite (a Write to an STag the passive side does not have: expects a
 * Terminate), stream (data Sends until the peer goes away).
 */
#ifndef INTEROP_IVX_PROTO_H_
#define INTEROP_IVX_PROTO_H_

#include <stdint.h>

#define IVX_MAGIC 0x49565831u /* "IVX1" */
#define IVX_CTRL_SIZE 32
#define IVX_RECVS 16

enum ivx_type {
  IVX_ADV = 1,
  IVX_FILL = 2,
  IVX_DONE = 3,
  IVX_EXPECT = 4,
  IVX_RESULT = 5,
  IVX_BYE = 6
};
enum ivx_op {
  IVX_OP_WRITE = 1,
  IVX_OP_READ = 2,
  IVX_OP_SEND = 3,
  IVX_OP_SENDINV = 4,
  IVX_OP_BADWRITE = 5,
  IVX_OP_STREAM = 6
};

struct ivx_ctrl {
  uint32_t magic;
  uint32_t type;
  uint64_t va;
  uint32_t stag;
  uint32_t len;
  uint32_t seed;
  uint32_t arg;
};

static inline uint8_t ivx_pattern_byte(uint32_t seed, uint64_t i) {
  /* position-dependent so that a misplaced FPDU is caught, seed-dependent so
     that stale data from an earlier op is caught */
  return (uint8_t)((i * 131u + seed * 7u + (i >> 8)) & 0xffu);
}
static inline void ivx_fill(uint8_t* p, uint64_t n, uint32_t seed) {
  for (uint64_t i = 0; i < n; ++i) p[i] = ivx_pattern_byte(seed, i);
}
/* Offset of the first mismatch, or -1 if the buffer holds the pattern. */
static inline int64_t ivx_check(const uint8_t* p, uint64_t n, uint32_t seed) {
  for (uint64_t i = 0; i < n; ++i)
    if (p[i] != ivx_pattern_byte(seed, i)) return (int64_t)i;
  return -1;
}

static inline uint64_t ivx_be64(uint64_t v) {
  const uint8_t* b = (const uint8_t*)&v;
  return ((uint64_t)b[0] << 56) | ((uint64_t)b[1] << 48) | ((uint64_t)b[2] << 40) |
         ((uint64_t)b[3] << 32) | ((uint64_t)b[4] << 24) | ((uint64_t)b[5] << 16) |
         ((uint64_t)b[6] << 8) | (uint64_t)b[7];
}
static inline uint32_t ivx_be32(uint32_t v) {
  const uint8_t* b = (const uint8_t*)&v;
  return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | (uint32_t)b[3];
}
/* host <-> wire (the swap is its own inverse) */
static inline void ivx_swap(struct ivx_ctrl* c) {
  c->magic = ivx_be32(c->magic);
  c->type = ivx_be32(c->type);
  c->va = ivx_be64(c->va);
  c->stag = ivx_be32(c->stag);
  c->len = ivx_be32(c->len);
  c->seed = ivx_be32(c->seed);
  c->arg = ivx_be32(c->arg);
}

static inline const char* ivx_op_name(uint32_t op) {
  switch (op) {
    case IVX_OP_WRITE:
      return "write";
    case IVX_OP_READ:
      return "read";
    case IVX_OP_SEND:
      return "send";
    case IVX_OP_SENDINV:
      return "sendinv";
    case IVX_OP_BADWRITE:
      return "badwrite";
    case IVX_OP_STREAM:
      return "stream";
    default:
      return "?";
  }
}

#endif /* INTEROP_IVX_PROTO_H_ */
