// SPDX-License-Identifier: Apache-2.0
/*
 * softndk/softndk.h - what softndk adds around the NDKPI on Linux.
 *
 * NDKPI leaves adapter discovery and opening to NDIS, which Linux does not
 * have. This header provides:
 *   0. the version of the library (SoftNdkGetVersion);
 *   1. adapter discovery and open/close (one adapter per Linux network
 *      interface that has an IP address, loopback included);
 *   2. the asynchronous adapter-control interface, after the "IRP-based
 *      verbs" design: every call takes a consumer-owned SOFTNDK_REQUEST
 *      (the user-space form of an IRP) and either finishes inline or returns
 *      STATUS_PENDING and completes later through the request's callback;
 *   3. observability (counters, negotiated connection parameters, pcap
 *      traces) and fault hooks for tests.
 * All functions here follow the NDKPI rules of ndkpi.h: non-blocking and
 * callable from any provider callback, except SoftNdkOpenAdapter and
 * SoftNdkCloseAdapter, which may block (the NDIS open/close handlers run at
 * PASSIVE_LEVEL too).
 */
#ifndef SOFTNDK_SOFTNDK_H_
#define SOFTNDK_SOFTNDK_H_

#include <netinet/in.h>

#include "softndk/ndkpi.h"
#include "softndk/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* 0. Version                                                               */
/* ------------------------------------------------------------------------ */

/* The version of the libsoftndk this program runs with, as
 * SOFTNDK_MAKE_VERSION(major, minor, patch) (softndk/version.h); the headers
 * it was built with are SOFTNDK_VERSION. A program built against one 0.x
 * version runs with any later one of the same SONAME (docs/abi.md). When
 * pText is not NULL it receives the version as text ("0.1.0", static
 * storage). Never fails; callable at any time, from any thread. */
ULONG SoftNdkGetVersion(const char** pText);

/* ------------------------------------------------------------------------ */
/* 1. Discovery, open and close                                             */
/* ------------------------------------------------------------------------ */

#define SOFTNDK_MAX_ADAPTER_ADDRESSES 8
#define SOFTNDK_IFNAME_SIZE 16

typedef enum {
  SoftNdkPortStateDown = 1,   /* interface down or no carrier */
  SoftNdkPortStateActive = 4, /* interface up with carrier */
} SOFTNDK_PORT_STATE;

typedef struct _SOFTNDK_ADAPTER_DESC {
  char IfName[SOFTNDK_IFNAME_SIZE]; /* Linux interface name, NUL-terminated */
  ULONG IfIndex;
  ULONG PortState; /* SOFTNDK_PORT_STATE */
  ULONG Mtu;
  ULONG AddressCount;
  struct sockaddr_storage Addresses[SOFTNDK_MAX_ADAPTER_ADDRESSES];
} SOFTNDK_ADAPTER_DESC;

/* Lists the adapters (interfaces with at least one IPv4/IPv6 address).
 * *pCount in: capacity of pDesc; out: number of adapters. STATUS_SUCCESS,
 * or STATUS_BUFFER_TOO_SMALL with *pCount set to the number needed (pDesc
 * may be NULL when *pCount is 0). May block briefly (netlink dump). */
NTSTATUS SoftNdkEnumerateAdapters(SOFTNDK_ADAPTER_DESC* pDesc, ULONG* pCount);

/* SOFTNDK_OPEN_PARAMETERS.Flags */
#define SOFTNDK_OPEN_FLAG_ASYNC_CREATE 0x00000001u /* creates return STATUS_PENDING */
#define SOFTNDK_OPEN_FLAG_ASYNC_CLOSE 0x00000002u  /* closes return STATUS_PENDING */
/* Every NdkFastRegister gives the MR a new token (softndk before 0.2). By
 * default a fast-register MR keeps one token for its lifetime, as NDKPI
 * consumers expect (docs/ndk-objects.md, "MR and MW"). */
#define SOFTNDK_OPEN_FLAG_FR_REKEY 0x00000004u
/* Verbs backend only (docs/verbs.md, "Fast register"): on an RDMA device
 * without type-2 memory windows (siw, cxgb4) NdkInitializeFastRegisterMr
 * fails with STATUS_NOT_SUPPORTED unless this flag opts into the degraded
 * mode, in which every NdkFastRegister registers the pages anew
 * (ibv_reg_mr_iova on a backend thread) and the MR's token changes with
 * each registration, as with SOFTNDK_OPEN_FLAG_FR_REKEY. The software
 * backend ignores it. */
#define SOFTNDK_OPEN_FLAG_FR_REGISTER 0x00000008u

