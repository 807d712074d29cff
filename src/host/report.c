/* SPDX-License-Identifier: Apache-2.0 */
/* report.c: text, JSON and HTML renderings of a capture (see report.h). */
#include "ph_common.h"
#include "report.h"
#include "ph_error.h"
#include "event.h"

#include <math.h>

static const struct ph_json *get(const struct ph_json *o, const char *path)
{
	char key[64];

	/* "a.b": nested lookup, for the few fixed paths read here. */
	while (o && *path) {
		size_t n = strcspn(path, ".");

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		o = ph_json_get(o, key);
		path += n + (path[n] == '.');
	}
	return o;
}

static int64_t num(const struct ph_json *o, const char *path, int64_t def)
{
	int64_t v;

	return ph_json_as_int(get(o, path), &v) ? ph_ev_clamp(v) : def;
}

/* A metric: names hold dots, so no path lookup. */
static int64_t mnum(const struct ph_json *m, const char *name)
{
	int64_t v;

	return ph_json_as_int(ph_json_get(m, name), &v) ? ph_ev_clamp(v) : 0;
}

static double dnum(const struct ph_json *o, const char *path, double def)
{
	double v;

	return ph_json_as_double(get(o, path), &v) ? v : def;
}

/* A string value as "%.*s" arguments. */
#define S(v)                                                 \
	(int)(ph_json_is((v), PH_JSON_STRING) ? (v)->n : 0), \
		(ph_json_is((v), PH_JSON_STRING) ? (v)->u.s : "")

static int add(struct ph_buf *b, const char *fmt, ...) PH_PRINTF(2, 3);

