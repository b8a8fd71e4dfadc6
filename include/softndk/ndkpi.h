// SPDX-License-Identifier: Apache-2.0
/*
 * softndk/ndkpi.h - the Network Direct Kernel Provider Interface (NDKPI) C ABI.
 *
 * This header is the contract between softndk (the provider) and its
 * consumers. It follows the documented NDKPI 2.1: the same object kinds,
 * dispatch tables (member order is ABI), callback and function typedefs
 * (parameters in the documented order), structures, flags and NTSTATUS
 * values. It compiles as C11 and as C++.
 *
 * Rules every function and callback obeys (NDKPI "<= DISPATCH_LEVEL"):
 *  - No dispatch function blocks; every one may be called from inside any
 *    provider callback. Exceptions, as in NDKPI: NdkQueryAdapterInfo may be
 *    slow, and adapter close (SoftNdkCloseAdapter) blocks until every
 *    callback has returned, so it must not be called from a callback.
 *  - Create functions return STATUS_SUCCESS with the object in the out
 *    pointer (no callback), STATUS_PENDING and later NdkCreateCompletion with
 *    the object (the out pointer is not written), or a failure (no callback).
 *  - Asynchronous requests return STATUS_PENDING and later call the request
 *    completion exactly once; any other return value is final.
 *  - Close never fails: STATUS_SUCCESS (closed, no callback follows) or
 *    STATUS_PENDING (NdkCloseCompletion follows; it is the last callback for
 *    the object).
 *  - A work request that returns STATUS_SUCCESS gets exactly one completion
 *    in its CQ, unless NDK_OP_FLAG_SILENT_SUCCESS was given and it succeeded.
 *
 * User-space equivalents of kernel types are documented where they appear:
 * MDL (a chain describing a virtually contiguous buffer), logical addresses
 * (process virtual addresses), GROUP_AFFINITY (a CPU hint).
 *
 * How to open an adapter (the NDIS open handler has no Linux analogue) and
 * the asynchronous adapter-control interface are in softndk/softndk.h.
 */
#ifndef SOFTNDK_NDKPI_H_
#define SOFTNDK_NDKPI_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "softndk/ndk_base_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The Windows base types (ULONG, NTSTATUS, MDL, GUID, the STATUS_* values,
 * ...) live in softndk/ndk_base_types.h, shared with the WDK kit's headers. */

/* ------------------------------------------------------------------------ */
/* Versions, object header, object types                                    */
/* ------------------------------------------------------------------------ */

typedef struct _NDK_VERSION {
  USHORT Major;
  USHORT Minor;
} NDK_VERSION;

/* The highest NDKPI version softndk implements. */
#define NDK_VERSION_MAJOR 2
#define NDK_VERSION_MINOR 1

typedef enum {
  NdkObjectTypeUndefined = 0,
  NdkObjectTypeAdapter = 1,
  NdkObjectTypeQp = 2,
  NdkObjectTypeCq = 3,
  NdkObjectTypeMr = 4,
  NdkObjectTypeMw = 5,
  NdkObjectTypePd = 6,
  NdkObjectTypeSharedEndpoint = 7,
  NdkObjectTypeConnector = 8,
  NdkObjectTypeListener = 9,
  NdkObjectTypeSrq = 10,
  NdkObjectTypeMax = 11
} NDK_OBJECT_TYPE;

/* Consumer scratch space: zeroed at creation, never touched by softndk. */
typedef struct _NDK_OBJECT_HEADER_RESERVED_BLOCK {
  PVOID rf[4];
} NDK_OBJECT_HEADER_RESERVED_BLOCK;

typedef struct _NDK_OBJECT_HEADER {
  NDK_VERSION Version;
  NDK_OBJECT_TYPE ObjectType;
  NDK_OBJECT_HEADER_RESERVED_BLOCK NdkReserved;
} NDK_OBJECT_HEADER;

typedef struct _NDK_EXTENSION_INTERFACE {
  const void* Dispatch;
} NDK_EXTENSION_INTERFACE;

/* ------------------------------------------------------------------------ */
/* Adapter information                                                      */
/* ------------------------------------------------------------------------ */

typedef enum {
  NdkUndefined = 0,
  NdkiWarp = 1,
  NdkInfiniBand = 2,
  NdkRoCE = 3,
  NdkRoCEv2 = 4,
  NdkMaxTechnology = 5
} NDK_RDMA_TECHNOLOGY;

