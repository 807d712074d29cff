/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io.c: io-on-main-thread, io-slow-request, io-during-jank and
 * io-lost-events, from the block I/O a recording left in the session
 * (`porthole iotrace attach`: `io` events and an `io_recording` marker)
 * beside the app's stalls, late frames and main-thread queries.
 *
 * The judging is the io view's own (src/host/io/io.c, docs/iotrace.md "The
 * host's io view"): the events are read back into the view's inputs
 * (io/events.h) as they are fed, and each emit finishes a copy of them
 * over the window, so the findings are the ones `porthole io` gives for
 * the same window, with source "iotrace", and emitting changes nothing.
 * A session without block I/O says nothing about it: none of the ids is
 * quiet then (judged), and io-lost-events is quiet only when every
 * attached recording's marker said what ftrace lost.
 */
#include "ph_common.h"
#include "family.h"
#include "../io/events.h"
#include "../io/merge.h"

struct io_state {
	struct ph_io_events ev;
	bool ready, failed;
};

static void on_event(struct ph_fctx *c, void *p, const struct ph_event *ev)
{
	struct io_state *s = p;

	(void)c;
	if (s->failed)
		return;
	if (!s->ready) {
		if (ph_io_events_init(&s->ev, false)) {
			s->failed = true;
			return;
		}
		s->ready = true;
	}
	if (ph_io_events_feed(&s->ev, ev))
		s->failed = true;
}

static bool judged(const void *p, const char *id)
{
	const struct io_state *s = p;

	if (!s->ready || s->failed || !ph_io_events_any(&s->ev))
		return false;
	return strcmp(id, "io-lost-events") || ph_io_events_loss_known(&s->ev);
}

static void emit(struct ph_fctx *c, void *p)
{
	struct io_state *s = p;
	struct ph_io_view *v;

	if (!s->ready || s->failed || !ph_io_events_any(&s->ev))
		return;
	v = ph_io_events_view(&s->ev, c->ident, c->profile, c->w);
	if (!v) {
		ph_analysis_note(c->a, "block I/O: out of memory judging it");
		return;
	}
	for (size_t i = 0; i < v->nf; i++)
		if (!ph_io_add_finding(c->a, &v->f[i]))
			break;
	ph_io_add_metrics(c->a, v);
	ph_io_view_free(v);
}

static void release(void *p)
{
	struct io_state *s = p;

	if (s->ready)
		ph_io_events_release(&s->ev);
}

const struct ph_family ph_family_io = {
	.name = "io",
	.ids = { "io-on-main-thread", "io-slow-request", "io-during-jank",
		 "io-lost-events" },
	.kinds = PH_KIND_BIT(IO) | PH_KIND_BIT(IO_RECORDING) |
		 PH_KIND_BIT(BLOCKED) | PH_KIND_BIT(FRAME) |
		 PH_KIND_BIT(DB_END),
	.state_size = sizeof(struct io_state),
	.event = on_event,
	.emit = emit,
	.release = release,
	.judged = judged,
};
