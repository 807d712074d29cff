/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_proto_perf.c: the Perfetto decoder's CPU profiles: traced_perf's
 * PerfSample packets and the interned functions, mappings, frames and
 * callstacks they name, resolved into the perf_sample table's leaf, app
 * frame and stack text (once per distinct stack).
 */
#include "trace/trace_proto_int.h"

/*
 * Profiling's interned data (profile_common.proto) shares the sequence's
 * map under its own keys: function_names 5 and mapping_paths 17
 * {iid 1, str 2} to a string, mappings 19 {iid 1, path_string_ids 7} to
 * the joined path, frames 6 {iid 1, function_name_id 2, mapping_id 3} to
 * an index in ps->frames, callstacks 7 {iid 1, frame_ids 2, root first}
 * to the index of its run in ps->stk (a run: its length, then frames).
 */
enum { K_FN = 1, K_MPATH, K_MAP, K_FRAME, K_STACK };
/* A callstack's run in ps->stk: length, then its leaf, app frame and stack
 * text once the first sample resolved them (0: not yet), then frames. */
#define STK_HEAD 4
#define PROF_KEY(k, iid) \
	((1ull << 62) | (uint64_t)(k) << 56 | ((iid) & ((1ull << 56) - 1)))

static uint32_t prof_get(struct seq *sq, int k, uint64_t iid)
{
	uint32_t v;

	return ph_intmap_get(sq->interned, PROF_KEY(k, iid), &v) ? v : 0;
}

/* Each value of a repeated uint64 field, packed or not, through fn. */
#define FOR_REPEATED(f, v, body)                                        \
	do {                                                            \
		if ((f).wt == 0) {                                      \
			uint64_t v = (f).v;                             \
			body;                                           \
		} else if ((f).wt == 2) {                               \
			const uint8_t *q_ = (f).p, *e_ = (f).p + (f).v; \
			uint64_t v;                                     \
			while (q_ < e_ && varint_wide(&q_, e_, &v)) {   \
				body;                                   \
			}                                               \
		}                                                       \
	} while (0)

static struct pframe frame_of(struct pstate *ps, uint32_t name, uint32_t path);

void ph_proto_interned_profile(struct pstate *ps, struct seq *sq,
			       const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct pbf f, g;

	/* strings, then mappings, then frames, then callstacks: each may
	 * name the one before in the same message */
	for (int pass = 0; pass < 4; pass++) {
		FOR_FIELDS(p, n, f)
		{
			uint64_t iid = 0, a = 0, b = 0;
			uint32_t str = 0;
			char path[1024];
			size_t plen = 0, start = ps->nstk;

			if (f.wt != 2 ||
			    (pass == 0 && f.id != 5 && f.id != 17) ||
			    (pass == 1 && f.id != 19) ||
			    (pass == 2 && f.id != 6) ||
			    (pass == 3 && f.id != 7))
				continue;
			if (pass == 3 && PH_GROW(ps->stk, ps->capstk,
						 ps->nstk + STK_HEAD, 64))
				return;
			/* its length, then leaf, app, stack: unresolved */
			for (int k = 0; pass == 3 && k < STK_HEAD; k++)
				ps->stk[ps->nstk++] = 0;
			FOR_FIELDS(f.p, f.v, g)
			{
				if (g.id == 1) {
					iid = g.v;
				} else if (pass == 0 && g.id == 2) {
					str = str_of(t, &g);
				} else if (pass == 1 && g.id == 7) {
					FOR_REPEATED(g, v, {
						const char *c = ph_trace_str(
							t, prof_get(sq, K_MPATH,
								    v));
						int k = snprintf(
							path + plen,
							sizeof(path) - plen,
							"/%s", c ? c : "?");

						if (k > 0 &&
						    plen + (size_t)k <
							    sizeof(path))
							plen += (size_t)k;
					});
				} else if (pass == 2 && g.id == 2) {
					a = g.v;
				} else if (pass == 2 && g.id == 3) {
					b = g.v;
				} else if (pass == 3 && g.id == 2) {
					FOR_REPEATED(g, v, {
						if (PH_GROW(ps->stk, ps->capstk,
							    ps->nstk + 1, 64))
							return;
						ps->stk[ps->nstk++] = prof_get(
							sq, K_FRAME, v);
					});
				}
			}
			if (!iid)
				continue;
			if (pass == 0) {
				(void)ph_intmap_put(
					sq->interned,
					PROF_KEY(f.id == 5 ? K_FN : K_MPATH,
						 iid),
					str);
			} else if (pass == 1) {
				(void)ph_intmap_put(
					sq->interned, PROF_KEY(K_MAP, iid),
					ph_trace_intern(t, path, plen));
			} else if (pass == 2) {
				if (PH_GROW(ps->frames, ps->capframes,
					    ps->nframes + 2, 64))
					return;
				uint32_t fn = prof_get(sq, K_FN, a),
					 mp = prof_get(sq, K_MAP, b), idx;

				if (!ps->nframes) /* index 0: unknown */
					ps->frames[ps->nframes++] =
						(struct pframe){ 0 };
				/* a frame re-interned is the one seen */
				if (!ps->frame_ids)
					ps->frame_ids = ph_intmap_new();
				if (!ps->frame_ids ||
				    !ph_intmap_get(ps->frame_ids,
						   (uint64_t)fn << 32 | mp,
						   &idx)) {
					idx = (uint32_t)ps->nframes;
					ps->frames[ps->nframes++] =
						frame_of(ps, fn, mp);
					if (ps->frame_ids)
						(void)ph_intmap_put(
							ps->frame_ids,
							(uint64_t)fn << 32 | mp,
							idx);
				}
				(void)ph_intmap_put(sq->interned,
						    PROF_KEY(K_FRAME, iid),
						    idx);
			} else {
				ps->stk[start] =
					(uint32_t)(ps->nstk - start - STK_HEAD);
				/* index + 1: 0 is "unknown" */
				(void)ph_intmap_put(sq->interned,
						    PROF_KEY(K_STACK, iid),
						    (uint32_t)start + 1);
			}
		}
	}
}