/* SOFTNDK_OPEN_PARAMETERS.MpaFlags: how this adapter negotiates MPA.
 * CRC32c: with none of the three CRC flags, CRC is requested (C=1 in our
 * Request or Reply) on every connection that leaves the host and not on
 * host-local ones (peer on loopback or on one of this host's addresses);
 * a peer that asks always gets it. docs/wire.md, "CRC by default off-host". */
#define SOFTNDK_MPA_CRC_REQUIRED 0x00000001u   /* ask for CRC, refuse peers without */
#define SOFTNDK_MPA_CRC_STRICT_OFF 0x00000002u /* refuse peers that ask for CRC */
#define SOFTNDK_MPA_CRC_WHEN_ASKED 0x00000008u /* CRC only if the peer asks (the old default) */
/* NDK connection semantics (NdkAccept completes only after the active
 * side's NdkCompleteConnect; then either side may send first) come from
 * RFC 6581 peer-to-peer mode: an initiator offers it by default and sends
 * its RTR from NdkCompleteConnect; a responder honours it whenever the
 * initiator offers it. With an initiator that does not (stock siw), the
 * accept completes when the MPA Reply is sent and the passive side's first
 * FPDU waits for the initiator's (RFC 5044 7.1.2; docs/connections.md). */
#define SOFTNDK_MPA_PEER_TO_PEER 0x00000004u    /* offer P2P as initiator (the default) */
#define SOFTNDK_MPA_NO_PEER_TO_PEER 0x00000080u /* do not offer P2P (softndk 0.1) */
#define SOFTNDK_MPA_RTR_WRITE 0x00000010u       /* RTR types offered/accepted */
#define SOFTNDK_MPA_RTR_READ 0x00000020u
#define SOFTNDK_MPA_RTR_SEND 0x00000040u

/* SOFTNDK_OPEN_PARAMETERS.Backend: the engine that serves the adapter
 * (docs/verbs.md, "Choosing the backend"). DEFAULT: the environment
 * variable SOFTNDK_BACKEND (auto, iwarp-sw or verbs; unset or empty: auto).
 * AUTO: rdma-core (verbs) for a hardware RNIC on the interface, softndk's
 * software iWARP for everything else, a software RDMA device (siw, rxe)
 * included. IWARP_SW: always the software engine. VERBS: the interface's
 * RDMA device through rdma-core, or the open fails (STATUS_NOT_SUPPORTED:
 * no verbs backend in this build or process; STATUS_NO_SUCH_DEVICE: no RDMA
 * device serves the interface). Another value, or an unknown SOFTNDK_BACKEND:
 * STATUS_INVALID_PARAMETER. */
#define SOFTNDK_BACKEND_DEFAULT 0u
#define SOFTNDK_BACKEND_AUTO 1u
#define SOFTNDK_BACKEND_IWARP_SW 2u
#define SOFTNDK_BACKEND_VERBS 3u

/* Open-time settings. Size: sizeof(SOFTNDK_OPEN_PARAMETERS) of the caller's
 * header, at least SOFTNDK_OPEN_PARAMETERS_V1_SIZE (smaller:
 * STATUS_INVALID_PARAMETER); fields beyond Size take their defaults.
 * Zero in any field means "the default" (in brackets).
 * The defaults interoperate with Linux siw. Environment variables of the
 * same name in upper case with the prefix SOFTNDK_ (e.g. SOFTNDK_MPA_REVISION)
 * override the defaults but not values given here. */
typedef struct _SOFTNDK_OPEN_PARAMETERS {
  ULONG Size;       /* sizeof(SOFTNDK_OPEN_PARAMETERS), see above */
  ULONG Flags;      /* SOFTNDK_OPEN_FLAG_* */
  ULONG MaxQpCount; /* resource caps [65536 each] */
  ULONG MaxCqCount;
  ULONG MaxPdCount;
  ULONG MaxMrCount;
  ULONG MaxMwCount;
  ULONG MaxSrqCount;
  ULONG MaxConnectorCount;
  ULONG ConnectTimeoutMs;    /* TCP connect + MPA exchange; passive: the wait
                                for the peer's CompleteConnect (RTR) [10000] */
  ULONG DisconnectTimeoutMs; /* graceful disconnect [5000] */
  ULONG MpaRevision;         /* 1 or 2 [2] */
  ULONG MpaFlags;            /* SOFTNDK_MPA_* [RTR_WRITE|RTR_READ] */
  ULONG EngineThreads;       /* progress-engine threads [1] */
  /* Appended in 0.2 (docs/abi.md): read only when Size covers it. */
  ULONG Backend; /* SOFTNDK_BACKEND_* [DEFAULT] */
} SOFTNDK_OPEN_PARAMETERS;
/* The size of SOFTNDK_OPEN_PARAMETERS before Backend (softndk 0.1): a
 * caller built then passes it in Size and gets the defaults of the newer
 * fields. */
