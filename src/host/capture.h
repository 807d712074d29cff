/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capture.h: the capture file, what `capture` and `save` write and
 * `report` and `compare` read (docs/cli.md, "The capture file").
 *
 * One JSON object:
 *
 *   format     "porthole-capture"          refused when anything else
 *   version    1                           refused when newer
 *   scenario   the name the run was given
 *   driver     who drove it ("porthole capture", "porthole save", --driver)
 *   app        {packageName, processName, versionName, deviceId, device,
 *               startedAt}
 *   device     {model, os, refreshHz, cores}   from device:profile
 *   window     {from, to, durationMs}          app clock, ms
 *   clippedMs  how much of the window was before the recording (save)
 *   command    {argv, exitStatus}              capture only
 *   connected  false when the host never reached the app: nothing was
 *              observed, so no check is quiet (absent otherwise)
 *   metrics    {name: number}                  findings.h PH_METRICS
 *   coverage   what the window's answer rests on (coverage.h)
 *   findings   [finding]                       ranked, as findings.h writes
 *   quiet      [id]            checks that found nothing, window observed
 *   notSeen    [id]            checks that found nothing, window not fully
 *                              observed (coverage.reason says why)
 *   alsoInWindow, notes                        as in a findings answer
 *   marks      [{t, label, detail?}]
 *   counts     {kind: n}                       events in the window
 *   lanes      [{lane, from, to, label, level}]  for the HTML timeline
 *   source     {events, malformed, dropped, gaps}
 *   io         the block I/O view (capture --iotrace only; io.h,
 *              ph_io_write_capture)
 */
#ifndef PH_HOST_CAPTURE_H
#define PH_HOST_CAPTURE_H

#include "ph_common.h"
#include "ph_arena.h"
#include "ph_json.h"
#include "findings.h"

#define PH_CAPTURE_FORMAT  "porthole-capture"
#define PH_CAPTURE_VERSION 1

struct ph_io_view;

/* A capture keeps at most this many block requests for the io lanes. */
#define PH_CAPTURE_IO_SPANS 5000

struct ph_capture_info {
	const char *scenario; /* NULL: "unnamed" */
	const char *driver;
	char *const *argv;	     /* the command run, or NULL */
	int exit_status;	     /* with argv */
	const struct ph_io_view *io; /* capture --iotrace's view, or NULL */
	bool never_connected;	     /* the app never answered hello */
};

/* Writes the capture of analysis a as one JSON object. */
void ph_capture_write(const struct ph_analysis *a,
		      const struct ph_capture_info *info, struct ph_jw *jw);
/* ph_capture_write to a file, atomically (temp file, rename). */
int ph_capture_save(const struct ph_analysis *a,
		    const struct ph_capture_info *info, const char *path);

/*
 * Reads and checks a capture file; the tree lives in arena and borrows
 * from *buf (keep buf until done).  On refusal returns PH_ECORRUPT (or
 * PH_ENOENT / PH_EIO) with the reason, naming the byte offset for JSON
 * errors, in why.
 */
int ph_capture_load(const char *path, struct ph_arena *arena,
		    struct ph_buf *buf, const struct ph_json **out, char *why,
		    size_t why_size);

/* ph_capture_load's checks on text already read; name is for messages. */
int ph_capture_parse(const char *name, const char *text, size_t len,
		     struct ph_arena *arena, const struct ph_json **out,
		     char *why, size_t why_size);

#endif
