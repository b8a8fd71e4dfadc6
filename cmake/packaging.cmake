# SPDX-License-Identifier: Apache-2.0
# Debian packages made by CPack's DEB generator, one per install component:
#   libsoftndkN     lib    the shared library libsoftndk.so.N (N = SOFTNDK_SOVERSION)
#   libsoftndk-wdkN wdk    the WDK kit's shared library libsoftndk_wdk.so.N
#   libsoftndk-dev  dev    headers (the WDK kit's in softndk/wdk/ too), the
#                          static library, both .so links, the CMake package
#                          (softndk::softndk and softndk::wdk), softndk.pc
#   softndk-tools   tools  ndkinfo, ndkperf, ndkping, ndk-nvmet, ndk-nvme,
#                          softndk-wdk-run and their manual pages
#   libsoftndk-verbs verbs the verbs backend plugin (lib/<triplet>/softndk/
#                          libsoftndk-verbs.so, docs/verbs.md), made when the
#                          build has it (libibverbs-dev and librdmacm-dev)
# One -dev package for both libraries: the CMake package exports both targets
# from one file, which needs both .so links, and the kit's headers live in
# their own directory (softndk/wdk/), seen only by who links softndk::wdk.
# Libraries go to the multiarch directory (usr/lib/<triplet>): GNUInstallDirs
# picks it for the prefix /usr on Debian, and scripts/package sets it as
# debhelper does.
# scripts/package configures a Release build for /usr with Debian's build
# flags (dpkg-buildflags) and runs cpack; any build configured with
# -DCMAKE_INSTALL_PREFIX=/usr can run `cpack -G DEB`.
# Dependencies on other packages are computed by dpkg-shlibdeps from the
# binaries; the ones it cannot see (between our own packages, and the -dev
# package's build-time needs) are written here.

set(_deb_release 1)
set(_deb_version ${PROJECT_VERSION}-${_deb_release})
set(_lib_pkg libsoftndk${SOFTNDK_SOVERSION})
# Debian's name for libsoftndk_wdk.so.N ('_' is not allowed in package names).
set(_wdk_pkg libsoftndk-wdk${SOFTNDK_SOVERSION})

# The changelog's newest entry must be this version: the version is written
# in CMakeLists.txt only, and a stale changelog is caught at configure time.
file(STRINGS ${PROJECT_SOURCE_DIR}/packaging/debian/changelog _changelog_head LIMIT_COUNT 1)
if(NOT _changelog_head MATCHES "^softndk \\(${_deb_version}\\) ")
  message(FATAL_ERROR "packaging/debian/changelog: the newest entry is not "
                      "${_deb_version} (project version ${PROJECT_VERSION}): add one")
endif()

# Each package carries the copyright file and the changelog in
# /usr/share/doc/<package>, as Debian policy asks. EXCLUDE_FROM_ALL: only
# packaging (a per-component install) puts them there, not `cmake --install`.
set(_doc_out ${PROJECT_BINARY_DIR}/packaging)
file(MAKE_DIRECTORY ${_doc_out})
add_custom_command(OUTPUT ${_doc_out}/changelog.Debian.gz
  COMMAND sh -c "gzip -9nc \"$1\" > \"$2\"" gzip ${PROJECT_SOURCE_DIR}/packaging/debian/changelog
          ${_doc_out}/changelog.Debian.gz
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/debian/changelog VERBATIM)
add_custom_target(softndk_deb_docs ALL DEPENDS ${_doc_out}/changelog.Debian.gz)

set(_components lib wdk dev)
if(SOFTNDK_BUILD_TOOLS)
  list(APPEND _components tools)
endif()
if(TARGET softndk-verbs)
  list(APPEND _components verbs)
endif()
set(CPACK_DEBIAN_LIB_PACKAGE_NAME ${_lib_pkg})
set(CPACK_DEBIAN_WDK_PACKAGE_NAME ${_wdk_pkg})
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libsoftndk-dev)
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME softndk-tools)
set(CPACK_DEBIAN_VERBS_PACKAGE_NAME libsoftndk-verbs)
foreach(_c ${_components})
  string(TOUPPER ${_c} _C)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/copyright ${_doc_out}/changelog.Debian.gz
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_${_C}_PACKAGE_NAME}
    COMPONENT ${_c} EXCLUDE_FROM_ALL)
endforeach()

set(CPACK_GENERATOR DEB)
# Install into the staging tree with DESTDIR and the prefix /usr, not with a
# prefix pointing into the staging tree: softndk.pc is written at install
# time with the prefix it is installed for (cmake/softndk_pc.cmake).
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGE_NAME softndk)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "softndk maintainers <maintainers@users.noreply.a-seed-07e7f16e.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "NDKPI (kernel RDMA API) over software iWARP")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/deb)
set(CPACK_COMPONENTS_ALL ${_components})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # name_version_arch.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE ${_deb_release})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The tools and the kit need libsoftndk.so.0 and libsoftndk_wdk.so.0 from
# this very build, which no installed package provides yet: dpkg-shlibdeps
# finds them here and leaves them out (CPack runs it with
# --ignore-missing-info); the Depends below name them.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/src ${PROJECT_BINARY_DIR}/wdk)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# What debhelper would do and CPack does not (cmake/deb_strip.cmake,
# cmake/deb_ldconfig_trigger.cmake): strip the binaries as dh_strip does
# (the build has -g from dpkg-buildflags; no -dbgsym packages are made), and
# let the library packages activate dpkg's ldconfig trigger instead of the
# postinst/postrm that call ldconfig, which CPack writes.
set(CPACK_SOFTNDK_STRIP ${CMAKE_STRIP})
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/deb_strip.cmake)
set(CPACK_POST_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/deb_ldconfig_trigger.cmake)

