/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io_int.h: what io.c (feeding the view) and judge.c (its verdicts)
 * share, and no one else uses.
 */
#ifndef PH_HOST_IO_INT_H
#define PH_HOST_IO_INT_H

#include "ph_common.h"

#define NS_PER_MS 1000000

/* p grown to hold n + 1 items of size bytes (doubling *cap), or NULL with
 * p untouched. */
void *ph_io_grow(void *p, size_t *cap, size_t n, size_t size);

#endif
