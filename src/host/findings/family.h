/* SPDX-License-Identifier: Apache-2.0 */
/*
 * family.h: what a finding family implements, and the helpers it uses.
 *
 * A family sees every event of the window once (event), of the kinds it
 * names in `kinds` (the engine hands each event only to the families that
 * want its kind, so the hour of recompositions a live store holds costs a
 * frames family nothing), keeping what it needs in its own state
 * (allocated zeroed by the engine, strings copied into ctx->keep, which
 * lives as long as the engine), and turns that state into findings on
 * demand (emit).  emit must not change the state: a live watcher, and the
 * live store's standing engine (findings.h), ask for findings again and
 * again while feeding more events, and must get what a new engine fed the
 * same events would give.
 *
 * Families run in table order (findings.c); a family listed later may read
 * the findings earlier ones emitted (startup cross-references db and stall
 * findings inside its launch).
 */
#ifndef PH_FINDINGS_FAMILY_H
#define PH_FINDINGS_FAMILY_H

#include "ph_common.h"
#include "ph_arena.h"
#include "ph_buf.h"
#include "ph_json.h"
#include "../findings.h"

#include <math.h>

struct ph_fctx {
	struct ph_arena *keep;		  /* engine-lifetime strings */
	const struct ph_profile *profile; /* the session's, possibly empty */
	const struct ph_ident *ident;
	struct ph_window w;
	int64_t from, to; /* the span of the event being fed (ph_ev_span) */
	struct ph_analysis *a; /* set during emit only */
	struct ph_buf scratch; /* for evidence and text */
	struct ph_jw jw;
};

/* Frames a frame of total_ms missed at budget_ms a frame (budget > 0),
 * at most PH_EV_T_MAX: a hostile budget (1e-300) must not overflow. */
static inline int64_t ph_missed_frames(int64_t total_ms, double budget_ms)
{
	double m = ceil((double)total_ms / budget_ms - 1e-9) - 1;

	return m < (double)PH_EV_T_MAX ? (int64_t)m : PH_EV_T_MAX;
}

/* The bit of kind K (RECOMPOSE, DB_END...) in a family's `kinds`. */
#define PH_KIND_BIT(K) ((uint64_t)1 << PH_KIND_##K)

struct ph_family {
	const char *name;
	const char *ids[5]; /* the finding ids it can emit, NULL-ended */
	uint64_t kinds;	    /* PH_KIND_BITs event() is called for; 0: all */
	size_t state_size;
	void (*event)(struct ph_fctx *c, void *st, const struct ph_event *ev);
	void (*emit)(struct ph_fctx *c, void *st);
	void (*release)(void *st); /* may be NULL */
	/*
	 * Whether the family looked for id in what it was fed (NULL: it
	 * always did).  An id it did not emit is listed quiet only then, so
	 * quiet keeps meaning "looked": the io family's input exists only
	 * when a block I/O recording was attached to the session, and a
	 * session without one says nothing about block I/O.  Like emit, it
	 * must not change the state.
	 */
	bool (*judged)(const void *st, const char *id);
};

/* A copy of s[0..n) in the engine arena (NUL-terminated); "" on failure. */
const char *ph_keep(struct ph_fctx *c, const char *s, size_t n);
/* A copy of a string field of ev, or NULL when absent. */
const char *ph_keep_field(struct ph_fctx *c, const struct ph_event *ev,
			  const char *key);

/* A new finding in the analysis; count 1, window [from, to]. */
struct ph_finding *ph_fnd_new(struct ph_fctx *c, const char *id, int sev,
			      int conf, int64_t from, int64_t to);
void ph_fnd_title(struct ph_fctx *c, struct ph_finding *f, const char *fmt, ...)
	PH_PRINTF(3, 4);
void ph_fnd_detail(struct ph_fctx *c, struct ph_finding *f, const char *fmt,
		   ...) PH_PRINTF(3, 4);
void ph_fnd_key(struct ph_fctx *c, struct ph_finding *f, const char *fmt, ...)
	PH_PRINTF(3, 4);
/* Evidence: begin returns a writer inside a fresh object; end stores it. */
struct ph_jw *ph_fnd_evidence_begin(struct ph_fctx *c);
void ph_fnd_evidence_end(struct ph_fctx *c, struct ph_finding *f);
/* Copies a string into the analysis arena. */
const char *ph_fnd_str(struct ph_fctx *c, const char *s);

/*
 * A small string-keyed map for grouping, in insertion order.  Values are
 * zeroed blocks of vsize bytes in the engine arena.
 */
struct ph_smap {
	const char **keys; /* insertion order */
	void **vals;
	uint32_t *hash; /* of each key, so a probe compares bytes once */
	uint32_t *len;	/* of each key */
	size_t n, alloc;
	uint32_t *slots; /* open addressing: index + 1, 0 empty */
	size_t nslots;
};
void *ph_smap_get(struct ph_fctx *c, struct ph_smap *m, const char *k, size_t n,
		  size_t vsize, bool *created);
void ph_smap_release(struct ph_smap *m);

/*
 * The app's top frame of a blocked/exit stack, split: "fn(file:line)",
 * "fn(file)" (line 0: not known), "fn", or "module+0x1a2b" (fn only).
 */
void ph_parse_frame(struct ph_fctx *c, const char *line, size_t n,
		    struct ph_where_hint *h);
/* "http://h:p/v1/checkout?x=*" -> "/v1/checkout" (the path only). */
const char *ph_url_path(struct ph_fctx *c, const char *url);

extern const struct ph_family ph_family_db_main;
extern const struct ph_family ph_family_db_error;
extern const struct ph_family ph_family_stall;
extern const struct ph_family ph_family_http_failed;
extern const struct ph_family ph_family_http_slow;
extern const struct ph_family ph_family_frames;
extern const struct ph_family ph_family_recompose;
extern const struct ph_family ph_family_tap;
extern const struct ph_family ph_family_work;
extern const struct ph_family ph_family_exit;
extern const struct ph_family ph_family_thermal;
extern const struct ph_family ph_family_memory;
extern const struct ph_family ph_family_strict;
extern const struct ph_family ph_family_gc;
extern const struct ph_family ph_family_leak;
extern const struct ph_family ph_family_io;
extern const struct ph_family ph_family_startup;

#endif
