// SPDX-License-Identifier: Apache-2.0
/*
 * softndk/ndk_base_types.h - the Windows base types NDKPI is written in.
 *
 * One definition of each, shared by softndk/ndkpi.h and by the WDK kit's
 * kernel headers (wdk/include/wdm.h, ntddk.h, ndis.h, ...), so a consumer may
 * include those in any order: whichever comes first includes this header and
 * the include guard keeps the rest out. Sizes follow Windows x64 (LLP64):
 * ULONG is 32 bits, pointers and SIZE_T 64 bits.
 *
 * Compiles as C11 and as C++. Not to be included for its own sake: include
 * softndk/ndkpi.h (or the kit's wdm.h).
 */
#ifndef SOFTNDK_NDK_BASE_TYPES_H_
#define SOFTNDK_NDK_BASE_TYPES_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Windows base types, as NDKPI uses them (LP64 sizes on Linux match x64).  */
/* ------------------------------------------------------------------------ */

typedef int32_t NTSTATUS;
typedef uint32_t ULONG;
typedef uint16_t USHORT;
typedef uint8_t UCHAR;
typedef uint8_t BOOLEAN;
typedef uint32_t UINT32;
typedef uint64_t UINT64;
typedef void* PVOID;
typedef size_t SIZE_T;
typedef uintptr_t ULONG_PTR;
typedef uintptr_t KAFFINITY;
typedef struct sockaddr SOCKADDR;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
#ifndef MAXULONG
#define MAXULONG 0xFFFFFFFFu
#endif

/* LARGE_INTEGER in its Windows shape: LowPart/HighPart directly and through
 * .u, and QuadPart. PHYSICAL_ADDRESS is one; so is NDK_LOGICAL_ADDRESS, which
 * in softndk is a process virtual address (see NdkBuildLAM and the
 * privileged token). The unnamed struct is C11; C++ compilers accept it as an
 * extension (as MSVC does for the WDK's own definition). */
typedef union _LARGE_INTEGER {
  struct {
    uint32_t LowPart;
    int32_t HighPart;
  };
  struct {
    uint32_t LowPart;
    int32_t HighPart;
  } u;
  int64_t QuadPart;
} LARGE_INTEGER;
typedef LARGE_INTEGER* PLARGE_INTEGER;
typedef LARGE_INTEGER PHYSICAL_ADDRESS;
typedef LARGE_INTEGER* PPHYSICAL_ADDRESS;
/* The name softndk 0.1 used; the same type. */
typedef LARGE_INTEGER NDK_LARGE_INTEGER;
typedef PHYSICAL_ADDRESS NDK_LOGICAL_ADDRESS;

/* GROUP_AFFINITY: a preference for the CPUs that run notifications. softndk
 * treats it as a hint and may ignore it. */
typedef struct _GROUP_AFFINITY {
  KAFFINITY Mask;
  USHORT Group;
  USHORT Reserved[3];
} GROUP_AFFINITY;

typedef struct _GUID {
  uint32_t Data1;
  uint16_t Data2;
  uint16_t Data3;
  uint8_t Data4[8];
} GUID;

/*
 * MDL: the user-space form of a Memory Descriptor List. A chain of entries
 * that together describe one virtually contiguous buffer: entry n+1 must
 * start exactly where entry n ends (VirtualAddress + ByteCount), otherwise
 * registration fails with STATUS_INVALID_PARAMETER. The memory must stay
 * mapped while registered (softndk does not pin; Linux user memory is
 * pageable but always addressable). The first entry's VirtualAddress is the
 * base of the region's tagged-offset space. A single entry with Next = NULL
 * is the common case.
 */
typedef struct _MDL {
  struct _MDL* Next;
  PVOID VirtualAddress;
  SIZE_T ByteCount;
} MDL;

/* ------------------------------------------------------------------------ */
/* NTSTATUS values                                                          */
/* ------------------------------------------------------------------------ */

