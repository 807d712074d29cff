/* SPDX-License-Identifier: Apache-2.0 */
/*
 * summary.c: `porthole iotrace summary DIR`, a recording as a person
 * reads it.
 *
 * It reads the ds files back through ds_read.h: by column name from the
 * header row, not by position, so a file written by another io-tracer
 * collector reads too.  Latencies are kept as integer
 * nanoseconds (the CSV's milliseconds have at most six decimals), and the
 * percentiles are nearest-rank over the sorted values: p50 of 4 values is
 * the 2nd, p99 of 100 the 99th, never an interpolation.
 */
#include "ph_common.h"
#include "ph_arena.h"
#include "ph_buf.h"
#include "ph_error.h"
#include "ph_json.h"
#include "ph_log.h"
#include "iotrace/iotrace.h"
#include "iotrace/block_parse.h"
#include "iotrace/ds_read.h"

const char *ph_iot_num(uint64_t v, char *buf)
{
	char tmp[32];
	size_t n = ph_iot_fmt_u64(tmp, v), o = 0;

	for (size_t i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

/* A growable array of latencies. */
struct lat {
	int64_t *v;
	size_t n, cap;
};

static int lat_add(struct lat *l, int64_t ns)
{
	if (l->n == l->cap && PH_GROW(l->v, l->cap, l->n + 1, 64))
		return PH_ENOMEM;
	l->v[l->n++] = ns;
	return 0;
}

/* qsort() for arrays that may be empty (and NULL), which qsort may not be
 * given. */
static void sort(void *v, size_t n, size_t size,
		 int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p% at or below it. */
static int64_t pct(const struct lat *l, int p)
{
	size_t rank = ((size_t)p * l->n + 99) / 100;

	return l->n ? l->v[rank ? rank - 1 : 0] : -1;
}

struct group {
	char key[64];	/* "254:0\twrite" or "pid\tcomm" */
	uint64_t count; /* rows */
	uint64_t bytes;
	int64_t device_ns; /* sum of latencies */
	struct lat lat;	   /* rows with a latency */
	struct lat queue;  /* rows with a queue latency */
};

struct groups {
	struct group *g;
	size_t n, cap;
	size_t last; /* the group found last: consecutive rows share one */
};

static struct group *group_get(struct groups *gs, const char *key)
{
	if (gs->last < gs->n && !strcmp(gs->g[gs->last].key, key))
		return &gs->g[gs->last];
	for (size_t i = 0; i < gs->n; i++)
		if (!strcmp(gs->g[i].key, key)) {
			gs->last = i;
			return &gs->g[i];
		}
	if (gs->n == gs->cap && PH_GROW(gs->g, gs->cap, gs->n + 1, 16))
		return NULL;
	memset(&gs->g[gs->n], 0, sizeof(gs->g[0]));
	snprintf(gs->g[gs->n].key, sizeof(gs->g[0].key), "%s", key);
	gs->last = gs->n;
	return &gs->g[gs->n++];
}

static void groups_free(struct groups *gs)
{
	for (size_t i = 0; i < gs->n; i++) {
		free(gs->g[i].lat.v);
		free(gs->g[i].queue.v);
	}
	free(gs->g);
}

/* What the ds files say, added up. */
struct totals {
	struct groups by_op;   /* device and operation */
	struct groups by_proc; /* pid and command */
	struct lat all;	       /* every latency */
	uint64_t rows, files, no_latency;
	uint64_t rejected; /* ds records that are not rows */
	int64_t first_ns, last_ns;
};

/* One ds row into the totals; a ph_iot_ds_read callback. */
static int add_row(void *ctx, const struct ph_iot_ds_rec *r)
{
	struct totals *t = ctx;
	struct group *g, *pg;
	char key[64];

	t->rows++;
	if (r->mono_ns >= 0) {
		if (t->first_ns < 0 || r->mono_ns < t->first_ns)
			t->first_ns = r->mono_ns;
		if (r->mono_ns > t->last_ns)
			t->last_ns = r->mono_ns;
	}
	snprintf(key, sizeof(key), "%.*s\t%.*s",
		 (int)(r->dev_n > 24 ? 24 : r->dev_n), r->dev,
		 (int)(r->op_n > 24 ? 24 : r->op_n), r->op);
	g = group_get(&t->by_op, key);
	if (!g)
		return PH_ENOMEM;
	snprintf(key, sizeof(key), "%.*s\t%.*s",
		 (int)(r->pid_text_n > 10 ? 10 : r->pid_text_n), r->pid_text,
		 (int)(r->comm_n > 40 ? 40 : r->comm_n), r->comm);
	pg = group_get(&t->by_proc, key);
	if (!pg)
		return PH_ENOMEM;
	g->count++;
	g->bytes += r->size;
	pg->count++;
	pg->bytes += r->size;
	if (r->latency_ns >= 0) {
		g->device_ns += r->latency_ns;
		pg->device_ns += r->latency_ns;
		if (lat_add(&g->lat, r->latency_ns) ||
		    lat_add(&pg->lat, r->latency_ns) ||
		    lat_add(&t->all, r->latency_ns))
			return PH_ENOMEM;
	} else {
		t->no_latency++;
	}
	if (r->queue_ns >= 0 && lat_add(&g->queue, r->queue_ns))
		return PH_ENOMEM;
	return 0;
}

/* Every ds file of dir, in the order they were written. */
static int read_ds(struct totals *t, const char *dir)
{
	struct ph_iot_ds_stats st = { 0 };
	int rc = ph_iot_ds_read(dir, add_row, t, &st);

	t->files = st.files;
	t->rejected = st.rejected;
	return rc;
}

/* --- printing ------------------------------------------------------------- */

static const char *human_bytes(uint64_t b, char *buf)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = 0;

	if (b < 1024) {
		snprintf(buf, 32, "%" PRIu64 " B", b);
		return buf;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, 32, "%.1f %s", v, unit[u]);
	return buf;
}

/* Milliseconds with three decimals, or "-" when unknown. */
static const char *ms(int64_t ns, char *buf)
{
	if (ns < 0)
		return "-";
	snprintf(buf, 32, "%.3f", (double)ns / 1e6);
	return buf;
}

static const char *json_str(const struct ph_json *o, const char *k, char *buf,
			    size_t size)
{
	const struct ph_json *v = ph_json_get(o, k);

	if (!ph_json_is(v, PH_JSON_STRING))
		return NULL;
	snprintf(buf, size, "%.*s", (int)v->n, v->u.s);
	return buf;
}

static int64_t json_int(const struct ph_json *o, const char *k)
{
	int64_t v;

	return ph_json_as_int(ph_json_get(o, k), &v) ? v : -1;
}

/* The lines about where the data came from and what was lost. */
static void header(FILE *out, const char *dir, const struct ph_json *m,
		   const struct totals *t)
{
	const struct ph_json *pairing = ph_json_get(m, "pairing");
	const struct ph_json *parse = ph_json_get(m, "parse");
	const struct ph_json *loss = ph_json_get(m, "ftrace_loss");
	const struct ph_json *inputs = ph_json_get(m, "inputs");
	char a[32], b[32], s1[64], s2[64], c[160];
	int64_t v;

	fprintf(out, "iotrace summary of %s\n", dir);
	if (!m) {
		fprintf(out, "  (no manifest.json: counts below come from the "
			     "CSV files alone)\n");
	} else {
		fprintf(out, "  source     %s",
			json_str(m, "collector", c, sizeof(c)) ? c : "?");
		if (ph_json_is(inputs, PH_JSON_ARRAY))
			for (uint32_t i = 0; i < inputs->n && i < 3; i++) {
				const struct ph_json *in =
					ph_json_at(inputs, i);
				const char *base = in->u.s;

				for (uint32_t k = 0; k < in->n; k++)
					if (in->u.s[k] == '/')
						base = in->u.s + k + 1;
				fprintf(out, "%s %.*s", i ? "," : ":",
					(int)(in->n -
					      (uint32_t)(base - in->u.s)),
					base);
			}
		if (json_str(m, "kernel_release", c, sizeof(c)))
			fprintf(out, ", kernel %s", c);
		fprintf(out, "\n");
		if (json_str(m, "snapshot_only_reason", c, sizeof(c)))
			fprintf(out, "  mode       snapshots only: %s\n", c);
		if (json_str(m, "session_start", s1, sizeof(s1)) &&
		    json_str(m, "session_end", s2, sizeof(s2)))
			fprintf(out, "  window     %s .. %s", s1,
				strncmp(s1, s2, 11) ? s2 : s2 + 11);
		if (t->last_ns > t->first_ns) {
			double secs = (double)(t->last_ns - t->first_ns) / 1e9;

			if (secs >= 1)
				fprintf(out, " (%.3f s of completions)", secs);
			else
				fprintf(out, " (%.3f ms of completions)",
					secs * 1e3);
		}
		fprintf(out, "\n");
	}
	fprintf(out, "  requests   %s rows in %s ds %s", ph_iot_num(t->rows, a),
		ph_iot_num(t->files, b), t->files == 1 ? "file" : "files");
	if (t->rows)
		fprintf(out,
			": %s with a device latency, %s without "
			"(issue not seen)",
			ph_iot_num(t->rows - t->no_latency, a),
			ph_iot_num(t->no_latency, b));
	fprintf(out, "\n");
	if (t->rejected)
		fprintf(out, "  skipped    %s ds %s (stderr says where)\n",
			ph_iot_num(t->rejected, a),
			t->rejected == 1 ? "record is not a row" :
					   "records are not rows");
	if (pairing) {
		fprintf(out,
			"  pairing    %s paired (flushes: %s), "
			"completions with no issue: %s, issues in "
			"flight at the end: %s",
			ph_iot_num((uint64_t)json_int(pairing, "paired"), a),
			ph_iot_num((uint64_t)json_int(pairing,
						      "paired_flushes"),
				   b),
			ph_iot_num(
				(uint64_t)json_int(pairing,
						   "completions_without_issue"),
				s1),
			ph_iot_num((uint64_t)json_int(
					   pairing, "issues_in_flight_at_end"),
				   s2));
		if ((v = json_int(pairing, "reissued_while_in_flight")) > 0)
			fprintf(out, "; %s re-issued while in flight",
				ph_iot_num((uint64_t)v, a));
		fprintf(out, "\n");
		if ((v = json_int(pairing, "completion_errors")) > 0)
			fprintf(out,
				"  errors     %s requests completed with "
				"an error\n",
				ph_iot_num((uint64_t)v, a));
	}
	if (loss || parse) {
		const struct ph_json *mal = ph_json_get(parse, "malformed");
		int64_t lost = json_int(loss, "total_lost");
		int64_t bad = json_int(mal, "total");

		fprintf(out, "  loss       %s; %s malformed %s\n",
			lost > 0 ? "ftrace lost events (see manifest "
				   "ftrace_loss)" :
				   "none reported by ftrace",
			ph_iot_num(bad > 0 ? (uint64_t)bad : 0, a),
			bad == 1 ? "line" : "lines");
		if (lost > 0)
			fprintf(out,
				"             %s events lost: latencies "
				"near the gaps may be missing\n",
				ph_iot_num((uint64_t)lost, a));
	}
}

static int cmp_group_op(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return strcmp(x->key, y->key);
}

static int cmp_group_count(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->key, y->key);
}

static void op_table(FILE *out, struct totals *t)
{
	struct group all = { .key = "" };
	char a[32], b[32], c[4][32], mx[32];

	sort(t->by_op.g, t->by_op.n, sizeof(struct group), cmp_group_op);
	fprintf(out, "\n%-8s %-12s %10s %11s %9s %9s %9s %10s\n", "device",
		"operation", "requests", "bytes", "p50 ms", "p95 ms", "p99 ms",
		"max ms");
	for (size_t i = 0; i < t->by_op.n; i++) {
		struct group *g = &t->by_op.g[i];
		const char *tab = strchr(g->key, '\t');

		sort(g->lat.v, g->lat.n, sizeof(int64_t), cmp_i64);
		all.count += g->count;
		all.bytes += g->bytes;
		fprintf(out, "%-8.*s %-12s %10s %11s %9s %9s %9s %10s\n",
			(int)(tab - g->key), g->key, tab + 1,
			ph_iot_num(g->count, a), human_bytes(g->bytes, b),
			ms(pct(&g->lat, 50), c[0]), ms(pct(&g->lat, 95), c[1]),
			ms(pct(&g->lat, 99), c[2]),
			ms(g->lat.n ? g->lat.v[g->lat.n - 1] : -1, mx));
	}
	if (t->by_op.n > 1)
		fprintf(out, "%-8s %-12s %10s %11s %9s %9s %9s %10s\n", "",
			"all", ph_iot_num(all.count, a),
			human_bytes(all.bytes, b), ms(pct(&t->all, 50), c[0]),
			ms(pct(&t->all, 95), c[1]), ms(pct(&t->all, 99), c[2]),
			ms(t->all.n ? t->all.v[t->all.n - 1] : -1, mx));
	for (size_t i = 0; i < t->by_op.n; i++) {
		struct group *g = &t->by_op.g[i];
		const char *tab = strchr(g->key, '\t');

		if (!g->queue.n)
			continue;
		sort(g->queue.v, g->queue.n, sizeof(int64_t), cmp_i64);
		fprintf(out,
			"  queued in the I/O scheduler (insert to issue), "
			"%.*s %s: p50 %s ms, p99 %s ms over %s %s\n",
			(int)(tab - g->key), g->key, tab + 1,
			ms(pct(&g->queue, 50), c[0]),
			ms(pct(&g->queue, 99), c[1]), ph_iot_num(g->queue.n, a),
			g->queue.n == 1 ? "request" : "requests");
	}
}

static void proc_table(FILE *out, struct totals *t)
{
	char a[32], b[32], c[3][32];
	size_t shown = t->by_proc.n < 10 ? t->by_proc.n : 10;

	if (!t->by_proc.n)
		return;
	sort(t->by_proc.g, t->by_proc.n, sizeof(struct group), cmp_group_count);
	fprintf(out, "\nbusiest processes (by requests; pid and command of "
		     "the submitting task)\n");
	fprintf(out, "  %-8s %-16s %10s %11s %13s %9s %9s\n", "pid", "command",
		"requests", "bytes", "device time", "p50 ms", "p99 ms");
	for (size_t i = 0; i < shown; i++) {
		struct group *g = &t->by_proc.g[i];
		const char *tab = strchr(g->key, '\t');
		char dt[32];

		sort(g->lat.v, g->lat.n, sizeof(int64_t), cmp_i64);
		snprintf(dt, sizeof(dt), "%.3f s", (double)g->device_ns / 1e9);
		if (tab == g->key)
			fprintf(out, "  %-25s", "(issue not seen)");
		else
			fprintf(out, "  %-8.*s %-16s", (int)(tab - g->key),
				g->key, tab + 1);
		fprintf(out, " %10s %11s %13s %9s %9s\n",
			ph_iot_num(g->count, a), human_bytes(g->bytes, b), dt,
			ms(pct(&g->lat, 50), c[0]), ms(pct(&g->lat, 99), c[1]));
	}
	if (t->by_proc.n > shown)
		fprintf(out, "  ... and %zu more\n", t->by_proc.n - shown);
}

/* Bucket bounds in microseconds: 1-2-5 steps, each about double the last. */
#define NBOUNDS 25
static const uint64_t bounds_us[NBOUNDS] = {
	1,	  2,	    5,	      10,	 20,	  50,	   100,
	200,	  500,	    1000,     2000,	 5000,	  10000,   20000,
	50000,	  100000,   200000,   500000,	 1000000, 2000000, 5000000,
	10000000, 20000000, 50000000, 100000000,
};

/* "20 us", "1 ms", "5 s" */
static const char *bound(uint64_t us, char *buf)
{
	if (us < 1000)
		snprintf(buf, 32, "%" PRIu64 " us", us);
	else if (us < 1000000)
		snprintf(buf, 32, "%" PRIu64 " ms", us / 1000);
	else
		snprintf(buf, 32, "%" PRIu64 " s", us / 1000000);
	return buf;
}

static void histogram(FILE *out, const struct totals *t, bool utf8)
{
	static const char *const eighths[] = { "",  "▏", "▎", "▍", "▌",
					       "▋", "▊", "▉", "█" };
	/* bucket k: [bounds_us[k-1], bounds_us[k]); the last one is open */
	uint64_t bucket[NBOUNDS + 1] = { 0 }, most = 0;
	unsigned lo = NBOUNDS + 1, hi = 0;
	const int width = 40;
	char a[32], l1[32], l2[32], label[48];

	if (!t->all.n)
		return;
	for (size_t i = 0, k = 0; i < t->all.n; i++) {
		/* the values are sorted, so k only moves forward */
		while (k < NBOUNDS &&
		       (uint64_t)t->all.v[i] >= bounds_us[k] * 1000)
			k++;
		bucket[k]++;
	}
	for (unsigned k = 0; k <= NBOUNDS; k++) {
		if (!bucket[k])
			continue;
		lo = k < lo ? k : lo;
		hi = k;
		most = bucket[k] > most ? bucket[k] : most;
	}
	fprintf(out, "\ndevice latency, %s requests\n",
		ph_iot_num(t->all.n, a));
	for (unsigned k = lo; k <= hi; k++) {
		uint64_t eighth = (bucket[k] * (uint64_t)width * 8 + most / 2) /
				  most,
			 drawn;

		if (k == 0)
			snprintf(label, sizeof(label), "< %s",
				 bound(bounds_us[0], l2));
		else if (k == NBOUNDS)
			snprintf(label, sizeof(label), ">= %s",
				 bound(bounds_us[NBOUNDS - 1], l1));
		else
			snprintf(label, sizeof(label), "%s - %s",
				 bound(bounds_us[k - 1], l1),
				 bound(bounds_us[k], l2));
		fprintf(out, "  %17s %s", label, utf8 ? "│" : "|");
		if (utf8) {
			/* eighths of a cell; a non-empty bucket shows */
			if (bucket[k] && !eighth)
				eighth = 1;
			for (uint64_t i = 0; i < eighth / 8; i++)
				fputs("█", out);
			fputs(eighths[eighth % 8], out);
			drawn = eighth / 8 + (eighth % 8 != 0);
		} else {
			drawn = (eighth + 4) / 8;
			if (bucket[k] && !drawn)
				drawn = 1;
			for (uint64_t i = 0; i < drawn; i++)
				fputc('#', out);
		}
		for (uint64_t i = drawn; i < (uint64_t)width; i++)
			fputc(' ', out);
		fprintf(out, "%s %10s\n", utf8 ? "│" : "|",
			ph_iot_num(bucket[k], a));
	}
}

int ph_iot_summary(const char *dir, FILE *out, bool utf8)
{
	struct totals t = { .first_ns = -1, .last_ns = -1 };
	struct ph_buf mbuf = PH_BUF_INIT(64 << 20);
	struct ph_arena arena;
	struct ph_json *m = NULL;
	struct ph_err err = { 0 };
	char path[PATH_MAX + 16];
	int rc;

	ph_arena_init(&arena, PH_ARENA_DEFAULT_BLOCK, 256 << 20);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	rc = ph_buf_read_file(&mbuf, path);
	if (!rc && ph_json_parse(&arena, mbuf.buf, mbuf.len, &m, &err)) {
		char why[256];

		ph_warn("%s: %s; reading the CSV files alone", path,
			ph_err_format(&err, why, sizeof(why)));
		m = NULL;
	} else if (rc && rc != PH_ENOENT) {
		ph_warn("%s: cannot read it; reading the CSV files alone",
			path);
	}
	rc = read_ds(&t, dir);
	if (rc)
		goto out;
	sort(t.all.v, t.all.n, sizeof(int64_t), cmp_i64);
	header(out, dir, m, &t);
	if (t.rows) {
		op_table(out, &t);
		proc_table(out, &t);
		histogram(out, &t, utf8);
	}
out:
	groups_free(&t.by_op);
	groups_free(&t.by_proc);
	free(t.all.v);
	ph_buf_release(&mbuf);
	ph_arena_release(&arena);
	return rc;
}