#define SOFTNDK_OPEN_PARAMETERS_V1_SIZE 56
#if defined(__cplusplus)
static_assert(offsetof(SOFTNDK_OPEN_PARAMETERS, Backend) == SOFTNDK_OPEN_PARAMETERS_V1_SIZE,
              "SOFTNDK_OPEN_PARAMETERS: new fields go at the end");
#else
_Static_assert(offsetof(SOFTNDK_OPEN_PARAMETERS, Backend) == SOFTNDK_OPEN_PARAMETERS_V1_SIZE,
               "SOFTNDK_OPEN_PARAMETERS: new fields go at the end");
#endif

/* Opens an adapter by interface name ("lo", "eth0") or by one of its IP
 * addresses in text form ("127.0.0.1", "::1"). Version: the NDK version the
 * consumer needs; the major must be 1 or 2 and the minor not above what
 * softndk implements for that major, else NDIS_STATUS_BAD_VERSION. The
 * adapter then runs at softndk's highest minor of that major. Params may be
 * NULL. A zero field takes its SOFTNDK_<NAME> environment variable, else the
 * default; a variable set to a value that is not a whole number in range
 * (or SOFTNDK_SAMEHOST not on/off, SOFTNDK_TCP_CONGESTION one the kernel
 * refuses) fails the open with STATUS_INVALID_PARAMETER and one stderr line
 * naming the variable and its value; empty or 0 means the default.
 * Errors: STATUS_INVALID_PARAMETER, STATUS_NO_SUCH_DEVICE (no such
 * interface or address), NDIS_STATUS_BAD_VERSION, STATUS_INSUFFICIENT_RESOURCES.
 * Several opens of one interface give separate instances whose objects work
 * together as on one RNIC: CQs, QPs, connectors, listeners and shared
 * endpoints may be combined across them (docs/ndk-objects.md). */
NTSTATUS SoftNdkOpenAdapter(const char* NameOrAddress, NDK_VERSION Version,
                            const SOFTNDK_OPEN_PARAMETERS* Params, NDK_ADAPTER** ppNdkAdapter);

/* The NDK's blocking adapter close ("NdkCloseAdapter"): closes whatever the
 * consumer left open, waits until every callback on every descendant has
 * returned, and frees the adapter. Never call it from a callback.
 * The wait is bounded: DisconnectTimeoutMs + 5 s (10 s by default). Past
 * it (an object that never finishes closing: a provider bug), it writes one
 * line to stderr naming each object still alive (kind, references held,
 * open or closing) and returns; the adapter's memory is then kept rather
 * than freed under those objects, and its handle reports STATUS_FILE_CLOSED
 * like any closed adapter. */
void SoftNdkCloseAdapter(NDK_ADAPTER* pNdkAdapter);

/* ------------------------------------------------------------------------ */
/* 2. Asynchronous adapter control (IRP-style)                              */
/* ------------------------------------------------------------------------ */

typedef struct _SOFTNDK_REQUEST SOFTNDK_REQUEST;

/* Called once when a pended request finishes. Status and Information are
 * also stored in the request. Runs on a provider thread; may call anything
 * in softndk except the blocking adapter close. */
typedef void (*SOFTNDK_FN_REQUEST_COMPLETION)(SOFTNDK_REQUEST* pRequest);

/* The consumer owns the request's memory and must keep it valid until the
 * request completes (inline, or through Completion). */
struct _SOFTNDK_REQUEST {
  SOFTNDK_FN_REQUEST_COMPLETION Completion; /* set by the consumer */
  PVOID Context;                            /* consumer's, untouched */
  NTSTATUS Status;                          /* out */
  ULONG_PTR Information;                    /* out: bytes returned or event code */
  PVOID ProviderReserved[4];                /* softndk's; do not touch while pending */
};

/* Port event codes, returned in SOFTNDK_REQUEST.Information. */
#define SOFTNDK_PORT_EVENT_ACTIVE 1u         /* the bound interface came up */
#define SOFTNDK_PORT_EVENT_DOWN 2u           /* the bound interface went down */
#define SOFTNDK_PORT_EVENT_ADDRESS_CHANGE 3u /* an address was added or removed */

/* softndk adapters have exactly one port, number 1. */
#define SOFTNDK_PORT_NUMBER 1

/* Queue a request for the adapter's next fatal error. Several may be queued;
 * one fatal error completes all of them with STATUS_SUCCESS. Returns
 * STATUS_PENDING, or STATUS_SUCCESS inline if the adapter has already failed.
 * Cancellable. Completed with STATUS_CANCELLED when the adapter closes. */
NTSTATUS SoftNdkGetFatalEvent(NDK_ADAPTER* pNdkAdapter, SOFTNDK_REQUEST* pRequest);

