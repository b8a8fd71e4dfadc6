// SPDX-License-Identifier: Apache-2.0
/*
 * ntdef.h - the kernel's basic types and macros, for the softndk WDK kit.
 *
 * Builds on softndk/ndk_base_types.h (ULONG, NTSTATUS, MDL, GUID,
 * LARGE_INTEGER, the common STATUS_* values) so that ndkpi.h and the kit's
 * headers share one definition of each, in either include order. Sizes follow
 * Windows x64 (LLP64): LONG/ULONG 32 bits, LONG64/ULONGLONG/SIZE_T 64 bits.
 *
 * One deliberate difference: WCHAR is the platform's wchar_t (32 bits on
 * Linux), so L"..." literals and UNICODE_STRING work unchanged in source;
 * UNICODE_STRING.Length still counts bytes (characters * sizeof(WCHAR)).
 */
#ifndef SOFTNDK_WDK_NTDEF_H_
#define SOFTNDK_WDK_NTDEF_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "sal.h"
#include "softndk/ndk_base_types.h"
#include "softndk_wdk/msvc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the parameter decorations of the DDI reference's syntax blocks --- */
#ifndef CONST
#define CONST const
#endif
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef OPTIONAL
#define OPTIONAL
#endif
#define ARGUMENT_PRESENT(ArgumentPointer) ((CHAR*)((ULONG_PTR)(ArgumentPointer)) != (CHAR*)NULL)
#define NOTHING
#define UNALIGNED
#define UNALIGNED64
#define RESTRICTED_POINTER __restrict
#define POINTER_64
#define POINTER_32
#define POINTER_SIGNED
#define POINTER_UNSIGNED
#define FIRMWARE_PTR
#ifdef __cplusplus
#define EXTERN_C extern "C"
#define EXTERN_C_START extern "C" {
#define EXTERN_C_END }
#else
#define EXTERN_C extern
#define EXTERN_C_START
#define EXTERN_C_END
#endif
#define NT_INFORMATION(Status) ((((ULONG)(Status)) >> 30) == 1)
#define NT_WARNING(Status) ((((ULONG)(Status)) >> 30) == 2)
#define NT_ERROR(Status) ((((ULONG)(Status)) >> 30) == 3)

/* ---- calling conventions and declaration specifiers (no meaning here) -- */
#define NTAPI
#define NTAPI_INLINE
#define WINAPI
#define CALLBACK
#define FASTCALL
#define NTSYSAPI
#define NTSYSCALLAPI
#define NTKERNELAPI
#define NTHALAPI
#define NTSTRSAFEAPI static inline NTSTATUS
#define DECLSPEC_IMPORT
#define DECLSPEC_EXPORT
#define DECLSPEC_NORETURN __attribute__((noreturn))
#define DECLSPEC_NOINLINE __attribute__((noinline))
#define DECLSPEC_ALIGN(x) __attribute__((aligned(x)))
#define DECLSPEC_CACHEALIGN __attribute__((aligned(64)))
#define DECLSPEC_NOTHROW
#define DECLSPEC_SELECTANY __attribute__((weak))
#define DECLSPEC_DEPRECATED_DDK
#define DECLSPEC_GUARDNOCF
#define DECLSPEC_NOVTABLE
#define DECLSPEC_UUID(x)
#define DECLSPEC_DEPRECATED __attribute__((deprecated))
#define FORCEINLINE __inline__ __attribute__((always_inline))
#define DECLARE_HANDLE(name) \
  struct name##__ {          \
    int unused;              \
  };                         \
  typedef struct name##__* name
#define NOP_FUNCTION (void)0
#define ALLOC_PRAGMA_NONE
#define SYSTEM_CACHE_ALIGNMENT_SIZE 64

/* ---- integer and pointer types (ULONG, USHORT, UCHAR, ... come from the
 * shared base header) ---------------------------------------------------- */
