// SPDX-License-Identifier: Apache-2.0
/*
 * verbs_peer - the guest-side partner of ndk_peer for the data-path cases:
 * libibverbs + librdmacm on Linux siw. Built on the host (Debian 12, rdma-core
 * 44.0, the same as the guest image, which has no compiler) and run in the
 * guest from the share folder.
 *
 *   verbs_peer server -p PORT [-s SIZE] -r passive|reject|die
 *   verbs_peer client -a ADDR -p PORT [-s SIZE] -r active -o write,read,...
 *   verbs_peer ndksock-server PORT   (the WDK sample's server: ndksock_server.c)
 *
 * Speaks the ivx exchange of ivx_proto.h. Prints one JSON object per op.
 * Exit: 0 all ops ok, 1 an op failed, 2 usage, 3 setup/connection failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ivx_proto.h"
#include "ndksock_server.h"

#define CTX_SEND 1u
#define CTX_RECV 0x1000u

static const char reject_pd[] = "siw says no";

struct peer {
  struct rdma_event_channel* ch;
  struct rdma_cm_id* listen_id;
  struct rdma_cm_id* id;
  struct ibv_pd* pd;
  struct ibv_cq* cq;
  struct ibv_mr *mr, *rmr, *cmr;
  uint8_t* buf;
  uint8_t* rbuf;
  size_t size, slot;
  uint8_t ctrl[IVX_CTRL_SIZE];
  struct ibv_wc sq[64], rq[64];
  int nsq, nrq;
  unsigned last_slot;
  int flushed;
  enum ibv_wc_status first_error;
};

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void die3(const char* what) {
  printf("{\"op\": \"setup\", \"ok\": false, \"error\": \"%s: %s\"}\n", what, strerror(errno));
  fflush(stdout);
  exit(3);
}

static struct rdma_cm_event* wait_event(struct peer* p, enum rdma_cm_event_type want) {
  struct rdma_cm_event* ev;
  if (rdma_get_cm_event(p->ch, &ev)) die3("rdma_get_cm_event");
  if (ev->event != want) {
    printf(
        "{\"op\": \"cm\", \"ok\": false, \"event\": \"%s\", \"status\": %d, \"expected\": "
        "\"%s\"}\n",
        rdma_event_str(ev->event), ev->status, rdma_event_str(want));
    fflush(stdout);
    exit(3);
  }
  return ev;
}

static void post_recv(struct peer* p, unsigned i) {
  struct ibv_sge sge = {(uintptr_t)(p->rbuf + i * p->slot), (uint32_t)p->slot, p->rmr->lkey};
  struct ibv_recv_wr wr = {0}, *bad;
  wr.wr_id = CTX_RECV + i;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  if (ibv_post_recv(p->id->qp, &wr, &bad)) die3("ibv_post_recv");
}

/* PD, CQ, QP on `id`, buffers registered, receives posted. */
static void setup_qp(struct peer* p, struct rdma_cm_id* id) {
  p->id = id;
  p->pd = ibv_alloc_pd(id->verbs);
  if (!p->pd) die3("ibv_alloc_pd");
  p->cq = ibv_create_cq(id->verbs, 256, NULL, NULL, 0);
  if (!p->cq) die3("ibv_create_cq");
  struct ibv_qp_init_attr a = {0};
  a.send_cq = a.recv_cq = p->cq;
  a.cap.max_send_wr = 64;
  a.cap.max_recv_wr = IVX_RECVS + 4;
  a.cap.max_send_sge = a.cap.max_recv_sge = 1;
  a.qp_type = IBV_QPT_RC;
  if (rdma_create_qp(id, p->pd, &a)) die3("rdma_create_qp");
  p->slot = p->size > 64 ? p->size : 64;
  p->buf = aligned_alloc(4096, (p->size + 4095) & ~(size_t)4095);
  p->rbuf = aligned_alloc(4096, p->slot * IVX_RECVS);
  int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
  p->mr = ibv_reg_mr(p->pd, p->buf, p->size, acc);
  p->rmr = ibv_reg_mr(p->pd, p->rbuf, p->slot * IVX_RECVS, IBV_ACCESS_LOCAL_WRITE);
  p->cmr = ibv_reg_mr(p->pd, p->ctrl, sizeof p->ctrl, 0);
  if (!p->mr || !p->rmr || !p->cmr) die3("ibv_reg_mr");
  for (unsigned i = 0; i < IVX_RECVS; ++i) post_recv(p, i);
}