#define NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED 0x00000001u
#define NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED 0x00000002u
#define NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED 0x00000004u
#define NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED 0x00000008u
#define NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED 0x00000010u
#define NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED 0x00000100u
#define NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED 0x00010000u

typedef struct _NDK_ADAPTER_INFO {
  NDK_VERSION Version;
  UINT32 VendorId;
  UINT32 DeviceId;
  SIZE_T MaxRegistrationSize;
  SIZE_T MaxWindowSize;
  ULONG FRMRPageCount;
  ULONG MaxInitiatorRequestSge;
  ULONG MaxReceiveRequestSge;
  ULONG MaxReadRequestSge;
  ULONG MaxTransferLength;
  ULONG MaxInlineDataSize;
  ULONG MaxInboundReadLimit;
  ULONG MaxOutboundReadLimit;
  ULONG MaxReceiveQueueDepth;
  ULONG MaxInitiatorQueueDepth;
  ULONG MaxSrqDepth;
  ULONG MaxCqDepth;
  ULONG LargeRequestThreshold;
  ULONG MaxCallerData;
  ULONG MaxCalleeData;
  ULONG AdapterFlags;
  NDK_RDMA_TECHNOLOGY RdmaTechnology;
} NDK_ADAPTER_INFO;

/* ------------------------------------------------------------------------ */
/* Scatter/gather entries, results, operation types                        */
/* ------------------------------------------------------------------------ */

typedef struct _NDK_SGE {
  union {
    PVOID VirtualAddress;
    NDK_LOGICAL_ADDRESS LogicalAddress;
  };
  ULONG Length;
  UINT32 MemoryRegionToken;
} NDK_SGE;

typedef struct _NDK_RESULT {
  NTSTATUS Status;
  ULONG BytesTransferred; /* defined for receive completions only */
  PVOID QPContext;
  PVOID RequestContext;
} NDK_RESULT;

typedef enum _NDK_OPERATION_TYPE {
  NdkOperationTypeReceiveAndInvalidate = 0x8001,
  NdkOperationTypeReceive = 0x0001,
  NdkOperationTypeSend = 0x0002,
  NdkOperationTypeFastRegister = 0x0004,
  NdkOperationTypeBind = 0x0008,
  NdkOperationTypeInvalidate = 0x0010,
  NdkOperationTypeRead = 0x0020,
  NdkOperationTypeWrite = 0x0040
} NDK_OPERATION_TYPE;

typedef struct _NDK_RESULT_EX {
  NTSTATUS Status;
  ULONG BytesTransferred;
  PVOID QPContext;
  PVOID RequestContext;
  NDK_OPERATION_TYPE Type;
  ULONG ProviderErrorCode; /* NDKPI 2.1: 0 on success */
  ULONG_PTR TypeSpecificCompletionOutput;
} NDK_RESULT_EX;

typedef struct _NDK_LOGICAL_ADDRESS_MAPPING {
  PVOID AdapterContext;
  ULONG AdapterPageCount;
  NDK_LOGICAL_ADDRESS AdapterPageArray[1]; /* AdapterPageCount entries */
} NDK_LOGICAL_ADDRESS_MAPPING;

/* softndk's adapter page size for LAMs and fast registration. */
#define NDK_PAGE_SIZE 4096u

/* ------------------------------------------------------------------------ */
/* Flags                                                                    */
/* ------------------------------------------------------------------------ */

#define NDK_OP_FLAG_SILENT_SUCCESS 0x00000001u
#define NDK_OP_FLAG_READ_FENCE 0x00000002u
#define NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT 0x00000004u
#define NDK_OP_FLAG_ALLOW_REMOTE_READ 0x00000008u
#define NDK_OP_FLAG_ALLOW_LOCAL_WRITE 0x00000010u
#define NDK_OP_FLAG_ALLOW_REMOTE_WRITE 0x00000030u
#define NDK_OP_FLAG_INLINE 0x00000040u
#define NDK_OP_FLAG_RDMA_READ_SINK 0x00000080u
#define NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE 0x00000100u
#define NDK_OP_FLAG_DEFER 0x00000200u

