/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capture_run.h: `porthole capture`'s run (src/cmd/cmd-capture.c parses
 * its options and prints its summary): CMD run and its app recorded over
 * its whole life, with a system trace and this machine's block I/O
 * recorded beside it when asked, merged, and saved as the capture file.
 * docs/capture.md is the manual.
 */
#ifndef PH_HOST_CAPTURE_RUN_H
#define PH_HOST_CAPTURE_RUN_H

#include "ph_common.h"

/* The exit status of a run that never reached the app, whatever CMD's
 * status: a CI job must not pass on a run nothing observed. */
#define PH_CAPTURE_NEVER_CONNECTED 3

struct ph_capture_run_opts {
	const char *scenario, *out, *driver; /* out: the capture file */
	const char *app_id;	     /* NULL: the app announces itself */
	bool systrace;		     /* record a system trace too */
	double systrace_seconds;     /* > 0: stop it after that long */
	bool systrace_seconds_given; /* else at most an hour on a device */
	bool iotrace;		     /* record this machine's block I/O */
	const char *iotrace_out;     /* keep its recording there, or NULL */
	char *const *cmdv;	     /* CMD and its arguments, NULL-ended */
	FILE *log; /* where the run says what it does and does without */
};

struct ph_capture_run_result {
	int saved;	 /* 1 written, -1 it could not be, 0 never got there */
	size_t findings; /* when saved: the capture's findings */
	size_t errors;	 /* and how many of them are errors */
	double seconds;	 /* CMD's run, start to exit */
};

/*
 * Runs o->cmdv and records it.  SIGINT and SIGTERM are passed on to CMD
 * while it runs.  Returns the exit status: CMD's (128 + the signal that
 * killed it), PH_CAPTURE_NEVER_CONNECTED, or 2 when the run itself
 * failed (res says whether the file was written).
 */
int ph_capture_run(const struct ph_capture_run_opts *o,
		   struct ph_capture_run_result *res);

#endif
