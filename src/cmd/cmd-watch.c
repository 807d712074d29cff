/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole watch [--until-first] [--json] [--timeout SECONDS]
 *                [--severity error|warning|note] [--application-id ID]
 *
 * One line per finding occurrence on stdout, as events arrive, errors only
 * unless --severity widens it; diagnostics only on stderr: why it cannot
 * connect, each time the reason changes, and a stretch the host did not
 * observe (events missing by seq, a late attach) as "not seen: why".
 * Exit: 0 stopped by SIGINT/SIGTERM (or a timeout after something was
 * reported), 1 --until-first found one, 2 bad arguments or an internal
 * error, 3 timeout with nothing to report over a whole observation, 4
 * timeout with nothing to report but nothing (or not everything) observed.
 */
#include "ph_common.h"
#include "cmd.h"
#include "ph_clock.h"
#include "ph_log.h"
#include "host/env.h"
#include "host/findings.h"
#include "host/live.h"
#include "host/session.h"
#include "host/where.h"

#include <signal.h>
#include <unistd.h>

/* Episodes that go on (jank, hot recomposition) reprint at most this often. */
#define REPRINT_MS 10000

extern const struct ph_cmd ph_cmd_watch;
static volatile sig_atomic_t stopped;

static void on_signal(int sig)
{
	(void)sig;
	stopped = 1;
}

struct seen {
	char *key;
	int64_t count;
	int64_t printed_at;
	bool open; /* printed while still going on (a stall) */
};

struct watch {
	struct seen *v;
	size_t n, alloc;
	bool json;
	int min_sev;
	struct ph_where_index *ix;
	struct ph_watermark wm;
	bool wm_loaded;
	char session_dir[4200];
	char not_seen[400]; /* the coverage's reason last said, "" if none */
	bool covered;	    /* the last scan's coverage was complete */
};

static struct seen *find(struct watch *w, const char *key)
{
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->v[i].key, key))
			return &w->v[i];
	if (w->n == w->alloc && PH_GROW(w->v, w->alloc, w->n + 1, 32))
		return NULL;
	w->v[w->n] = (struct seen){ .key = strdup(key) };
	return w->v[w->n].key ? &w->v[w->n++] : NULL;
}

static void print(struct watch *w, struct ph_finding *f)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	char sh[512] = "";

	if (w->ix) {
		struct ph_buf j = PH_BUF_INIT(1 << 16);

		ph_where_resolve(w->ix, &f->hint, &j, sh, sizeof(sh));
		ph_buf_release(&j);
	}
	if (w->json) {
		struct ph_jw jw;

		ph_jw_init(&jw, &b);
		ph_finding_write(f, &jw);
		if (!ph_jw_finish(&jw))
			printf("%s\n", b.buf);
	} else {
		printf("%s %s t=%" PRId64 "..%" PRId64 "%s%s%s%s\n",
		       ph_severity_name(f->severity), f->title, f->last_from,
		       f->last_to, f->ndetail ? " " : "",
		       f->ndetail ? f->detail[0] : "", sh[0] ? " where=" : "",
		       sh);
	}
	fflush(stdout);
	ph_buf_release(&b);
}

/* Prints new occurrences; returns how many lines were printed. */
static int scan(struct watch *w, struct ph_live *lv)
{
	struct ph_analysis *a = ph_analyze_store(&lv->store, PH_WINDOW_ALL);
	int64_t now = ph_clock_uptime_ms();
	int printed = 0;

	if (!a)
		return 0;
	/* A stretch not observed is said once as it changes: silence on
	 * stdout is an all-clear only for what was seen. */
	w->covered = a->cov.complete;
	if (!a->cov.complete && a->cov.held &&
	    strcmp(w->not_seen, a->cov.reason)) {
		snprintf(w->not_seen, sizeof(w->not_seen), "%s", a->cov.reason);
		fprintf(stderr, "porthole watch: not seen: %s\n",
			a->cov.reason);
	}
	if (!w->wm_loaded && lv->session_open) {
		snprintf(w->session_dir, sizeof(w->session_dir), "%s",
			 lv->session.dir);
		ph_watermark_load(&w->wm, w->session_dir);
		w->wm_loaded = true;
	}
	for (size_t i = 0; i < a->nf; i++) {
		struct ph_finding *f = &a->f[i];
		struct seen *s;
		bool episode = !strcmp(f->id, "frames-dropped") ||
			       !strcmp(f->id, "recompose-hotspot");

		if (f->severity > w->min_sev || !(s = find(w, f->key)))
			continue;
		/* A stall printed while it went on is printed again as it
		 * ends, with its length: the same occurrence, not a new one. */
		if (f->count <= s->count && !(s->open && !f->open))
			continue;
		s->open = f->open;
		if (episode && s->count && now - s->printed_at < REPRINT_MS)
			continue;
		if (!s->count && f->severity == PH_SEV_ERROR &&
		    ph_watermark_reported(&w->wm, f->key)) {
			s->count = f->count; /* the MCP server already said it
					      */
			continue;
		}
		s->count = f->count;
		s->printed_at = now;
		print(w, f);
		printed++;
		if (f->severity == PH_SEV_ERROR && w->session_dir[0])
			ph_watermark_add_reported(w->session_dir, f->key);
	}
	ph_analysis_free(a);
	return printed;
}

/*
 * Says on stderr why the link is not connected, once per reason, and when
 * it connects: a watch that prints nothing must not look like a quiet app.
 */