#ifndef VOID
#define VOID void
#endif
typedef char CHAR;
typedef int16_t SHORT;
typedef int32_t LONG;
typedef int INT;
typedef unsigned int UINT;
typedef int64_t LONGLONG;
typedef uint64_t ULONGLONG;
typedef int64_t LONG64;
typedef uint64_t ULONG64;
typedef int32_t LONG32;
typedef uint32_t ULONG32;
typedef uint64_t DWORD64;
typedef int8_t INT8;
typedef int16_t INT16;
typedef int32_t INT32;
typedef int64_t INT64;
typedef uint8_t UINT8;
typedef uint16_t UINT16;
typedef uint32_t DWORD;
typedef uint16_t WORD;
typedef uint8_t BYTE;
typedef int BOOL;
typedef intptr_t LONG_PTR;
typedef intptr_t INT_PTR;
typedef uintptr_t UINT_PTR;
typedef uintptr_t DWORD_PTR;
typedef intptr_t SSIZE_T;
typedef wchar_t WCHAR;
typedef int16_t CSHORT;
typedef int8_t CCHAR;
typedef UCHAR KIRQL;
typedef CCHAR KPROCESSOR_MODE;
typedef ULONG LOGICAL;
typedef ULONG ACCESS_MASK;
typedef LONG KPRIORITY;
typedef ULONG DEVICE_TYPE;
typedef ULONG NODE_TYPE;
typedef void* HANDLE;
typedef ULONG64 POOL_FLAGS;
typedef USHORT RTL_ATOM;

typedef void* LPVOID;
typedef const void* PCVOID;
typedef const void* LPCVOID;
typedef CHAR* PCHAR;
typedef CHAR* PSTR;
typedef CHAR* LPSTR;
typedef const CHAR* PCSTR;
typedef const CHAR* LPCSTR;
typedef const CHAR* PCSZ;
typedef WCHAR* PWCHAR;
typedef WCHAR* PWCH;
typedef WCHAR* PWSTR;
typedef WCHAR* LPWSTR;
typedef const WCHAR* PCWCH;
typedef const WCHAR* PCWSTR;
typedef const WCHAR* LPCWSTR;
typedef WCHAR* PZZWSTR;
typedef const WCHAR* PCZZWSTR;
typedef CHAR* PCH;
typedef const CHAR* PCCH;
typedef CHAR* PSZ;
typedef LOGICAL* PLOGICAL;
typedef SSIZE_T* PSSIZE_T;
typedef UCHAR* PUCHAR;
typedef USHORT* PUSHORT;
typedef SHORT* PSHORT;
typedef ULONG* PULONG;
typedef LONG* PLONG;
typedef LONGLONG* PLONGLONG;
typedef ULONGLONG* PULONGLONG;
typedef LONG64* PLONG64;
typedef ULONG64* PULONG64;
typedef INT* PINT;
typedef UINT* PUINT;
typedef UINT8* PUINT8;
typedef UINT16* PUINT16;
typedef UINT32* PUINT32;
typedef UINT64* PUINT64;
typedef INT32* PINT32;
typedef INT64* PINT64;
typedef DWORD* PDWORD;
typedef BYTE* PBYTE;
typedef BOOLEAN* PBOOLEAN;
typedef ULONG_PTR* PULONG_PTR;
typedef LONG_PTR* PLONG_PTR;
typedef SIZE_T* PSIZE_T;
typedef NTSTATUS* PNTSTATUS;
typedef HANDLE* PHANDLE;
typedef KIRQL* PKIRQL;
typedef KAFFINITY* PKAFFINITY;
typedef ACCESS_MASK* PACCESS_MASK;
typedef GUID* PGUID;
typedef GUID* LPGUID;
typedef const GUID* LPCGUID;
typedef const GUID* PCGUID;
typedef MDL* PMDL;
typedef GROUP_AFFINITY* PGROUP_AFFINITY;
typedef SOCKADDR* PSOCKADDR;
#ifdef __cplusplus
#define REFGUID const GUID&
#else
#define REFGUID const GUID*
#endif

/* DEFINE_GUID declares the GUID; with INITGUID defined before the include
 * (in one source file) it defines it too, as guiddef.h does. */
#if defined(INITGUID) && defined(__cplusplus)
#define DEFINE_GUID(name, l, w1, w2, b1, b2, b3, b4, b5, b6, b7, b8) \
  extern "C" const GUID __attribute__((weak)) name = {l, w1, w2, {b1, b2, b3, b4, b5, b6, b7, b8}}
