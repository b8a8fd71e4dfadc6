// SPDX-License-Identifier: Apache-2.0
/*
 * softndk_wdk/rtl_more.h - more of the run-time library that network and
 * storage drivers use: bitmaps (RTL_BITMAP), LUIDs, unaligned stores, time
 * fields, GUID strings, string hashing, counted ANSI/UTF-8 strings,
 * ProbeForRead/ProbeForWrite, ExInterlocked* arithmetic and the
 * Read/Write*Acquire/Release/NoFence accessors. Part of wdm.h.
 */
#ifndef SOFTNDK_WDK_RTL_MORE_H_
#define SOFTNDK_WDK_RTL_MORE_H_

#include "ntdef.h"
#include "ntstatus.h"
#include "softndk_wdk/ke.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- empty strings, LUIDs, large integers, unaligned access ------------- */
static inline VOID RtlInitEmptyUnicodeString(PUNICODE_STRING UnicodeString, PWCHAR Buffer,
                                             USHORT BufferSize) {
  UnicodeString->Length = 0;
  UnicodeString->MaximumLength = BufferSize;
  UnicodeString->Buffer = Buffer;
}
static inline VOID RtlInitEmptyAnsiString(PANSI_STRING AnsiString, PCHAR Buffer,
                                          USHORT BufferSize) {
  AnsiString->Length = 0;
  AnsiString->MaximumLength = BufferSize;
  AnsiString->Buffer = Buffer;
}
#define RtlEqualLuid(L1, L2) \
  (((L1)->LowPart == (L2)->LowPart) && ((L1)->HighPart == (L2)->HighPart))
#define RtlIsZeroLuid(L1) ((BOOLEAN)(((L1)->LowPart | (L1)->HighPart) == 0))
static inline LUID RtlConvertLongToLuid(LONG Long) {
  LUID l;
  LARGE_INTEGER t;
  t.QuadPart = Long;
  l.LowPart = t.LowPart;
  l.HighPart = t.HighPart;
  return l;
}
static inline LUID RtlConvertUlongToLuid(ULONG Ulong) {
  LUID l;
  l.LowPart = Ulong;
  l.HighPart = 0;
  return l;
}
static inline LARGE_INTEGER RtlConvertLongToLargeInteger(LONG SignedInteger) {
  LARGE_INTEGER r;
  r.QuadPart = SignedInteger;
  return r;
}
static inline LARGE_INTEGER RtlConvertUlongToLargeInteger(ULONG UnsignedInteger) {
  LARGE_INTEGER r;
  r.QuadPart = UnsignedInteger;
  return r;
}
#define RtlStoreUshort(ADDRESS, VALUE) \
  do {                                 \
    USHORT v_ = (USHORT)(VALUE);       \
    memcpy((ADDRESS), &v_, sizeof v_); \
  } while (0)
#define RtlStoreUlong(ADDRESS, VALUE)  \
  do {                                 \
    ULONG v_ = (ULONG)(VALUE);         \
    memcpy((ADDRESS), &v_, sizeof v_); \
  } while (0)
#define RtlStoreUlonglong(ADDRESS, VALUE) \
  do {                                    \
    ULONGLONG v_ = (ULONGLONG)(VALUE);    \
    memcpy((ADDRESS), &v_, sizeof v_);    \
  } while (0)
#define RtlStoreUlongPtr(ADDRESS, VALUE) \
  do {                                   \
    ULONG_PTR v_ = (ULONG_PTR)(VALUE);   \
    memcpy((ADDRESS), &v_, sizeof v_);   \
  } while (0)
#define RtlRetrieveUshort(DEST_ADDRESS, SRC_ADDRESS) \
  memcpy((DEST_ADDRESS), (SRC_ADDRESS), sizeof(USHORT))
#define RtlRetrieveUlong(DEST_ADDRESS, SRC_ADDRESS) \
  memcpy((DEST_ADDRESS), (SRC_ADDRESS), sizeof(ULONG))

