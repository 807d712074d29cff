/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_threads.h: this process's threads as /proc shows them, for tests and
 * benchmarks that look at the agent's own threads (porthole-writer...).
 */
#ifndef PH_TEST_THREADS_H
#define PH_TEST_THREADS_H

#include "ph_common.h"

/* The tid of this process's thread called `name` (its comm), or 0. */
int ph_thread_named(const char *name);

/*
 * One number from /proc/self/task/TID/FILE: the field-th (from 0) of
 * schedstat's, or, for status, the value of the line starting `field`
 * ("voluntary_ctxt_switches:").  -1 when it cannot be read.
 */
int64_t ph_thread_schedstat(int tid, int field);
int64_t ph_thread_status(int tid, const char *field);

#endif