static void say_link(struct ph_link *l, char *said, size_t size)
{
	char now[sizeof(l->error) + sizeof(l->target) + 200];

	pthread_mutex_lock(&l->mu);
	if (l->state == PH_LINK_CONNECTED)
		snprintf(now, sizeof(now), "connected to %s on %s",
			 l->ident.package, l->target);
	else if (l->error[0])
		snprintf(now, sizeof(now), "cannot connect: %s (still trying)",
			 l->error);
	else
		now[0] = '\0';
	pthread_mutex_unlock(&l->mu);
	if (now[0] && strcmp(now, said)) {
		fprintf(stderr, "porthole watch: %s\n", now);
		snprintf(said, size, "%s", now);
	}
}

struct watch_args {
	bool until_first, json;
	const char *timeout;  /* seconds, checked below */
	const char *severity; /* checked below */
	const char *app_id;
};

#define OFF(f) offsetof(struct watch_args, f)
static const struct ph_opt watch_opts[] = {
	{ .name = "until-first",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(until_first),
	  .help = "exit 1 at the first finding" },
	{ .name = "json",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(json),
	  .help = "one JSON object a line" },
	{ .name = "timeout",
	  .kind = PH_OPT_STR,
	  .offset = OFF(timeout),
	  .metavar = "SECONDS",
	  .help = "stop after this long (exit 3 or 4 when nothing was found)" },
	{ .name = "severity",
	  .kind = PH_OPT_STR,
	  .offset = OFF(severity),
	  .metavar = "error|warning|note",
	  .help = "the least severe finding shown (default error)" },
	{ .name = "application-id",
	  .kind = PH_OPT_STR,
	  .offset = OFF(app_id),
	  .metavar = "ID",
	  .help = "the app to watch (default $PORTHOLE_APPLICATION_ID)" },
	{ .kind = PH_OPT_END },
};

static int watch_exec(int argc, char **argv)
{
	struct watch w = { .min_sev = PH_SEV_ERROR };
	struct watch_args args = { 0 };
	struct ph_opt_args pa;
	char said[1000] = "";
	bool until_first;
	double timeout = -1;
	const char *app_id;
	struct ph_live lv;
	uint64_t version = 0;
	int64_t end, printed = 0;
	int status = ph_cmd_parse(&ph_cmd_watch, &args, argc, argv, &pa);

	if (status != PH_CMD_GO_ON)
		return status;
	status = 0;
	if (pa.npos)
		return ph_cmd_usage_error(&ph_cmd_watch,
					  "unexpected argument %s", pa.pos[0]);
	if (args.timeout && (timeout = strtod(args.timeout, NULL)) <= 0)
		return ph_cmd_usage_error(
			&ph_cmd_watch,
			"--timeout takes seconds, more than 0 "
			"(got '%s')",
			args.timeout);
	if (args.severity && (w.min_sev = ph_severity_parse(args.severity)) < 0)
		return ph_cmd_usage_error(&ph_cmd_watch,
					  "--severity takes one of error, "
					  "warning, note (got '%s')",
					  args.severity);
	until_first = args.until_first;
	w.json = args.json;
	app_id = args.app_id;
	if (ph_live_init(&lv))
		return 2;
	if (app_id)
		lv.link.app_id = app_id;
	ph_watermark_init(&w.wm);
	w.ix = ph_where_index_new(ph_env_project_root());
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (ph_live_start(&lv)) {
		status = 2;
		goto out;
	}
	end = timeout > 0 ? ph_clock_uptime_ms() + (int64_t)(timeout * 1000) :
			    INT64_MAX;
	while (!stopped) {
		uint64_t v2;
		bool refused;

		pthread_mutex_lock(&lv.store.lock);
		v2 = lv.store.version;
		pthread_mutex_unlock(&lv.store.lock);
		if (v2 != version) {
			version = v2;
			printed += scan(&w, &lv);
			if (until_first && printed) {
				status = 1;
				break;
			}
		}
		say_link(&lv.link, said, sizeof(said));
		pthread_mutex_lock(&lv.link.mu);
		refused = lv.link.state == PH_LINK_REFUSED;
		pthread_mutex_unlock(&lv.link.mu);
		if (refused) {
			fprintf(stderr, "porthole watch: %s\n", lv.link.error);
			status = 2;
			break;
		}
		if (ph_clock_uptime_ms() >= end) {
			/* Nothing found is 3 only over a whole observation:
			 * nothing received, or a part missing, is 4. */
			status = printed ? 0 : version && w.covered ? 3 : 4;
			if (status == 4 && !version)
				fprintf(stderr,
					"porthole watch: not seen: no event "
					"received from the app\n");
			break;
		}
		usleep(2000);
	}
out:
	ph_live_stop(&lv);
	ph_live_release(&lv);
	ph_where_index_free(w.ix);
	ph_watermark_release(&w.wm);
	for (size_t i = 0; i < w.n; i++)
		free(w.v[i].key);
	free(w.v);
	return status;
}

const struct ph_cmd ph_cmd_watch = {
	.name = "watch",
	.summary = "print findings as they happen, one line each",
	.opts = watch_opts,
	.about =
		"exit 0 stopped by a signal, 1 --until-first found one,\n"
		"2 bad arguments or internal error, 3 timeout, nothing found,\n"
		"4 timeout, nothing found but not everything observed",
	.exec = watch_exec,
};
