/* SPDX-License-Identifier: Apache-2.0 */
/*
 * collectors.c: starts and stops the collectors, and the writer-thread
 * hooks they need.
 */
#include "ph_common.h"
#include "collectors.h"
#include "ph_log.h"
#include "../bodies.h"
#include "../symbolize.h"

int ph_collectors_start(struct ph_agent *a)
{
	ph_trace_marker_prepare();
	/* Exits first: a crash during the rest should still be recorded. */
	if (ph_exits_start(a))
		return PH_EIO;
	ph_exits_report_previous(a);
	if ((a->cfg.flags & PORTHOLE_CAPTURE_STDIO) && ph_stdio_capture_start())
		ph_warn("stdout/stderr capture failed; logs from "
			"porthole_log() only");
	if (ph_watchdog_start(a) || ph_sampler_start(a))
		return PH_EIO;
	ph_integrations_check_later(a);
	return 0;
}

void ph_collectors_stop(struct ph_agent *a)
{
	(void)a;
	ph_watchdog_stop();
	ph_sampler_stop();
	ph_stdio_capture_stop();
	ph_exits_stop();
	ph_bodies_reset(); /* a later start is another session */
}

void ph_collectors_writer_started(void)
{
	ph_symbolize_reset();
}
