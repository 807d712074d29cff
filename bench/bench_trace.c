/*
 * bench_trace: trace ingestion throughput, beside `cat FILE > /dev/null`
 * measured in the same run on the same file.
 *
 * Inputs, generated under build/bench-trace/ (never committed):
 *  - proto: perfetto_android12_cpuschedstack.pftrace repeated to >= 100 MB.
 *    The copies are concatenated as they are (a Trace is a sequence of
 *    packets, so the result is a valid trace) WITHOUT shifting timestamps:
 *    re-encoding every timestamp would mean re-writing the packets; the
 *    copies therefore overlap in time, which makes the time sort harder,
 *    not easier.
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

		ph_trace_init(&t);
		if (ph_trace_load_mem(&t, b->buf, b->len))
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
	while (big.len < TARGET)
		if (ph_buf_add(&big, one.buf, one.len))
			return 1;
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