static int add(struct ph_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = ph_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

static int header(const struct ph_json *cap, struct ph_buf *b)
{
	double hz = dnum(cap, "device.refreshHz", 0);
	int64_t cores = num(cap, "device.cores", 0);
	const struct ph_json *ver = get(cap, "app.versionName");
	char rate[64];

	if (hz > 0 && cores > 0)
		snprintf(rate, sizeof(rate), "%g Hz, %" PRId64 " cores", hz,
			 cores);
	else if (hz > 0)
		snprintf(rate, sizeof(rate), "%g Hz", hz);
	else
		snprintf(rate, sizeof(rate), "refresh unknown");
	return add(b, "%.*s · %.1f s · %.*s (%s) · %.*s%s%.*s\n",
		   S(get(cap, "scenario")),
		   (double)num(cap, "window.durationMs", 0) / 1000.0,
		   S(get(cap, "app.device")), rate,
		   S(get(cap, "app.packageName")),
		   ph_json_is(ver, PH_JSON_STRING) ? " " : "", S(ver));
}

static int footer(const struct ph_json *cap, struct ph_buf *b)
{
	const struct ph_json *m = get(cap, "metrics");
	double hz = dnum(cap, "device.refreshHz", 0);
	int64_t open = mnum(m, "http.open");
	int rc;

	if (hz > 0)
		rc = add(b,
			 "frame budget %.1f ms (%g Hz): %" PRId64
			 " late frames, %" PRId64 " refreshes missed",
			 1000.0 / hz, hz, mnum(m, "frames.janky"),
			 mnum(m, "frames.missedRefreshes"));
	else
		rc = add(b,
			 "frame budget unknown (no device profile): %" PRId64
			 " late frames",
			 mnum(m, "frames.janky"));
	rc = rc ? rc :
		  add(b, " · recompositions %" PRId64 " · calls %" PRId64,
		      mnum(m, "recompositions"), mnum(m, "http.calls"));
	if (!rc && open > 0)
		rc = add(b, " (%" PRId64 " still open)", open);
	return rc ? rc :
		    add(b, " · queries %" PRId64 "\n", mnum(m, "db.queries"));
}

/* The startup lines a report shows; the capture keeps the rest. */
#define STARTUP_LINES 4

/*
 * One line per launch: "startup: cold, first frame 412 ms, fully drawn
 * 1512 ms", each time from the launch's origin.  A time the app did not
 * report says so rather than leaving the launch looking complete.
 */
static int startup_lines(const struct ph_json *cap, struct ph_buf *b)
{
	const struct ph_json *ls = ph_json_get(cap, "startups");
	int rc = 0;

	if (!ph_json_is(ls, PH_JSON_ARRAY))
		return 0;
	for (size_t i = 0; !rc && i < ls->n && i < STARTUP_LINES; i++) {
		const struct ph_json *l = &ls->u.items[i];
		int64_t first = num(l, "firstFrameMs", -1);
		int64_t full = num(l, "fullyDrawnMs", -1);

		rc = add(b, "startup: %.*s, ",
			 S(ph_json_get(l, "classification")));
		if (!rc && first >= 0)
			rc = add(b, "first frame %" PRId64 " ms, ", first);
		else if (!rc)
			rc = add(b, "first frame not seen, ");
		if (!rc && full >= 0)
			rc = add(b, "fully drawn %" PRId64 " ms\n", full);
		else if (!rc)
			rc = add(b, "fully drawn not reported\n");
	}
	if (!rc && ls->n > STARTUP_LINES)
		rc = add(b, "startup: %zu more launches\n",
			 (size_t)(ls->n - STARTUP_LINES));
	return rc;
}

/*
 * Block I/O joined by capture --iotrace, one line; nothing without it.
 */
static int io_line(const struct ph_json *cap, struct ph_buf *b)
{
	const struct ph_json *io = get(cap, "io");
	int64_t lost = num(io, "recording.totalLost", -1);
	int rc;

	if (!ph_json_is(io, PH_JSON_OBJECT))
		return 0;
	rc = add(b,
		 "block I/O: %" PRId64 " requests, %" PRId64
		 " by the app (%" PRId64 " on its main thread), %" PRId64
		 " by %" PRId64 " other processes; clock %.*s; ",
		 num(io, "requests.total", 0), num(io, "requests.app", 0),
		 num(io, "requests.mainThread", 0),
		 num(io, "requests.others", 0),
		 num(io, "requests.otherProcesses", 0),
		 S(get(io, "clock.alignment")));
	if (!rc && lost >= 0)
		rc = add(b, "%" PRId64 " events lost\n", lost);
	else if (!rc)
		rc = add(b, "losses unknown\n");
	return rc;
}

/* "[trace] ", "[iotrace] ": a finding from another engine, tagged by its
 * source; nothing for the app's own. */
static int source_tag(const struct ph_json *f, struct ph_buf *b)
{
	const struct ph_json *src = ph_json_get(f, "source");

	if (!ph_json_is(src, PH_JSON_STRING) || !src->n ||
	    ph_json_streq(src, "porthole"))
		return 0;
	return add(b, "[%.*s] ", S(src));
}

/* A capture whose host never reached the app: it observed nothing, so
 * "no findings" would be a false all-clear. */
static bool never_connected(const struct ph_json *cap)
{
	return ph_json_is(ph_json_get(cap, "connected"), PH_JSON_FALSE);
}

static int finding_text(const struct ph_json *f, struct ph_buf *b)
{
	const struct ph_json *det = ph_json_get(f, "detail");
	const struct ph_json *where = ph_json_get(f, "where");
	int rc;

	rc = add(b, "%-8.*s ", S(ph_json_get(f, "severity")));
	rc = rc ? rc : source_tag(f, b);
	rc = rc ? rc : add(b, "%.*s", S(ph_json_get(f, "title")));
	if (!rc && ph_json_is(ph_json_get(f, "status"), PH_JSON_STRING))
		rc = add(b, " [%.*s]", S(ph_json_get(f, "status")));
	rc = rc ? rc : add(b, "\n");
	for (size_t i = 0;
	     !rc && ph_json_is(det, PH_JSON_ARRAY) && i < det->n && i < 2; i++)
		rc = add(b, "         %.*s\n", S(&det->u.items[i]));
	if (!rc && ph_json_streq(ph_json_get(where, "status"), "resolved")) {
		int64_t line = num(where, "line", 0);

		rc = add(b, "         where: %.*s",
			 S(ph_json_get(where, "path")));
		if (!rc && line > 0)
			rc = add(b, ":%" PRId64, line);
		rc = rc ? rc : add(b, "\n");
	}
	return rc;
}

/*
 * Whether the capture observed its whole window: its coverage says so
 * (complete), or it predates coverage (absent: its quiet list stands).
 */
static bool covered(const struct ph_json *cap)
{
	const struct ph_json *c = get(cap, "coverage.complete");

	return !c || c->type != PH_JSON_FALSE;
}

/* "coverage: ..." — what the answer rests on, before any finding. */
static int coverage_line(const struct ph_json *cap, struct ph_buf *b)
{
	const struct ph_json *held = get(cap, "coverage.held");

	if (!get(cap, "coverage"))
		return 0;
	if (!covered(cap))
		return add(b, "coverage: INCOMPLETE: %.*s\n",
			   S(get(cap, "coverage.reason")));
	return add(b,
		   "coverage: complete (events t=%" PRId64 "..%" PRId64
		   ", no seq missing)\n",
		   num(held, "from", 0), num(held, "to", 0));
}

/* "label: a, b, c" for a list of ids; nothing when empty. */
static int id_list(struct ph_buf *b, const char *label, const struct ph_json *q)
{
	int rc;

	if (!ph_json_is(q, PH_JSON_ARRAY) || !q->n)
		return 0;
	rc = add(b, "\n%s: ", label);
	for (size_t i = 0; !rc && i < q->n; i++)
		rc = add(b, "%s%.*s", i ? ", " : "", S(&q->u.items[i]));
	return rc ? rc : add(b, "\n");
}

int ph_report_text(const struct ph_json *cap, struct ph_buf *b)
{
	const struct ph_json *fs = ph_json_get(cap, "findings");
	const struct ph_json *counts = ph_json_get(cap, "counts");
	const struct ph_json *notes = ph_json_get(cap, "notes");
	int rc = header(cap, b);

	rc = rc ? rc : coverage_line(cap, b);
	rc = rc ? rc : add(b, "\n");
	if (!rc && never_connected(cap))
		rc = add(b, "never connected: nothing observed\n");
	else if (!rc && (!ph_json_is(fs, PH_JSON_ARRAY) || !fs->n))
		rc = add(b, covered(cap) ?
				    "no findings\n" :
				    "no findings in what was observed\n");
	for (size_t i = 0; !rc && ph_json_is(fs, PH_JSON_ARRAY) && i < fs->n;
	     i++)
		rc = finding_text(&fs->u.items[i], b);
	rc = rc ? rc : id_list(b, "quiet", ph_json_get(cap, "quiet"));
	rc = rc ? rc :
		  id_list(b, "not seen (see coverage)",
			  ph_json_get(cap, "notSeen"));
	rc = rc ? rc : add(b, "\n");
	rc = rc ? rc : footer(cap, b);
	rc = rc ? rc : startup_lines(cap, b);
	rc = rc ? rc : io_line(cap, b);
	if (!rc && ph_json_is(counts, PH_JSON_OBJECT) && counts->n) {
		rc = add(b, "events:");
		for (size_t i = 0; !rc && i < counts->n; i++) {
			int64_t n = 0;

			ph_json_as_int(&counts->u.members[i].value, &n);
			rc = add(b, "%s %.*s %" PRId64, i ? " ·" : "",
				 S(&counts->u.members[i].key), n);
		}
		rc = rc ? rc : add(b, "\n");
	}
	if (!rc && num(cap, "clippedMs", 0) > 0)
		rc = add(b,
			 "note: %" PRId64 " ms of the window came before the "
			 "recording\n",
			 num(cap, "clippedMs", 0));
	for (size_t i = 0;
	     !rc && ph_json_is(notes, PH_JSON_ARRAY) && i < notes->n; i++)
		rc = add(b, "note: %.*s\n", S(&notes->u.items[i]));
	return rc;
}

int ph_report_json(const struct ph_json *cap, struct ph_buf *b)
{
	struct ph_jw jw;
	const struct ph_json *m = get(cap, "metrics");
	double hz = dnum(cap, "device.refreshHz", 0);
	static const char *const copy[] = {
		"connected", "coverage",     "findings", "quiet",
		"notSeen",   "alsoInWindow", "notes",	 "counts",
		"marks",     "io",	     "startups"
	};

	ph_jw_init(&jw, b);
	ph_jw_obj_begin(&jw);
	ph_jw_key(&jw, "header");
	ph_jw_obj_begin(&jw);
	ph_jw_key(&jw, "scenario");
	ph_jw_value(&jw, get(cap, "scenario"));
	ph_jw_kv_int(&jw, "durationMs", num(cap, "window.durationMs", 0));
	ph_jw_key(&jw, "device");
	ph_jw_value(&jw, get(cap, "app.device"));
	if (hz > 0)
		ph_jw_kv_double(&jw, "refreshHz", hz);
	else
		ph_jw_kv_str(&jw, "refreshHz", NULL);
	ph_jw_key(&jw, "app");
	ph_jw_value(&jw, get(cap, "app.packageName"));
	ph_jw_key(&jw, "window");
	ph_jw_value(&jw, get(cap, "window"));
	ph_jw_obj_end(&jw);
	for (size_t i = 0; i < PH_ARRAY_SIZE(copy); i++) {
		const struct ph_json *v = ph_json_get(cap, copy[i]);

		if (!v)
			continue;
		ph_jw_key(&jw, copy[i]);
		ph_jw_value(&jw, v);
	}
	if (get(cap, "source.lines")) {
		/* The lines skipped or repaired on the way in, where. */
		ph_jw_key(&jw, "sourceLines");
		ph_jw_value(&jw, get(cap, "source.lines"));
	}
	ph_jw_key(&jw, "footer");
	ph_jw_obj_begin(&jw);
	if (hz > 0)
		ph_jw_kv_double(&jw, "frameBudgetMs",
				round(1000000.0 / hz) / 1000.0);
	ph_jw_kv_int(&jw, "lateFrames", mnum(m, "frames.janky"));
	ph_jw_kv_int(&jw, "missedRefreshes", mnum(m, "frames.missedRefreshes"));
	ph_jw_kv_int(&jw, "recompositions", mnum(m, "recompositions"));
	ph_jw_kv_int(&jw, "calls", mnum(m, "http.calls"));
	if (mnum(m, "http.open") > 0)
		ph_jw_kv_int(&jw, "callsStillOpen", mnum(m, "http.open"));
	ph_jw_kv_int(&jw, "queries", mnum(m, "db.queries"));
	ph_jw_obj_end(&jw);
	ph_jw_obj_end(&jw);
	if (ph_jw_finish(&jw))
		return PH_ENOMEM;
	return ph_buf_addch(b, '\n');
}

/* --- HTML -------------------------------------------------------------------
 */

static int esc(struct ph_buf *b, const char *s, size_t n)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++) {
		switch (s[i]) {
		case '<': rc = ph_buf_addstr(b, "&lt;"); break;
		case '>': rc = ph_buf_addstr(b, "&gt;"); break;
		case '&': rc = ph_buf_addstr(b, "&amp;"); break;
		case '"': rc = ph_buf_addstr(b, "&quot;"); break;
		default: rc = ph_buf_addch(b, s[i]); break;
		}
	}
	return rc;
}

