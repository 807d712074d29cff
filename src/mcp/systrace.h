/* SPDX-License-Identifier: Apache-2.0 */
/* systrace.h: system traces for the MCP tools (see systrace.c). */
#ifndef PH_MCP_SYSTRACE_H
#define PH_MCP_SYSTRACE_H

#include "mcp.h"

struct ph_systrace_ring {
	bool active;
	bool device;
	int64_t pid;	    /* the recorder here, or perfetto on the device */
	int64_t started_at; /* epoch ms */
	char out[4300];	    /* the file it writes (here, or on the device) */
};

int ph_systrace_dir(struct ph_mcp *m);
/* The pid the app's newest hello gave, 0 when none was seen. */
int64_t ph_systrace_app_pid(struct ph_mcp *m);
/*
 * A one-shot trace of `seconds` into a fresh file; path receives it.  The
 * recorder is told the app's pid (ph_systrace_app_pid).  stop (may be
 * NULL) is asked while it records: once it says true the recording is
 * stopped (SIGINT: tracefs restored), its file removed, and PH_EAGAIN
 * returned with why "cancelled".
 */
int ph_systrace_capture(struct ph_mcp *m, int seconds, bool (*stop)(void *ctx),
			void *ctx, char *path, size_t size, char *why,
			size_t wsize);
int ph_systrace_ring_load(struct ph_mcp *m, struct ph_systrace_ring *r);
int ph_systrace_ring_start(struct ph_mcp *m, struct ph_systrace_ring *r,
			   char *why, size_t wsize);
int ph_systrace_ring_snapshot(struct ph_mcp *m, char *path, size_t size,
			      char *why, size_t wsize);
int ph_systrace_ring_stop(struct ph_mcp *m, char *path, size_t size, char *why,
			  size_t wsize);
int ph_systrace_newest(struct ph_mcp *m, char *path, size_t size);

#endif