#define NDK_MR_FLAG_ALLOW_LOCAL_READ 0x00000000u
#define NDK_MR_FLAG_ALLOW_LOCAL_WRITE 0x00000001u
#define NDK_MR_FLAG_ALLOW_REMOTE_READ 0x00000002u
#define NDK_MR_FLAG_ALLOW_REMOTE_WRITE 0x00000005u
#define NDK_MR_FLAG_RDMA_READ_SINK 0x00000008u

#define NDK_CQ_NOTIFY_ERRORS 0u
#define NDK_CQ_NOTIFY_ANY 1u
#define NDK_CQ_NOTIFY_SOLICITED 2u

/* ------------------------------------------------------------------------ */
/* Objects (forward declarations)                                           */
/* ------------------------------------------------------------------------ */

typedef struct _NDK_ADAPTER NDK_ADAPTER;
typedef struct _NDK_CQ NDK_CQ;
typedef struct _NDK_PD NDK_PD;
typedef struct _NDK_MR NDK_MR;
typedef struct _NDK_MW NDK_MW;
typedef struct _NDK_SRQ NDK_SRQ;
typedef struct _NDK_QP NDK_QP;
typedef struct _NDK_CONNECTOR NDK_CONNECTOR;
typedef struct _NDK_LISTENER NDK_LISTENER;
typedef struct _NDK_SHARED_ENDPOINT NDK_SHARED_ENDPOINT;

/* ------------------------------------------------------------------------ */
/* Consumer callbacks                                                       */
/* ------------------------------------------------------------------------ */

typedef void (*NDK_FN_CREATE_COMPLETION)(PVOID Context, NTSTATUS Status,
                                         NDK_OBJECT_HEADER* pNdkObject);
typedef void (*NDK_FN_REQUEST_COMPLETION)(PVOID Context, NTSTATUS Status);
typedef void (*NDK_FN_CLOSE_COMPLETION)(PVOID Context);
typedef void (*NDK_FN_CQ_NOTIFICATION_CALLBACK)(PVOID CqNotificationContext, NTSTATUS CqStatus);
typedef void (*NDK_FN_SRQ_NOTIFICATION_CALLBACK)(PVOID SrqNotificationContext, NTSTATUS SrqStatus);
typedef void (*NDK_FN_CONNECT_EVENT_CALLBACK)(PVOID ConnectEventContext,
                                              NDK_CONNECTOR* pNdkConnector);
typedef void (*NDK_FN_DISCONNECT_EVENT_CALLBACK)(PVOID DisconnectEventContext);
typedef void (*NDK_FN_DISCONNECT_EVENT_CALLBACK_EX)(PVOID DisconnectEventContext,
                                                    ULONG ProviderDisconnectReason);

/* ------------------------------------------------------------------------ */
/* Provider functions                                                       */
/* ------------------------------------------------------------------------ */

/* Common to every object. */
typedef NTSTATUS (*NDK_FN_CLOSE_OBJECT)(NDK_OBJECT_HEADER* pNdkObject,
                                        NDK_FN_CLOSE_COMPLETION CloseCompletion,
                                        PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_QUERY_EXTENSION_INTERFACE)(NDK_OBJECT_HEADER* pNdkObject,
                                                     const GUID* ExtensionInterfaceID,
                                                     NDK_VERSION ExtensionInterfaceVersion,
                                                     NDK_EXTENSION_INTERFACE* pExtensionInterface);

/* Adapter */
typedef NTSTATUS (*NDK_FN_QUERY_ADAPTER_INFO)(NDK_ADAPTER* pNdkAdapter, NDK_ADAPTER_INFO* pInfo,
                                              ULONG* pBufferSize);
typedef NTSTATUS (*NDK_FN_CREATE_CQ)(NDK_ADAPTER* pNdkAdapter, ULONG CqDepth,
                                     NDK_FN_CQ_NOTIFICATION_CALLBACK CqNotification,
                                     PVOID CqNotificationContext, GROUP_AFFINITY* Affinity,
                                     NDK_FN_CREATE_COMPLETION CreateCompletion,
                                     PVOID RequestContext, NDK_CQ** ppNdkCq);
typedef NTSTATUS (*NDK_FN_CREATE_PD)(NDK_ADAPTER* pNdkAdapter,
                                     NDK_FN_CREATE_COMPLETION CreateCompletion,
                                     PVOID RequestContext, NDK_PD** ppNdkPd);