/* Polls the CQ for the next completion of one kind; 0 on timeout. */
static int next(struct peer* p, struct ibv_wc* out, int recv, int timeout_ms) {
  double end = now_ms() + timeout_ms;
  for (;;) {
    struct ibv_wc* q = recv ? p->rq : p->sq;
    int* n = recv ? &p->nrq : &p->nsq;
    if (*n > 0) {
      *out = q[0];
      memmove(q, q + 1, (size_t)(*n - 1) * sizeof *q);
      --*n;
      return 1;
    }
    struct ibv_wc wc[16];
    int k = ibv_poll_cq(p->cq, 16, wc);
    for (int i = 0; i < k; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) {
        if (!p->flushed) p->first_error = wc[i].status;
        ++p->flushed;
      }
      int is_recv = wc[i].wr_id >= CTX_RECV;
      struct ibv_wc* dq = is_recv ? p->rq : p->sq;
      int* dn = is_recv ? &p->nrq : &p->nsq;
      if (*dn < 64) dq[(*dn)++] = wc[i];
    }
    if (k <= 0) {
      if (now_ms() > end) return 0;
      usleep(200);
    }
  }
}

/* The first pending asynchronous event of the device (QP fatal, access
   error, ...), as text; "" if there is none. Does not block. */
static const char* async_event(struct peer* p) {
  static char name[64];
  struct ibv_context* ctx = p->id->verbs;
  int fl = fcntl(ctx->async_fd, F_GETFL);
  if (fl < 0 || fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0) return "";
  struct ibv_async_event ev;
  name[0] = 0;
  if (ibv_get_async_event(ctx, &ev) == 0) {
    snprintf(name, sizeof name, "%s", ibv_event_type_str(ev.event_type));
    ibv_ack_async_event(&ev);
  }
  return name;
}

static int wait_send(struct peer* p, int timeout_ms, enum ibv_wc_status* st) {
  struct ibv_wc wc;
  if (!next(p, &wc, 0, timeout_ms)) return 0;
  *st = wc.status;
  return wc.status == IBV_WC_SUCCESS;
}

static int post_send(struct peer* p, enum ibv_wr_opcode op, void* addr, uint32_t len, uint32_t lkey,
                     uint64_t rva, uint32_t rkey) {
  struct ibv_sge sge = {(uintptr_t)addr, len, lkey};
  struct ibv_send_wr wr = {0}, *bad;
  wr.wr_id = CTX_SEND;
  wr.sg_list = &sge;
  wr.num_sge = len ? 1 : 0;
  wr.opcode = op;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_READ) {
    wr.wr.rdma.remote_addr = rva;
    wr.wr.rdma.rkey = rkey;
  }
  if (op == IBV_WR_SEND_WITH_INV) {
    wr.invalidate_rkey = rkey;
    /* rdma-core's siw provider (44.0, and upstream) copies wr.rdma.rkey, not
       invalidate_rkey, into the SQE, and the kernel puts that SQE field on
       the wire as the Invalidate STag: without this line siw sends STag 0. */
    wr.wr.rdma.rkey = rkey;
  }
  return ibv_post_send(p->id->qp, &wr, &bad);
}

