/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run.h: running a helper program (adb, the tracefs recorder) to its end
 * and keeping what it printed.
 *
 * The program gets /dev/null for stdin and a pipe for stdout and stderr
 * together, so nothing it prints reaches ours (the MCP server's stdout is
 * its protocol).  Its output is kept up to out's cap; past the cap the
 * rest is read and dropped, so a chatty program never blocks on the pipe.
 */
#ifndef PH_HOST_RUN_H
#define PH_HOST_RUN_H

#include "ph_common.h"
#include "ph_buf.h"

/*
 * Runs argv (argv[0] found on PATH, no shell) and waits for it: its exit
 * status, or -1 when it could not be started, was killed, or was still
 * running after timeout_ms (then it gets SIGTERM and is waited for).  out
 * may be NULL.
 */
int ph_run(char *const argv[], struct ph_buf *out, int timeout_ms);
/*
 * As ph_run, asking stop(ctx) about every 100 ms while the program runs:
 * once it returns true the program gets SIGINT (a recorder's signal to
 * stop early and restore what it changed), is read to its end and waited
 * for, and *stopped is set.  stop may be NULL.
 */
int ph_run_stoppable(char *const argv[], struct ph_buf *out, int timeout_ms,
		     bool (*stop)(void *ctx), void *ctx, bool *stopped);

#endif