/* ---- characters ------------------------------------------------------- */
WCHAR RtlUpcaseUnicodeChar(WCHAR SourceCharacter);
WCHAR RtlDowncaseUnicodeChar(WCHAR SourceCharacter);
CHAR RtlUpperChar(CHAR Character);

/* ---- counted strings -------------------------------------------------- */
NTSTATUS RtlInitStringEx(PSTRING DestinationString, PCSZ SourceString);
LONG RtlCompareString(const STRING* String1, const STRING* String2, BOOLEAN CaseInSensitive);
BOOLEAN RtlEqualString(const STRING* String1, const STRING* String2, BOOLEAN CaseInSensitive);
VOID RtlCopyString(PSTRING DestinationString, const STRING* SourceString);
VOID RtlUpperString(PSTRING DestinationString, const STRING* SourceString);
BOOLEAN RtlPrefixUnicodeString(PCUNICODE_STRING String1, PCUNICODE_STRING String2,
                               BOOLEAN CaseInSensitive);
NTSTATUS RtlUpcaseUnicodeString(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString,
                                BOOLEAN AllocateDestinationString);
/* Sizes of the converted string, terminator included, in bytes. */
ULONG RtlxAnsiStringToUnicodeSize(PCANSI_STRING AnsiString);
ULONG RtlxUnicodeStringToAnsiSize(PCUNICODE_STRING UnicodeString);
#define RtlAnsiStringToUnicodeSize(S) RtlxAnsiStringToUnicodeSize(S)
#define RtlUnicodeStringToAnsiSize(S) RtlxUnicodeStringToAnsiSize(S)
NTSTATUS RtlInt64ToUnicodeString(ULONGLONG Value, ULONG Base, PUNICODE_STRING String);
NTSTATUS RtlIntPtrToUnicodeString(ULONG_PTR Value, ULONG Base, PUNICODE_STRING String);

/* UTF-8 (ANSI_STRING-shaped, as the WDK's UTF8_STRING). */
typedef ANSI_STRING UTF8_STRING, *PUTF8_STRING;
typedef const ANSI_STRING* PCUTF8_STRING;
VOID RtlInitUTF8String(PUTF8_STRING DestinationString, PCSZ SourceString);
NTSTATUS RtlInitUTF8StringEx(PUTF8_STRING DestinationString, PCSZ SourceString);
NTSTATUS RtlUnicodeToUTF8N(PCHAR UTF8StringDestination, ULONG UTF8StringMaxByteCount,
                           PULONG UTF8StringActualByteCount, PCWCH UnicodeStringSource,
                           ULONG UnicodeStringByteCount);
NTSTATUS RtlUTF8ToUnicodeN(PWSTR UnicodeStringDestination, ULONG UnicodeStringMaxByteCount,
                           PULONG UnicodeStringActualByteCount, PCCH UTF8StringSource,
                           ULONG UTF8StringByteCount);
NTSTATUS RtlUnicodeStringToUTF8String(PUTF8_STRING DestinationString, PCUNICODE_STRING SourceString,
                                      BOOLEAN AllocateDestinationString);
NTSTATUS RtlUTF8StringToUnicodeString(PUNICODE_STRING DestinationString, PCUTF8_STRING SourceString,
                                      BOOLEAN AllocateDestinationString);
VOID RtlFreeUTF8String(PUTF8_STRING Utf8String);

/* ---- GUIDs and hashing ------------------------------------------------ */
NTSTATUS RtlGUIDFromString(PCUNICODE_STRING GuidString, GUID* Guid);
/* "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}" in pool; free with RtlFreeUnicodeString. */
NTSTATUS RtlStringFromGUID(const GUID* Guid, PUNICODE_STRING GuidString);
#define HASH_STRING_ALGORITHM_DEFAULT 0
#define HASH_STRING_ALGORITHM_X65599 1
#define HASH_STRING_ALGORITHM_INVALID 0xffffffff
NTSTATUS RtlHashUnicodeString(PCUNICODE_STRING String, BOOLEAN CaseInSensitive, ULONG HashAlgorithm,
                              PULONG HashValue);

