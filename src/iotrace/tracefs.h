/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracefs.h: the kernel's tracing switches, borrowed and given back.
 *
 * Rule: whatever porthole changes in tracefs it puts back, on every way
 * out (a normal stop, SIGINT/SIGTERM/SIGHUP, an error).  To change as
 * little as possible it works in a private instance,
 * instances/porthole-PID, which has its own buffer, clock, events and
 * switches, so another tracer on the machine (perf, trace-cmd, Perfetto)
 * is not disturbed; the instance is removed at the end.  Only when
 * instances cannot be made does it use the top level, and there it saves
 * each file before its first write.
 *
 * What is saved and restored, in reverse order of change: trace_clock,
 * buffer_size_kb, tracing_on, options/record-tgid, and the enable file of
 * each event it turns on; set_event is compared and rewritten if the
 * enables did not bring it back.  If tracefs was not mounted, porthole
 * mounts it at /sys/kernel/tracing and unmounts it at the end.
 *
 * Clearing the ring buffer (truncating `trace`) and reading `trace_pipe`
 * consume events but change no setting.
 */
#ifndef PH_IOTRACE_TRACEFS_H
#define PH_IOTRACE_TRACEFS_H

#include "ph_common.h"

#define PH_IOT_SAVED_MAX 24

struct ph_iot_tracefs {
	char root[1024];   /* where tracefs is mounted */
	char dir[1152];	   /* root, or root/instances/NAME */
	char instance[64]; /* NAME, or "" at the top level */
	bool mounted;	   /* porthole mounted root */
	bool created;	   /* porthole created the instance */
	struct {
		char rel[96]; /* path under dir */
		char *value;  /* what it held before the first write */
	} saved[PH_IOT_SAVED_MAX];
	size_t n_saved;
	char *set_event; /* top level: set_event as found */
	bool open;	 /* restore has something to do */
};

/*
 * Finds tracefs (path, if given, is used as is and nothing is mounted),
 * mounting it when needed, and makes a private instance unless top_level.
 * On failure returns PH_EUNSUPP or PH_EIO with *why (for the manifest and
 * stderr) and leaves nothing changed.
 */
int ph_iot_tracefs_open(struct ph_iot_tracefs *t, const char *path,
			bool top_level, char *why, size_t why_size);

/* Whether dir/rel exists. */
bool ph_iot_tracefs_has(const struct ph_iot_tracefs *t, const char *rel);

/* Reads dir/rel (at most size - 1 bytes, NUL-terminated); 0 or PH_EIO. */
int ph_iot_tracefs_read(const struct ph_iot_tracefs *t, const char *rel,
			char *buf, size_t size);

/*
 * Writes value to dir/rel, first saving what the file held (once per
 * file), so ph_iot_tracefs_restore() can put it back.  0 or PH_EIO with
 * errno kept.
 */
int ph_iot_tracefs_set(struct ph_iot_tracefs *t, const char *rel,
		       const char *value);

/* Empties the ring buffer (truncates dir/trace). */
int ph_iot_tracefs_clear(struct ph_iot_tracefs *t);

/* dir/rel as a path, in buf. */
const char *ph_iot_tracefs_path(const struct ph_iot_tracefs *t, const char *rel,
				char *buf, size_t size);

/*
 * Puts back every saved file in reverse order, removes the instance, and
 * unmounts what porthole mounted.  Safe to call twice.  Returns 0 when
 * everything was restored, else PH_EIO after trying all of it (each
 * failure logged).
 */
int ph_iot_tracefs_restore(struct ph_iot_tracefs *t);

#endif