typedef NTSTATUS (*NDK_FN_CREATE_SHARED_ENDPOINT)(NDK_ADAPTER* pNdkAdapter,
                                                  const SOCKADDR* pAddress, ULONG AddressLength,
                                                  NDK_FN_CREATE_COMPLETION CreateCompletion,
                                                  PVOID RequestContext,
                                                  NDK_SHARED_ENDPOINT** ppNdkSharedEndpoint);
typedef NTSTATUS (*NDK_FN_CREATE_CONNECTOR)(NDK_ADAPTER* pNdkAdapter,
                                            NDK_FN_CREATE_COMPLETION CreateCompletion,
                                            PVOID RequestContext, NDK_CONNECTOR** ppNdkConnector);
typedef NTSTATUS (*NDK_FN_CREATE_LISTENER)(NDK_ADAPTER* pNdkAdapter,
                                           NDK_FN_CONNECT_EVENT_CALLBACK ConnectEvent,
                                           PVOID ConnectEventContext,
                                           NDK_FN_CREATE_COMPLETION CreateCompletion,
                                           PVOID RequestContext, NDK_LISTENER** ppNdkListener);
typedef NTSTATUS (*NDK_FN_BUILD_LAM)(NDK_ADAPTER* pNdkAdapter, MDL* Mdl, SIZE_T Length,
                                     NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                     PVOID RequestContext, NDK_LOGICAL_ADDRESS_MAPPING* pNdkLAM,
                                     ULONG* pLAMSize, ULONG* pFBO);
typedef void (*NDK_FN_RELEASE_LAM)(NDK_ADAPTER* pNdkAdapter, NDK_LOGICAL_ADDRESS_MAPPING* pNdkLAM);

/* Completion queue */
typedef NTSTATUS (*NDK_FN_RESIZE_CQ)(NDK_CQ* pNdkCq, ULONG CqDepth,
                                     NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                     PVOID RequestContext);
typedef void (*NDK_FN_ARM_CQ)(NDK_CQ* pNdkCq, ULONG NotifyType);
typedef ULONG (*NDK_FN_GET_CQ_RESULTS)(NDK_CQ* pNdkCq, NDK_RESULT pResult[], ULONG nResults);
typedef ULONG (*NDK_FN_GET_CQ_RESULTS_EX)(NDK_CQ* pNdkCq, NDK_RESULT_EX pResult[], ULONG nResults);
typedef NTSTATUS (*NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION)(NDK_CQ* pNdkCq, ULONG ModerationInterval,
                                                           ULONG ModerationCount);

/* Protection domain */
typedef NTSTATUS (*NDK_FN_CREATE_MR)(NDK_PD* pNdkPd, BOOLEAN FastRegister,
                                     NDK_FN_CREATE_COMPLETION CreateCompletion,
                                     PVOID RequestContext, NDK_MR** ppNdkMr);
typedef NTSTATUS (*NDK_FN_CREATE_MW)(NDK_PD* pNdkPd, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                     PVOID RequestContext, NDK_MW** ppNdkMw);
typedef NTSTATUS (*NDK_FN_CREATE_SRQ)(NDK_PD* pNdkPd, ULONG SrqDepth, ULONG MaxReceiveRequestSge,
                                      ULONG NotifyThreshold,
                                      NDK_FN_SRQ_NOTIFICATION_CALLBACK SrqNotification,
                                      PVOID SrqNotificationContext, GROUP_AFFINITY* Affinity,
                                      NDK_FN_CREATE_COMPLETION CreateCompletion,
                                      PVOID RequestContext, NDK_SRQ** ppNdkSrq);
typedef NTSTATUS (*NDK_FN_CREATE_QP)(NDK_PD* pNdkPd, NDK_CQ* pReceiveCq, NDK_CQ* pInitiatorCq,
                                     PVOID QPContext, ULONG ReceiveQueueDepth,
                                     ULONG InitiatorQueueDepth, ULONG MaxReceiveRequestSge,
                                     ULONG MaxInitiatorRequestSge, ULONG InlineDataSize,
                                     NDK_FN_CREATE_COMPLETION CreateCompletion,
                                     PVOID RequestContext, NDK_QP** ppNdkQp);