/* Queue a request for the next event on a port. Each event completes exactly
 * one queued request (the oldest) with STATUS_SUCCESS and the event code in
 * Information. STATUS_PENDING; STATUS_INVALID_PARAMETER for a bad port;
 * STATUS_FILE_FORCED_CLOSED after a fatal error. */
NTSTATUS SoftNdkGetPortEvent(NDK_ADAPTER* pNdkAdapter, UCHAR PortNumber, SOFTNDK_REQUEST* pRequest);

/* Cancel a queued request: it completes with STATUS_CANCELLED (through its
 * callback, possibly before this returns). STATUS_SUCCESS if it was queued,
 * STATUS_NOT_FOUND-like STATUS_INVALID_PARAMETER if not (already done). */
NTSTATUS SoftNdkCancelRequest(NDK_ADAPTER* pNdkAdapter, SOFTNDK_REQUEST* pRequest);

/* Attribute buffers start with the size needed for the full attributes. */
typedef struct _SOFTNDK_PORT_ATTR {
  ULONG Size; /* bytes needed for the complete attributes */
  UCHAR PortNumber;
  UCHAR Reserved[3];
  ULONG State; /* SOFTNDK_PORT_STATE */
  ULONG Mtu;
  ULONG LinkSpeedMbps; /* 0 if unknown */
  ULONG IfIndex;
  char IfName[SOFTNDK_IFNAME_SIZE];
  ULONG Capabilities; /* SOFTNDK_PORT_CAP_* held by any opener */
  ULONG AddressCount;
  struct sockaddr_storage Addresses[1]; /* AddressCount entries */
} SOFTNDK_PORT_ATTR;

typedef struct _SOFTNDK_ADAPTER_ATTR {
  ULONG Size; /* bytes needed for the complete attributes */
  ULONG PortCount;
  NDK_ADAPTER_INFO Info;
  ULONG Flags;                /* SOFTNDK_ADAPTER_CAP_* currently set on this instance,
                                 and SOFTNDK_ADAPTER_SAMEHOST */
  ULONG MpaFlags;             /* SOFTNDK_MPA_* in effect (open parameters, environment) */
  SOFTNDK_PORT_ATTR Ports[1]; /* PortCount entries, each variable-sized:
                                 walk them with SOFTNDK_NEXT_PORT_ATTR */
} SOFTNDK_ADAPTER_ATTR;
/* In SOFTNDK_ADAPTER_ATTR.Flags: this instance looks for same-host peers
 * (the default; clear when SOFTNDK_SAMEHOST=off at open; docs/samehost.md). */
#define SOFTNDK_ADAPTER_SAMEHOST 0x80000000u
#define SOFTNDK_NEXT_PORT_ATTR(p) \
  ((SOFTNDK_PORT_ATTR*)((char*)(p) + ((SOFTNDK_PORT_ATTR*)(p))->Size))

/* Query into a caller-sized buffer. AttrSize < 4: STATUS_BUFFER_TOO_SMALL.
 * Smaller than the full attributes: STATUS_BUFFER_OVERFLOW, the buffer holds
 * the leading bytes (Size tells the full size), Information = bytes written.
 * Large enough: STATUS_SUCCESS, Information = bytes written.
 * After a fatal error: STATUS_FILE_FORCED_CLOSED. Completes inline. */
NTSTATUS SoftNdkQueryAdapter(NDK_ADAPTER* pNdkAdapter, SIZE_T AttrSize, SOFTNDK_ADAPTER_ATTR* pAttr,
                             SOFTNDK_REQUEST* pRequest);
/* Which engine serves this adapter instance and why (docs/verbs.md,
 * "Choosing the backend"; 0.2): Backend is SOFTNDK_BACKEND_IWARP_SW or
 * SOFTNDK_BACKEND_VERBS, Device the RDMA device behind a verbs adapter
 * ("siw0 [siw, iwarp] on eth0 10.0.2.15"; empty for the software engine),
 * Reason the rule that chose it. Both texts are NUL-terminated, cut to fit.
 * The caller sets Size to its sizeof (at least through Backend: 8); the
 * library fills what that covers. Completes inline. */
typedef struct _SOFTNDK_BACKEND_INFO {
  ULONG Size;
  ULONG Backend; /* SOFTNDK_BACKEND_* */
  char Device[96];
  char Reason[256];
  /* How NdkFastRegister works on this adapter (docs/verbs.md, "Fast
   * register"), its mode name first: "software", "software-rekey",
   * "type2-window", "register-per-fast-register" (the degraded mode of
   * SOFTNDK_OPEN_FLAG_FR_REGISTER) or "unsupported", then a reason. */
  char FastRegister[160];
} SOFTNDK_BACKEND_INFO;
NTSTATUS SoftNdkQueryBackend(NDK_ADAPTER* pNdkAdapter, SOFTNDK_BACKEND_INFO* pInfo);
NTSTATUS SoftNdkQueryPort(NDK_ADAPTER* pNdkAdapter, UCHAR PortNumber, SIZE_T AttrSize,
                          SOFTNDK_PORT_ATTR* pAttr, SOFTNDK_REQUEST* pRequest);