#elif defined(INITGUID)
#define DEFINE_GUID(name, l, w1, w2, b1, b2, b3, b4, b5, b6, b7, b8) \
  const GUID __attribute__((weak)) name = {l, w1, w2, {b1, b2, b3, b4, b5, b6, b7, b8}}
#else
#define DEFINE_GUID(name, l, w1, w2, b1, b2, b3, b4, b5, b6, b7, b8) EXTERN_C const GUID name
#endif
static inline int InlineIsEqualGUID(const GUID* a, const GUID* b) {
  return memcmp(a, b, sizeof(GUID)) == 0;
}
#ifdef __cplusplus
#define IsEqualGUID(a, b) InlineIsEqualGUID(&(a), &(b))
#else
#define IsEqualGUID(a, b) InlineIsEqualGUID((a), (b))
#endif

typedef struct _LUID {
  ULONG LowPart;
  LONG HighPart;
} LUID, *PLUID;

typedef struct _QUAD {
  union {
    LONGLONG UseThisFieldToCopy;
    double DoNotUseThisField;
  };
} QUAD, *PQUAD, UQUAD, *PUQUAD;

typedef struct _OBJECTID {
  GUID Lineage;
  ULONG Uniquifier;
} OBJECTID;

typedef struct _PROCESSOR_NUMBER {
  USHORT Group;
  UCHAR Number;
  UCHAR Reserved;
} PROCESSOR_NUMBER, *PPROCESSOR_NUMBER;

typedef enum _EVENT_TYPE { NotificationEvent, SynchronizationEvent } EVENT_TYPE;
typedef enum _TIMER_TYPE { NotificationTimer, SynchronizationTimer } TIMER_TYPE;
typedef enum _WAIT_TYPE { WaitAll, WaitAny, WaitNotification, WaitDequeue } WAIT_TYPE;
typedef enum _NT_PRODUCT_TYPE {
  NtProductWinNt = 1,
  NtProductLanManNt,
  NtProductServer
} NT_PRODUCT_TYPE,
    *PNT_PRODUCT_TYPE;
typedef enum _SUITE_TYPE {
  SmallBusiness,
  Enterprise,
  BackOffice,
  CommunicationServer,
  TerminalServer,
  SmallBusinessRestricted,
  EmbeddedNT,
  DataCenter,
  SingleUserTS,
  Personal,
  Blade,
  EmbeddedRestricted,
  SecurityAppliance,
  StorageServer,
  ComputeServer,
  WHServer,
  PhoneNT,
  MultiUserTS,
  MaxSuiteType
} SUITE_TYPE;
typedef enum _COMPARTMENT_ID {
  UNSPECIFIED_COMPARTMENT_ID = 0,
  DEFAULT_COMPARTMENT_ID
} COMPARTMENT_ID,
    *PCOMPARTMENT_ID;

typedef struct _RTL_BALANCED_NODE {
  union {
    struct _RTL_BALANCED_NODE* Children[2];
    struct {
      struct _RTL_BALANCED_NODE* Left;
      struct _RTL_BALANCED_NODE* Right;
    };
  };
  union {
    UCHAR Red : 1;
    UCHAR Balance : 2;
    ULONG_PTR ParentValue;
  };
} RTL_BALANCED_NODE, *PRTL_BALANCED_NODE;

typedef union _ULARGE_INTEGER {
  struct {
    ULONG LowPart;
    ULONG HighPart;
  };
  struct {
    ULONG LowPart;
    ULONG HighPart;
  } u;
  ULONGLONG QuadPart;
} ULARGE_INTEGER, *PULARGE_INTEGER;