static int escj(struct ph_buf *b, const struct ph_json *v)
{
	return ph_json_is(v, PH_JSON_STRING) ? esc(b, v->u.s, v->n) : 0;
}

static const char *const lane_names[] = { "main", "frames", "http",  "db",
					  "work", "nav",    "input", "log" };

static const char css[] =
	"body{font:14px system-ui,sans-serif;margin:0;color:#222}"
	"header{padding:12px 16px;background:#1d2b3a;color:#fff}"
	"header h1{font-size:17px;margin:0}header p{margin:4px 0 0;"
	"opacity:.8}main{display:flex;gap:16px;padding:16px}"
	"#tl{flex:3;min-width:0}#fs{flex:2;min-width:280px}"
	"svg{width:100%;background:#fafafa;border:1px solid #ddd}"
	".f{border-left:4px solid #999;padding:6px 10px;margin:0 0 10px;"
	"background:#f6f6f6}.error{border-color:#c62828}.warning{"
	"border-color:#ef8f00}.note{border-color:#1565c0}.f b{display:block}"
	".f small{color:#555;display:block}.q,.foot{color:#555;margin:8px 0}"
	"text{font-size:11px;fill:#333}.cov.bad{color:#ffb4a9;"
	"font-weight:600}.q.bad{color:#b3261e}"
	".sev{display:inline-block;font-size:11px;font-weight:600;"
	"text-transform:uppercase;color:#fff;border-radius:3px;"
	"padding:0 5px;margin-right:6px;background:#999}"
	".sev.error{background:#c62828}.sev.warning{background:#ef8f00}"
	".sev.note{background:#1565c0}.lg{display:flex;flex-wrap:wrap;"
	"gap:4px 14px;font-size:12px;color:#444;margin:8px 0}"
	".lg i{display:inline-block;width:12px;height:9px;margin-right:4px;"
	"border-radius:2px}text.fl{fill:#fff}text.fo{fill:#222}"
	"text.ax{fill:#777}";