typedef NTSTATUS (*NDK_FN_CREATE_QP_WITH_SRQ)(NDK_PD* pNdkPd, NDK_CQ* pReceiveCq,
                                              NDK_CQ* pInitiatorCq, NDK_SRQ* pSrq, PVOID QPContext,
                                              ULONG InitiatorQueueDepth,
                                              ULONG MaxInitiatorRequestSge, ULONG InlineDataSize,
                                              NDK_FN_CREATE_COMPLETION CreateCompletion,
                                              PVOID RequestContext, NDK_QP** ppNdkQp);
typedef void (*NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN)(NDK_PD* pNdkPd,
                                                          UINT32* pPrivilegedMemoryRegionToken);

/* Memory region */
typedef NTSTATUS (*NDK_FN_REGISTER_MR)(NDK_MR* pNdkMr, MDL* Mdl, SIZE_T Length, ULONG Flags,
                                       NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                       PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_DEREGISTER_MR)(NDK_MR* pNdkMr,
                                         NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                         PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_INITIALIZE_FAST_REGISTER_MR)(NDK_MR* pNdkMr, ULONG AdapterPageCount,
                                                       BOOLEAN RemoteAccess,
                                                       NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                                       PVOID RequestContext);
typedef UINT32 (*NDK_FN_GET_REMOTE_TOKEN_FROM_MR)(NDK_MR* pNdkMr);
typedef UINT32 (*NDK_FN_GET_LOCAL_TOKEN_FROM_MR)(NDK_MR* pNdkMr);

/* Memory window */
typedef UINT32 (*NDK_FN_GET_REMOTE_TOKEN_FROM_MW)(NDK_MW* pNdkMw);

/* Shared receive queue */
typedef NTSTATUS (*NDK_FN_MODIFY_SRQ)(NDK_SRQ* pNdkSrq, ULONG SrqDepth, ULONG NotifyThreshold,
                                      NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                      PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_SRQ_RECEIVE)(NDK_SRQ* pNdkSrq, PVOID RequestContext, const NDK_SGE* pSgl,
                                       ULONG nSge);

/* Queue pair */
typedef void (*NDK_FN_FLUSH)(NDK_QP* pNdkQp);
typedef NTSTATUS (*NDK_FN_SEND)(NDK_QP* pNdkQp, PVOID RequestContext, const NDK_SGE* pSgl,
                                ULONG nSge, ULONG Flags);
typedef NTSTATUS (*NDK_FN_SEND_AND_INVALIDATE)(NDK_QP* pNdkQp, PVOID RequestContext,
                                               const NDK_SGE* pSgl, ULONG nSge, ULONG Flags,
                                               UINT32 RemoteToken);
typedef NTSTATUS (*NDK_FN_RECEIVE)(NDK_QP* pNdkQp, PVOID RequestContext, const NDK_SGE* pSgl,
                                   ULONG nSge);
typedef NTSTATUS (*NDK_FN_BIND)(NDK_QP* pNdkQp, PVOID RequestContext, NDK_MR* pMr, NDK_MW* pMw,
                                PVOID VirtualAddress, SIZE_T Length, ULONG Flags);
typedef NTSTATUS (*NDK_FN_FAST_REGISTER)(NDK_QP* pNdkQp, PVOID RequestContext, NDK_MR* pMr,
                                         ULONG AdapterPageCount,
                                         const NDK_LOGICAL_ADDRESS* AdapterPageArray, ULONG FBO,
                                         SIZE_T Length, PVOID BaseVirtualAddress, ULONG Flags);
typedef NTSTATUS (*NDK_FN_INVALIDATE)(NDK_QP* pNdkQp, PVOID RequestContext,
                                      NDK_OBJECT_HEADER* pMrOrMw, ULONG Flags);
typedef NTSTATUS (*NDK_FN_READ)(NDK_QP* pNdkQp, PVOID RequestContext, const NDK_SGE* pSgl,
                                ULONG nSge, UINT64 RemoteAddress, UINT32 RemoteToken, ULONG Flags);
typedef NTSTATUS (*NDK_FN_WRITE)(NDK_QP* pNdkQp, PVOID RequestContext, const NDK_SGE* pSgl,
                                 ULONG nSge, UINT64 RemoteAddress, UINT32 RemoteToken, ULONG Flags);

