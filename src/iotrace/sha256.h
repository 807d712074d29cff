/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sha256.h: SHA-256 (FIPS 180-4), for anonymizing identifiers the way
 * io-tracer does (a hash prefix instead of the value).  Not for secrets.
 */
#ifndef PH_IOTRACE_SHA256_H
#define PH_IOTRACE_SHA256_H

#include "ph_common.h"

void ph_iot_sha256(const void *data, size_t n, uint8_t out[32]);

#endif
