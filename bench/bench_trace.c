/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_trace: trace ingestion throughput, beside `cat FILE > /dev/null`
 * measured in the same run on the same file.
 *
 * Inputs, generated under build/bench-trace/ (never committed):
 *  - proto: perfetto_android12_cpuschedstack.pftrace repeated to >= 100 MB,
 *    copy k re-encoded with every timestamp moved k spans (the fixture's
 *    duration plus 1 ms) later: packet timestamps, ftrace event
 *    timestamps, compact_sched's first switch and waking timestamps (the
 *    rest are deltas), clock snapshots (every clock moves together) and
 *    android_log timestamps.  The result reads as one trace ~27 times as
 *    long, its packets in time order as a recorder writes them.
 *  - ftrace: the ftrace block of the systrace HTML fixture repeated to
 *    >= 100 MB, each copy's timestamps shifted past the previous copy.
 * Ingest = read nothing (the file is in memory) + decode + sort + build
 * every table: ph_trace_load_mem().  cat = read(2) of the file in 1 MB
 * chunks, page cache warm.  Best of 3.  A load that fails fails the bench:
 * no rate is printed for it.
 *
 * Beside ingest, on the same proto bytes (trace_decode_floor_mbps): a
 * plain decode of every packet, the floor any reader pays: every field
 * of every TracePacket, every ftrace event of every bundle and every
 * field of those events, and each compact_sched varint, with nothing
 * kept.  trace_ingest_ratio_floor = ingest / that floor.
 *
 * trace_detectors_100mb_s: every analyze detector timed directly on the
 * loaded proto trace (SQL views, the scope's context, each detector's
 * queries), best of 3; a detector that fails fails the bench.
 * trace_mem_ratio: the peak RSS of a real `porthole trace analyze` of the
 * proto file (a child process, spawned before this one loads anything, so
 * nothing of this one counts) over the file's size; trace_analyze_100mb_s is
 * that command's wall time, and its exit status must be 0.
 */
#include "ph_common.h"
/* sys/wait.h's idtype_t names P_PID, as trace.h's table of processes does:
 * glibc's enumerator is renamed here, and nothing below uses it. */
#define P_PID PH_SYS_P_PID
#include <sys/wait.h>
#undef P_PID
#include "ph_clock.h"
#include "ph_buf.h"
#include "trace/trace.h"
#include "trace/trace_detect.h"
#include "trace/trace_run.h"
#include "trace/trace_sql.h"

#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

#define TARGET ((size_t)100 << 20)

static double now_s(void)
{
	return (double)ph_clock_mono_ns() / 1e9;
}

static int write_file(const char *path, const struct ph_buf *b)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(b->buf, 1, b->len, f) != b->len) {
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f);
}

static double cat_mbps(const char *path, size_t size)
{
	static char buf[1 << 20];
	double best = 0;

	for (int i = 0; i < 3; i++) {
		double t0 = now_s(), dt;
		int fd = open(path, O_RDONLY);
		ssize_t n;

		if (fd < 0)
			return 0;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		close(fd);
		dt = now_s() - t0;
		if (size / dt / 1e6 > best)
			best = size / dt / 1e6;
	}
	return best;
}

/* Best-of-3 load rate in MB/s, best time in *best_s; -1 when a load fails. */
static double ingest_mbps(const struct ph_buf *b, double *best_s)
{
	double best = 0;

	*best_s = 1e9;
	for (int i = 0; i < 3; i++) {
		struct ph_trace t;
		double t0 = now_s(), dt;
		int rc;

		if (ph_trace_init(&t)) {
			fprintf(stderr, "bench-trace: ph_trace_init failed\n");
			return -1;
		}
		rc = ph_trace_load_mem(&t, b->buf, b->len);
		dt = now_s() - t0;
		if (rc) {
			fprintf(stderr,
				"bench-trace: load failed at byte %" PRIu64
				": %s\n",
				t.err.offset, t.err.msg);
			ph_trace_release(&t);
			return -1;
		}
		if (dt < *best_s)
			*best_s = dt;
		if (b->len / dt / 1e6 > best)
			best = b->len / dt / 1e6;
		ph_trace_release(&t);
	}
	return best;
}

