/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perfetto.h: system traces recorded on an Android device by its own
 * `perfetto` command, over adb (`adb shell perfetto ...`, `adb pull`).
 * Shared by `capture --systrace` on a device and the MCP server's trace
 * tools (src/mcp/systrace.c); the exact command lines are tested against
 * a fake adb (tests/e2e/fake-adb, tests/e2e/mcp_adb.py and
 * tests/e2e/host_adb.sh).
 *
 * Every recording is perfetto's light mode (categories on the command
 * line) into a file under PH_PERFETTO_DIR on the device, pulled to a local
 * path and removed from the device afterwards.  Its timestamps are on the
 * device's BOOTTIME clock with clock snapshots beside them; the trace
 * engine converts through those onto the app's clock (systrace.h).
 *
 * Each call returns 0, or PH_EIO with why (adb's or perfetto's own words,
 * cut to fit) in why.
 */
#ifndef PH_HOST_PERFETTO_H
#define PH_HOST_PERFETTO_H

#include "ph_common.h"

/* Where the device's perfetto may write (the shell user can read it). */
#define PH_PERFETTO_DIR "/data/misc/perfetto-traces"

/*
 * One-shot: `perfetto -o REMOTE -t Ns CATEGORIES...`, which returns when
 * the N seconds are over; then the file is pulled to local and removed.
 */
int ph_perfetto_record(int seconds, const char *remote, const char *local,
		       char *why, size_t wsize);

/*
 * A session that records in the background until stopped, or for at most
 * `seconds`: `perfetto --background-wait [--unique-session-name NAME]
 * -b 64mb -o REMOTE -t Ns CATEGORIES...`.  --background-wait returns once
 * the session is recording, and its exit status says whether it started
 * (a second session of the same name is refused there).  *pid is the pid
 * it printed, to stop it by.  The buffer is a ring: a session longer than
 * its 64 MB keeps the newest part.
 */
int ph_perfetto_start(const char *name, int seconds, const char *remote,
		      int64_t *pid, char *why, size_t wsize);

/*
 * Stops a background session and fetches what it recorded: `kill -TERM
 * PID` (perfetto writes its buffer to REMOTE and exits), `kill -0 PID`
 * until it is gone (for at most wait_ms: only then is the file whole),
 * `adb pull REMOTE LOCAL` when local is not NULL, and `rm -f REMOTE`.  A
 * session that already ended (its -t was over) is not waited for.
 */
int ph_perfetto_stop(int64_t pid, const char *remote, const char *local,
		     int wait_ms, char *why, size_t wsize);

/*
 * A copy of a running named session's buffer, which keeps recording:
 * `perfetto --clone-by-name NAME -o REMOTE`, pulled to local, removed.
 */
int ph_perfetto_clone(const char *name, const char *remote, const char *local,
		      char *why, size_t wsize);

#endif
