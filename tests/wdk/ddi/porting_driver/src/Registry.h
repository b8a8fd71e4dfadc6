// SPDX-License-Identifier: Apache-2.0
/* Registry.h - included as "registry.h" (see Precomp.h). */
#pragma once
#define PD_REGISTRY_H 1
