/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_proto_track.c: the Perfetto decoder's track events (the SDK's
 * slices, instants and counters): TrackDescriptor and the legacy
 * ThreadDescriptor make tracks, TrackEvent pushes events on them, and a
 * sequence's InternedData and TracePacketDefaults say what the events'
 * iids and missing track mean.  Field numbers are listed at the top of
 * trace_proto.c.
 */
#include "trace/trace_proto_int.h"

static int64_t track_of_uuid(struct ph_trace *t, uint64_t uuid)
{
	uint32_t v;

	if (ph_intmap_get(t->uuid_track, uuid, &v))
		return v;
	return -1;
}

void ph_proto_track_descriptor(struct pstate *ps, const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct ph_table *tr = &t->tables[PH_T_TRACK];
	struct pbf f, g;
	uint64_t uuid = 0, parent = 0;
	uint32_t name = 0;
	int64_t pid = -1, tid = -1, track, upid = PH_NULL_I64;
	uint32_t pname = 0, tname = 0;
	bool counter = false, has_proc = false, has_thread = false;

	FOR_FIELDS(p, n, f)
	{
		switch (f.id) {
		case 1: uuid = f.v; break;
		case 5: parent = f.v; break;
		case 2:
		case 10:
		case 13: name = str_of(t, &f); break;
		case 8: counter = true; break;
		case 3:
			if (f.wt != 2)
				break;
			has_proc = true;
			FOR_FIELDS(f.p, f.v, g)
			{
				if (g.id == 1)
					pid = (int64_t)g.v;
				else if (g.id == 6 || (g.id == 2 && !pname))
					pname = str_of(t, &g);
			}
			break;
		case 4:
			if (f.wt != 2)
				break;
			has_thread = true;
			FOR_FIELDS(f.p, f.v, g)
			{
				if (g.id == 1)
					pid = (int64_t)g.v;
				else if (g.id == 2)
					tid = (int64_t)g.v;
				else if (g.id == 5)
					tname = str_of(t, &g);
			}
			break;
		}
	}
	ph_trace_stat(t, "track_descriptor", 1);
	if (pid >= 0) {
		upid = ph_trace_upid(t, pid);
		ph_trace_process_set_name(t, upid, pname, false);
	}
	track = track_of_uuid(t, uuid);
	if (track >= 0) {
		if (name)
			ph_col_str(tr, TR_NAME)[track] = name;
		return;
	}
	if (has_thread && tid >= 0) {
		int64_t utid = ph_trace_utid(t, tid);

		if (pid >= 0)
			ph_trace_thread_set_pid(t, utid, pid);
		ph_trace_thread_set_name(t, utid, tname);
		track = ph_trace_track_new(t, PH_TK_THREAD, name, utid,
					   PH_NULL_I64, PH_NULL_I64);
	} else {
		int64_t pt = parent ? track_of_uuid(t, parent) : -1;

		if (pt >= 0 && upid == PH_NULL_I64)
			upid = ph_col_i64(tr, TR_UPID)[pt];
		track = ph_trace_track_new(t,
					   counter ? PH_TK_COUNTER :
					   has_proc || upid != PH_NULL_I64 ?
						     PH_TK_PROCESS :
						     PH_TK_GLOBAL,
					   name ? name : pname, PH_NULL_I64,
					   upid, PH_NULL_I64);
	}
	ph_col_i64(tr, TR_UUID)[track] = (int64_t)uuid;
	(void)ph_intmap_put(t->uuid_track, uuid, (uint32_t)track);
}

/* The legacy ThreadDescriptor packet: the sequence's default track. */
void ph_proto_thread_descriptor(struct pstate *ps, struct seq *sq,
				const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct pbf f;
	int64_t pid = -1, tid = -1, utid;
	uint32_t name = 0;

	FOR_FIELDS(p, n, f)
	{
		if (f.id == 1)
			pid = (int64_t)f.v;
		else if (f.id == 2)
			tid = (int64_t)f.v;
		else if (f.id == 5)
			name = str_of(t, &f);
	}
	if (tid < 0 || !sq)
		return;
	utid = ph_trace_utid(t, tid);
	if (pid >= 0)
		ph_trace_thread_set_pid(t, utid, pid);
	ph_trace_thread_set_name(t, utid, name);
	sq->thread_track = ph_trace_thread_track(t, utid);
}