/* Connector */
typedef NTSTATUS (*NDK_FN_CONNECT)(NDK_CONNECTOR* pNdkConnector, NDK_QP* pNdkQp,
                                   const SOCKADDR* pSrcAddress, ULONG SrcAddressLength,
                                   const SOCKADDR* pDestAddress, ULONG DestAddressLength,
                                   ULONG InboundReadLimit, ULONG OutboundReadLimit,
                                   const PVOID pPrivateData, ULONG PrivateDataLength,
                                   NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                   PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_CONNECT_WITH_SHARED_ENDPOINT)(
    NDK_CONNECTOR* pNdkConnector, NDK_QP* pNdkQp, NDK_SHARED_ENDPOINT* pNdkSharedEndpoint,
    const SOCKADDR* pDestAddress, ULONG DestAddressLength, ULONG InboundReadLimit,
    ULONG OutboundReadLimit, const PVOID pPrivateData, ULONG PrivateDataLength,
    NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_COMPLETE_CONNECT)(NDK_CONNECTOR* pNdkConnector,
                                            NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent,
                                            PVOID DisconnectEventContext,
                                            NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                            PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_COMPLETE_CONNECT_EX)(NDK_CONNECTOR* pNdkConnector,
                                               NDK_FN_DISCONNECT_EVENT_CALLBACK_EX DisconnectEvent,
                                               PVOID DisconnectEventContext,
                                               NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                               PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_ACCEPT)(NDK_CONNECTOR* pNdkConnector, NDK_QP* pNdkQp,
                                  ULONG InboundReadLimit, ULONG OutboundReadLimit,
                                  const PVOID pPrivateData, ULONG PrivateDataLength,
                                  NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent,
                                  PVOID DisconnectEventContext,
                                  NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                  PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_ACCEPT_EX)(NDK_CONNECTOR* pNdkConnector, NDK_QP* pNdkQp,
                                     ULONG InboundReadLimit, ULONG OutboundReadLimit,
                                     const PVOID pPrivateData, ULONG PrivateDataLength,
                                     NDK_FN_DISCONNECT_EVENT_CALLBACK_EX DisconnectEvent,
                                     PVOID DisconnectEventContext,
                                     NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                     PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_REJECT)(NDK_CONNECTOR* pNdkConnector, const PVOID pPrivateData,
                                  ULONG PrivateDataLength);
typedef NTSTATUS (*NDK_FN_GET_CONNECTION_DATA)(NDK_CONNECTOR* pNdkConnector,
                                               ULONG* pInboundReadLimit, ULONG* pOutboundReadLimit,
                                               PVOID pPrivateData, ULONG* pPrivateDataLength);
typedef NTSTATUS (*NDK_FN_GET_LOCAL_ADDRESS)(NDK_CONNECTOR* pNdkConnector, SOCKADDR* pAddress,
                                             ULONG* pAddressLength);
typedef NTSTATUS (*NDK_FN_GET_PEER_ADDRESS)(NDK_CONNECTOR* pNdkConnector, SOCKADDR* pAddress,
                                            ULONG* pAddressLength);
typedef NTSTATUS (*NDK_FN_DISCONNECT)(NDK_CONNECTOR* pNdkConnector,
                                      NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                      PVOID RequestContext);

/* Listener */
typedef NTSTATUS (*NDK_FN_LISTEN)(NDK_LISTENER* pNdkListener, const SOCKADDR* pAddress,
                                  ULONG AddressLength, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                  PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_GET_LISTENER_LOCAL_ADDRESS)(NDK_LISTENER* pNdkListener,
                                                      SOCKADDR* pAddress, ULONG* pAddressLength);
typedef void (*NDK_FN_CONTROL_CONNECT_EVENTS)(NDK_LISTENER* pNdkListener, BOOLEAN Pause);

/* Shared endpoint */
typedef NTSTATUS (*NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS)(
    NDK_SHARED_ENDPOINT* pNdkSharedEndpoint, SOCKADDR* pAddress, ULONG* pAddressLength);

/* ------------------------------------------------------------------------ */
/* Dispatch tables (member order is ABI)                                    */
/* ------------------------------------------------------------------------ */

