/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io_int.h: what io.c (feeding the view) and judge.c (its verdicts)
 * share, and no one else uses: the nanoseconds in a millisecond.
 */
#ifndef PH_HOST_IO_INT_H
#define PH_HOST_IO_INT_H

#include "ph_common.h"

#define NS_PER_MS 1000000

#endif