/* Modify. Flags say which fields of the modify structure are valid. */
#define SOFTNDK_MODIFY_ADAPTER_COUNTERS_RESET 0x00000001u /* zero the counters */
#define SOFTNDK_MODIFY_ADAPTER_TRACE 0x00000002u          /* TracePath: start/stop pcap */
typedef struct _SOFTNDK_MODIFY_ADAPTER {
  /* pcap file for all traffic of this instance (created or truncated now;
   * running connections switch at once, later ones when established);
   * NULL stops. Same format as SoftNdkTraceQp. A path that cannot be
   * created: STATUS_INVALID_PARAMETER, nothing changes. */
  const char* TracePath;
} SOFTNDK_MODIFY_ADAPTER;

/* Port capabilities. The EXCLUSIVE ones can be held by one opener (adapter
 * instance) of the interface at a time; a second opener that sets one gets
 * STATUS_FILE_LOCK_CONFLICT. */
#define SOFTNDK_PORT_CAP_TRACE_OWNER 0x00000001u    /* exclusive: controls port-wide capture */
#define SOFTNDK_PORT_CAP_FAULT_INJECTOR 0x00000002u /* exclusive: may inject faults */
#define SOFTNDK_PORT_CAP_EXCLUSIVE_MASK 0x00000003u
#define SOFTNDK_MODIFY_PORT_SET_CAPS 0x00000001u
#define SOFTNDK_MODIFY_PORT_CLEAR_CAPS 0x00000002u
typedef struct _SOFTNDK_MODIFY_PORT {
  ULONG SetCapabilities;
  ULONG ClearCapabilities;
} SOFTNDK_MODIFY_PORT;

NTSTATUS SoftNdkModifyAdapter(NDK_ADAPTER* pNdkAdapter, ULONG Flags,
                              const SOFTNDK_MODIFY_ADAPTER* pModify, SOFTNDK_REQUEST* pRequest);
NTSTATUS SoftNdkModifyPort(NDK_ADAPTER* pNdkAdapter, UCHAR PortNumber, ULONG Flags,
                           const SOFTNDK_MODIFY_PORT* pModify, SOFTNDK_REQUEST* pRequest);

/* Non-blocking close: STATUS_DEVICE_BUSY while the consumer still has
 * objects open on the adapter (nothing changes then). Otherwise every queued
 * event request completes with STATUS_CANCELLED before this returns, and the
 * close finishes inline (STATUS_SUCCESS) or later (STATUS_PENDING, then the
 * request's callback). The adapter pointer is invalid once it has finished. */
NTSTATUS SoftNdkCloseAdapterAsync(NDK_ADAPTER* pNdkAdapter, SOFTNDK_REQUEST* pRequest);

/* ------------------------------------------------------------------------ */
/* 3. Observability and fault hooks                                         */
/* ------------------------------------------------------------------------ */

/* Counters in the spirit of NDIS_NDK_PERFORMANCE_COUNTERS, kept per adapter
 * instance and per QP (the QP's: every connection it carried). The
 * adapter's are the sum of its QPs' until COUNTERS_RESET, which zeroes the
 * adapter's only. Octets/frames: bytes through the TCP socket (framing
 * included, the MPA exchange not) and FPDUs. docs/observability.md. */
typedef struct _SOFTNDK_COUNTERS {
  UINT64 Connect;          /* connections established as initiator */
  UINT64 Accept;           /* connections established as responder */
  UINT64 ConnectFailure;   /* connect attempts that failed */
  UINT64 ConnectionError;  /* established connections that ended in error */
  UINT64 ActiveConnection; /* established now */
  UINT64 CQError;          /* error completions */
  UINT64 RDMAInOctets;
  UINT64 RDMAOutOctets;
  UINT64 RDMAInFrames; /* FPDUs */
  UINT64 RDMAOutFrames;
  UINT64 TerminatesSent;
  UINT64 TerminatesReceived;
} SOFTNDK_COUNTERS;

NTSTATUS SoftNdkQueryAdapterCounters(NDK_ADAPTER* pNdkAdapter, SOFTNDK_COUNTERS* pCounters);
NTSTATUS SoftNdkQueryQpCounters(NDK_QP* pNdkQp, SOFTNDK_COUNTERS* pCounters);

/* The outcome of MPA negotiation and the last Terminate of a connection.
 * On an incoming connector not yet accepted or rejected, the MPA fields
 * describe the peer's Request (RtrType: the RTR types offered, a mask). */