static int send_ctrl(struct peer* p, uint32_t type, uint64_t va, uint32_t stag, uint32_t len,
                     uint32_t seed, uint32_t arg) {
  struct ivx_ctrl c = {IVX_MAGIC, type, va, stag, len, seed, arg};
  ivx_swap(&c);
  memcpy(p->ctrl, &c, sizeof c);
  enum ibv_wc_status st = IBV_WC_SUCCESS;
  if (post_send(p, IBV_WR_SEND, p->ctrl, IVX_CTRL_SIZE, p->cmr->lkey, 0, 0)) return 0;
  return wait_send(p, 30000, &st);
}

static int wait_recv(struct peer* p, struct ibv_wc* wc, uint8_t** data, int timeout_ms) {
  if (!next(p, wc, 1, timeout_ms)) return 0;
  p->last_slot = (unsigned)(wc->wr_id - CTX_RECV);
  *data = p->rbuf + p->last_slot * p->slot;
  return 1;
}

static int recv_ctrl(struct peer* p, struct ivx_ctrl* c, int timeout_ms) {
  struct ibv_wc wc;
  uint8_t* d;
  if (!wait_recv(p, &wc, &d, timeout_ms) || wc.status != IBV_WC_SUCCESS) return 0;
  int ok = wc.byte_len == IVX_CTRL_SIZE;
  if (ok) {
    memcpy(c, d, sizeof *c);
    ivx_swap(c);
    ok = c->magic == IVX_MAGIC;
  }
  post_recv(p, p->last_slot);
  return ok;
}

struct remote {
  uint64_t va;
  uint32_t stag, len;
};

static int exchange_adv(struct peer* p, struct remote* r, uint32_t seed) {
  struct ivx_ctrl c;
  if (!send_ctrl(p, IVX_ADV, (uintptr_t)p->buf, p->mr->rkey, (uint32_t)p->size, seed, 0)) return 0;
  if (!recv_ctrl(p, &c, 30000) || c.type != IVX_ADV) return 0;
  r->va = c.va;
  r->stag = c.stag;
  r->len = c.len;
  return 1;
}

static int result_ok(struct peer* p, uint32_t op, uint32_t* detail) {
  struct ivx_ctrl c;
  if (!recv_ctrl(p, &c, 30000) || c.type != IVX_RESULT || c.arg != op) return 0;
  if (detail) *detail = c.len;
  return c.seed == 1;
}

