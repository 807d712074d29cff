/* SPDX-License-Identifier: Apache-2.0 */
/*
 * event.h: one event as the host holds it, and the wire's identity.
 *
 * An event is parsed once, into a struct ph_event whose data tree lives in
 * an arena the caller owns (the store's, or a scan's batch arena) and whose
 * strings are borrowed from the line it came from: the line must live as
 * long as the tree.  Everything downstream (findings, timeline, report)
 * reads events through the lenient accessors below, because the published
 * runtime sends numbers and booleans as strings (docs/protocol.md §1.4):
 * every accessor accepts the quirk and the plain form, and treats an absent
 * field and a JSON null alike.
 */
#ifndef PH_HOST_EVENT_H
#define PH_HOST_EVENT_H

#include "ph_common.h"
#include "ph_json.h"
#include "ph_wire.h"

struct ph_event {
	int64_t t;	   /* app uptime ms: when it happened */
	int64_t seq;	   /* per-process; -1 for host-made events */
	enum ph_kind kind; /* PH_KIND_UNKNOWN for kinds we do not know */
	uint32_t stream;   /* which process's seqs: ph_ingest.streams */
	const struct ph_json *data;  /* an object; never NULL */
	const struct ph_json *frame; /* the whole envelope, for re-encoding */
};

/* The largest |t| an event keeps (ingest clamps to it), and the largest
 * |value| ph_ev_int gives: 2^50 (ms: 35,000 years). */
#define PH_EV_T_MAX ((int64_t)1 << 50)

/* v within +-PH_EV_T_MAX: times, durations and counts then add and
 * subtract without overflow, whatever a hostile file says. */
static inline int64_t ph_ev_clamp(int64_t v)
{
	return v > PH_EV_T_MAX	? PH_EV_T_MAX :
	       v < -PH_EV_T_MAX ? -PH_EV_T_MAX :
				  v;
}

/* The session's identity, from the `hello` answer. */
struct ph_ident {
	bool have;	    /* a hello answer was seen */
	int protocol;	    /* hello.protocol */
	int64_t started_at; /* hello.startedAt: the session's origin */
	char package[128];  /* hello.packageName */
	char process[128];  /* hello.processName */
	char device[128];   /* hello.device, "Manufacturer Model" */
	char device_id[64]; /* hello.deviceId, or "unknown" */
	char version[64];   /* hello.versionName, or "" */
	int64_t pid;	    /* hello.pid, 0 when not sent */
};

/*
 * The device profile (device:profile), kept for the whole session so that
 * a window without the profile event still knows the refresh rate.
 */
struct ph_profile {
	bool have;	   /* a profile event was seen */
	double refresh_hz; /* 0 when unknown */
	int cores;	   /* 0 when unknown */
	char model[64];
	char os[32];
};

/* The frame budget in ms: from the profile, else 0 (unknown). */
static inline double ph_profile_budget_ms(const struct ph_profile *p)
{
	return p->refresh_hz > 0 ? 1000.0 / p->refresh_hz : 0;
}

/*
 * Lookups on ev->data.  Each returns false when the field is absent/null.
 *
 * The findings engine asks a few fields of every event it is fed, so the
 * lookups are what an analysis costs: each is an inline wrapper that hands
 * the key's length to the *n form (a literal's strlen folds away), and
 * the scan compares lengths and first bytes before it calls memcmp.  With
 * duplicate keys the last one wins, as in ph_json_get.
 */
const struct ph_json *ph_ev_getn(const struct ph_event *ev, const char *key,
				 size_t n);
bool ph_ev_intn(const struct ph_event *ev, const char *key, size_t n,
		int64_t *out);
bool ph_ev_numn(const struct ph_event *ev, const char *key, size_t n,
		double *out);
bool ph_ev_truen(const struct ph_event *ev, const char *key, size_t n);
bool ph_ev_strn(const struct ph_event *ev, const char *key, size_t n,
		const char **s, size_t *len);
bool ph_ev_streqn(const struct ph_event *ev, const char *key, size_t n,
		  const char *val);

static inline const struct ph_json *ph_ev_get(const struct ph_event *ev,
					      const char *key)
{
	return ph_ev_getn(ev, key, strlen(key));
}

static inline bool ph_ev_int(const struct ph_event *ev, const char *key,
			     int64_t *out)
{
	return ph_ev_intn(ev, key, strlen(key), out);
}

static inline bool ph_ev_num(const struct ph_event *ev, const char *key,
			     double *out)
{
	return ph_ev_numn(ev, key, strlen(key), out);
}

/* true, or the string "true"; false for anything else. */
static inline bool ph_ev_true(const struct ph_event *ev, const char *key)
{
	return ph_ev_truen(ev, key, strlen(key));
}

/* A string field as (s, n); numbers are not strings here. */
static inline bool ph_ev_str(const struct ph_event *ev, const char *key,
			     const char **s, size_t *n)
{
	return ph_ev_strn(ev, key, strlen(key), s, n);
}

static inline bool ph_ev_streq(const struct ph_event *ev, const char *key,
			       const char *val)
{
	return ph_ev_streqn(ev, key, strlen(key), val);
}

/* Copies a string field into buf (cut to fit); "" when absent. */
const char *ph_ev_strcpy(const struct ph_event *ev, const char *key, char *buf,
			 size_t size);
/*
 * The span an event covers on the app clock: blocked [t, t+durationMs],
 * http_end/db_end/work_end [t-elapsedMs, t], frame [t, t+totalMs], io
 * [t, the ms of issueMs + latencyMs], io_recording [t, t+durationMs],
 * others the instant t.
 */
void ph_ev_span(const struct ph_event *ev, int64_t *from, int64_t *to);
/*
 * An `io` event's issue time in ns on the app's clock: issueMs, which is
 * exact, when it lies in t's millisecond; else t (an older writer sent t
 * only).  The span above and the io view's join both use it; both check
 * first that t lies in [0, 2^40] ms.
 */
int64_t ph_ev_io_issue_ns(const struct ph_event *ev);
/* docs/protocol.md §3 db_end: any one of the three main-thread markers. */
bool ph_ev_on_main(const struct ph_event *ev);

#endif
