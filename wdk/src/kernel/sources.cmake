# SPDX-License-Identifier: Apache-2.0
# The kernel services (wdk/CMakeLists.txt includes this file).
list(APPEND SOFTNDK_WDK_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/contiguous_memory.cc
  ${CMAKE_CURRENT_LIST_DIR}/bugcheck.cc
  ${CMAKE_CURRENT_LIST_DIR}/csq.cc
  ${CMAKE_CURRENT_LIST_DIR}/device.cc
  ${CMAKE_CURRENT_LIST_DIR}/dispatcher.cc
  ${CMAKE_CURRENT_LIST_DIR}/dpc.cc
  ${CMAKE_CURRENT_LIST_DIR}/ex_sync.cc
  ${CMAKE_CURRENT_LIST_DIR}/host.cc
  ${CMAKE_CURRENT_LIST_DIR}/ip2string.cc
  ${CMAKE_CURRENT_LIST_DIR}/ip2string_eth.cc
  ${CMAKE_CURRENT_LIST_DIR}/irp.cc
  ${CMAKE_CURRENT_LIST_DIR}/ke_misc.cc
  ${CMAKE_CURRENT_LIST_DIR}/lists.cc
  ${CMAKE_CURRENT_LIST_DIR}/lookaside.cc
  ${CMAKE_CURRENT_LIST_DIR}/mdl.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool_api.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool_pages.cc
  ${CMAKE_CURRENT_LIST_DIR}/registry_load.cc
  ${CMAKE_CURRENT_LIST_DIR}/registry_rtl.cc
  ${CMAKE_CURRENT_LIST_DIR}/registry_store.cc
  ${CMAKE_CURRENT_LIST_DIR}/rtl.cc
  ${CMAKE_CURRENT_LIST_DIR}/rtl_more.cc
  ${CMAKE_CURRENT_LIST_DIR}/rundown.cc
  ${CMAKE_CURRENT_LIST_DIR}/spinlock.cc
  ${CMAKE_CURRENT_LIST_DIR}/stress.cc
  ${CMAKE_CURRENT_LIST_DIR}/symbolize.cc
  ${CMAKE_CURRENT_LIST_DIR}/strsafe.cc
  ${CMAKE_CURRENT_LIST_DIR}/strsafe_format.cc
  ${CMAKE_CURRENT_LIST_DIR}/thread.cc
  ${CMAKE_CURRENT_LIST_DIR}/timer.cc
  ${CMAKE_CURRENT_LIST_DIR}/wdmsec.cc
  ${CMAKE_CURRENT_LIST_DIR}/workitem.cc
)

# file:line in the bug-check analysis: GCC's libbacktrace (libgcc-N-dev, a
# gcc dependency); without it the analysis names exported symbols only.
file(GLOB _softndk_libbacktrace
  /usr/lib/gcc/${CMAKE_LIBRARY_ARCHITECTURE}/*/libbacktrace.a)
if(_softndk_libbacktrace)
  list(SORT _softndk_libbacktrace COMPARE NATURAL)
  list(GET _softndk_libbacktrace -1 SOFTNDK_LIBBACKTRACE)
  get_filename_component(_softndk_bt_dir ${SOFTNDK_LIBBACKTRACE} DIRECTORY)
  if(EXISTS ${_softndk_bt_dir}/include/backtrace.h)
    list(APPEND SOFTNDK_WDK_LINK_LIBRARIES ${SOFTNDK_LIBBACKTRACE})
    set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/symbolize.cc PROPERTIES
      COMPILE_DEFINITIONS SOFTNDK_WDK_HAVE_LIBBACKTRACE
      COMPILE_OPTIONS "-idirafter;${_softndk_bt_dir}/include")
  endif()
endif()
