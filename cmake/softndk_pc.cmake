# SPDX-License-Identifier: Apache-2.0
# Install-time part of softndk.pc (install(CODE) in src/CMakeLists.txt sets
# SOFTNDK_PC_IN, _OUT, _VERSION, _LIBDIR and _INCLUDEDIR): fills in the
# prefix being installed into and installs the file into
# <libdir>/pkgconfig. file(INSTALL) adds DESTDIR, as every install rule does.
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${SOFTNDK_PC_${_dir}}")
    message(FATAL_ERROR "softndk.pc: CMAKE_INSTALL_${_dir} must be relative to the prefix "
                        "(is ${SOFTNDK_PC_${_dir}})")
  endif()
endforeach()
# No trailing slash: "/usr/" would make "/usr//include", which pkg-config
# would not take for its system directory.
string(REGEX REPLACE "(.)/+$" "\\1" SOFTNDK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
configure_file("${SOFTNDK_PC_IN}" "${SOFTNDK_PC_OUT}" @ONLY)
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/${SOFTNDK_PC_LIBDIR}/pkgconfig" TYPE FILE
     FILES "${SOFTNDK_PC_OUT}")
