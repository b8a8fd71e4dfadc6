# SPDX-License-Identifier: Apache-2.0
# The networking half of softndk-wdk (included by wdk/CMakeLists.txt):
# WSK registration and the NDK NPI (wsk.cc), NETIO interface conversions
# (ifapi.cc), the dispatch-table shim that runs provider callbacks at
# DISPATCH_LEVEL and checks callers' IRQL (ndk_shim_*.cc), and the IRP
# adapter control (adapter_ioctl.cc).
set(_net ${CMAKE_CURRENT_LIST_DIR})
list(APPEND SOFTNDK_WDK_SOURCES
  ${_net}/adapter_ioctl.cc
  ${_net}/adapter_pcap.cc
  ${_net}/ifapi.cc
  ${_net}/ndk_shim_adapter.cc
  ${_net}/ndk_shim_conn.cc
  ${_net}/ndk_shim_qp.cc
  ${_net}/ndk_shim_track.cc
  ${_net}/ndk_trace.cc
  ${_net}/net_report.cc
  ${_net}/wsk.cc
)
unset(_net)
