# Debian packages made by CPack's DEB generator, one per install component:
#   libsoftndkN     lib    the shared library (N = SOFTNDK_SOVERSION)
#   libsoftndk-dev  dev    headers, static library, CMake package, softndk.pc
#   softndk-tools   tools  ndkinfo, ndkperf, ndkping, ndk-nvmet, ndk-nvme and their manual pages
# scripts/package configures a Release build for /usr and runs cpack; any
# build configured with -DCMAKE_INSTALL_PREFIX=/usr can run `cpack -G DEB`.
# Dependencies on other packages are computed by dpkg-shlibdeps from the
# binaries; the ones it cannot see (between our own packages, and the -dev
# package's build-time needs) are written here.

set(_deb_release 1)
set(_deb_version ${PROJECT_VERSION}-${_deb_release})
set(_lib_pkg libsoftndk${SOFTNDK_SOVERSION})

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

set(_components lib dev)
if(SOFTNDK_BUILD_TOOLS)
  list(APPEND _components tools)
endif()
set(CPACK_DEBIAN_LIB_PACKAGE_NAME ${_lib_pkg})
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libsoftndk-dev)
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME softndk-tools)
foreach(_c ${_components})
  string(TOUPPER ${_c} _C)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/copyright ${_doc_out}/changelog.Debian.gz
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_${_C}_PACKAGE_NAME}
    COMPONENT ${_c} EXCLUDE_FROM_ALL)
endforeach()

set(CPACK_GENERATOR DEB)
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
# The tools need libsoftndk.so.0 from this very build, which no installed
# package provides yet: dpkg-shlibdeps finds it here and leaves it out
# (CPack runs it with --ignore-missing-info); the tools' Depends names it.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/src)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

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

# libsoftndk-dev: the static library and the CMake package need ISA-L,
# libmnl and pkg-config (softndkConfig.cmake finds them with pkg-config).
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "${_lib_pkg} (= ${_deb_version}), libisal-dev, libmnl-dev, pkg-config")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "NDKPI over software iWARP - development files
softndk is the Windows Network Direct Kernel Provider Interface (NDKPI) as a
C/C++ library on Linux over software iWARP.
This package holds the C headers (softndk/ndkpi.h, softndk/softndk.h), the
C++ layer (softndk/softndk.hpp), the static library, the CMake package
(find_package(softndk)) and the pkg-config file (softndk.pc).")

set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION net)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${_lib_pkg} (= ${_deb_version})")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "NDKPI over software iWARP - command-line tools
softndk is the Windows Network Direct Kernel Provider Interface (NDKPI) as a
C/C++ library on Linux over software iWARP.
This package holds ndkinfo (adapters and their limits, like ibv_devinfo),
ndkperf (perftest-style benchmark with a raw-TCP baseline), ndkping
(rping-compatible ping), ndk-nvmet (NVMe over Fabrics RDMA target) and
ndk-nvme (NVMe over Fabrics RDMA host with a load generator).")

include(CPack)