typedef struct _SOFTNDK_CONNECTION_INFO {
  ULONG State;                 /* internal state, for diagnostics */
  ULONG MpaRevision;           /* 1 or 2; 0 before negotiation */
  BOOLEAN Crc;                 /* CRC32c in use */
  BOOLEAN Markers;             /* always FALSE: softndk refuses markers */
  BOOLEAN PeerToPeer;          /* RFC 6581 P2P negotiated */
  UCHAR RtrType;               /* 0 none, else SOFTNDK_MPA_RTR_* >> 4 */
  ULONG Ird;                   /* negotiated inbound read limit */
  ULONG Ord;                   /* negotiated outbound read limit */
  ULONG LastTerminateSent;     /* layer<<16 | etype<<8 | code, or 0xFFFFFFFF none */
  ULONG LastTerminateReceived; /* same encoding */
  struct sockaddr_storage Local;
  struct sockaddr_storage Peer;
} SOFTNDK_CONNECTION_INFO;

NTSTATUS SoftNdkQueryConnectionInfo(NDK_CONNECTOR* pNdkConnector, SOFTNDK_CONNECTION_INFO* pInfo);

/* The name of a Terminate code in the encoding above ("MPA CRC error" for
 * 0x00020002, RFC 5040/5041/5044 wording), or NULL for 0xFFFFFFFF and for
 * codes the RFCs do not define. */
const char* SoftNdkTerminateName(ULONG Code);

/* What the kernel's TCP did with a connection's bytes (TCP_INFO and
 * TCP_CONGESTION of its socket): the congestion control in use, round trip,
 * retransmissions, reordering. Size must be set to sizeof(SOFTNDK_TCP_INFO)
 * (a smaller Size: STATUS_INVALID_PARAMETER, nothing written); fields a
 * kernel does not report are 0. A connector without a connection, or whose
 * socket is closed: STATUS_CONNECTION_INVALID. */
typedef struct _SOFTNDK_TCP_INFO {
  ULONG Size;                 /* in: sizeof(SOFTNDK_TCP_INFO) */
  char CongestionControl[16]; /* NUL-terminated algorithm name ("cubic") */
  ULONG RttUs;                /* smoothed round trip */
  ULONG RttVarUs;
  ULONG SendCwnd;           /* congestion window, segments */
  ULONG SendMss;            /* bytes */
  ULONG TotalRetransmits;   /* segments retransmitted */
  ULONG ReorderingSeen;     /* reordering events the sender detected */
  ULONG OutOfOrderReceived; /* segments received out of order */
  ULONG DsackDups;          /* retransmissions the peer already had */
  UINT64 PacingRate;        /* bytes/s; 0 or ~0 when not pacing */
  UINT64 DeliveryRate;      /* bytes/s, latest sample */
  UINT64 BytesSent;         /* including retransmissions */
  UINT64 BytesRetransmitted;
  UINT64 BytesReceived;
} SOFTNDK_TCP_INFO;

NTSTATUS SoftNdkQueryConnectionTcpInfo(NDK_CONNECTOR* pNdkConnector, SOFTNDK_TCP_INFO* pInfo);

/* Which path a connection's data takes (docs/samehost.md). By default
 * (SOFTNDK_SAMEHOST unset, empty, "on" or "1"; read at SoftNdkOpenAdapter;
 * "off" or "0" keeps every connection on TCP), the two softndk ends of a
 * connection on one host find each other after MPA; each direction's FPDU
 * stream then moves to a shared-memory ring, and large RDMA Write and Read
 * Response payloads are copied from the sender's memory instead of
 * crossing loopback TCP. Ordering, Terminate, disconnect and peer death
 * keep their TCP semantics. Size is
 * sizeof(SOFTNDK_PATH_INFO) of the caller's header: at least
 * SOFTNDK_PATH_INFO_V1_SIZE (smaller: STATUS_INVALID_PARAMETER, nothing
 * written); only the first Size bytes are written, so a caller built before
 * a field was appended keeps working. A connector without a connected QP:
 * STATUS_CONNECTION_INVALID. Added in 0.1.0 after
 * SoftNdkQueryConnectionTcpInfo; the Mapped and Cma fields were appended
 * with SoftNdkAllocateSharedMemory. */