static int run_active(struct peer* p, char* ops) {
  struct remote r;
  if (!exchange_adv(p, &r, 0)) {
    printf("{\"op\": \"adv\", \"ok\": false}\n");
    return 1;
  }
  int rc = 0;
  uint32_t seed = 200;
  for (char* op = strtok(ops, ","); op; op = strtok(NULL, ",")) {
    double t0 = now_ms();
    size_t n = p->size < r.len ? p->size : r.len;
    enum ibv_wc_status st = IBV_WC_SUCCESS;
    int ok = 0;
    char extra[1024] = "";
    ++seed;
    if (!strcmp(op, "write")) {
      ivx_fill(p->buf, n, seed);
      ok = !post_send(p, IBV_WR_RDMA_WRITE, p->buf, (uint32_t)n, p->mr->lkey, r.va, r.stag) &&
           wait_send(p, 30000, &st) &&
           send_ctrl(p, IVX_DONE, 0, 0, (uint32_t)n, seed, IVX_OP_WRITE) &&
           result_ok(p, IVX_OP_WRITE, NULL);
    } else if (!strcmp(op, "read")) {
      ok = send_ctrl(p, IVX_FILL, 0, 0, (uint32_t)n, seed, IVX_OP_READ) &&
           result_ok(p, IVX_OP_READ, NULL);
      memset(p->buf, 0, n);
      ok = ok && !post_send(p, IBV_WR_RDMA_READ, p->buf, (uint32_t)n, p->mr->lkey, r.va, r.stag) &&
           wait_send(p, 30000, &st);
      long long bad = ivx_check(p->buf, n, seed);
      snprintf(extra, sizeof extra, ", \"first_bad\": %lld", bad);
      ok = ok && bad < 0;
      send_ctrl(p, IVX_DONE, 0, 0, (uint32_t)n, ok ? 1 : 0, IVX_OP_READ);
    } else if (!strcmp(op, "send") || !strcmp(op, "sendinv")) {
      int inv = !strcmp(op, "sendinv");
      uint32_t m = inv ? 64 : (uint32_t)n, code = inv ? IVX_OP_SENDINV : IVX_OP_SEND, detail = 0;
      uint64_t written = 0;
      ok = 1;
      if (inv) {
        /* sendinv: RDMA Write the peer's buffer first (EXPECT's va says how
           much), then the Send with Invalidate of its STag: the peer checks
           both and that its receive completion names the STag */
        ivx_fill(p->buf, n, seed);
        ok = !post_send(p, IBV_WR_RDMA_WRITE, p->buf, (uint32_t)n, p->mr->lkey, r.va, r.stag) &&
             wait_send(p, 30000, &st);
        written = n;
      }
      ivx_fill(p->buf, m, seed);
      ok = ok && send_ctrl(p, IVX_EXPECT, written, r.stag, m, seed, code) &&
           !post_send(p, inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND, p->buf, m, p->mr->lkey, 0,
                      r.stag) &&
           wait_send(p, 30000, &st) && result_ok(p, code, &detail);
      if (inv) {
        snprintf(extra, sizeof extra, ", \"stag\": %u, \"written\": %llu, \"invalidated\": %s",
                 r.stag, (unsigned long long)written, detail == 1 ? "true" : "false");
        ok = ok && detail == 1;
      }
    } else if (!strcmp(op, "badwrite") || !strcmp(op, "invwrite")) {
      /* badwrite: an STag the peer never issued; invwrite (after sendinv):
         the STag just invalidated. Either way the peer must refuse the Write
         with a Terminate, which moves our QP to error. */
      int bad = !strcmp(op, "badwrite");
      uint32_t bogus = bad ? r.stag ^ 0x00ffff00u : r.stag;
      ivx_fill(p->buf, 64, seed);
      int posted = !post_send(p, IBV_WR_RDMA_WRITE, p->buf, 64, p->mr->lkey, r.va, bogus);
      int wok = posted && wait_send(p, 30000, &st);
      /* How siw tells its application about the peer's Terminate: later work
         completes with an error (the QP is in error), an asynchronous event,
         and/or an rdma_cm event. Keep one control Send in flight and watch
         all three for up to 40 s: bounded by time, not by a count of polls
         (the control Sends may complete at once while siw has not yet
         processed the Terminate: 400 of them once took 19 ms). */
      char ev[64] = "", cm[64] = "";
      double t_err = -1, t_ev = -1, t_cm = -1;
      int inflight = 0;
      int fl = fcntl(p->ch->fd, F_GETFL);
      if (fl >= 0) fcntl(p->ch->fd, F_SETFL, fl | O_NONBLOCK);
      const double give_up = now_ms() + 40000;
      while (!p->flushed && now_ms() < give_up) {
        struct ibv_wc w;
        if (!inflight) {
          struct ivx_ctrl c = {IVX_MAGIC, IVX_DONE, 0, 0, 0, 0, IVX_OP_BADWRITE};
          ivx_swap(&c);
          memcpy(p->ctrl, &c, sizeof c);
          inflight = !post_send(p, IBV_WR_SEND, p->ctrl, IVX_CTRL_SIZE, p->cmr->lkey, 0, 0);
        }
        if (next(p, &w, 0, 100)) {
          inflight = 0;
          usleep(10000); /* one control Send per 10 ms at most */
        }
        if (p->flushed && t_err < 0) t_err = now_ms() - t0;
        if (!ev[0] && (snprintf(ev, sizeof ev, "%s", async_event(p)), ev[0])) t_ev = now_ms() - t0;
        struct rdma_cm_event* ce;
        if (!cm[0] && rdma_get_cm_event(p->ch, &ce) == 0) {
          snprintf(cm, sizeof cm, "%s", rdma_event_str(ce->event));
          rdma_ack_cm_event(ce);
          t_cm = now_ms() - t0;
        }
      }
      snprintf(
          extra, sizeof extra,
          ", \"bogus_stag\": %u, \"write_completion\": \"%s\", \"error\": \"%s\", \"flushed\": %d"
          ", \"async_event\": \"%s\", \"cm_event\": \"%s\", \"error_ms\": %.0f"
          ", \"async_ms\": %.0f, \"cm_ms\": %.0f",
          bogus, wok ? "success" : ibv_wc_status_str(st),
          p->flushed ? ibv_wc_status_str(p->first_error) : "", p->flushed, ev, cm, t_err, t_ev,
          t_cm);
      printf("{\"op\": \"%s\", \"ok\": true%s, \"ms\": %.1f}\n", op, extra, now_ms() - t0);
      fflush(stdout);
      return 0;
    } else {
      snprintf(extra, sizeof extra, ", \"error\": \"unknown op\"");
    }
    printf("{\"op\": \"%s\", \"ok\": %s, \"size\": %zu, \"wc\": \"%s\"%s, \"ms\": %.1f}\n", op,
           ok ? "true" : "false", n, ibv_wc_status_str(st), extra, now_ms() - t0);
    fflush(stdout);
    if (!ok) rc = 1;
  }
  send_ctrl(p, IVX_BYE, 0, 0, 0, 0, 0);
  return rc;
}