static uint32_t interned(struct seq *sq, uint64_t iid, int is_name)
{
	uint32_t v;

	if (sq && ph_intmap_get(sq->interned, iid << 1 | (uint64_t)is_name, &v))
		return v;
	return 0;
}

void ph_proto_track_event(struct pstate *ps, struct seq *sq, int64_t ts,
			  const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct pbf f;
	uint64_t type = 0, uuid = 0;
	bool has_uuid = false, has_value = false;
	uint32_t name = 0, cat = 0;
	double value = 0;
	int64_t track;
	struct ph_tev *e;

	FOR_FIELDS(p, n, f)
	{
		switch (f.id) {
		case 9: type = f.v; break;
		case 11:
			uuid = f.v;
			has_uuid = true;
			break;
		case 10: name = interned(sq, f.v, 1); break;
		case 23: name = str_of(t, &f); break;
		case 3:
			if (!cat)
				cat = interned(sq, f.v, 0);
			break;
		case 22:
			if (!cat)
				cat = str_of(t, &f);
			break;
		case 30:
			value = (double)(int64_t)f.v;
			has_value = true;
			break;
		case 44:
			if (f.wt == 1) {
				memcpy(&value, &f.v, sizeof(value));
				has_value = true;
			}
			break;
		}
	}
	ps->stat[S_TRACK_EVENT]++;
	if (!has_uuid && sq && sq->has_default_track) {
		uuid = sq->default_track;
		has_uuid = true;
	}
	track = has_uuid ? track_of_uuid(t, uuid) : -1;
	if (track < 0 && sq && sq->thread_track >= 0 && !has_uuid)
		track = sq->thread_track;
	if ((track < 0 && (!has_uuid || type == 4)) || ts == PH_NULL_I64) {
		ph_trace_stat(t,
			      track < 0 ? "track_event_no_track" :
					  "track_event_no_timestamp",
			      1);
		return;
	}
	if (!(e = ph_trace_push(t)))
		return;
	e->ts = ts;
	e->a = (int32_t)track;
	e->s1 = name;
	e->s2 = cat;
	if (track < 0) {
		/* its descriptor may come later: resolved in ph_trace_finish */
		e->a = -1;
		e->v.d = (int64_t)uuid;
	}
	switch (type) {
	case 1: e->kind = PH_EV_TE_BEGIN; break;
	case 2: e->kind = PH_EV_TE_END; break;
	case 4:
		e->kind = PH_EV_TE_COUNTER;
		e->v.f = has_value ? value : 0;
		break;
	default: e->kind = PH_EV_TE_INSTANT; break;
	}
}

void ph_proto_interned_data(struct pstate *ps, struct seq *sq, const uint8_t *p,
			    size_t n)
{
	struct pbf f, g;
	bool prof = false;

	if (!sq || !sq->interned)
		return;
	FOR_FIELDS(p, n, f)
	{
		uint64_t iid = 0;
		uint32_t s = 0;

		if (f.id == 5 || f.id == 6 || f.id == 7 || f.id == 17 ||
		    f.id == 19)
			prof = true;
		if ((f.id != 1 && f.id != 2) || f.wt != 2)
			continue;
		FOR_FIELDS(f.p, f.v, g)
		{
			if (g.id == 1)
				iid = g.v;
			else if (g.id == 2)
				s = str_of(ps->t, &g);
		}
		(void)ph_intmap_put(sq->interned, iid << 1 | (f.id == 2), s);
	}
	if (prof)
		ph_proto_interned_profile(ps, sq, p, n);
}

void ph_proto_packet_defaults(struct seq *sq, const uint8_t *p, size_t n)
{
	struct pbf f, g;

	if (!sq)
		return;
	FOR_FIELDS(p, n, f)
	{
		if (f.id == 58)
			sq->default_clock = (uint32_t)f.v;
		else if (f.key == KEY(11, 2)) {
			FOR_FIELDS(f.p, f.v, g)
			{
				if (g.id == 11) {
					sq->default_track = g.v;
					sq->has_default_track = true;
				}
			}
		}
	}
}