/* ---- time fields ------------------------------------------------------ */
typedef struct _TIME_FIELDS {
  CSHORT Year;
  CSHORT Month;
  CSHORT Day;
  CSHORT Hour;
  CSHORT Minute;
  CSHORT Second;
  CSHORT Milliseconds;
  CSHORT Weekday;
} TIME_FIELDS, *PTIME_FIELDS;
VOID RtlTimeToTimeFields(PLARGE_INTEGER Time, PTIME_FIELDS TimeFields);
BOOLEAN RtlTimeFieldsToTime(PTIME_FIELDS TimeFields, PLARGE_INTEGER Time);

/* ---- bitmaps ---------------------------------------------------------- */
typedef struct _RTL_BITMAP {
  ULONG SizeOfBitMap;
  PULONG Buffer;
} RTL_BITMAP, *PRTL_BITMAP;
typedef struct _RTL_BITMAP_RUN {
  ULONG StartingIndex;
  ULONG NumberOfBits;
} RTL_BITMAP_RUN, *PRTL_BITMAP_RUN;
VOID RtlInitializeBitMap(PRTL_BITMAP BitMapHeader, PULONG BitMapBuffer, ULONG SizeOfBitMap);
VOID RtlClearAllBits(PRTL_BITMAP BitMapHeader);
VOID RtlSetAllBits(PRTL_BITMAP BitMapHeader);
VOID RtlClearBit(PRTL_BITMAP BitMapHeader, ULONG BitNumber);
VOID RtlSetBit(PRTL_BITMAP BitMapHeader, ULONG BitNumber);
BOOLEAN RtlTestBit(PRTL_BITMAP BitMapHeader, ULONG BitNumber);
VOID RtlClearBits(PRTL_BITMAP BitMapHeader, ULONG StartingIndex, ULONG NumberToClear);
VOID RtlSetBits(PRTL_BITMAP BitMapHeader, ULONG StartingIndex, ULONG NumberToSet);
BOOLEAN RtlAreBitsClear(PRTL_BITMAP BitMapHeader, ULONG StartingIndex, ULONG Length);
BOOLEAN RtlAreBitsSet(PRTL_BITMAP BitMapHeader, ULONG StartingIndex, ULONG Length);
ULONG RtlNumberOfClearBits(PRTL_BITMAP BitMapHeader);
ULONG RtlNumberOfSetBits(PRTL_BITMAP BitMapHeader);
ULONG RtlNumberOfSetBitsUlongPtr(ULONG_PTR Target);
/* Index of the first run of NumberToFind bits at or after HintIndex
 * (wrapping), or 0xFFFFFFFF. */
ULONG RtlFindClearBits(PRTL_BITMAP BitMapHeader, ULONG NumberToFind, ULONG HintIndex);
ULONG RtlFindSetBits(PRTL_BITMAP BitMapHeader, ULONG NumberToFind, ULONG HintIndex);
ULONG RtlFindClearBitsAndSet(PRTL_BITMAP BitMapHeader, ULONG NumberToFind, ULONG HintIndex);
ULONG RtlFindSetBitsAndClear(PRTL_BITMAP BitMapHeader, ULONG NumberToFind, ULONG HintIndex);
ULONG RtlFindFirstRunClear(PRTL_BITMAP BitMapHeader, PULONG StartingIndex);
ULONG RtlFindLongestRunClear(PRTL_BITMAP BitMapHeader, PULONG StartingIndex);
ULONG RtlFindNextForwardRunClear(PRTL_BITMAP BitMapHeader, ULONG FromIndex,
                                 PULONG StartingRunIndex);
ULONG RtlFindLastBackwardRunClear(PRTL_BITMAP BitMapHeader, ULONG FromIndex,
                                  PULONG StartingRunIndex);
ULONG RtlFindClearRuns(PRTL_BITMAP BitMapHeader, PRTL_BITMAP_RUN RunArray, ULONG SizeOfRunArray,
                       BOOLEAN LocateLongestRuns);
CCHAR RtlFindLeastSignificantBit(ULONGLONG Set);
CCHAR RtlFindMostSignificantBit(ULONGLONG Set);