#define MINCHAR 0x80
#define MAXCHAR 0x7f
#define MINSHORT 0x8000
#define MAXSHORT 0x7fff
#define MINLONG 0x80000000
#define MAXLONG 0x7fffffff
#define MAXUCHAR 0xff
#define MAXUSHORT 0xffff
#define MAXLONGLONG ((LONGLONG)0x7fffffffffffffffLL)
#define MAXULONGLONG ((ULONGLONG) ~((ULONGLONG)0))
#define MAXULONG_PTR (~((ULONG_PTR)0))
#define MAXLONG_PTR ((LONG_PTR)(MAXULONG_PTR >> 1))
#define MAXSIZE_T ((SIZE_T) ~((SIZE_T)0))
#define MAXUINT32 ((UINT32) ~((UINT32)0))
#define MAXUINT64 ((UINT64) ~((UINT64)0))
#define MAXUINT16 ((UINT16) ~((UINT16)0))
#define MAXUINT8 ((UINT8) ~((UINT8)0))
#define ULONG_MAX_VALUE MAXULONG

#ifndef NULL
#define NULL ((void*)0)
#endif

/* ---- processor modes, IRQLs ------------------------------------------ */
typedef enum _MODE { KernelMode, UserMode, MaximumMode } MODE;

#define PASSIVE_LEVEL 0
#define LOW_LEVEL 0
#define APC_LEVEL 1
#define DISPATCH_LEVEL 2
#define CMCI_LEVEL 5
#define CLOCK_LEVEL 13
#define IPI_LEVEL 14
#define DRS_LEVEL 14
#define POWER_LEVEL 14
#define PROFILE_LEVEL 15
#define HIGH_LEVEL 15

/* ---- lists ------------------------------------------------------------- */
typedef struct _LIST_ENTRY {
  struct _LIST_ENTRY* Flink;
  struct _LIST_ENTRY* Blink;
} LIST_ENTRY, *PLIST_ENTRY, *PRLIST_ENTRY;

typedef struct LIST_ENTRY32 {
  ULONG Flink;
  ULONG Blink;
} LIST_ENTRY32, *PLIST_ENTRY32;
typedef struct LIST_ENTRY64 {
  ULONGLONG Flink;
  ULONGLONG Blink;
} LIST_ENTRY64, *PLIST_ENTRY64;

typedef struct _SINGLE_LIST_ENTRY {
  struct _SINGLE_LIST_ENTRY* Next;
} SINGLE_LIST_ENTRY, *PSINGLE_LIST_ENTRY;

/* ---- strings ----------------------------------------------------------- */
typedef struct _UNICODE_STRING {
  USHORT Length;        /* bytes, without the terminator */
  USHORT MaximumLength; /* bytes of Buffer */
  PWCH Buffer;
} UNICODE_STRING, *PUNICODE_STRING;
typedef const UNICODE_STRING* PCUNICODE_STRING;

typedef struct _STRING {
  USHORT Length;
  USHORT MaximumLength;
  PCHAR Buffer;
} STRING, *PSTRING, ANSI_STRING, *PANSI_STRING, OEM_STRING, *POEM_STRING;
typedef const STRING* PCSTRING;
typedef const OEM_STRING* PCOEM_STRING;
typedef struct _STRING32 {
  USHORT Length;
  USHORT MaximumLength;
  ULONG Buffer;
} STRING32, *PSTRING32, UNICODE_STRING32, *PUNICODE_STRING32, ANSI_STRING32, *PANSI_STRING32;
typedef struct _STRING64 {
  USHORT Length;
  USHORT MaximumLength;
  ULONGLONG Buffer;
} STRING64, *PSTRING64, UNICODE_STRING64, *PUNICODE_STRING64, ANSI_STRING64, *PANSI_STRING64;
#define UNICODE_NULL ((WCHAR)0)
#define ANSI_NULL ((CHAR)0)
#define UNICODE_STRING_MAX_BYTES ((USHORT)65534)
#define UNICODE_STRING_MAX_CHARS (32767)
typedef const ANSI_STRING* PCANSI_STRING;

/* A UNICODE_STRING or ANSI_STRING initializer for a string literal. */
#ifdef __cplusplus
/* C++ does not convert a literal to a non-const pointer: these do. C++
 * linkage even when a driver includes the WDK headers inside extern "C". */
extern "C++" {
constexpr PWCH SoftNdkWdkLiteralBuffer(const WCHAR* s) { return const_cast<PWCH>(s); }
constexpr PCHAR SoftNdkWdkLiteralBuffer(const CHAR* s) { return const_cast<PCHAR>(s); }
}
#define RTL_CONSTANT_STRING(s) \
  { (USHORT)(sizeof(s) - sizeof((s)[0])), (USHORT)sizeof(s), SoftNdkWdkLiteralBuffer(s) }