#define STATUS_SUCCESS ((NTSTATUS)0x00000000L)
#define STATUS_PENDING ((NTSTATUS)0x00000103L)
#define STATUS_BUFFER_OVERFLOW ((NTSTATUS)0x80000005L)
#define STATUS_ACCESS_VIOLATION ((NTSTATUS)0xC0000005L)
#define STATUS_INVALID_HANDLE ((NTSTATUS)0xC0000008L)
#define STATUS_INVALID_PARAMETER ((NTSTATUS)0xC000000DL)
#define STATUS_NO_SUCH_DEVICE ((NTSTATUS)0xC000000EL)
#define STATUS_INVALID_DEVICE_REQUEST ((NTSTATUS)0xC0000010L)
#define STATUS_ACCESS_DENIED ((NTSTATUS)0xC0000022L)
#define STATUS_BUFFER_TOO_SMALL ((NTSTATUS)0xC0000023L)
#define STATUS_OBJECT_TYPE_MISMATCH ((NTSTATUS)0xC0000024L)
#define STATUS_INVALID_PARAMETER_MIX ((NTSTATUS)0xC0000030L)
#define STATUS_SHARING_VIOLATION ((NTSTATUS)0xC0000043L)
#define STATUS_FILE_LOCK_CONFLICT ((NTSTATUS)0xC0000054L)
#define STATUS_INSUFFICIENT_RESOURCES ((NTSTATUS)0xC000009AL)
#define STATUS_DEVICE_NOT_READY ((NTSTATUS)0xC00000A3L)
#define STATUS_IO_TIMEOUT ((NTSTATUS)0xC00000B5L)
#define STATUS_NOT_SUPPORTED ((NTSTATUS)0xC00000BBL)
#define STATUS_INTERNAL_ERROR ((NTSTATUS)0xC00000E5L)
#define STATUS_CANCELLED ((NTSTATUS)0xC0000120L)
#define STATUS_FILE_CLOSED ((NTSTATUS)0xC0000128L)
#define STATUS_REMOTE_RESOURCES ((NTSTATUS)0xC000013DL)
#define STATUS_INVALID_ADDRESS ((NTSTATUS)0xC0000141L)
#define STATUS_DEVICE_BUSY ((NTSTATUS)0x80000011L)
#define STATUS_FILE_FORCED_CLOSED ((NTSTATUS)0xC00000B6L)
#define STATUS_TOO_MANY_ADDRESSES ((NTSTATUS)0xC0000209L)
#define STATUS_ADDRESS_ALREADY_EXISTS ((NTSTATUS)0xC000020AL)
#define STATUS_CONNECTION_DISCONNECTED ((NTSTATUS)0xC000020CL)
#define STATUS_CONNECTION_RESET ((NTSTATUS)0xC000020DL)
#define STATUS_CONNECTION_REFUSED ((NTSTATUS)0xC0000236L)
#define STATUS_CONNECTION_INVALID ((NTSTATUS)0xC000023AL)
#define STATUS_CONNECTION_ACTIVE ((NTSTATUS)0xC000023BL)
#define STATUS_NETWORK_UNREACHABLE ((NTSTATUS)0xC000023CL)
#define STATUS_HOST_UNREACHABLE ((NTSTATUS)0xC000023DL)
#define STATUS_CONNECTION_ABORTED ((NTSTATUS)0xC0000241L)
#define STATUS_DATA_ERROR ((NTSTATUS)0xC000003EL)
#define STATUS_IMPLEMENTATION_LIMIT ((NTSTATUS)0xC000042BL)
#define NDIS_STATUS_BAD_VERSION ((NTSTATUS)0xC0010004L)
#define NDIS_STATUS_ADAPTER_NOT_READY ((NTSTATUS)0xC0010011L)
#define NDIS_STATUS_RESOURCES STATUS_INSUFFICIENT_RESOURCES

#define NT_SUCCESS(Status) (((NTSTATUS)(Status)) >= 0)

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_NDK_BASE_TYPES_H_ */