/* ---- memory ------------------------------------------------------------ */
/* Compares without an early exit (time independent of the contents). */
BOOLEAN RtlConstantTimeEqualMemory(const VOID* v1, const VOID* v2, ULONG len);
/* Checks what Windows checks of a user buffer: alignment (a misaligned
 * address raises STATUS_DATATYPE_MISALIGNMENT) and that the range does not
 * wrap (STATUS_ACCESS_VIOLATION); the raise is ExRaiseStatus, which the
 * checker reports as a bug check, since __try/__except are refused here. */
VOID ProbeForRead(const volatile VOID* Address, SIZE_T Length, ULONG Alignment);
VOID ProbeForWrite(volatile VOID* Address, SIZE_T Length, ULONG Alignment);
static inline KPROCESSOR_MODE ExGetPreviousMode(void) { return KernelMode; }
/* The host is the only requester: every access is granted
 * (STATUS_INVALID_PARAMETER for a NULL IRP or access bits other than
 * FILE_READ_ACCESS/FILE_WRITE_ACCESS). wdmsec.h's
 * WdmlibIoValidateDeviceIoControlAccess is this function. */
struct _IRP;
NTSTATUS IoValidateDeviceIoControlAccess(struct _IRP* Irp, ULONG RequiredAccess);

/* ---- interlocked arithmetic (the spin lock argument is not needed) ----- */
ULONG ExInterlockedAddUlong(PULONG Addend, ULONG Increment, PKSPIN_LOCK Lock);
LARGE_INTEGER ExInterlockedAddLargeInteger(PLARGE_INTEGER Addend, LARGE_INTEGER Increment,
                                           PKSPIN_LOCK Lock);
LONGLONG ExInterlockedCompareExchange64(LONGLONG volatile* Destination, PLONGLONG Exchange,
                                        PLONGLONG Comperand, PKSPIN_LOCK Lock);
#define ExInterlockedAddLargeStatistic(Addend, Increment) \
  ((void)__atomic_fetch_add(&(Addend)->QuadPart, (LONGLONG)(Increment), __ATOMIC_SEQ_CST))

/* ---- ordered accessors ------------------------------------------------- */
#define SOFTNDK_WDK_ACCESSORS(Name, T)                                          \
  static inline T Read##Name##Acquire(T const volatile* Source) {               \
    return __atomic_load_n(Source, __ATOMIC_ACQUIRE);                           \
  }                                                                             \
  static inline T Read##Name##NoFence(T const volatile* Source) {               \
    return __atomic_load_n(Source, __ATOMIC_RELAXED);                           \
  }                                                                             \
  static inline T Read##Name##Raw(T const volatile* Source) { return *Source; } \
  static inline VOID Write##Name##Release(T volatile* Destination, T Value) {   \
    __atomic_store_n(Destination, Value, __ATOMIC_RELEASE);                     \
  }                                                                             \
  static inline VOID Write##Name##NoFence(T volatile* Destination, T Value) {   \
    __atomic_store_n(Destination, Value, __ATOMIC_RELAXED);                     \
  }                                                                             \
  static inline VOID Write##Name##Raw(T volatile* Destination, T Value) { *Destination = Value; }
SOFTNDK_WDK_ACCESSORS(Int32, LONG)
SOFTNDK_WDK_ACCESSORS(UInt32, ULONG)
SOFTNDK_WDK_ACCESSORS(Int64, LONG64)
SOFTNDK_WDK_ACCESSORS(UInt64, ULONG64)
#undef SOFTNDK_WDK_ACCESSORS
/* (the Boolean Acquire/Release/NoFence accessors are ex.h's) */
static inline BOOLEAN ReadBooleanRaw(BOOLEAN const volatile* Source) { return *Source; }
static inline VOID WriteBooleanRaw(BOOLEAN volatile* Destination, BOOLEAN Value) {
  *Destination = Value;
}
#define BarrierAfterRead() __atomic_thread_fence(__ATOMIC_ACQUIRE)

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_WDK_RTL_MORE_H_ */
