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
/* A one-shot trace of `seconds` into a fresh file; path receives it. */
int ph_systrace_capture(struct ph_mcp *m, int seconds, char *path, size_t size,
			char *why, size_t wsize);
int ph_systrace_ring_load(struct ph_mcp *m, struct ph_systrace_ring *r);
int ph_systrace_ring_start(struct ph_mcp *m, struct ph_systrace_ring *r,
			   char *why, size_t wsize);
int ph_systrace_ring_snapshot(struct ph_mcp *m, char *path, size_t size,
			      char *why, size_t wsize);
int ph_systrace_ring_stop(struct ph_mcp *m, char *path, size_t size, char *why,
			  size_t wsize);
int ph_systrace_newest(struct ph_mcp *m, char *path, size_t size);

#endif
