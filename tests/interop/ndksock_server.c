// SPDX-License-Identifier: Apache-2.0
/*
 * ndksock_server.c - `verbs_peer ndksock-server PORT`: the server side of the
 * WDK sample driver's conversation (wdk/sample/driver.c) in libibverbs +
 * librdmacm, so that the unchanged sample driver (ndksock.so under
 * softndk-wdk-run) can run as the client against Linux siw in the guest.
 *
 * The conversation, from the server's side:
 *   1. NS_ROUNDS echo rounds: a MsgEcho with a pattern of Seed; the answer
 *      carries Seed + 1000 and a pattern of that seed;
 *   2. a 64 KiB region registered for remote read and write, its first half
 *      filled with the pattern of seed 7, the second half zeroed; MsgRegion
 *      tells the client its address and rkey;
 *   3. the client RDMA-reads the first half, RDMA-writes the second half
 *      and sends MsgWritten with the seed of what it wrote; the server
 *      checks the second half and answers MsgVerdict (STATUS_SUCCESS or
 *      STATUS_DATA_ERROR);
 *   4. the client disconnects.
 *
 * Prints one JSON object per step. Exit: 0 every check passed, 1 a check
 * failed (or the client misbehaved), 3 setup/connection failure.
 */
#include "ndksock_server.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The sample's constants and message layout (driver.c). Both ends are
   little-endian x86-64, and the WDK's ULONG and NTSTATUS are 32 bits, so
   the header is these 32 bytes in host order. */
#define NS_ROUNDS 4
#define NS_MSG_SIZE 4096
#define NS_REGION_SIZE (64 * 1024)
#define NS_MAGIC 0x4e444b53u
#define NS_STATUS_SUCCESS 0
#define NS_STATUS_DATA_ERROR ((int32_t)0xC000003Eu)

enum { MsgEcho = 1, MsgRegion = 2, MsgWritten = 3, MsgVerdict = 4 };

struct ns_msg {
  uint32_t magic, type, seed, length;
  uint64_t address;
  uint32_t token;
  int32_t verdict;
};
_Static_assert(sizeof(struct ns_msg) == 32, "NS_MSG is 32 bytes on the wire");

#define WR_SEND 1u
#define WR_RECV 0x100u /* + slot */
#define TIMEOUT_MS 30000

struct ns_server {
  struct rdma_event_channel* ch;
  struct rdma_cm_id *listen_id, *id;
  struct ibv_pd* pd;
  struct ibv_cq* cq;
  struct ibv_mr *rx_mr, *tx_mr, *region_mr;
  uint8_t *rx, *tx, *region;
  unsigned next_slot;    /* receives complete in the order they were posted */
  struct ibv_wc kept[8]; /* completions polled before they were wanted */
  int nkept;
};

/* The sample's pattern (NsFill/NsCheck). */
static void ns_fill(uint8_t* p, uint32_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (uint32_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    p[i] = (uint8_t)(x >> 16);
  }
}

/* The first differing offset, or -1. */
static long ns_check(const uint8_t* p, uint32_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (uint32_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    if (p[i] != (uint8_t)(x >> 16)) return (long)i;
  }
  return -1;
}

static double ms_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int fail_setup(const char* what) {
  printf("{\"op\": \"setup\", \"ok\": false, \"error\": \"%s: %s\"}\n", what, strerror(errno));
  return 3;
}

/* The next CM event within `timeout_ms`, or NULL. */
static struct rdma_cm_event* cm_event(struct ns_server* s, int timeout_ms) {
  struct pollfd pfd = {s->ch->fd, POLLIN, 0};
  struct rdma_cm_event* ev = NULL;
  if (poll(&pfd, 1, timeout_ms) <= 0) return NULL;
  if (rdma_get_cm_event(s->ch, &ev)) return NULL;
  return ev;
}