/* At most this many io lanes (one per device) in the HTML timeline. */
#define IO_LANES 8

/* The devices of the capture's io spans, in order of first appearance. */
static size_t io_devices(const struct ph_json *spans,
			 const struct ph_json **dev, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; ph_json_is(spans, PH_JSON_ARRAY) && i < spans->n;
	     i++) {
		const struct ph_json *d =
			ph_json_get(&spans->u.items[i], "device");
		size_t k = 0;

		if (!ph_json_is(d, PH_JSON_STRING))
			continue;
		while (k < n && !(dev[k]->n == d->n &&
				  !memcmp(dev[k]->u.s, d->u.s, d->n)))
			k++;
		if (k == n && n < max)
			dev[n++] = d;
	}
	return n;
}

/*
 * The io lanes: one per device, a bar from each request's issue to its
 * completion — the main thread's red, the rest of the app's orange,
 * other processes' grey, drawn in that order of precedence (others
 * first, so the app's are on top).  A bar thinner than a pixel that
 * falls in the same pixel as the previous bar of its lane and kind is
 * not drawn again: a busy disk is a band, not a million rects.
 */
static int io_lanes(const struct ph_json *spans, const struct ph_json **dev,
		    size_t ndev, int64_t from, double span, double left,
		    double w, double lh, size_t first_lane, struct ph_buf *b)
{
	static const char *const fill[] = { "#9aa5b1", "#ef8f00", "#c62828" };
	int rc = 0;

	for (size_t l = 0; !rc && l < ndev; l++) {
		double y = lh * (double)(first_lane + l);

		rc = add(b,
			 "<text x=\"4\" y=\"%.0f\">io %.*s</text><line "
			 "x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" "
			 "stroke=\"#e3e3e3\"/>",
			 y + 18, S(dev[l]), left, left + w, y + lh, y + lh);
	}
	for (int kind = 0; !rc && kind < 3; kind++) {
		double last[IO_LANES];

		for (size_t l = 0; l < IO_LANES; l++)
			last[l] = -1;
		for (size_t i = 0;
		     !rc && ph_json_is(spans, PH_JSON_ARRAY) && i < spans->n;
		     i++) {
			const struct ph_json *it = &spans->u.items[i];
			const struct ph_json *d = ph_json_get(it, "device");
			int k = ph_json_get(it, "mainThread") ? 2 :
				ph_json_get(it, "app")	      ? 1 :
								0;
			double a = dnum(it, "from", 0), z = dnum(it, "to", a);
			double x, x2, lat = dnum(it, "latencyMs", -1);
			size_t l = 0;

			if (k != kind || !ph_json_is(d, PH_JSON_STRING))
				continue;
			while (l < ndev &&
			       !(dev[l]->n == d->n &&
				 !memcmp(dev[l]->u.s, d->u.s, d->n)))
				l++;
			if (l == ndev)
				continue;
			x = left + ((a - (double)from) / span) * w;
			x2 = left + ((z - (double)from) / span) * w;
			if (x < left)
				x = left;
			if (x2 > left + w)
				x2 = left + w;
			if (x2 < x || x > left + w)
				continue; /* outside the window */
			if (x2 - x < 1) {
				if (floor(x) == last[l])
					continue;
				last[l] = floor(x);
				x2 = x + 1;
			}
			rc = add(b,
				 "<rect x=\"%.1f\" y=\"%.0f\" "
				 "width=\"%.1f\" height=\"%.0f\" "
				 "fill=\"%s\"><title>",
				 x, lh * (double)(first_lane + l) + 6, x2 - x,
				 lh - 12, fill[k]);
			rc = rc ? rc :
				  add(b, "t=%.3f..%.3f %.*s %" PRId64 " B ", a,
				      z, S(ph_json_get(it, "rwbs")),
				      num(it, "bytes", 0));
			if (!rc && lat >= 0)
				rc = add(b, "%.3f ms ", lat);
			rc = rc ? rc : escj(b, ph_json_get(it, "comm"));
			if (!rc && ph_json_get(it, "pid"))
				rc = add(b, " pid %" PRId64 " tid %" PRId64,
					 num(it, "pid", -1),
					 num(it, "tid", -1));
			if (!rc && k)
				rc = add(b, "%s",
					 k == 2 ? " (main thread)" : " (app)");
			rc = rc ? rc : add(b, "</title></rect>");
		}
	}
	return rc;
}

