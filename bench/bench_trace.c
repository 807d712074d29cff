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
 * chunks, page cache warm.  Best of 3.  trace_mem_ratio = bytes held by
 * the tables and strings after loading / input bytes (the transient event
 * buffer is freed by then).  trace_detectors_100mb_s = the whole analyze
 * on the proto input minus its ingest.
 */
#include "ph_common.h"
#include "ph_clock.h"
#include "ph_buf.h"
#include "trace/trace.h"
#include "trace/trace_cli.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

static size_t held_bytes(struct ph_trace *t)
{
	size_t n =
		t->strs.arena.total + t->strs.alloc * 12 + t->strs.nslots * 4;

	for (int i = 0; i < PH_T_COUNT; i++) {
		struct ph_table *tb = &t->tables[i];

		for (uint32_t c = 0; c < tb->ncols; c++) {
			int ty = tb->spec[c].type;

			n += tb->cap * (ty == PH_COL_I64 || ty == PH_COL_F64 ?
						8 :
					ty == PH_COL_ID ? 0 :
							  4);
		}
	}
	return n;
}

static double ingest_mbps(const struct ph_buf *b, double *best_s, double *ratio)
{
	double best = 0;

	*best_s = 1e9;
	for (int i = 0; i < 3; i++) {
		struct ph_trace t;
		double t0 = now_s(), dt;

		if (ph_trace_init(&t) || ph_trace_load_mem(&t, b->buf, b->len))
			fprintf(stderr, "bench-trace: load failed\n");
		dt = now_s() - t0;
		if (dt < *best_s)
			*best_s = dt;
		if (b->len / dt / 1e6 > best)
			best = b->len / dt / 1e6;
		*ratio = (double)held_bytes(&t) / (double)b->len;
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

int main(void)
{
	const char *fx = getenv("PORTHOLE_FIXTURES");
	char src[4096], path[4200];
	struct ph_buf one = PH_BUF_INIT((size_t)1 << 30);
	struct ph_buf big = PH_BUF_INIT((size_t)1 << 31);
	double best_s, ratio, ftr, cat, sec;

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
	cat = cat_mbps(path, big.len);
	ftr = ingest_mbps(&big, &best_s, &ratio);
	printf("{\"name\":\"trace_ingest_proto_mbps\",\"value\":%.1f,\"unit\":"
	       "\"MB/s\",\"bytes\":%zu}\n",
	       ftr, big.len);
	printf("{\"name\":\"trace_cat_mbps\",\"value\":%.1f,\"unit\":\"MB/s\"}\n",
	       cat);
	printf("{\"name\":\"trace_mem_ratio\",\"value\":%.2f,\"unit\":\"x\"}\n",
	       ratio);
	{
		char *argv[] = { "analyze",   path,
				 "--process", "com.android.systemui",
				 "--out",     "build/bench-trace/report",
				 NULL };
		double t0 = now_s();
		FILE *saved = stdout;

		stdout = fopen("/dev/null", "w");
		ph_trace_cli_analyze(6, argv);
		fclose(stdout);
		stdout = saved;
		sec = now_s() - t0 - best_s;
		printf("{\"name\":\"trace_detectors_100mb_s\",\"value\":%.3f,"
		       "\"unit\":\"s\"}\n",
		       sec > 0 ? sec : 0);
	}

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
	ftr = ingest_mbps(&big, &best_s, &ratio);
	printf("{\"name\":\"trace_ingest_ftrace_mbps\",\"value\":%.1f,"
	       "\"unit\":\"MB/s\",\"bytes\":%zu,\"cat_mbps\":%.1f}\n",
	       ftr, big.len, cat);
	ph_buf_release(&one);
	ph_buf_release(&big);
	return 0;
}