/* --- re-encoding a Perfetto trace with shifted timestamps -------------- */

/* Minimal protobuf reader and writer: enough to copy every field as it is
 * and rewrite the few that hold timestamps. */
struct fld {
	uint32_t id, wt;
	uint64_t v;
	const uint8_t *p; /* the value's bytes; for wt 2 the payload */
	size_t n;	  /* bytes of the value (payload for wt 2) */
	size_t lenw;	  /* wt 2: bytes its length took on the wire */
};

static bool rd_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (int s = 0; s < 64 && *pp < end; s += 7) {
		uint8_t b = *(*pp)++;

		r |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

static bool rd_field(const uint8_t **pp, const uint8_t *end, struct fld *f)
{
	uint64_t key;

	if (*pp >= end || !rd_varint(pp, end, &key))
		return false;
	f->id = (uint32_t)(key >> 3);
	f->wt = key & 7;
	f->p = *pp;
	switch (f->wt) {
	case 0: return rd_varint(pp, end, &f->v) && (f->n = 0, true);
	case 1: f->n = 8; break;
	case 5: f->n = 4; break;
	case 2:
		if (!rd_varint(pp, end, &f->v) || f->v > (uint64_t)(end - *pp))
			return false;
		f->lenw = (size_t)(*pp - f->p);
		f->p = *pp;
		f->n = f->v;
		break;
	default: return false;
	}
	if ((size_t)(end - *pp) < f->n)
		return false;
	*pp += f->n;
	return true;
}

static int wr_varint(struct ph_buf *o, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return ph_buf_add(o, b, n);
}

/*
 * A length in at least w bytes: Perfetto's writer reserves 4 bytes for
 * every nested message's length and leaves the varint padded, so a copy
 * keeps the fixture's size per event only when it pads the same way.
 */
static int wr_len(struct ph_buf *o, uint64_t v, size_t w)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n++] = (uint8_t)((v & 0x7f) | 0x80);
		v >>= 7;
	} while ((v || n < w) && n < 10);
	b[n - 1] &= 0x7f;
	return ph_buf_add(o, b, n);
}

static int wr_key(struct ph_buf *o, uint32_t id, uint32_t wt)
{
	return wr_varint(o, (uint64_t)id << 3 | wt);
}

/* The field as it came (for wt 0 with value v, which may be changed). */
static int wr_field(struct ph_buf *o, const struct fld *f, uint64_t v)
{
	if (wr_key(o, f->id, f->wt))
		return -1;
	if (f->wt == 0)
		return wr_varint(o, v);
	if (f->wt == 2 && wr_len(o, f->n, f->lenw))
		return -1;
	return ph_buf_add(o, f->p, f->n);
}

static int wr_sub(struct ph_buf *o, const struct fld *f,
		  const struct ph_buf *sub)
{
	return wr_key(o, f->id, 2) || wr_len(o, sub->len, f->lenw) ||
	       ph_buf_add(o, sub->buf, sub->len);
}

/*
 * A message whose field `ts_id` (varint) moves by shift, and whose
 * length-delimited field `sub_id` (0: none) is a message rewritten by
 * `sub` the same way.
 */
typedef int (*rewrite_fn)(const uint8_t *p, size_t n, int64_t shift,
			  struct ph_buf *o);