/* Severity colors, as the page draws them; any other is a note's. */
static const char *sev_color(const struct ph_json *f)
{
	const struct ph_json *s = ph_json_get(f, "severity");

	return ph_json_streq(s, "error")   ? "#c62828" :
	       ph_json_streq(s, "warning") ? "#ef8f00" :
					     "#1565c0";
}

/*
 * The axis counts seconds since the app started (app.startedAt), as the
 * page does; a capture without it, or of an app started after the
 * window, counts from the window's start.
 */
static int64_t html_origin(const struct ph_json *cap, int64_t from, int64_t to)
{
	int64_t started = num(cap, "app.startedAt", 0);

	return started > 0 && started <= to ? started : from;
}

/* Ticks on whole steps since the origin, about every 100 px. */
static int axis(struct ph_buf *b, int64_t from, int64_t origin, double span,
		double left, double w, double top, double bottom)
{
	static const double steps[] = {
		1,     2,      5,      10,     20,	50,	100,
		200,   500,    1000,   2000,   5000,	10000,	30000,
		60000, 120000, 300000, 600000, 1800000, 3600000
	};
	double step = steps[PH_ARRAY_SIZE(steps) - 1];
	int rc = 0;

	for (size_t i = 0; i < PH_ARRAY_SIZE(steps); i++)
		if (steps[i] >= span / 10) {
			step = steps[i];
			break;
		}
	for (double rel = ceil((double)(from - origin) / step) * step;
	     !rc && (double)origin + rel <= (double)from + span; rel += step) {
		double x =
			left + ((double)origin + rel - (double)from) / span * w;
		int dig = step >= 1000 ? 0 : step >= 100 ? 1 : 3;

		rc = add(b,
			 "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
			 "y2=\"%.0f\" stroke=\"#eee\"/><text class=\"ax\" "
			 "x=\"%.1f\" y=\"%.0f\">%.*f s</text>",
			 x, x, top, bottom, x + 2, bottom + 14, dig,
			 fabs(rel) < 1e-9 ? 0.0 : rel / 1000);
	}
	return rc;
}