static int run_passive(struct peer* p, int die_after) {
  struct remote r;
  uint32_t seed = 9;
  int data_msgs = 0;
  ivx_fill(p->buf, p->size, seed);
  if (!exchange_adv(p, &r, seed)) {
    printf("{\"op\": \"adv\", \"ok\": false}\n");
    return 1;
  }
  for (;;) {
    struct ibv_wc wc;
    uint8_t* d;
    /* siw does not flush a user-space RQ when its QP fails (e.g. after it
       sent a Terminate); it raises an asynchronous event instead. So wait
       for a receive in slices and end on either. */
    int got = 0;
    const char* ev = "";
    for (int i = 0; i < 120 && !got && !ev[0]; ++i) {
      got = wait_recv(p, &wc, &d, 500);
      if (!got) ev = async_event(p);
    }
    if (!got || wc.status != IBV_WC_SUCCESS) {
      if (!ev[0]) ev = async_event(p);
      /* siw raises the event from its receive path and sends its Terminate
         later, from a CM work item (SIW_CM_WORK_CLOSE_LLP), which then
         reports the close (RDMA_CM_EVENT_DISCONNECTED). Tearing the QP down
         before that work ran closes the socket with no Terminate sent: a
         loaded guest may (docs/compatibility.md, note 9). So wait for the close,
         bounded. */
      const char* cm = "";
      double cm_ms = -1, t0 = now_ms();
      if (ev[0]) {
        int fl = fcntl(p->ch->fd, F_GETFL);
        if (fl >= 0) fcntl(p->ch->fd, F_SETFL, fl | O_NONBLOCK);
        while (!cm[0] && now_ms() - t0 < 20000) {
          struct rdma_cm_event* ce;
          if (rdma_get_cm_event(p->ch, &ce) == 0) {
            if (ce->event == RDMA_CM_EVENT_DISCONNECTED) {
              cm = "RDMA_CM_EVENT_DISCONNECTED";
              cm_ms = now_ms() - t0;
            }
            rdma_ack_cm_event(ce);
          } else {
            usleep(10000);
          }
        }
      }
      printf(
          "{\"op\": \"serve\", \"end\": \"%s\", \"flushed\": %d, \"async_event\": \"%s\""
          ", \"cm_event\": \"%s\", \"cm_wait_ms\": %.0f}\n",
          p->flushed ? ibv_wc_status_str(p->first_error)
          : ev[0]    ? "async event"
                     : "timeout",
          p->flushed, ev, cm, cm_ms);
      return 0;
    }
    struct ivx_ctrl c;
    int is_ctrl = wc.byte_len == IVX_CTRL_SIZE;
    if (is_ctrl) {
      memcpy(&c, d, sizeof c);
      ivx_swap(&c);
      is_ctrl = c.magic == IVX_MAGIC;
    }
    post_recv(p, p->last_slot);
    if (!is_ctrl) {
      /* stream data (the reset case): die abruptly mid-transfer */
      if (die_after && ++data_msgs >= die_after) {
        printf("{\"op\": \"die\", \"after\": %d}\n", data_msgs);
        fflush(stdout);
        _exit(1);
      }
      continue;
    }
    double t0 = now_ms();
    if (c.type == IVX_BYE) return 0;
    if (c.type == IVX_FILL) {
      ivx_fill(p->buf, c.len, c.seed);
      send_ctrl(p, IVX_RESULT, 0, 0, 0, 1, c.arg);
      continue;
    }
    if (c.type == IVX_DONE && c.arg == IVX_OP_WRITE) {
      long long bad = ivx_check(p->buf, c.len, c.seed);
      printf("{\"op\": \"write\", \"ok\": %s, \"first_bad\": %lld", bad < 0 ? "true" : "false",
             bad);
      send_ctrl(p, IVX_RESULT, 0, 0, 0, bad < 0, c.arg);
    } else if (c.type == IVX_DONE) {
      printf("{\"op\": \"%s\", \"ok\": %s", ivx_op_name(c.arg), c.seed == 1 ? "true" : "false");
    } else if (c.type == IVX_EXPECT) {
      struct ibv_wc dw;
      uint8_t* dd;
      int got = wait_recv(p, &dw, &dd, 30000);
      int ok = got && dw.status == IBV_WC_SUCCESS && dw.byte_len == c.len &&
               ivx_check(dd, c.len, c.seed) < 0;
      int inv = 0;
      if (got && c.arg == IVX_OP_SENDINV) {
        /* Reported for the record only: siw does not put the invalidated
           rkey into user-space completions (the kernel fills the CQE's
           invalidate fields for kernel CQs only, and rdma-core's siw
           provider sets wc_flags to 0), so the active side proves the
           invalidation by its effect. See docs/compatibility.md, note 7. */
        inv = (dw.wc_flags & IBV_WC_WITH_INV) && dw.invalidated_rkey == p->mr->rkey;
        if (c.va) ok = ok && ivx_check(p->buf, c.va, c.seed) < 0;
      }
      if (got) post_recv(p, p->last_slot);
      printf(
          "{\"op\": \"%s\", \"ok\": %s, \"wc\": \"%s\", \"bytes\": %u, \"invalidated\": %s"
          ", \"wc_flags\": %u, \"rkey\": %u",
          ivx_op_name(c.arg), ok ? "true" : "false", got ? ibv_wc_status_str(dw.status) : "timeout",
          got ? dw.byte_len : 0, inv ? "true" : "false", got ? dw.wc_flags : 0, p->mr->rkey);
      send_ctrl(p, IVX_RESULT, 0, 0, (uint32_t)inv, (uint32_t)ok, c.arg);
    } else {
      printf("{\"op\": \"?\", \"ok\": false, \"type\": %u", c.type);
    }
    printf(", \"ms\": %.1f}\n", now_ms() - t0);
    fflush(stdout);
  }
}