static int rewrite(const uint8_t *p, size_t n, int64_t shift, uint32_t ts_id,
		   uint32_t sub_id, rewrite_fn sub, struct ph_buf *o)
{
	const uint8_t *end = p + n;
	struct fld f;

	while (p < end) {
		if (!rd_field(&p, end, &f))
			return -1;
		if (f.wt == 0 && f.id == ts_id) {
			if (wr_field(o, &f, f.v + (uint64_t)shift))
				return -1;
		} else if (f.wt == 2 && sub && f.id == sub_id) {
			struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
			int rc = sub(f.p, f.n, shift, &b) || wr_sub(o, &f, &b);

			ph_buf_release(&b);
			if (rc)
				return -1;
		} else if (wr_field(o, &f, f.v)) {
			return -1;
		}
	}
	return 0;
}

/* A packed varint list whose first value moves (the rest are deltas). */
static int rewrite_packed_first(const struct fld *f, int64_t shift,
				struct ph_buf *o)
{
	const uint8_t *p = f->p, *end = f->p + f->n;
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	uint64_t v;
	int rc = 0;

	for (bool first = true; p < end && !rc; first = false) {
		if (!rd_varint(&p, end, &v))
			rc = -1;
		else
			rc = wr_varint(&b, first ? v + (uint64_t)shift : v);
	}
	rc = rc || wr_sub(o, f, &b);
	ph_buf_release(&b);
	return rc;
}

static int rw_ftrace_event(const uint8_t *p, size_t n, int64_t s,
			   struct ph_buf *o)
{
	return rewrite(p, n, s, 1, 0, NULL, o);
}

static int rw_compact(const uint8_t *p, size_t n, int64_t shift,
		      struct ph_buf *o)
{
	const uint8_t *end = p + n;
	struct fld f;

	while (p < end) {
		if (!rd_field(&p, end, &f))
			return -1;
		if (f.wt == 2 && (f.id == 1 || f.id == 7)) {
			if (rewrite_packed_first(&f, shift, o))
				return -1;
		} else if (wr_field(o, &f, f.v)) {
			return -1;
		}
	}
	return 0;
}

static int rw_bundle(const uint8_t *p, size_t n, int64_t shift,
		     struct ph_buf *o)
{
	const uint8_t *end = p + n;
	struct fld f;

	while (p < end) {
		struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
		int rc;

		if (!rd_field(&p, end, &f))
			return -1;
		if (f.wt == 2 && f.id == 2)
			rc = rw_ftrace_event(f.p, f.n, shift, &b) ||
			     wr_sub(o, &f, &b);
		else if (f.wt == 2 && f.id == 4)
			rc = rw_compact(f.p, f.n, shift, &b) ||
			     wr_sub(o, &f, &b);
		else
			rc = wr_field(o, &f, f.v);
		ph_buf_release(&b);
		if (rc)
			return -1;
	}
	return 0;
}

static int rw_clock(const uint8_t *p, size_t n, int64_t s, struct ph_buf *o)
{
	return rewrite(p, n, s, 2, 0, NULL, o);
}

static int rw_snapshot(const uint8_t *p, size_t n, int64_t s, struct ph_buf *o)
{
	return rewrite(p, n, s, 0, 1, rw_clock, o);
}

static int rw_log_event(const uint8_t *p, size_t n, int64_t s, struct ph_buf *o)
{
	return rewrite(p, n, s, 5, 0, NULL, o);
}

static int rw_log(const uint8_t *p, size_t n, int64_t s, struct ph_buf *o)
{
	return rewrite(p, n, s, 0, 1, rw_log_event, o);
}

static int rw_packet(const uint8_t *p, size_t n, int64_t shift,
		     struct ph_buf *o)
{
	const uint8_t *end = p + n;
	struct fld f;

	while (p < end) {
		struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
		rewrite_fn fn = NULL;
		int rc;

		if (!rd_field(&p, end, &f))
			return -1;
		if (f.wt == 2)
			fn = f.id == 1	? rw_bundle :
			     f.id == 6	? rw_snapshot :
			     f.id == 39 ? rw_log :
					  NULL;
		if (f.wt == 0 && f.id == 8)
			rc = wr_field(o, &f, f.v + (uint64_t)shift);
		else if (fn)
			rc = fn(f.p, f.n, shift, &b) || wr_sub(o, &f, &b);
		else
			rc = wr_field(o, &f, f.v);
		ph_buf_release(&b);
		if (rc)
			return -1;
	}
	return 0;
}