/*
 * The findings lane: two rows of bars, each on the first row free where
 * it starts, and its title beside it (inside a wide bar) up to the next
 * bar of its row, cut with an ellipsis, left out when no room is left for
 * a few letters (the bar's <title> still has it) — the page's labels.
 * Text is 11 px: about 6.2 px a character, an estimate that errs wide.
 */
#define LABEL_CHAR_PX 6.2
#define FINDING_BARS  64

static int finding_bars(struct ph_buf *b, const struct ph_json *fs,
			int64_t from, double span, double left, double w,
			double lh)
{
	struct bar {
		const struct ph_json *f;
		double x, x2;
		int row;
	} bars[FINDING_BARS];
	size_t n = 0;
	double row_end[2] = { -1e9, -1e9 };
	int rc = 0;

	for (size_t i = 0; ph_json_is(fs, PH_JSON_ARRAY) && i < fs->n; i++) {
		const struct ph_json *f = &fs->u.items[i];
		double a = dnum(f, "window.from", NAN),
		       z = dnum(f, "window.to", a);
		struct bar *br;
		size_t k;

		if (ph_json_get(f, "spanning") || isnan(a) || n == FINDING_BARS)
			continue;
		a = left + (a - (double)from) / span * w;
		z = left + (z - (double)from) / span * w;
		if (z < left || a > left + w)
			continue;
		a = a < left ? left : a;
		z = z > left + w ? left + w : z;
		if (z - a < 3)
			z = a + 3;
		/* Sorted by where they start (insertion: a handful). */
		for (k = n; k > 0 && bars[k - 1].x > a; k--)
			bars[k] = bars[k - 1];
		br = &bars[k];
		*br = (struct bar){ f, a, z, 0 };
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		struct bar *br = &bars[i];

		br->row = row_end[0] <= br->x	   ? 0 :
			  row_end[1] <= br->x	   ? 1 :
			  row_end[0] <= row_end[1] ? 0 :
						     1;
		if (br->x2 + 2 > row_end[br->row])
			row_end[br->row] = br->x2 + 2;
	}
	for (size_t i = 0; !rc && i < n; i++) {
		const struct bar *br = &bars[i];
		const struct ph_json *title = ph_json_get(br->f, "title");
		double y = 4 + br->row * (lh / 2 - 2), h = lh / 2 - 4;
		double next = left + w, tx, room;
		bool inside = br->x2 - br->x >= 80;
		size_t chars;

		for (size_t k = i + 1; k < n; k++)
			if (bars[k].row == br->row) {
				next = bars[k].x - 4;
				break;
			}
		rc = add(b,
			 "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
			 "height=\"%.0f\" fill=\"%s\"><title>%.*s: ",
			 br->x, y, br->x2 - br->x, h, sev_color(br->f),
			 S(ph_json_get(br->f, "severity")));
		rc = rc ? rc : escj(b, title);
		rc = rc ? rc : add(b, "</title></rect>");
		tx = inside ? br->x + 4 : br->x2 + 3;
		room = (inside && br->x2 - 4 < next ? br->x2 - 4 : next) - tx;
		if (rc || !ph_json_is(title, PH_JSON_STRING) || room < 36)
			continue;
		chars = (size_t)(room / LABEL_CHAR_PX);
		rc = add(b, "<text class=\"%s\" x=\"%.1f\" y=\"%.0f\">",
			 inside ? "fl" : "fo", tx, y + h - 3);
		if (title->n <= chars) {
			rc = rc ? rc : escj(b, title);
		} else {
			/* Cut at a character, not inside a UTF-8 sequence. */
			size_t cut = chars > 1 ? chars - 1 : 0;

			while (cut > 0 && (title->u.s[cut] & 0xc0) == 0x80)
				cut--;
			rc = rc ? rc : esc(b, title->u.s, cut);
			rc = rc ? rc : add(b, "\xe2\x80\xa6");
		}
		rc = rc ? rc : add(b, "</text>");
	}
	return rc;
}