#else
#define RTL_CONSTANT_STRING(s) \
  { (USHORT)(sizeof(s) - sizeof((s)[0])), (USHORT)sizeof(s), (s) }
#endif
#define DECLARE_CONST_UNICODE_STRING(_var, _string)                              \
  const WCHAR _var##_buffer[] = _string;                                         \
  const UNICODE_STRING _var = {sizeof(_string) - sizeof(WCHAR), sizeof(_string), \
                               (PWCH)_var##_buffer}
#define DECLARE_GLOBAL_CONST_UNICODE_STRING(_var, _str) \
  const UNICODE_STRING _var = RTL_CONSTANT_STRING(_str)
#define DECLARE_UNICODE_STRING_SIZE(_var, _size) \
  WCHAR _var##_buffer[_size];                    \
  UNICODE_STRING _var = {0, (_size) * sizeof(WCHAR), _var##_buffer}

/* ---- object attributes (for the calls that take them; unused here) ----- */
typedef struct _OBJECT_ATTRIBUTES {
  ULONG Length;
  HANDLE RootDirectory;
  PUNICODE_STRING ObjectName;
  ULONG Attributes;
  PVOID SecurityDescriptor;
  PVOID SecurityQualityOfService;
} OBJECT_ATTRIBUTES, *POBJECT_ATTRIBUTES;
#define OBJ_INHERIT 0x00000002L
#define OBJ_PERMANENT 0x00000010L
#define OBJ_EXCLUSIVE 0x00000020L
#define OBJ_CASE_INSENSITIVE 0x00000040L
#define OBJ_OPENIF 0x00000080L
#define OBJ_OPENLINK 0x00000100L
#define OBJ_KERNEL_HANDLE 0x00000200L
#define OBJ_FORCE_ACCESS_CHECK 0x00000400L
#define OBJ_VALID_ATTRIBUTES 0x00001FF2L
#define InitializeObjectAttributes(p, n, a, r, s) \
  do {                                            \
    (p)->Length = sizeof(OBJECT_ATTRIBUTES);      \
    (p)->RootDirectory = (r);                     \
    (p)->Attributes = (a);                        \
    (p)->ObjectName = (n);                        \
    (p)->SecurityDescriptor = (s);                \
    (p)->SecurityQualityOfService = NULL;         \
  } while (0)

/* ---- everyday macros --------------------------------------------------- */
#define UNREFERENCED_PARAMETER(P) ((void)(P))
#define DBG_UNREFERENCED_PARAMETER(P) ((void)(P))
#define DBG_UNREFERENCED_LOCAL_VARIABLE(V) ((void)(V))
#define UNREFERENCED_LOCAL_VARIABLE(V) ((void)(V))
#define FIELD_OFFSET(type, field) ((LONG)offsetof(type, field))
#define UFIELD_OFFSET(type, field) ((ULONG)offsetof(type, field))
#define RTL_FIELD_SIZE(type, field) (sizeof(((type*)0)->field))
#define RTL_FIELD_TYPE(type, field) __typeof__(((type*)0)->field)
#define RTL_CONTAINS_FIELD(Struct, Size, Field) \
  ((((PCHAR)(&(Struct)->Field)) + sizeof((Struct)->Field)) <= (((PCHAR)(Struct)) + (Size)))
#define RTL_BITS_OF_FIELD(type, field) (RTL_BITS_OF(RTL_FIELD_TYPE(type, field)))
#define RTL_PADDING_BETWEEN_FIELDS(T, F1, F2)                                \
  ((FIELD_OFFSET(T, F2) > FIELD_OFFSET(T, F1))                               \
       ? (FIELD_OFFSET(T, F2) - FIELD_OFFSET(T, F1) - RTL_FIELD_SIZE(T, F1)) \
       : (FIELD_OFFSET(T, F1) - FIELD_OFFSET(T, F2) - RTL_FIELD_SIZE(T, F2)))
#define RTL_SIZEOF_THROUGH_FIELD(type, field) \
  (FIELD_OFFSET(type, field) + RTL_FIELD_SIZE(type, field))
#define RTL_NUMBER_OF(A) (sizeof(A) / sizeof((A)[0]))
#define ARRAYSIZE(A) RTL_NUMBER_OF(A)
#define _ARRAYSIZE(A) RTL_NUMBER_OF(A)
#define RTL_NUMBER_OF_V1(A) RTL_NUMBER_OF(A)
#define RTL_NUMBER_OF_V2(A) RTL_NUMBER_OF(A)
#define CONTAINING_RECORD(address, type, field) \
  ((type*)((PCHAR)(address) - (ULONG_PTR)offsetof(type, field)))
#define ALIGN_DOWN_BY(length, alignment) ((ULONG_PTR)(length) & ~((ULONG_PTR)(alignment)-1))
#define ALIGN_UP_BY(length, alignment) \
  (ALIGN_DOWN_BY(((ULONG_PTR)(length) + (alignment)-1), (alignment)))
#define ALIGN_DOWN_POINTER_BY(address, alignment) ((PVOID)ALIGN_DOWN_BY((address), (alignment)))
#define ALIGN_UP_POINTER_BY(address, alignment) ((PVOID)ALIGN_UP_BY((address), (alignment)))
#define ALIGN_DOWN(length, type) ALIGN_DOWN_BY(length, sizeof(type))
#define ALIGN_UP(length, type) ALIGN_UP_BY(length, sizeof(type))
#define FlagOn(_F, _SF) ((_F) & (_SF))
#define BooleanFlagOn(F, SF) ((BOOLEAN)(((F) & (SF)) != 0))
#define SetFlag(_F, _SF) ((_F) |= (_SF))
#define ClearFlag(_F, _SF) ((_F) &= ~(_SF))
#define min(a, b) (((a) < (b)) ? (a) : (b))
#define max(a, b) (((a) > (b)) ? (a) : (b))
#define Int32x32To64(a, b) (((LONGLONG)((LONG)(a))) * ((LONGLONG)((LONG)(b))))
#define Int64ShllMod32(a, b) (((ULONGLONG)(a)) << ((b)&31))
#define Int64ShraMod32(a, b) (((LONGLONG)(a)) >> ((b)&31))
#define Int64ShrlMod32(a, b) (((ULONGLONG)(a)) >> ((b)&31))
#define UInt32x32To64(a, b) (((ULONGLONG)((ULONG)(a))) * ((ULONGLONG)((ULONG)(b))))
#define C_ASSERT(e) _Static_assert(e, #e)
#define ANYSIZE_ARRAY 1
#define TYPE_ALIGNMENT(t) _Alignof(t)
#define MEMORY_ALLOCATION_ALIGNMENT 16
#define RTL_BITS_OF(sizeOfArg) (sizeof(sizeOfArg) * 8)
#define CTL_CODE(DeviceType, Function, Method, Access) \
  (((DeviceType) << 16) | ((Access) << 14) | ((Function) << 2) | (Method))
#define DEVICE_TYPE_FROM_CTL_CODE(ctrlCode) (((DWORD)(ctrlCode & 0xffff0000)) >> 16)
#define METHOD_FROM_CTL_CODE(ctrlCode) ((DWORD)(ctrlCode & 3))
#define METHOD_BUFFERED 0
#define METHOD_IN_DIRECT 1
#define METHOD_OUT_DIRECT 2
#define METHOD_NEITHER 3
#define FILE_ANY_ACCESS 0
#define FILE_SPECIAL_ACCESS (FILE_ANY_ACCESS)
#define FILE_READ_ACCESS (0x0001)
#define FILE_WRITE_ACCESS (0x0002)

#ifdef __cplusplus
}
#endif

/* C_ASSERT in C++ */
#ifdef __cplusplus
#undef C_ASSERT
#define C_ASSERT(e) static_assert(e, #e)
#undef TYPE_ALIGNMENT
#define TYPE_ALIGNMENT(t) alignof(t)
#undef min
#undef max
#endif

/* What the kit does not provide: declared so that a use names it. */
#include "softndk_wdk/unavailable.h"

#endif /* SOFTNDK_WDK_NTDEF_H_ */