#define SOFTNDK_PATH_TCP 0      /* every byte crosses TCP */
#define SOFTNDK_PATH_SAMEHOST 1 /* both directions may use the fast path */
#define SOFTNDK_PATH_PROBING 2  /* still looking for a same-host peer (TCP meanwhile) */
/* Why a connection is on TCP (Reason) */
#define SOFTNDK_PATH_REASON_NONE 0
#define SOFTNDK_PATH_REASON_DISABLED 1      /* SOFTNDK_SAMEHOST=off */
#define SOFTNDK_PATH_REASON_NO_PEER 2       /* no same-host softndk end answered */
#define SOFTNDK_PATH_REASON_NOT_VERIFIED 3  /* an answer that is not this connection's peer */
#define SOFTNDK_PATH_REASON_NO_ACCESS 4     /* the peer's memory cannot be read (ptrace policy) */
#define SOFTNDK_PATH_REASON_PEER_DECLINED 5 /* the peer cannot read ours, or is off */
#define SOFTNDK_PATH_REASON_CRC 6           /* MPA CRC negotiated */
#define SOFTNDK_PATH_REASON_ERROR 7         /* a socket call failed */
#define SOFTNDK_PATH_REASON_TRACED 8        /* a pcap trace was on when it connected */
typedef struct _SOFTNDK_PATH_INFO {
  ULONG Size;             /* in: sizeof(SOFTNDK_PATH_INFO) */
  ULONG Path;             /* SOFTNDK_PATH_* */
  ULONG Reason;           /* SOFTNDK_PATH_REASON_* when Path is TCP */
  ULONG PeerPid;          /* the verified peer process, 0 if none */
  BOOLEAN PullFromPeer;   /* we copy what the peer sends from its memory */
  BOOLEAN PeerPulls;      /* the peer copies what we send from ours */
  UINT64 PulledOctets;    /* bytes this end copied from the peer */
  UINT64 PulledMessages;  /* Writes and Read Responses it copied */
  UINT64 DescriptorsSent; /* descriptor FPDUs sent instead of payload */
  /* The FPDU stream itself moved from TCP to a shared-memory ring, per
   * direction (docs/samehost.md section 4), and the bytes it carried. */
  BOOLEAN RingIn;       /* we receive through the peer's ring */
  BOOLEAN RingOut;      /* we send through our ring */
  UINT64 RingInOctets;  /* bytes read from the ring */
  UINT64 RingOutOctets; /* bytes written into the ring */
  /* Appended (SoftNdkAllocateSharedMemory): of the descriptors this end
   * pulled, those copied from the peer's shared memory mapped here (memcpy),
   * and those that named a shared segment this end could not use and so
   * were pulled with process_vm_readv; of DescriptorsSent, those naming one
   * of our shared segments. */
  UINT64 MappedOctets;
  UINT64 MappedDescriptors;
  UINT64 CmaFallbacks;
  UINT64 SegmentDescriptorsSent;
} SOFTNDK_PATH_INFO;
/* The size of SOFTNDK_PATH_INFO before the Ring and Mapped fields. */
#define SOFTNDK_PATH_INFO_V1_SIZE 48

NTSTATUS SoftNdkQueryConnectionPath(NDK_CONNECTOR* pNdkConnector, SOFTNDK_PATH_INFO* pInfo);

/* What a connection heard from its peer, and how far a failed NdkConnect
 * got (docs/compatibility.md, "A silent peer"). For the consumer whose
 * protocol timed out waiting for an answer: PeerSpoke FALSE on an
 * established connection means the peer accepted it (MPA done) and then
 * never sent a single byte, not even a TCP payload the library could not
 * parse - a peer that is hung or, with Linux siw 6.1, that left our first
 * FPDUs unread (softndk sends it up to SOFTNDK_MAX_WAKE_UPS zero-length
 * RDMA Writes meanwhile; WakeUpsSent counts them). SetupPhase tells a reset
 * during NdkConnect before the MPA exchange (the TCP handshake, or after
 * it while the Request waited for its Reply) from one after it. Size must
 * be at least sizeof(SOFTNDK_PEER_ACTIVITY) (smaller:
 * STATUS_INVALID_PARAMETER, nothing written). Any connector: before a
 * connect everything is 0. */
#define SOFTNDK_SETUP_NONE 0      /* no NdkConnect failed on this connector */
#define SOFTNDK_SETUP_TCP 1       /* failed in the TCP handshake (RST or no answer to our SYN) */
#define SOFTNDK_SETUP_MPA 2       /* TCP connected; failed before the peer's MPA Reply */
#define SOFTNDK_SETUP_AFTER_MPA 3 /* failed after the MPA Reply (initiator hold-off, RTR) */
#define SOFTNDK_MAX_WAKE_UPS 6
typedef struct _SOFTNDK_PEER_ACTIVITY {
  ULONG Size;          /* in: sizeof(SOFTNDK_PEER_ACTIVITY) */
  ULONG SetupPhase;    /* SOFTNDK_SETUP_* of the last failed NdkConnect */
  BOOLEAN Established; /* MPA done and the data path started */
  BOOLEAN SentFpdu;    /* we sent an FPDU that may want an answer (not just a Write RTR) */
  BOOLEAN PeerSpoke;   /* the peer sent at least one byte after its MPA Reply */
  BOOLEAN Reserved;
  ULONG WakeUpsSent;    /* zero-length RDMA Writes sent to a silent peer */
  ULONG WakeAfterMs;    /* the first wake-up's bound on this connection; 0 off */
  ULONG MpaRoundTripUs; /* initiator: our MPA Request sent -> the peer's Reply */
} SOFTNDK_PEER_ACTIVITY;

