// SPDX-License-Identifier: Apache-2.0
/* ndksock_server.h - `verbs_peer ndksock-server PORT`: the WDK sample
 * driver's server (wdk/sample/driver.c) on libibverbs + librdmacm. */
#ifndef SOFTNDK_TESTS_INTEROP_NDKSOCK_SERVER_H
#define SOFTNDK_TESTS_INTEROP_NDKSOCK_SERVER_H

/* argv: "verbs_peer" "ndksock-server" PORT. Exit code: 0 all checked,
   1 a check failed, 2 usage, 3 setup/connection failure. */
int ndksock_server_main(int argc, char** argv);

#endif