static int cm_expect(struct ns_server* s, enum rdma_cm_event_type want, int timeout_ms) {
  struct rdma_cm_event* ev = cm_event(s, timeout_ms);
  if (!ev) {
    printf("{\"op\": \"cm\", \"ok\": false, \"expected\": \"%s\", \"event\": \"timeout\"}\n",
           rdma_event_str(want));
    return 0;
  }
  int ok = ev->event == want;
  if (!ok) {
    printf("{\"op\": \"cm\", \"ok\": false, \"expected\": \"%s\", \"event\": \"%s\"}\n",
           rdma_event_str(want), rdma_event_str(ev->event));
  }
  rdma_ack_cm_event(ev);
  return ok;
}

static int post_recv(struct ns_server* s, unsigned slot) {
  struct ibv_sge sge = {(uintptr_t)(s->rx + slot * NS_MSG_SIZE), NS_MSG_SIZE, s->rx_mr->lkey};
  struct ibv_recv_wr wr = {0}, *bad;
  wr.wr_id = WR_RECV + slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  return ibv_post_recv(s->id->qp, &wr, &bad) == 0;
}

/* The next completion of one kind (send or receive) within TIMEOUT_MS; 0
   on timeout or an error status. A completion of the other kind that comes
   first is kept for later: the client's next message can complete before
   the send that answered its last one is polled. */
static int poll_one(struct ns_server* s, struct ibv_wc* wc, int recv) {
  double end = ms_now() + TIMEOUT_MS;
  for (;;) {
    for (int i = 0; i < s->nkept; ++i) {
      if ((s->kept[i].wr_id >= WR_RECV) == recv) {
        *wc = s->kept[i];
        memmove(s->kept + i, s->kept + i + 1, (size_t)(s->nkept - i - 1) * sizeof *wc);
        --s->nkept;
        return 1;
      }
    }
    struct ibv_wc got;
    int n = ibv_poll_cq(s->cq, 1, &got);
    if (n < 0) return 0;
    if (n == 1 && got.status != IBV_WC_SUCCESS) {
      printf("{\"op\": \"completion\", \"ok\": false, \"wr_id\": %llu, \"status\": \"%s\"}\n",
             (unsigned long long)got.wr_id, ibv_wc_status_str(got.status));
      return 0;
    }
    if (n == 1 && s->nkept < (int)(sizeof s->kept / sizeof *s->kept)) {
      s->kept[s->nkept++] = got;
      continue;
    }
    if (ms_now() > end) {
      printf("{\"op\": \"completion\", \"ok\": false, \"error\": \"timeout\"}\n");
      return 0;
    }
    usleep(200);
  }
}

/* Sends `m` (and for MsgEcho its pattern) and waits for the completion. */
static int send_msg(struct ns_server* s, const struct ns_msg* m) {
  uint32_t payload = m->type == MsgEcho ? m->length : 0;
  memcpy(s->tx, m, sizeof *m);
  if (payload) ns_fill(s->tx + sizeof *m, payload, m->seed);
  struct ibv_sge sge = {(uintptr_t)s->tx, (uint32_t)sizeof *m + payload, s->tx_mr->lkey};
  struct ibv_send_wr wr = {0}, *bad;
  wr.wr_id = WR_SEND;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  struct ibv_wc wc;
  if (ibv_post_send(s->id->qp, &wr, &bad)) return 0;
  return poll_one(s, &wc, 0) && wc.wr_id == WR_SEND;
}

/* The next message, checked like the sample's NsReceiveMsg; its slot is
   posted again. */
static int recv_msg(struct ns_server* s, uint32_t type, struct ns_msg* m) {
  struct ibv_wc wc;
  unsigned slot = s->next_slot;
  if (!poll_one(s, &wc, 1)) return 0;
  if (wc.wr_id != WR_RECV + slot) {
    printf("{\"op\": \"receive\", \"ok\": false, \"wr_id\": %llu, \"expected_slot\": %u}\n",
           (unsigned long long)wc.wr_id, slot);
    return 0;
  }
  s->next_slot ^= 1;
  const uint8_t* d = s->rx + slot * NS_MSG_SIZE;
  int ok = wc.byte_len >= sizeof *m;
  if (ok) {
    memcpy(m, d, sizeof *m);
    ok = m->magic == NS_MAGIC && m->type == type;
  }
  if (ok && type == MsgEcho) {
    ok = m->length <= wc.byte_len - sizeof *m && ns_check(d + sizeof *m, m->length, m->seed) < 0;
  }
  if (!ok) {
    printf(
        "{\"op\": \"receive\", \"ok\": false, \"expected_type\": %u, \"bytes\": %u, "
        "\"magic\": %u, \"type\": %u}\n",
        type, wc.byte_len, m->magic, m->type);
    return 0;
  }
  return post_recv(s, slot);
}