/* Appends the Trace in one with every timestamp moved by shift ns. */
static int add_shifted_proto(struct ph_buf *out, const struct ph_buf *one,
			     int64_t shift)
{
	const uint8_t *p = (const uint8_t *)one->buf, *end = p + one->len;
	struct fld f;

	while (p < end) {
		struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
		int rc;

		if (!rd_field(&p, end, &f))
			return -1;
		rc = f.id == 1 && f.wt == 2 ? rw_packet(f.p, f.n, shift, &b) ||
						      wr_sub(out, &f, &b) :
					      wr_field(out, &f, f.v);
		ph_buf_release(&b);
		if (rc)
			return -1;
	}
	return 0;
}

/* The ftrace text block of the systrace HTML (unzipped with unzip -p). */
static int ftrace_block(const char *zip, struct ph_buf *out)
{
	char cmd[4200];
	FILE *p;
	struct ph_buf html = PH_BUF_INIT((size_t)1 << 30);
	char buf[1 << 16];
	size_t n;
	const char *s, *e;

	snprintf(cmd, sizeof(cmd), "unzip -p '%s'", zip);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		if (ph_buf_add(&html, buf, n))
			break;
	pclose(p);
	s = strstr(html.buf, "\n# tracer:");
	if (s)
		s++;
	e = s ? strstr(s, "</script>") : NULL;
	if (!s || !e || ph_buf_add(out, s, (size_t)(e - s))) {
		ph_buf_release(&html);
		return -1;
	}
	ph_buf_release(&html);
	return 0;
}

/* Appends block with every "sec.usec:" timestamp moved by shift_us. */
static int add_shifted(struct ph_buf *out, const struct ph_buf *blk,
		       int64_t shift_us)
{
	const char *p = blk->buf, *end = blk->buf + blk->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl + 1 : end, *br, *ts = NULL;

		br = *p == '#' ? NULL : memchr(p, ']', (size_t)(le - p));
		if (br) {
			/* the first token ending in ':' that starts a digit */
			for (const char *q = br + 1; q < le; q++) {
				if (q[-1] == ' ' && *q >= '0' && *q <= '9') {
					const char *c = q;

					while (c < le && *c != ' ' && *c != ':')
						c++;
					if (c < le && *c == ':') {
						ts = q;
						break;
					}
				}
			}
		}
		if (ts) {
			long long sec = 0, us = 0;
			const char *q = ts;

			while (*q >= '0' && *q <= '9')
				sec = sec * 10 + (*q++ - '0');
			if (*q == '.')
				for (q++; *q >= '0' && *q <= '9'; q++)
					us = us * 10 + (*q - '0');
			us += sec * 1000000 + shift_us;
			if (ph_buf_add(out, p, (size_t)(ts - p)) ||
			    ph_buf_addf(out, "%lld.%06lld", us / 1000000,
					us % 1000000) ||
			    ph_buf_add(out, q, (size_t)(le - q)))
				return -1;
		} else if (ph_buf_add(out, p, (size_t)(le - p))) {
			return -1;
		}
		p = le;
	}
	return 0;
}

/* --- the floor: a plain decode of every packet ------------------------ */

static volatile uint64_t floor_sink;

/* Every field of one message, nothing kept; 0, or -1 when malformed. */
static int decode_fields(const uint8_t *p, size_t n, uint64_t *sum)
{
	const uint8_t *end = p + n;
	struct fld f;

	while (p < end) {
		if (!rd_field(&p, end, &f))
			return -1;
		*sum += f.v + f.n;
	}
	return 0;
}