typedef struct _NDK_ADAPTER_DISPATCH {
  NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
  NDK_FN_QUERY_ADAPTER_INFO NdkQueryAdapterInfo;
  NDK_FN_CREATE_CQ NdkCreateCq;
  NDK_FN_CREATE_PD NdkCreatePd;
  NDK_FN_CREATE_SHARED_ENDPOINT NdkCreateSharedEndpoint;
  NDK_FN_CREATE_CONNECTOR NdkCreateConnector;
  NDK_FN_CREATE_LISTENER NdkCreateListener;
  NDK_FN_BUILD_LAM NdkBuildLAM;
  NDK_FN_RELEASE_LAM NdkReleaseLAM;
} NDK_ADAPTER_DISPATCH;

typedef struct _NDK_CQ_DISPATCH {
  NDK_FN_CLOSE_OBJECT NdkCloseCq;
  NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
  NDK_FN_RESIZE_CQ NdkResizeCq;
  NDK_FN_ARM_CQ NdkArmCq;
  NDK_FN_GET_CQ_RESULTS NdkGetCqResults;
  NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION NdkControlCqInterruptModeration;
  NDK_FN_GET_CQ_RESULTS_EX NdkGetCqResultsEx;
} NDK_CQ_DISPATCH;

typedef struct _NDK_PD_DISPATCH {
  NDK_FN_CLOSE_OBJECT NdkClosePd;
  NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
  NDK_FN_CREATE_MR NdkCreateMr;
  NDK_FN_CREATE_MW NdkCreateMw;
  NDK_FN_CREATE_SRQ NdkCreateSrq;
  NDK_FN_CREATE_QP NdkCreateQp;
  NDK_FN_CREATE_QP_WITH_SRQ NdkCreateQpWithSrq;
  NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN NdkGetPrivilegedMemoryRegionToken;
} NDK_PD_DISPATCH;

typedef struct _NDK_MR_DISPATCH {
  NDK_FN_CLOSE_OBJECT NdkCloseMr;
  NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
  NDK_FN_REGISTER_MR NdkRegisterMr;
  NDK_FN_DEREGISTER_MR NdkDeregisterMr;
  NDK_FN_INITIALIZE_FAST_REGISTER_MR NdkInitializeFastRegisterMr;
  NDK_FN_GET_REMOTE_TOKEN_FROM_MR NdkGetRemoteTokenFromMr;
  NDK_FN_GET_LOCAL_TOKEN_FROM_MR NdkGetLocalTokenFromMr;
} NDK_MR_DISPATCH;

typedef struct _NDK_MW_DISPATCH {
  NDK_FN_CLOSE_OBJECT NdkCloseMw;
  NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
  NDK_FN_GET_REMOTE_TOKEN_FROM_MW NdkGetRemoteTokenFromMw;
} NDK_MW_DISPATCH;

typedef struct _NDK_SRQ_DISPATCH {
  NDK_FN_CLOSE_OBJECT NdkCloseSrq;
  NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
  NDK_FN_MODIFY_SRQ NdkModifySrq;
  NDK_FN_SRQ_RECEIVE NdkSrqReceive;
} NDK_SRQ_DISPATCH;

typedef struct _NDK_QP_DISPATCH {
  NDK_FN_CLOSE_OBJECT NdkCloseQp;
  NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
  NDK_FN_FLUSH NdkFlush;
  NDK_FN_SEND NdkSend;
  NDK_FN_RECEIVE NdkReceive;
  NDK_FN_BIND NdkBind;
  NDK_FN_FAST_REGISTER NdkFastRegister;
  NDK_FN_INVALIDATE NdkInvalidate;
  NDK_FN_READ NdkRead;
  NDK_FN_WRITE NdkWrite;
  NDK_FN_SEND_AND_INVALIDATE NdkSendAndInvalidate;
} NDK_QP_DISPATCH;

typedef struct _NDK_CONNECTOR_DISPATCH {
  NDK_FN_CLOSE_OBJECT NdkCloseConnector;
  NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
  NDK_FN_CONNECT NdkConnect;
  NDK_FN_CONNECT_WITH_SHARED_ENDPOINT NdkConnectWithSharedEndpoint;
  NDK_FN_COMPLETE_CONNECT NdkCompleteConnect;
  NDK_FN_ACCEPT NdkAccept;
  NDK_FN_REJECT NdkReject;
  NDK_FN_GET_CONNECTION_DATA NdkGetConnectionData;
  NDK_FN_GET_LOCAL_ADDRESS NdkGetLocalAddress;
  NDK_FN_GET_PEER_ADDRESS NdkGetPeerAddress;
  NDK_FN_DISCONNECT NdkDisconnect;
  NDK_FN_COMPLETE_CONNECT_EX NdkCompleteConnectEx;
  NDK_FN_ACCEPT_EX NdkAcceptEx;
} NDK_CONNECTOR_DISPATCH;

