// SPDX-License-Identifier: Apache-2.0
/*
 * softndk_wdk/msvc.h - the Microsoft C keywords, specifiers and pragmas that
 * WDK driver code uses, mapped onto gcc and clang. Included by ntdef.h (so
 * by every WDK header of the kit); the list is wdk/coverage/curated/msvc.tsv
 * and the compile tests build every one of them.
 *
 *   __pragma(x)            _Pragma("x"): `#pragma warning(...)` is then an
 *                          unknown pragma, which softndk::wdk's compile
 *                          options (-Wno-unknown-pragmas) keep quiet
 *   __declspec(x)          the gcc attribute that means the same, or nothing
 *                          (dllimport, novtable, ...); an unknown x is an
 *                          error naming SOFTNDK_WDK_DECLSPEC_x
 *   __forceinline          always_inline
 *   __int8 .. __int64      char, short, int, long long
 *   __unaligned, __ptr32, __ptr64, __w64, __stdcall, __cdecl, __fastcall:
 *                          nothing (x86-64 Linux has one pointer size and
 *                          one calling convention)
 *   __noop(...)            nothing evaluated, as in MSVC
 *   __assume(e)            __builtin_unreachable() when e is false
 *   __debugbreak()         __builtin_trap()
 *   __try/__except/__finally/__leave: refused at compile time (structured
 *   exception handling has no gcc/clang equivalent; docs/wdk.md).
 */
#ifndef SOFTNDK_WDK_MSVC_H_
#define SOFTNDK_WDK_MSVC_H_

/* clang-format off */
#ifndef __pragma
#define __pragma(x) _Pragma(#x)
#endif

/* __declspec(name) and __declspec(name(args)): the name selects a macro
 * that opens `__attribute__((`, the arguments (if any) follow it, and the
 * two closing parentheses come last. */
#ifndef __declspec
#define __declspec(x) SOFTNDK_WDK_DECLSPEC_##x ))
#endif
#define SOFTNDK_WDK_DECLSPEC_align __attribute__((aligned
#define SOFTNDK_WDK_DECLSPEC_noinline __attribute__((noinline
#define SOFTNDK_WDK_DECLSPEC_noreturn __attribute__((noreturn
#define SOFTNDK_WDK_DECLSPEC_nothrow __attribute__((nothrow
#define SOFTNDK_WDK_DECLSPEC_deprecated __attribute__((deprecated
/* selectany: one definition from many translation units. C++ has that
 * as an inline variable (a const at namespace scope is otherwise local to
 * its translation unit); C as a weak symbol. */
#ifdef __cplusplus
#define SOFTNDK_WDK_DECLSPEC_selectany inline __attribute__((
#else
#define SOFTNDK_WDK_DECLSPEC_selectany __attribute__((weak
#endif
#define SOFTNDK_WDK_DECLSPEC_dllexport __attribute__((visibility("default")
#define SOFTNDK_WDK_DECLSPEC_dllimport __attribute__((
#define SOFTNDK_WDK_DECLSPEC_novtable __attribute__((
#define SOFTNDK_WDK_DECLSPEC_restrict __attribute__((
#define SOFTNDK_WDK_DECLSPEC_noalias __attribute__((
#define SOFTNDK_WDK_DECLSPEC_safebuffers __attribute__((
#define SOFTNDK_WDK_DECLSPEC_guard __attribute__((SOFTNDK_WDK_DECLSPEC_IGNORE
#define SOFTNDK_WDK_DECLSPEC_naked __attribute__((naked
#ifdef __cplusplus
#define SOFTNDK_WDK_DECLSPEC_thread thread_local __attribute__((
#else
#define SOFTNDK_WDK_DECLSPEC_thread _Thread_local __attribute__((
#endif
/* allocate("seg"), code_seg("seg"), uuid("..."): the argument is dropped
 * (sections like PAGE or INIT mean nothing in user space). */
#define SOFTNDK_WDK_DECLSPEC_allocate __attribute__((SOFTNDK_WDK_DECLSPEC_IGNORE
#define SOFTNDK_WDK_DECLSPEC_code_seg __attribute__((SOFTNDK_WDK_DECLSPEC_IGNORE
#define SOFTNDK_WDK_DECLSPEC_uuid __attribute__((SOFTNDK_WDK_DECLSPEC_IGNORE
#define SOFTNDK_WDK_DECLSPEC_IGNORE(...)

#ifndef __forceinline
#define __forceinline __inline__ __attribute__((always_inline))
#endif
#ifndef __int8
#define __int8 char
#endif
#ifndef __int16
#define __int16 short
#endif
#ifndef __int32
#define __int32 int
#endif
#ifndef __int64
#define __int64 long long
#endif
#ifndef __unaligned
#define __unaligned
#endif
#ifndef __ptr64
#define __ptr64
#endif
#ifndef __ptr32
#define __ptr32
#endif
#ifndef __w64
#define __w64
#endif
#ifndef __stdcall
#define __stdcall
#endif
#ifndef __cdecl
#define __cdecl
#endif
#ifndef __fastcall
#define __fastcall
#endif
#ifndef __noop
#define __noop(...) ((void)0)
#endif
#ifndef __assume
#define __assume(e) ((e) ? (void)0 : __builtin_unreachable())
#endif
#ifndef __debugbreak
#define __debugbreak() __builtin_trap()
#endif
#ifndef __fallthrough
#define __fallthrough __attribute__((fallthrough))
#endif
#ifndef __analysis_assume
#define __analysis_assume(e) ((void)sizeof((e) ? 1 : 0)) /* not evaluated */
#endif
#ifndef __annotation
#define __annotation(...) ((void)0)
#endif

/* Structured exception handling. gcc and clang have no __try/__except, and
 * a fault is a signal here, not an exception a block can catch: the kit
 * refuses the constructs at compile time rather than compiling a __try whose
 * __except never runs. (libstdc++ defines __try itself as `try`, so in C++
 * the error comes from __except/__finally.) */
#define SOFTNDK_WDK_SEH_REFUSED(construct)                                        \
  _Static_assert(0, "softndk-wdk: " construct " (structured exception handling) " \
                 "is not supported: check the pointer and length instead (see "   \
                 "docs/wdk.md, 'Structured exception handling')")
#ifdef __cplusplus
/* libstdc++ defines __try as `try` (bits/exception_defines.h); the same
 * definition here keeps either include order valid. __except/__finally then
 * complete the try with a handler that fails to compile, naming itself. */
#ifndef __try
#define __try try
#endif
#undef SOFTNDK_WDK_SEH_REFUSED
#define SOFTNDK_WDK_SEH_REFUSED(construct)                                        \
  static_assert(false, "softndk-wdk: " construct " (structured exception "        \
                "handling) is not supported: check the pointer and length "       \
                "instead (see docs/wdk.md, 'Structured exception handling')")
#define __except(filter) \
  catch (...) { SOFTNDK_WDK_SEH_REFUSED("__except"); } if (false)
#define __finally \
  catch (...) { SOFTNDK_WDK_SEH_REFUSED("__finally"); } if (false)
#else
#define __try SOFTNDK_WDK_SEH_REFUSED("__try");
#define __except(filter) SOFTNDK_WDK_SEH_REFUSED("__except");
#define __finally SOFTNDK_WDK_SEH_REFUSED("__finally");
#endif
#define __leave SOFTNDK_WDK_SEH_REFUSED("__leave")
/* clang-format on */

#endif /* SOFTNDK_WDK_MSVC_H_ */