/*
 * "Class.method" of a frame's function name, as a person reads a stack:
 * ART's "void com.example.GzipSink.write(byte[])" reads GzipSink.write;
 * a native name is kept as it is (up to its arguments).
 */
static uint32_t short_name(struct ph_trace *t, const char *s)
{
	const char *end, *sp, *dot1 = NULL, *dot2 = NULL;

	if (!s || !*s)
		return ph_trace_intern(t, "?", 1);
	end = strchr(s, '(');
	if (!end || end == s)
		end = s + strlen(s);
	for (sp = end; sp > s && sp[-1] != ' '; sp--)
		;
	for (const char *c = sp; c < end; c++)
		if (*c == '.') {
			dot2 = dot1;
			dot1 = c;
		}
	if (dot2 && !memchr(sp, ':', (size_t)(end - sp)))
		sp = dot2 + 1;
	return ph_trace_intern(t, sp, (size_t)(end - sp));
}

/*
 * Whether a frame is the app's own code: mapped from the app's install
 * (/data/...: its APK, oat and .so files), or Java code (a dotted name)
 * compiled from an APK outside the boot class path (/system/framework,
 * /apex: the platform's), or JIT-compiled outside the platform's and
 * common libraries' packages.
 */
static bool frame_is_app(const char *name, const char *path)
{
	static const char *const platform[] = {
		"java.",
		"javax.",
		"android.",
		"androidx.",
		"com.android.",
		"dalvik.",
		"libcore.",
		"sun.",
		"kotlin.",
		"kotlinx.",
		"com.google.android.",
	};
	static const char *const dex[] = { ".oat", ".odex", ".vdex", ".apk",
					   ".dex" };
	size_t pl;

	if (!path)
		return false;
	if (!strncmp(path, "/data/", 6))
		return true;
	if (!name || !strchr(name, '.') || strchr(name, ' '))
		return false;
	if (strstr(path, "jit-cache")) {
		for (size_t i = 0; i < PH_ARRAY_SIZE(platform); i++)
			if (!strncmp(name, platform[i], strlen(platform[i])))
				return false;
		return true;
	}
	if (!strncmp(path, "/system/framework/", 18) ||
	    !strncmp(path, "/apex/", 6))
		return false;
	pl = strlen(path);
	for (size_t i = 0; i < PH_ARRAY_SIZE(dex); i++)
		if (pl > strlen(dex[i]) &&
		    !strcmp(path + pl - strlen(dex[i]), dex[i]))
			return true;
	return false;
}

/* The kernel's frames (traced_perf's mapping path for them). */
static bool frame_is_kernel(const char *path)
{
	return path &&
	       (!strcmp(path, "/kernel") || strstr(path, "kernel.kallsyms") ||
		!strncmp(path, "/[kernel", 8));
}

/* A frame with what a stack needs of it worked out once. */
static struct pframe frame_of(struct pstate *ps, uint32_t name, uint32_t path)
{
	struct ph_trace *t = ps->t;
	const char *n = ph_trace_str(t, name), *pa = ph_trace_str(t, path);
	struct pframe fr = { name, path, 0, 0, 0 };

	if (!ps->shorts)
		ps->shorts = ph_intmap_new();
	if (!ps->shorts || !ph_intmap_get(ps->shorts, name, &fr.sh)) {
		fr.sh = short_name(t, n);
		if (ps->shorts)
			(void)ph_intmap_put(ps->shorts, name, fr.sh);
	}
	fr.kernel = frame_is_kernel(pa);
	/* an unsymbolized frame or an ART trampoline names nothing */
	fr.app = n && *n && strncmp(n, "art_", 4) && frame_is_app(n, pa);
	return fr;
}