/* A packed varint list, every value read. */
static int decode_packed(const struct fld *f, uint64_t *sum)
{
	const uint8_t *p = f->p, *end = f->p + f->n;
	uint64_t v;

	while (p < end) {
		if (!rd_varint(&p, end, &v))
			return -1;
		*sum += v;
	}
	return 0;
}

/* An FtraceEventBundle: each event (2) and each compact_sched (4) list. */
static int decode_bundle(const uint8_t *p, size_t n, uint64_t *sum)
{
	const uint8_t *end = p + n;
	struct fld f, g;

	while (p < end) {
		if (!rd_field(&p, end, &f))
			return -1;
		if (f.wt == 2 && f.id == 2) {
			const uint8_t *q = f.p, *qe = f.p + f.n;

			/* an event: its fields, and those of its payload */
			while (q < qe) {
				if (!rd_field(&q, qe, &g))
					return -1;
				if (g.wt == 2 && g.id > 2 &&
				    decode_fields(g.p, g.n, sum))
					return -1;
				*sum += g.v;
			}
		} else if (f.wt == 2 && f.id == 4) {
			const uint8_t *q = f.p, *qe = f.p + f.n;

			while (q < qe) {
				if (!rd_field(&q, qe, &g))
					return -1;
				if (g.wt == 2 && g.id != 5 && g.id != 6 &&
				    decode_packed(&g, sum))
					return -1;
			}
		}
	}
	return 0;
}

/*
 * Decodes every TracePacket of a Trace and its fields, ftrace bundles
 * down to each event's fields: best-of-3 MB/s, or -1 when malformed.
 */
static double decode_floor_mbps(const struct ph_buf *b)
{
	double best = 0;
	uint64_t sum = 0;

	for (int i = 0; i < 3; i++) {
		const uint8_t *p = (const uint8_t *)b->buf, *end = p + b->len;
		double t0 = now_s(), dt;
		struct fld f, g;

		while (p < end) {
			const uint8_t *q, *qe;

			if (!rd_field(&p, end, &f))
				return -1;
			if (f.id != 1 || f.wt != 2)
				continue;
			for (q = f.p, qe = f.p + f.n; q < qe;) {
				if (!rd_field(&q, qe, &g))
					return -1;
				if (g.wt == 2 && g.id == 1 &&
				    decode_bundle(g.p, g.n, &sum))
					return -1;
				sum += g.v;
			}
		}
		dt = now_s() - t0;
		if (b->len / dt / 1e6 > best)
			best = b->len / dt / 1e6;
	}
	floor_sink = sum; /* used: the decode cannot be optimised away */
	return best;
}

/* --- the detectors, timed on their own ---------------------------------- */

/*
 * Runs every analyze detector on the proto trace in b with the scope
 * `process`, as `porthole trace analyze` does: best-of-3 seconds from
 * opening the SQL views to the last detector, or -1 when the load, the
 * context or any detector fails (named on stderr).
 */