int main(int argc, char** argv) {
  struct peer p = {0};
  const char *addr = NULL, *role = "passive";
  char* ops = NULL;
  int port = 0, opt, depth = 4;
  p.size = 65536;
  if (argc < 2) return 2;
  if (!strcmp(argv[1], "ndksock-server")) return ndksock_server_main(argc, argv);
  int server = !strcmp(argv[1], "server");
  optind = 2;
  while ((opt = getopt(argc, argv, "a:p:s:r:o:d:")) != -1) {
    switch (opt) {
      case 'd': /* initiator_depth and responder_resources (ORD/IRD) */
        depth = atoi(optarg);
        break;
      case 'a':
        addr = optarg;
        break;
      case 'p':
        port = atoi(optarg);
        break;
      case 's':
        p.size = strtoul(optarg, NULL, 0);
        break;
      case 'r':
        role = optarg;
        break;
      case 'o':
        ops = optarg;
        break;
      default:
        return 2;
    }
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  p.ch = rdma_create_event_channel();
  if (!p.ch) die3("rdma_create_event_channel");
  struct rdma_conn_param cp = {0};
  cp.initiator_depth = cp.responder_resources = (uint8_t)depth;
  struct rdma_cm_event* ev;
  if (server) {
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (rdma_create_id(p.ch, &p.listen_id, NULL, RDMA_PS_TCP)) die3("rdma_create_id");
    if (rdma_bind_addr(p.listen_id, (struct sockaddr*)&sa)) die3("rdma_bind_addr");
    if (rdma_listen(p.listen_id, 4)) die3("rdma_listen");
    ev = wait_event(&p, RDMA_CM_EVENT_CONNECT_REQUEST);
    struct rdma_cm_id* id = ev->id;
    printf("{\"op\": \"request\", \"pd_len\": %u}\n", ev->param.conn.private_data_len);
    rdma_ack_cm_event(ev);
    if (!strcmp(role, "reject")) {
      int rc = rdma_reject(id, reject_pd, sizeof reject_pd - 1);
      printf("{\"op\": \"reject\", \"ok\": %s}\n", rc ? "false" : "true");
      usleep(500000);
      return rc ? 3 : 0;
    }
    setup_qp(&p, id);
    if (rdma_accept(id, &cp)) die3("rdma_accept");
    rdma_ack_cm_event(wait_event(&p, RDMA_CM_EVENT_ESTABLISHED));
    int rc = run_passive(&p, !strcmp(role, "die") ? 2 : 0);
    rdma_disconnect(id);
    return rc;
  }
  struct addrinfo* ai;
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  if (!addr || getaddrinfo(addr, ps, NULL, &ai)) return 2;
  struct rdma_cm_id* id;
  if (rdma_create_id(p.ch, &id, NULL, RDMA_PS_TCP)) die3("rdma_create_id");
  if (rdma_resolve_addr(id, NULL, ai->ai_addr, 5000)) die3("rdma_resolve_addr");
  rdma_ack_cm_event(wait_event(&p, RDMA_CM_EVENT_ADDR_RESOLVED));
  if (rdma_resolve_route(id, 5000)) die3("rdma_resolve_route");
  rdma_ack_cm_event(wait_event(&p, RDMA_CM_EVENT_ROUTE_RESOLVED));
  setup_qp(&p, id);
  if (rdma_connect(id, &cp)) die3("rdma_connect");
  ev = wait_event(&p, RDMA_CM_EVENT_ESTABLISHED);
  /* What the iWARP CM reports of the negotiated read limits (for the
   * record; the softndk side's own view is what cases assert on). */
  printf(
      "{\"op\": \"connect\", \"ok\": true, \"depth\": %d, \"ev_initiator_depth\": %u"
      ", \"ev_responder_resources\": %u}\n",
      depth, ev->param.conn.initiator_depth, ev->param.conn.responder_resources);
  rdma_ack_cm_event(ev);
  int rc =
      strcmp(role, "active") ? 2 : run_active(&p, strdup(ops ? ops : "write,read,send,sendinv"));
  rdma_disconnect(id);
  return rc;
}
