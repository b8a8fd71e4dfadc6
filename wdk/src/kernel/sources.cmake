# The kernel services (wdk/CMakeLists.txt includes this file).
list(APPEND SOFTNDK_WDK_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/csq.cc
  ${CMAKE_CURRENT_LIST_DIR}/device.cc
  ${CMAKE_CURRENT_LIST_DIR}/dispatcher.cc
  ${CMAKE_CURRENT_LIST_DIR}/dpc.cc
  ${CMAKE_CURRENT_LIST_DIR}/ex_sync.cc
  ${CMAKE_CURRENT_LIST_DIR}/host.cc
  ${CMAKE_CURRENT_LIST_DIR}/ip2string.cc
  ${CMAKE_CURRENT_LIST_DIR}/irp.cc
  ${CMAKE_CURRENT_LIST_DIR}/ke_misc.cc
  ${CMAKE_CURRENT_LIST_DIR}/lists.cc
  ${CMAKE_CURRENT_LIST_DIR}/lookaside.cc
  ${CMAKE_CURRENT_LIST_DIR}/mdl.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool.cc
  ${CMAKE_CURRENT_LIST_DIR}/registry_load.cc
  ${CMAKE_CURRENT_LIST_DIR}/registry_rtl.cc
  ${CMAKE_CURRENT_LIST_DIR}/registry_store.cc
  ${CMAKE_CURRENT_LIST_DIR}/rtl.cc
  ${CMAKE_CURRENT_LIST_DIR}/rundown.cc
  ${CMAKE_CURRENT_LIST_DIR}/spinlock.cc
  ${CMAKE_CURRENT_LIST_DIR}/strsafe.cc
  ${CMAKE_CURRENT_LIST_DIR}/strsafe_format.cc
  ${CMAKE_CURRENT_LIST_DIR}/thread.cc
  ${CMAKE_CURRENT_LIST_DIR}/timer.cc
  ${CMAKE_CURRENT_LIST_DIR}/wdmsec.cc
  ${CMAKE_CURRENT_LIST_DIR}/workitem.cc
)