static double detectors_s(const struct ph_buf *b, const char *process)
{
	struct ph_detset ds;
	char err[512];
	double best = 1e9;

	if (ph_detset_prepare(&ds, ph_trace_detectors_dir(NULL), NULL, NULL, 0,
			      err, sizeof(err))) {
		fprintf(stderr, "bench-trace: detectors: %s\n", err);
		return -1;
	}
	for (int i = 0; i < 3 && best >= 0; i++) {
		struct ph_trace t;
		struct ph_tscope scope = PH_TSCOPE_INIT;
		struct ph_tctx c;
		sqlite3 *db = NULL;
		double t0;

		scope.process = process;
		if (ph_trace_init(&t))
			return -1;
		if (ph_trace_load_mem(&t, b->buf, b->len)) {
			fprintf(stderr, "bench-trace: load failed\n");
			best = -1;
			goto next;
		}
		t0 = now_s();
		if (ph_trace_sql_open(&t, &db) ||
		    ph_tctx_open(db, &t, &scope, &c, err, sizeof(err)) ||
		    ph_tctx_claim_names(db, &ds, err, sizeof(err))) {
			fprintf(stderr, "bench-trace: context: %s\n", err);
			best = -1;
			goto next;
		}
		for (size_t k = 0; k < ds.n && best >= 0; k++) {
			struct ph_detrun r = { .d = &ds.d[k] };

			if (ds.d[k].question)
				continue; /* trace ask's, not analyze's */
			ph_detrun_run(db, &r);
			if (!r.ok) {
				fprintf(stderr,
					"bench-trace: detector %s failed: "
					"%s\n",
					ds.d[k].id, r.err);
				best = -1;
			}
			ph_buf_release(&r.rows);
			ph_buf_release(&r.ruled);
		}
		if (best >= 0 && now_s() - t0 < best)
			best = now_s() - t0;
next:
		if (db)
			sqlite3_close(db);
		ph_trace_release(&t);
	}
	ph_detset_release(&ds);
	return best;
}

/*
 * Runs `porthole trace analyze` (next to this binary) on path in a child
 * process: 0 with its wall time and peak RSS, or -1 when it could not
 * run or did not exit 0 (a partial load exits 1: that fails too).
 */
static int analyze_child(const char *path, const char *process, double *sec,
			 long *peak_kb)
{
	char self[PATH_MAX], porthole[PATH_MAX + 16];
	char *argv[] = { porthole,    "trace",
			 "analyze",   (char *)path,
			 "--process", (char *)process,
			 "--out",     "build/bench-trace/report",
			 NULL };
	posix_spawn_file_actions_t fa;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct rusage ru;
	pid_t pid;
	int status, rc;
	double t0 = now_s();

	if (n <= 0)
		return -1;
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(porthole, sizeof(porthole), "%s/porthole", self);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, porthole, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc || wait4(pid, &status, 0, &ru) != pid) {
		fprintf(stderr, "bench-trace: cannot run %s\n", porthole);
		return -1;
	}
	*sec = now_s() - t0;
	*peak_kb = ru.ru_maxrss;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench-trace: %s trace analyze %s: status %d\n",
			porthole, path, status);
		return -1;
	}
	return 0;
}

