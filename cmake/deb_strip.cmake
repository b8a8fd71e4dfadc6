# SPDX-License-Identifier: Apache-2.0
# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS, cmake/packaging.cmake):
# strips the ELF files of the staged packages the way Debian's dh_strip
# does, since the package build keeps -g from dpkg-buildflags:
#   shared objects  --remove-section=.comment --remove-section=.note --strip-unneeded
#   executables     --remove-section=.comment --remove-section=.note
#   static archives --strip-debug --remove-section=.comment --remove-section=.note
#                   --enable-deterministic-archives (their symbol table stays)
# Runs once after every component is installed under
# CPACK_TEMPORARY_INSTALL_DIRECTORY; symbolic links are left alone.
if(NOT CPACK_SOFTNDK_STRIP)
  message(FATAL_ERROR "deb_strip: no strip program (CMAKE_STRIP) was found at configure time")
endif()
file(GLOB_RECURSE _files LIST_DIRECTORIES false "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*")
set(_n 0)
foreach(_f IN LISTS _files)
  if(IS_SYMLINK "${_f}")
    continue()
  endif()
  file(READ "${_f}" _magic LIMIT 8 HEX)
  if(_magic MATCHES "^7f454c46")  # ELF
    if(_f MATCHES "\\.so(\\.[0-9]+)*$")
      set(_how --strip-unneeded)
    else()
      set(_how)
    endif()
  elseif(_magic STREQUAL "213c617263683e0a")  # "!<arch>\n"
    set(_how --strip-debug --enable-deterministic-archives)
  else()
    continue()
  endif()
  execute_process(COMMAND "${CPACK_SOFTNDK_STRIP}" --remove-section=.comment
                          --remove-section=.note ${_how} "${_f}"
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "deb_strip: strip ${_f} failed: ${_err}")
  endif()
  math(EXPR _n "${_n} + 1")
endforeach()
if(_n EQUAL 0)
  message(FATAL_ERROR "deb_strip: no ELF file under ${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
endif()
message(STATUS "deb_strip: stripped ${_n} files")
