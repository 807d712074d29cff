/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_proto_frames.c: the Perfetto decoder's frame timeline
 * (FrameTimelineEvent, TracePacket field 76): SurfaceFlinger's expected
 * and actual frames of each display and surface, matched to their end by
 * cookie, into the expected_frame and actual_frame tables with their
 * jank reasons as text.
 */
#include "trace/trace_proto_int.h"

static const char *const jank_names[] = {
	"SurfaceFlinger Scheduling",
	"Prediction Error",
	"Display HAL",
	"SurfaceFlinger CPU Deadline Missed",
	"SurfaceFlinger GPU Deadline Missed",
	"App Deadline Missed",
	"Buffer Stuffing",
	"Unknown Jank",
	"SurfaceFlinger Stuffing",
	"Dropped Frame",
	"Non Animating",
	"App Resynced Jitter",
	"Display not ON",
	"ModeChange in progress",
	"PowerModeChange in progress",
};

/* JankType bits (1 = none, 2.. = reasons) as the field's comma-joined text */
static uint32_t jank_str(struct ph_trace *t, uint64_t bits)
{
	struct ph_buf b = PH_BUF_INIT(1024);
	uint32_t id;

	if (bits == 0)
		return ph_trace_intern(t, "Unspecified", 11);
	if (bits == 1)
		return ph_trace_intern(t, "None", 4);
	for (int i = 1; i <= 15; i++) {
		if (!(bits & (1ull << i)))
			continue;
		if ((b.len && ph_buf_addstr(&b, ", ")) ||
		    ph_buf_addstr(&b, jank_names[i - 1]))
			break;
	}
	id = ph_trace_intern(t, b.buf, b.len);
	ph_buf_release(&b);
	return id;
}

