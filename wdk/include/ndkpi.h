// SPDX-License-Identifier: Apache-2.0
/*
 * ndkpi.h - softndk-wdk stand-in: the NDKPI itself is softndk's
 * (softndk/ndkpi.h, the same types and dispatch tables), so a consumer's
 * `#include <ndkpi.h>` reaches it unchanged.
 */
#ifndef SOFTNDK_WDK_NDKPI_H_
#define SOFTNDK_WDK_NDKPI_H_

#include <softndk/ndkpi.h>

#endif /* SOFTNDK_WDK_NDKPI_H_ */
