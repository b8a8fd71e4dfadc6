# SPDX-License-Identifier: Apache-2.0
# CPack post-build script (CPACK_POST_BUILD_SCRIPTS, cmake/packaging.cmake):
# CPack gives a package with a shared library in /usr/lib a postinst and a
# postrm that only call ldconfig. Debian's way (debhelper, lintian's
# maintscript-calls-ldconfig) is a `triggers` file with
# "activate-noawait ldconfig", so dpkg runs ldconfig once per run. This
# rebuilds such packages with the trigger and without those two scripts;
# a package whose scripts do anything else is left as it is.
find_program(_dpkg_deb dpkg-deb REQUIRED)
set(_ldconfig_only "^#!/bin/sh\n\nset -e\n\nif \\[ \"\\$1\" = \"(configure|remove)\" \\]; then\n\tldconfig\nfi\n?$")
foreach(_deb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT _deb MATCHES "\\.deb$")
    continue()
  endif()
  set(_tree "${_deb}.tree")
  file(REMOVE_RECURSE "${_tree}")
  execute_process(COMMAND ${_dpkg_deb} -R "${_deb}" "${_tree}" RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "deb_ldconfig_trigger: dpkg-deb -R ${_deb} failed")
  endif()
  set(_rebuild TRUE)
  foreach(_s postinst postrm)
    if(EXISTS "${_tree}/DEBIAN/${_s}")
      file(READ "${_tree}/DEBIAN/${_s}" _text)
      if(NOT _text MATCHES "${_ldconfig_only}")
        set(_rebuild FALSE)
      endif()
    else()
      set(_rebuild FALSE)
    endif()
  endforeach()
  if(_rebuild)
    file(REMOVE "${_tree}/DEBIAN/postinst" "${_tree}/DEBIAN/postrm")
    file(WRITE "${_tree}/DEBIAN/triggers" "activate-noawait ldconfig\n")
    file(CHMOD "${_tree}/DEBIAN/triggers" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
    execute_process(COMMAND ${_dpkg_deb} --root-owner-group -Zxz -b "${_tree}" "${_deb}"
                    RESULT_VARIABLE _rc OUTPUT_QUIET)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "deb_ldconfig_trigger: dpkg-deb -b ${_deb} failed")
    endif()
    get_filename_component(_name "${_deb}" NAME)
    message(STATUS "deb_ldconfig_trigger: ${_name}: ldconfig trigger instead of postinst/postrm")
  endif()
  file(REMOVE_RECURSE "${_tree}")
endforeach()