/* What every color on the timeline means. */
static int legend(struct ph_buf *b, size_t ndev)
{
	static const char *const items[][2] = {
		{ "#c62828", "error finding, or an event at error level" },
		{ "#ef8f00", "warning finding, or an event at warning level" },
		{ "#1565c0", "note finding" },
		{ "#5c8fbf", "event" },
	};
	static const char *const io[][2] = {
		{ "#c62828", "io: the app's main thread" },
		{ "#ef8f00", "io: the rest of the app" },
		{ "#9aa5b1", "io: other processes" },
	};
	int rc = add(b, "<div class=\"lg\">");

	for (size_t i = 0; !rc && i < PH_ARRAY_SIZE(items); i++)
		rc = add(b, "<span><i style=\"background:%s\"></i>%s</span>",
			 items[i][0], items[i][1]);
	for (size_t i = 0; !rc && ndev && i < PH_ARRAY_SIZE(io); i++)
		rc = add(b, "<span><i style=\"background:%s\"></i>%s</span>",
			 io[i][0], io[i][1]);
	rc = rc ? rc :
		  add(b, "<span>bar: from its start to its end; "
			 "hover a bar for its label</span></div>");
	return rc;
}

int ph_report_html(const struct ph_json *cap, struct ph_buf *b)
{
	const struct ph_json *spans = get(cap, "io.spans");
	const struct ph_json *dev[IO_LANES];
	size_t ndev = io_devices(spans, dev, IO_LANES);
	/* The findings lane, then the event lanes, then one per device. */
	double nl = (double)(1 + PH_ARRAY_SIZE(lane_names) + ndev);
	const struct ph_json *lanes = ph_json_get(cap, "lanes");
	const struct ph_json *fs = ph_json_get(cap, "findings");
	int64_t from = num(cap, "window.from", 0),
		to = num(cap, "window.to", 0);
	double span = to > from ? (double)(to - from) : 1, w = 1000, lh = 28;
	double left = 60;
	int64_t origin = html_origin(cap, from, to);
	struct ph_buf text = PH_BUF_INIT(1 << 20);
	int rc = 0;

	rc = add(b,
		 "<!doctype html><html><head><meta charset=\"utf-8\">"
		 "<title>porthole report</title><style>%s</style></head>"
		 "<body><header><h1>",
		 css);
	rc = rc ? rc : header(cap, &text);
	rc = rc ? rc : esc(b, text.buf, text.len);
	rc = rc ? rc : add(b, "</h1><p>");
	ph_buf_reset(&text);
	rc = rc ? rc : footer(cap, &text);
	rc = rc ? rc : esc(b, text.buf, text.len);
	ph_buf_reset(&text);
	rc = rc ? rc : startup_lines(cap, &text);
	for (size_t at = 0, n; !rc && at < text.len; at += n + 1) {
		n = strcspn(text.buf + at, "\n");
		rc = add(b, "<br><span class=\"startup\">");
		rc = rc ? rc : esc(b, text.buf + at, n);
		rc = rc ? rc : add(b, "</span>");
	}
	ph_buf_reset(&text);
	rc = rc ? rc : io_line(cap, &text);
	if (!rc && text.len) {
		rc = add(b, "<br>");
		rc = rc ? rc : esc(b, text.buf, text.len);
	}
	ph_buf_reset(&text);
	rc = rc ? rc : coverage_line(cap, &text);
	if (!rc && text.len) {
		rc = add(b, "<br><span class=\"%s\">",
			 covered(cap) ? "cov" : "cov bad");
		rc = rc ? rc : esc(b, text.buf, text.len);
		rc = rc ? rc : add(b, "</span>");
	}
	rc = rc ? rc : add(b, "</p></header><main><section id=\"tl\">");
	rc = rc ? rc :
		  add(b,
		      "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		      "aria-label=\"timeline\">",
		      w + left, lh * nl + 36);
	rc = rc ? rc : axis(b, from, origin, span, left, w, 0, lh * nl);
	rc = rc ? rc :
		  add(b,
		      "<text x=\"4\" y=\"18\">findings</text><line "
		      "x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" "
		      "stroke=\"#e3e3e3\"/>",
		      left, left + w, lh, lh);
	rc = rc ? rc : finding_bars(b, fs, from, span, left, w, lh);
	for (size_t l = 0; !rc && l < PH_ARRAY_SIZE(lane_names); l++)
		rc = add(b,
			 "<text x=\"4\" y=\"%.0f\">%s</text><line x1=\"%.0f\" "
			 "x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" "
			 "stroke=\"#e3e3e3\"/>",
			 lh * (double)(l + 1) + 18, lane_names[l], left,
			 left + w, lh * (double)(l + 2), lh * (double)(l + 2));
	for (size_t i = 0;
	     !rc && ph_json_is(lanes, PH_JSON_ARRAY) && i < lanes->n; i++) {
		const struct ph_json *it = &lanes->u.items[i];
		const struct ph_json *ln = ph_json_get(it, "lane");
		int64_t a = num(it, "from", from), z = num(it, "to", a);
		int64_t level = num(it, "level", 0);
		size_t l = 0;
		double x, wd;

		while (l < PH_ARRAY_SIZE(lane_names) &&
		       !ph_json_streq(ln, lane_names[l]))
			l++;
		if (l == PH_ARRAY_SIZE(lane_names))
			continue;
		x = left + ((double)(a - from) / span) * w;
		wd = ((double)(z - a) / span) * w;
		if (wd < 2)
			wd = 2;
		rc = add(b,
			 "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
			 "height=\"%.0f\" fill=\"%s\"><title>",
			 x, lh * (double)(l + 1) + 6, wd, lh - 12,
			 level >= 2 ? "#c62828" :
			 level == 1 ? "#ef8f00" :
				      "#5c8fbf");
		rc = rc ? rc :
			  add(b, "%.3f..%.3f s ", (double)(a - origin) / 1000,
			      (double)(z - origin) / 1000);
		rc = rc ? rc : escj(b, ph_json_get(it, "label"));
		rc = rc ? rc : add(b, "</title></rect>");
	}
	rc = rc ? rc :
		  io_lanes(spans, dev, ndev, from, span, left, w, lh,
			   1 + PH_ARRAY_SIZE(lane_names), b);
	rc = rc ? rc :
		  add(b,
		      "<text class=\"ax\" x=\"%.0f\" y=\"%.0f\" "
		      "text-anchor=\"end\">s since app start</text></svg>",
		      left + w, lh * nl + 32);
	rc = rc ? rc : legend(b, ndev);
	rc = rc ? rc : add(b, "</section><section id=\"fs\">");
	for (size_t i = 0; !rc && ph_json_is(fs, PH_JSON_ARRAY) && i < fs->n;
	     i++) {
		const struct ph_json *f = &fs->u.items[i];
		const struct ph_json *det = ph_json_get(f, "detail");
		const struct ph_json *where = ph_json_get(f, "where");

		/* Severity in words as well as in color. */
		rc = add(b,
			 "<div class=\"f %.*s\"><b><span class=\"sev %.*s\">"
			 "%.*s</span>",
			 S(ph_json_get(f, "severity")),
			 S(ph_json_get(f, "severity")),
			 S(ph_json_get(f, "severity")));
		if (!rc) {
			ph_buf_reset(&text);
			rc = source_tag(f, &text);
			rc = rc ? rc : esc(b, text.buf, text.len);
		}
		rc = rc ? rc : escj(b, ph_json_get(f, "title"));
		rc = rc ? rc : add(b, "</b>");
		for (size_t k = 0;
		     !rc && ph_json_is(det, PH_JSON_ARRAY) && k < det->n; k++) {
			rc = add(b, "<small>");
			rc = rc ? rc : escj(b, &det->u.items[k]);
			rc = rc ? rc : add(b, "</small>");
		}
		if (!rc &&
		    ph_json_streq(ph_json_get(where, "status"), "resolved")) {
			rc = add(b, "<small>where: ");
			rc = rc ? rc : escj(b, ph_json_get(where, "path"));
			rc = rc ? rc :
				  add(b, ":%" PRId64 "</small>",
				      num(where, "line", 0));
		}
		if (!rc && !ph_json_get(f, "spanning"))
			rc = add(b,
				 "<small>at %.3f..%.3f s since app start "
				 "(device uptime %" PRId64 "..%" PRId64
				 " ms)</small>",
				 (double)(num(f, "window.from", 0) - origin) /
					 1000,
				 (double)(num(f, "window.to", 0) - origin) /
					 1000,
				 num(f, "window.from", 0),
				 num(f, "window.to", 0));
		rc = rc ? rc : add(b, "</div>");
	}
	if (!rc && never_connected(cap))
		rc = add(b, "<p>never connected: nothing observed</p>");
	else if (!rc && (!ph_json_is(fs, PH_JSON_ARRAY) || !fs->n))
		rc = add(b, covered(cap) ? "<p>no findings</p>" :
					   "<p>no findings in what was "
					   "observed</p>");
	for (int k = 0; k < 2; k++) {
		const struct ph_json *q =
			ph_json_get(cap, k ? "notSeen" : "quiet");

		if (rc || !ph_json_is(q, PH_JSON_ARRAY) || !q->n)
			continue;
		rc = add(b, k ? "<p class=\"q bad\">not seen (see coverage): " :
				"<p class=\"q\">quiet: ");
		for (size_t i = 0; !rc && i < q->n; i++) {
			rc = add(b, "%s", i ? ", " : "");
			rc = rc ? rc : escj(b, &q->u.items[i]);
		}
		rc = rc ? rc : add(b, "</p>");
	}
	rc = rc ? rc : add(b, "</section></main></body></html>\n");
	ph_buf_release(&text);
	return rc;
}