int main(void)
{
	const char *fx = getenv("PORTHOLE_FIXTURES");
	char src[4096], path[4200];
	struct ph_buf one = PH_BUF_INIT((size_t)1 << 30);
	struct ph_buf big = PH_BUF_INIT((size_t)1 << 31);
	double best_s, ftr, cat, sec, floor, analyze_s;
	size_t bytes;
	long peak_kb;

	if (!fx)
		fx = "../shared/fixtures";
	mkdir("build", 0777);
	mkdir("build/bench-trace", 0777);

	/* proto */
	snprintf(src, sizeof(src),
		 "%s/perfetto/perfetto_android12_cpuschedstack.pftrace", fx);
	if (ph_buf_read_file(&one, src)) {
		fprintf(stderr, "bench-trace: cannot read %s\n", src);
		return 1;
	}
	{
		struct ph_trace t;
		int64_t span;

		if (ph_trace_init(&t) ||
		    ph_trace_load_mem(&t, one.buf, one.len)) {
			fprintf(stderr, "bench-trace: %s does not load\n", src);
			return 1;
		}
		span = t.last_ts - t.first_ts + 1000000;
		ph_trace_release(&t);
		/* shifting by 0 must give the same bytes: the re-encoding
		 * keeps every field and its length width as it was */
		if (add_shifted_proto(&big, &one, 0) || big.len != one.len ||
		    memcmp(big.buf, one.buf, one.len)) {
			fprintf(stderr,
				"bench-trace: re-encoding %s does not "
				"round-trip\n",
				src);
			return 1;
		}
		ph_buf_reset(&big);
		for (int64_t k = 0; big.len < TARGET; k++)
			if (add_shifted_proto(&big, &one, k * span)) {
				fprintf(stderr,
					"bench-trace: cannot re-encode "
					"%s\n",
					src);
				return 1;
			}
	}
	snprintf(path, sizeof(path), "build/bench-trace/android12x.pftrace");
	if (write_file(path, &big))
		return 1;
	/*
	 * The analyze child runs first, while this process holds nothing
	 * big: a spawned child shares this process's memory until it execs,
	 * and wait4's peak RSS for it counts what this process has resident
	 * then.  Later, the input buffer and the heap the loads below leave
	 * to malloc came to ~290 MB, more than the child's own peak, so the
	 * figure was this process's.  The input is read back afterwards.
	 */
	bytes = big.len;
	ph_buf_release(&big);
	if (analyze_child(path, "com.android.systemui", &analyze_s, &peak_kb))
		return 1;
	if (ph_buf_read_file(&big, path) || big.len != bytes) {
		fprintf(stderr, "bench-trace: cannot read %s back\n", path);
		return 1;
	}
	cat = cat_mbps(path, big.len);
	ftr = ingest_mbps(&big, &best_s);
	floor = decode_floor_mbps(&big);
	if (ftr < 0 || floor < 0)
		return 1;
	printf("{\"name\":\"trace_ingest_proto_mbps\",\"value\":%.1f,\"unit\":"
	       "\"MB/s\",\"bytes\":%zu}\n",
	       ftr, big.len);
	printf("{\"name\":\"trace_cat_mbps\",\"value\":%.1f,\"unit\":\"MB/s\"}\n",
	       cat);
	printf("{\"name\":\"trace_decode_floor_mbps\",\"value\":%.1f,"
	       "\"unit\":\"MB/s\"}\n",
	       floor);
	printf("{\"name\":\"trace_ingest_ratio_floor\",\"value\":%.2f,"
	       "\"unit\":\"x\"}\n",
	       ftr / floor);
	sec = detectors_s(&big, "com.android.systemui");
	if (sec < 0)
		return 1;
	printf("{\"name\":\"trace_detectors_100mb_s\",\"value\":%.3f,"
	       "\"unit\":\"s\"}\n",
	       sec);
	printf("{\"name\":\"trace_mem_ratio\",\"value\":%.2f,\"unit\":\"x\","
	       "\"peak_rss_bytes\":%lld,\"bytes\":%zu}\n",
	       (double)peak_kb * 1024 / (double)big.len,
	       (long long)peak_kb * 1024, big.len);
	printf("{\"name\":\"trace_analyze_100mb_s\",\"value\":%.3f,"
	       "\"unit\":\"s\"}\n",
	       analyze_s);

	/* ftrace text */
	ph_buf_reset(&one);
	ph_buf_reset(&big);
	snprintf(src, sizeof(src),
		 "%s/systrace/trace_input_blog_launcher_scroll.html.zip", fx);
	if (ftrace_block(src, &one)) {
		fprintf(stderr, "bench-trace: no ftrace block in %s\n", src);
		return 1;
	}
	for (int64_t k = 0; big.len < TARGET; k++)
		if (add_shifted(&big, &one, k * 10 * 1000000))
			return 1;
	snprintf(path, sizeof(path), "build/bench-trace/systracex.txt");
	if (write_file(path, &big))
		return 1;
	cat = cat_mbps(path, big.len);
	ftr = ingest_mbps(&big, &best_s);
	if (ftr < 0)
		return 1;
	printf("{\"name\":\"trace_ingest_ftrace_mbps\",\"value\":%.1f,"
	       "\"unit\":\"MB/s\",\"bytes\":%zu,\"cat_mbps\":%.1f}\n",
	       ftr, big.len, cat);
	ph_buf_release(&one);
	ph_buf_release(&big);
	return 0;
}