/*
 * PerfSample (66): cpu 1, pid 2, tid 3, callstack_iid 4, at the packet's
 * timestamp.  A row of perf_sample per sample with a callstack: its leaf
 * frame outside the kernel (the syscall path under it is how it waited,
 * not what it ran; the kernel's own leaf when the whole stack is the
 * kernel's), the leaf-most frame of the app's own code (NULL: none), and the
 * stack, root first, as "a;b;c" (short names, at most its 64 leaf-most
 * frames).
 */
/* A callstack's leaf, app frame and stack text into its run's head. */
static void resolve_stack(struct pstate *ps, uint32_t at, uint32_t k0,
			  uint32_t len)
{
	struct ph_trace *t = ps->t;
	uint32_t leaf = 0, user = 0, app = 0;
	char stack[4096];
	size_t sl = 0;

	for (uint32_t k = k0; k < len; k++) {
		uint32_t fi = ps->stk[at + STK_HEAD + k];
		const struct pframe *fr =
			&ps->frames[fi < ps->nframes ? fi : 0];
		const char *sh = ph_trace_str(t, fr->sh);
		size_t n = sh ? strlen(sh) : 0;

		if (sl + n + 1 < sizeof(stack)) {
			if (sl)
				stack[sl++] = ';';
			memcpy(stack + sl, sh, n);
			sl += n;
		}
		leaf = fr->sh;
		/* the syscall path under a user frame is not what ran */
		if (!fr->kernel)
			user = fr->sh;
		if (fr->app)
			app = fr->sh;
	}
	ps->stk[at + 1] = user ? user : leaf;
	ps->stk[at + 2] = app;
	ps->stk[at + 3] = ph_trace_intern(t, stack, sl);
}

void ph_proto_perf_sample(struct pstate *ps, struct seq *sq, int64_t tts,
			  const uint8_t *p, size_t n)
{
	struct ph_trace *t = ps->t;
	struct ph_table *tb = &t->tables[PH_T_SAMPLE];
	struct pbf f;
	uint64_t cpu = 0, pid = 0, tid = 0, cs = 0;
	uint32_t at, len;
	int64_t r, utid;

	ps->stat[S_PERF_SAMPLE]++;
	FOR_FIELDS(p, n, f)
	{
		switch (f.key) {
		case KEY(1, 0): cpu = f.v; break;
		case KEY(2, 0): pid = f.v; break;
		case KEY(3, 0): tid = f.v; break;
		case KEY(4, 0): cs = f.v; break;
		}
	}
	if (!sq || !cs || tts == PH_NULL_I64 ||
	    !(at = prof_get(sq, K_STACK, cs)))
		return;
	at--;
	len = ps->stk[at];
	if (!len || !ps->nframes)
		return;
	/* resolved once per callstack, and per content across callstacks
	 * re-interned with the same frames */
	if (!ps->stk[at + 3]) {
		uint32_t k0 = len > 64 ? len - 64 : 0, got;
		uint64_t h = 1469598103934665603ull;

		for (uint32_t k = k0; k < len; k++) {
			uint32_t fi = ps->stk[at + STK_HEAD + k];
			const struct pframe *fr =
				&ps->frames[fi < ps->nframes ? fi : 0];

			h = (h ^ ((uint64_t)fr->sh << 2 | fr->kernel << 1 |
				  fr->app)) *
			    1099511628211ull;
		}
		if (!ps->stack_ids)
			ps->stack_ids = ph_intmap_new();
		if (ps->stack_ids && ph_intmap_get(ps->stack_ids, h, &got)) {
			memcpy(&ps->stk[at + 1], ps->resolved[got],
			       sizeof(ps->resolved[got]));
		} else {
			resolve_stack(ps, at, k0, len);
			if (ps->stack_ids &&
			    !PH_GROW(ps->resolved, ps->capresolved,
				     ps->nresolved + 1, 64)) {
				memcpy(ps->resolved[ps->nresolved],
				       &ps->stk[at + 1],
				       sizeof(ps->resolved[0]));
				(void)ph_intmap_put(ps->stack_ids, h,
						    (uint32_t)ps->nresolved++);
			}
		}
	}
	r = ph_table_add(tb);
	if (r < 0)
		return;
	utid = ph_trace_utid(t, (int64_t)tid);
	if (pid)
		ph_trace_thread_set_pid(t, utid, (int64_t)pid);
	ph_col_i64(tb, PS_TS)[r] = tts;
	ph_col_i64(tb, PS_UTID)[r] = utid;
	ph_col_i32(tb, PS_CPU)[r] = (int32_t)cpu;
	ph_col_str(tb, PS_LEAF)[r] = ps->stk[at + 1];
	ph_col_str(tb, PS_APP)[r] = ps->stk[at + 2];
	ph_col_str(tb, PS_STACK)[r] = ps->stk[at + 3];
}