void ph_proto_frame_timeline(struct pstate *ps, int64_t ts, const uint8_t *p,
			     size_t n)
{
	static const char *const present[] = {
		"Unspecified Present", "On-time Present", "Late Present",
		"Early Present",       "Dropped Frame",	  "Unknown Present"
	};
	static const char *const pred[] = { "Unspecified Prediction",
					    "Valid Prediction",
					    "Expired Prediction",
					    "Unknown Prediction" };
	static const char *const sev[] = { "Unknown", "None", "Partial",
					   "Full" };
	struct ph_trace *t = ps->t;
	struct ph_trace_priv *pv = t->priv;
	struct pbf f, g;

	FOR_FIELDS(p, n, f)
	{
		bool actual = f.id == 2 || f.id == 4, surface = f.id >= 3;
		struct ph_table *tb;
		int64_t cookie = 0, token = 0, dtoken = 0, pid = -1, r;
		int64_t jank = -1, pt = -1, pr = -1, sv = -1, ontime = -1,
			gpu = -1;
		uint32_t layer = 0;
		char name[32];
		int k;

		if (f.wt != 2 || f.id < 1 || f.id > 5)
			continue;
		FOR_FIELDS(f.p, f.v, g)
		{
			if (g.id == 1)
				cookie = (int64_t)g.v;
			if (f.id == 5)
				continue;
			if (g.id == 2)
				token = (int64_t)g.v;
			else if (!surface) {
				switch (g.id) {
				case 3: pid = (int64_t)g.v; break;
				case 4: pt = (int64_t)g.v; break;
				case 5: ontime = (int64_t)g.v; break;
				case 6: gpu = (int64_t)g.v; break;
				case 7: jank = (int64_t)g.v; break;
				case 8: pr = (int64_t)g.v; break;
				case 9: sv = (int64_t)g.v; break;
				}
			} else {
				switch (g.id) {
				case 3: dtoken = (int64_t)g.v; break;
				case 4: pid = (int64_t)g.v; break;
				case 5: layer = str_of(t, &g); break;
				case 6: pt = (int64_t)g.v; break;
				case 7: ontime = (int64_t)g.v; break;
				case 8: gpu = (int64_t)g.v; break;
				case 9: jank = (int64_t)g.v; break;
				case 10: pr = (int64_t)g.v; break;
				case 12: sv = (int64_t)g.v; break;
				}
			}
		}
		if (f.id == 5) {
			ph_trace_stat(t, "frame_timeline.frame_end", 1);
			ph_trace_frames_end(t, cookie, ts);
			continue;
		}
		ph_trace_stat(t,
			      f.id == 1 ? "frame_timeline.expected_display" :
			      f.id == 2 ? "frame_timeline.actual_display" :
			      f.id == 3 ? "frame_timeline.expected_surface" :
					  "frame_timeline.actual_surface",
			      1);
		tb = &t->tables[actual ? PH_T_AFRAME : PH_T_EFRAME];
		r = ph_table_add(tb);
		if (r < 0)
			return;
		k = snprintf(name, sizeof(name), "%" PRId64, token);
		ph_col_i64(tb, AF_TS)[r] = ts;
		ph_col_i64(tb, AF_DUR)[r] = -1;
		ph_col_str(tb, AF_NAME)[r] =
			ph_trace_intern(t, name, (size_t)k);
		ph_col_i64(tb, AF_UPID)[r] = pid >= 0 ? ph_trace_upid(t, pid) :
							PH_NULL_I64;
		ph_col_i64(tb, AF_DTOKEN)[r] = surface ? dtoken : token;
		ph_col_i64(tb, AF_STOKEN)[r] = surface ? token : PH_NULL_I64;
		ph_col_str(tb, AF_LAYER)[r] = layer;
		ph_col_i32(tb, AF_SURFACE)[r] = surface;
		ph_col_i64(tb, AF_COOKIE)[r] = cookie;
		if (actual) {
			if (pt >= 0 && pt < 6)
				ph_col_str(tb, AF_PRESENT)[r] = ph_trace_intern(
					t, present[pt], strlen(present[pt]));
			if (pr >= 0 && pr < 4)
				ph_col_str(tb, AF_PRED)[r] = ph_trace_intern(
					t, pred[pr], strlen(pred[pr]));
			if (sv >= 0 && sv < 4)
				ph_col_str(tb, AF_SEV)[r] = ph_trace_intern(
					t, sev[sv], strlen(sev[sv]));
			if (jank >= 0)
				ph_col_str(tb, AF_JANK)[r] =
					jank_str(t, (uint64_t)jank);
			if (ontime >= 0)
				ph_col_i32(tb, AF_ONTIME)[r] = (int32_t)ontime;
			if (gpu >= 0)
				ph_col_i32(tb, AF_GPU)[r] = (int32_t)gpu;
		}
		if (!pv->frame_cookie)
			pv->frame_cookie = ph_intmap_new();
		if (pv->frame_cookie)
			(void)ph_intmap_put(pv->frame_cookie, (uint64_t)cookie,
					    (uint32_t)r |
						    (actual ? 1u << 31 : 0));
	}
}

void ph_trace_frames_end(struct ph_trace *t, int64_t cookie, int64_t ts)
{
	struct ph_trace_priv *pv = t->priv;
	struct ph_table *tb;
	uint32_t v, r;

	if (!pv->frame_cookie ||
	    !ph_intmap_get(pv->frame_cookie, (uint64_t)cookie, &v) ||
	    v == UINT32_MAX - 1) {
		ph_trace_stat(t, "frame_timeline.end_without_start", 1);
		return;
	}
	tb = &t->tables[v >> 31 ? PH_T_AFRAME : PH_T_EFRAME];
	r = v & 0x7fffffff;
	if (r < tb->rows)
		ph_col_i64(tb, AF_DUR)[r] =
			ph_ts_span(ts, ph_col_i64(tb, AF_TS)[r]);
	ph_intmap_del(pv->frame_cookie, (uint64_t)cookie);
}