NTSTATUS SoftNdkQueryPeerActivity(NDK_CONNECTOR* pNdkConnector, SOFTNDK_PEER_ACTIVITY* pInfo);

/* "tcp", "samehost", "probing" for a SOFTNDK_PATH_* value, and a short
 * phrase for a SOFTNDK_PATH_REASON_* value ("disabled", "no peer", ...);
 * NULL for unknown values. */
const char* SoftNdkPathName(ULONG Path);
const char* SoftNdkPathReasonName(ULONG Reason);

/* Memory a same-host peer can map (docs/samehost.md, "Shared memory").
 * SoftNdkAllocateSharedMemory returns Bytes (rounded up to whole pages) of
 * zeroed, page-aligned, read-write memory in *Address, backed by a memfd
 * sealed against shrinking and growing that stays open (one file
 * descriptor per allocation, close-on-exec) until SoftNdkFreeSharedMemory.
 * Use it like any memory: register it as an MR, put it in SGEs and MDLs.
 * When the same-host fast path is on and a large RDMA Write or Read
 * Response comes from such memory, the peer maps the segment read-only and
 * copies from it with memcpy instead of process_vm_readv. The mapping is
 * MAP_SHARED: a child made by fork() shares it rather than copying it, and
 * a same-host peer that mapped it keeps seeing what is written there.
 * Bytes 0 or above 2^46: STATUS_INVALID_PARAMETER, as is a NULL Address;
 * no memory or file descriptors left: STATUS_INSUFFICIENT_RESOURCES.
 * SoftNdkFreeSharedMemory takes exactly an address that
 * SoftNdkAllocateSharedMemory returned and has not been freed (anything
 * else: STATUS_INVALID_PARAMETER). Deregister MRs over it first. Both may
 * be called from any thread. */
NTSTATUS SoftNdkAllocateSharedMemory(SIZE_T Bytes, PVOID* Address);
NTSTATUS SoftNdkFreeSharedMemory(PVOID Address);

/* Write this QP's wire traffic to a pcap file: the bytes exactly as sent
 * and received, in synthetic Ethernet/IPv4-or-IPv6/TCP framing with the
 * connection's real addresses and ports, opened by the recorded MPA
 * Request/Reply, so that Wireshark decodes MPA/DDP/RDMAP. Set before
 * connecting: the whole conversation; on a connected QP: from the next
 * FPDU boundary of each direction. Path NULL stops (the file is closed).
 * A path that cannot be created: STATUS_INVALID_PARAMETER. */
NTSTATUS SoftNdkTraceQp(NDK_QP* pNdkQp, const char* PcapPath);

/* Fault hooks for tests. */
typedef enum {
  SoftNdkFaultNone = 0,
  SoftNdkFaultFailNthRegistration = 1, /* Count: the Nth next RegisterMr fails */
  SoftNdkFaultFatalAdapterError = 2,   /* inject a fatal adapter error now */
  SoftNdkFaultDropTx = 3,              /* connection: drop the next Count outgoing FPDUs */
  SoftNdkFaultDelayTx = 4,             /* connection: hold the next Count outgoing FPDUs
                                          for DelayMs (1..60000); later data waits behind */
  SoftNdkFaultCorruptTx = 5,           /* connection: flip a bit (lowest of the last ULPDU
                                          byte) in each of the next Count outgoing FPDUs */
  SoftNdkFaultResetConnection = 6,     /* connection: abort with TCP RST now */
} SOFTNDK_FAULT_TYPE;

typedef struct _SOFTNDK_FAULT {
  SOFTNDK_FAULT_TYPE Type;
  ULONG Count;
  ULONG DelayMs;
} SOFTNDK_FAULT;

/* Adapter-level faults (FailNthRegistration, FatalAdapterError). */
NTSTATUS SoftNdkInjectAdapterFault(NDK_ADAPTER* pNdkAdapter, const SOFTNDK_FAULT* pFault);
/* Connection-level faults, on a connected connector (else
 * STATUS_CONNECTION_INVALID). For the Tx faults Count 0 means 1; the
 * sender's Sends/Writes still complete locally as if TCP took the bytes. */
NTSTATUS SoftNdkInjectConnectionFault(NDK_CONNECTOR* pNdkConnector, const SOFTNDK_FAULT* pFault);

/* A short name for an NTSTATUS ("STATUS_CANCELLED"), or NULL if unknown. */
const char* SoftNdkStatusName(NTSTATUS Status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_SOFTNDK_H_ */