# libsoftndkN: a shlibs file, so that packages built against it depend on
# it at this version or later (docs/abi.md: 0.x versions of one SONAME only
# add to the ABI); CPack adds the ldconfig calls.
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)  # only libsoftndkN has a shared object
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_LIB_DESCRIPTION
    "NDKPI over software iWARP - shared library
softndk is the Windows Network Direct Kernel Provider Interface (NDKPI) as a
C/C++ library on Linux. RDMA is carried by software iWARP (MPA, DDP and
RDMAP over ordinary TCP), wire-compatible with Linux's SoftiWARP (siw) and
iWARP NICs.
This package holds the shared library, libsoftndk.so.${SOFTNDK_SOVERSION}.")

# libsoftndk-wdkN: the kit uses libsoftndk's C ABI only (it links the
# shared library, whose version script exports nothing else), so any
# libsoftndkN at least as new as this build serves it, as a shlibs file
# would say.
set(CPACK_DEBIAN_WDK_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_WDK_PACKAGE_DEPENDS "${_lib_pkg} (>= ${_deb_version})")
set(CPACK_COMPONENT_WDK_DESCRIPTION
    "NDKPI over software iWARP - WDK compatibility kit library
softndk is the Windows Network Direct Kernel Provider Interface (NDKPI) as a
C/C++ library on Linux over software iWARP.
The WDK compatibility kit runs Windows NDK consumer drivers, rebuilt from
their own sources, as shared objects in a Linux process: it implements the
kernel services they call (Ke, Ex, Io, Mm, Rtl, WSK, the NDK NPI) in user
space, with an IRQL checker and leak checks.
This package holds the shared library, libsoftndk_wdk.so.${SOFTNDK_SOVERSION}.")

# libsoftndk-dev: the static library and the CMake package need ISA-L,
# libmnl and pkg-config (softndkConfig.cmake finds them with pkg-config).
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "${_lib_pkg} (= ${_deb_version}), ${_wdk_pkg} (= ${_deb_version}), libisal-dev, libmnl-dev, pkg-config")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "NDKPI over software iWARP - development files
softndk is the Windows Network Direct Kernel Provider Interface (NDKPI) as a
C/C++ library on Linux over software iWARP.
This package holds the C headers (softndk/ndkpi.h, softndk/softndk.h), the
C++ layer (softndk/softndk.hpp), the static library, the CMake package
(find_package(softndk): softndk::softndk, and softndk::wdk for the WDK
compatibility kit, whose headers are in softndk/wdk/) and the pkg-config
file (softndk.pc).")

set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION net)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${_lib_pkg} (= ${_deb_version}), ${_wdk_pkg} (= ${_deb_version})")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "NDKPI over software iWARP - command-line tools
softndk is the Windows Network Direct Kernel Provider Interface (NDKPI) as a
C/C++ library on Linux over software iWARP.
This package holds ndkinfo (adapters and their limits, like ibv_devinfo),
ndkperf (perftest-style benchmark with a raw-TCP baseline), ndkping
(rping-compatible ping), ndk-nvmet (NVMe over Fabrics RDMA target) and
ndk-nvme (NVMe over Fabrics RDMA host with a load generator) and
softndk-wdk-run (the host that runs a driver built against the WDK
compatibility kit).")

# libsoftndk-verbs: a plugin that libsoftndk loads with dlopen (never
# linked), so dpkg-shlibdeps sees only rdma-core (libibverbs1, librdmacm1);
# the loader accepts only the plugin of its own build (the provider
# interface is no ABI: docs/verbs.md), hence the exact version.
set(CPACK_DEBIAN_VERBS_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_VERBS_PACKAGE_DEPENDS "${_lib_pkg} (= ${_deb_version})")
set(CPACK_COMPONENT_VERBS_DESCRIPTION
    "NDKPI over software iWARP - verbs backend (rdma-core)
softndk is the Windows Network Direct Kernel Provider Interface (NDKPI) as a
C/C++ library on Linux over software iWARP.
This package holds the verbs backend, a plugin that libsoftndk loads when an
adapter is opened with SOFTNDK_BACKEND=verbs (or auto on a host with a
hardware RNIC): the same NDK object model served by rdma-core (libibverbs
and librdmacm) over an RDMA device - mlx5, irdma, cxgb4, or the kernel's
siw and rxe.")

include(CPack)