static void ns_msg_init(struct ns_msg* m, uint32_t type, uint32_t seed) {
  memset(m, 0, sizeof *m);
  m->magic = NS_MAGIC;
  m->type = type;
  m->seed = seed;
}

/* Accepts one connection: QP, buffers, two receives posted before accept. */
static int accept_one(struct ns_server* s, int port) {
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  if (rdma_create_id(s->ch, &s->listen_id, NULL, RDMA_PS_TCP)) return fail_setup("rdma_create_id");
  if (rdma_bind_addr(s->listen_id, (struct sockaddr*)&sa)) return fail_setup("rdma_bind_addr");
  if (rdma_listen(s->listen_id, 1)) return fail_setup("rdma_listen");
  struct rdma_cm_event* ev = cm_event(s, 120000);
  if (!ev || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
    printf("{\"op\": \"request\", \"ok\": false, \"event\": \"%s\"}\n",
           ev ? rdma_event_str(ev->event) : "timeout");
    if (ev) rdma_ack_cm_event(ev);
    return 3;
  }
  s->id = ev->id;
  uint8_t ord = ev->param.conn.initiator_depth, ird = ev->param.conn.responder_resources;
  rdma_ack_cm_event(ev);
  printf("{\"op\": \"request\", \"ok\": true, \"client_ord\": %u, \"client_ird\": %u}\n", ord, ird);

  s->pd = ibv_alloc_pd(s->id->verbs);
  if (!s->pd) return fail_setup("ibv_alloc_pd");
  s->cq = ibv_create_cq(s->id->verbs, 16, NULL, NULL, 0);
  if (!s->cq) return fail_setup("ibv_create_cq");
  struct ibv_qp_init_attr qa = {0};
  qa.send_cq = qa.recv_cq = s->cq;
  qa.cap.max_send_wr = 4;
  qa.cap.max_recv_wr = 4;
  qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
  qa.qp_type = IBV_QPT_RC;
  if (rdma_create_qp(s->id, s->pd, &qa)) return fail_setup("rdma_create_qp");
  s->rx = aligned_alloc(4096, 2 * NS_MSG_SIZE);
  s->tx = aligned_alloc(4096, NS_MSG_SIZE);
  s->region = aligned_alloc(4096, NS_REGION_SIZE);
  if (!s->rx || !s->tx || !s->region) return fail_setup("aligned_alloc");
  s->rx_mr = ibv_reg_mr(s->pd, s->rx, 2 * NS_MSG_SIZE, IBV_ACCESS_LOCAL_WRITE);
  s->tx_mr = ibv_reg_mr(s->pd, s->tx, NS_MSG_SIZE, 0);
  s->region_mr =
      ibv_reg_mr(s->pd, s->region, NS_REGION_SIZE,
                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
  if (!s->rx_mr || !s->tx_mr || !s->region_mr) return fail_setup("ibv_reg_mr");
  /* iWARP has no receiver-not-ready retry: both receives before accept. */
  if (!post_recv(s, 0) || !post_recv(s, 1)) return fail_setup("ibv_post_recv");
  struct rdma_conn_param cp = {0};
  /* The client RDMA-reads our region: grant it the read credits it asked
     for (at least one). */
  cp.responder_resources = ord ? ord : 1;
  cp.initiator_depth = ird;
  if (rdma_accept(s->id, &cp)) return fail_setup("rdma_accept");
  if (!cm_expect(s, RDMA_CM_EVENT_ESTABLISHED, TIMEOUT_MS)) return 3;
  printf("{\"op\": \"accept\", \"ok\": true}\n");
  return 0;
}

static int converse(struct ns_server* s) {
  struct ns_msg m;
  for (unsigned round = 0; round < NS_ROUNDS; ++round) {
    if (!recv_msg(s, MsgEcho, &m)) return 1;
    uint32_t seed = m.seed, len = m.length;
    m.seed += 1000; /* the echo carries its own pattern */
    if (!send_msg(s, &m)) return 1;
    printf("{\"op\": \"echo\", \"ok\": true, \"round\": %u, \"seed\": %u, \"length\": %u}\n",
           round + 1, seed, len);
  }

  ns_fill(s->region, NS_REGION_SIZE / 2, 7);
  memset(s->region + NS_REGION_SIZE / 2, 0, NS_REGION_SIZE / 2);
  ns_msg_init(&m, MsgRegion, 7);
  m.address = (uintptr_t)s->region;
  m.token = s->region_mr->rkey;
  m.length = NS_REGION_SIZE;
  if (!send_msg(s, &m)) return 1;
  printf("{\"op\": \"region\", \"ok\": true, \"address\": %llu, \"rkey\": %u, \"length\": %u}\n",
         (unsigned long long)m.address, m.token, m.length);

  if (!recv_msg(s, MsgWritten, &m)) return 1;
  long bad = ns_check(s->region + NS_REGION_SIZE / 2, NS_REGION_SIZE / 2, m.seed);
  /* The client only read the first half: it must be unchanged. */
  long bad_read_half = ns_check(s->region, NS_REGION_SIZE / 2, 7);
  int ok = bad < 0 && bad_read_half < 0;
  printf(
      "{\"op\": \"written\", \"ok\": %s, \"seed\": %u, \"first_bad\": %ld, "
      "\"read_half_first_bad\": %ld}\n",
      ok ? "true" : "false", m.seed, bad, bad_read_half);
  ns_msg_init(&m, MsgVerdict, 0);
  m.verdict = ok ? NS_STATUS_SUCCESS : NS_STATUS_DATA_ERROR;
  if (!send_msg(s, &m)) return 1;
  printf("{\"op\": \"verdict\", \"ok\": true, \"verdict\": \"0x%08x\"}\n", (unsigned)m.verdict);
  if (!ok) return 1;

  if (!cm_expect(s, RDMA_CM_EVENT_DISCONNECTED, TIMEOUT_MS)) return 1;
  rdma_disconnect(s->id); /* answer the graceful disconnect, as the sample does */
  printf("{\"op\": \"disconnect\", \"ok\": true}\n");
  return 0;
}

int ndksock_server_main(int argc, char** argv) {
  struct ns_server s = {0};
  int port = argc == 3 ? atoi(argv[2]) : 0;
  if (port <= 0 || port > 65535) {
    fprintf(stderr, "usage: verbs_peer ndksock-server PORT\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  double t0 = ms_now();
  s.ch = rdma_create_event_channel();
  int rc = s.ch ? accept_one(&s, port) : fail_setup("rdma_create_event_channel");
  if (rc == 0) rc = converse(&s);
  printf("{\"op\": \"done\", \"ok\": %s, \"rc\": %d, \"ms\": %.1f}\n", rc ? "false" : "true", rc,
         ms_now() - t0);
  /* Teardown in reverse; the process exits right after, so errors here
     change nothing the client could see. */
  if (s.id && s.id->qp) rdma_destroy_qp(s.id);
  if (s.region_mr) ibv_dereg_mr(s.region_mr);
  if (s.tx_mr) ibv_dereg_mr(s.tx_mr);
  if (s.rx_mr) ibv_dereg_mr(s.rx_mr);
  if (s.cq) ibv_destroy_cq(s.cq);
  if (s.pd) ibv_dealloc_pd(s.pd);
  if (s.id) rdma_destroy_id(s.id);
  if (s.listen_id) rdma_destroy_id(s.listen_id);
  if (s.ch) rdma_destroy_event_channel(s.ch);
  free(s.region);
  free(s.tx);
  free(s.rx);
  return rc;
}