typedef struct _NDK_LISTENER_DISPATCH {
  NDK_FN_CLOSE_OBJECT NdkCloseListener;
  NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
  NDK_FN_LISTEN NdkListen;
  NDK_FN_GET_LISTENER_LOCAL_ADDRESS NdkGetLocalAddress;
  NDK_FN_CONTROL_CONNECT_EVENTS NdkControlConnectEvents;
} NDK_LISTENER_DISPATCH;

typedef struct _NDK_SHARED_ENDPOINT_DISPATCH {
  NDK_FN_CLOSE_OBJECT NdkCloseSharedEndpoint;
  NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
  NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS NdkGetLocalAddress;
} NDK_SHARED_ENDPOINT_DISPATCH;

/* ------------------------------------------------------------------------ */
/* Object structures: a header, then the dispatch table. softndk never     */
/* reads Dispatch after handing an object out (the consumer may overwrite  */
/* it); it finds its own state from the object's address.                  */
/* ------------------------------------------------------------------------ */

struct _NDK_ADAPTER {
  NDK_OBJECT_HEADER Header;
  const NDK_ADAPTER_DISPATCH* Dispatch;
};
struct _NDK_CQ {
  NDK_OBJECT_HEADER Header;
  const NDK_CQ_DISPATCH* Dispatch;
};
struct _NDK_PD {
  NDK_OBJECT_HEADER Header;
  const NDK_PD_DISPATCH* Dispatch;
};
struct _NDK_MR {
  NDK_OBJECT_HEADER Header;
  const NDK_MR_DISPATCH* Dispatch;
};
struct _NDK_MW {
  NDK_OBJECT_HEADER Header;
  const NDK_MW_DISPATCH* Dispatch;
};
struct _NDK_SRQ {
  NDK_OBJECT_HEADER Header;
  const NDK_SRQ_DISPATCH* Dispatch;
};
struct _NDK_QP {
  NDK_OBJECT_HEADER Header;
  const NDK_QP_DISPATCH* Dispatch;
};
struct _NDK_CONNECTOR {
  NDK_OBJECT_HEADER Header;
  const NDK_CONNECTOR_DISPATCH* Dispatch;
};
struct _NDK_LISTENER {
  NDK_OBJECT_HEADER Header;
  const NDK_LISTENER_DISPATCH* Dispatch;
};
struct _NDK_SHARED_ENDPOINT {
  NDK_OBJECT_HEADER Header;
  const NDK_SHARED_ENDPOINT_DISPATCH* Dispatch;
};

/* Layout checks: the NDKPI x64 layout, which LP64 Linux reproduces. */
#if defined(__LP64__)
#ifdef __cplusplus
#define SOFTNDK_STATIC_ASSERT static_assert
#else
#define SOFTNDK_STATIC_ASSERT _Static_assert
#endif
SOFTNDK_STATIC_ASSERT(sizeof(NDK_OBJECT_HEADER) == 40, "NDK_OBJECT_HEADER layout");
SOFTNDK_STATIC_ASSERT(sizeof(NDK_SGE) == 16, "NDK_SGE layout");
SOFTNDK_STATIC_ASSERT(sizeof(NDK_RESULT) == 24, "NDK_RESULT layout");
SOFTNDK_STATIC_ASSERT(sizeof(NDK_RESULT_EX) == 40, "NDK_RESULT_EX layout");
SOFTNDK_STATIC_ASSERT(sizeof(NDK_ADAPTER_INFO) == 104, "NDK_ADAPTER_INFO layout");
SOFTNDK_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, AdapterFlags) == 92, "AdapterFlags offset");
SOFTNDK_STATIC_ASSERT(offsetof(NDK_RESULT_EX, TypeSpecificCompletionOutput) == 32,
                      "NDK_RESULT_EX layout");
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_NDKPI_H_ */
