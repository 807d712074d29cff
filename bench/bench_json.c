/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_json: JSON parse throughput on a 50 MB NDJSON file of realistic
 * events, ours beside jansson's, in the same run on the same bytes.
 *
 * The file is generated deterministically (a fixed-seed PRNG) with the mix
 * of kinds and field shapes the wire carries: recompositions and frames
 * dominate, queries and HTTP calls carry SQL and URLs, logs carry text with
 * escapes and non-ASCII.  Each parser reads every line into a tree; ours
 * reuses one reader and resets one arena per line (no per-value malloc),
 * jansson allocates as it always does.  Best of 3 passes each.
 *
 * Prints {"name":...,"value":...,"unit":...} lines: json_parse_mbps,
 * json_parse_jansson_mbps, json_parse_ratio.
 */
#include "ph_common.h"
#include "ph_clock.h"
#include "ph_json.h"

#include <jansson.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static const char *const screens[] = { "Cart", "Home", "Checkout", "Product",
				       "Search" };
static const char *const sqls[] = {
	"SELECT id, name, price_cents, qty FROM cart_items WHERE cart_id = ? ORDER BY position",
	"INSERT INTO events(kind, payload, created_at) VALUES (?, ?, ?)",
	"UPDATE cart SET total_cents = ?, updated_at = ? WHERE id = ?",
};

static int gen_line(struct ph_buf *b, uint64_t seq, int64_t t)
{
	uint32_t r = next() % 100;
	const char *scr = screens[next() % 5];

	if (r < 45)
		return ph_buf_addf(
			b,
			"{\"event\":\"recompose\",\"t\":%" PRId64
			",\"seq\":%" PRIu64
			",\"data\":{\"id\":\"%s.ItemRow#%04x\",\"name\":\"%s.ItemRow\",\"screen\":\"%s\",\"pass\":%u,\"triggeredBy\":[\"CartViewModel.items\",\"<unnamed:SnapshotMutableStateImpl#%06x>\"]}}\n",
			t, seq, scr, next() & 0xffff, scr, scr, next() % 50,
			next() & 0xffffff);
	if (r < 70)
		return ph_buf_addf(
			b,
			"{\"event\":\"frame\",\"t\":%" PRId64
			",\"seq\":%" PRIu64 ",\"data\":{\"frameId\":%" PRIu64
			",\"durationMs\":%.3f,\"deadlineMs\":16.667,\"missed\":%u,\"phases\":{\"input\":%.3f,\"animation\":%.3f,\"layout\":%.3f,\"draw\":%.3f},\"worstPhase\":\"layout\"}}\n",
			t, seq, seq / 3, (next() % 40000) / 1000.0, next() % 3,
			(next() % 2000) / 1000.0, (next() % 2000) / 1000.0,
			(next() % 9000) / 1000.0, (next() % 5000) / 1000.0);
	if (r < 80)
		return ph_buf_addf(
			b,
			"{\"event\":\"db_end\",\"t\":%" PRId64
			",\"seq\":%" PRIu64 ",\"data\":{\"id\":\"q%" PRIu64
			"\",\"sql\":\"%s\",\"args\":\"88213,%u\",\"kind\":\"query\",\"elapsedMs\":\"%u\",\"result\":\"%u rows\",\"thread\":\"%s\"}}\n",
			t, seq, seq, sqls[next() % 3], next() % 1000,
			next() % 200, next() % 40,
			next() % 7 ? "db-1" : "main");
	if (r < 88)
		return ph_buf_addf(
			b,
			"{\"event\":\"http_end\",\"t\":%" PRId64
			",\"seq\":%" PRIu64 ",\"data\":{\"id\":\"h%" PRIu64
			"\",\"method\":\"POST\",\"url\":\"https://api.example.com/v1/checkout?token=*&cart=88213\",\"status\":\"%u\",\"elapsedMs\":\"%u\",\"phase\":\"done\",\"responseBody\":{\"contentType\":\"application/json\",\"byteCount\":%u,\"truncated\":false,\"text\":\"{\\\"error\\\":\\\"payment_required\\\",\\\"message\\\":\\\"Card declined \\u2014 try another\\\"}\"}}}\n",
			t, seq, seq, next() % 5 ? 200 : 402, next() % 4000,
			next() % 9000);
	if (r < 95)
		return ph_buf_addf(
			b,
			"{\"event\":\"log\",\"t\":%" PRId64 ",\"seq\":%" PRIu64
			",\"data\":{\"level\":\"W\",\"tag\":\"CartRepo\",\"message\":\"Sync took %u ms \xe2\x80\x94 retrying\\n\\tat com.example.Cart.sync(Cart.kt:%u)\",\"thread\":\"main\"}}\n",
			t, seq, next() % 900, next() % 400);
	return ph_buf_addf(
		b,
		"{\"event\":\"state_write\",\"t\":%" PRId64 ",\"seq\":%" PRIu64
		",\"data\":{\"keys\":[\"CartViewModel.items\",\"CartViewModel.total\"],\"value\":%.6f}}\n",
		t, seq, (next() % 100000000) / 997.0);
}

static double now_s(void)
{
	return (double)ph_clock_mono_ns() / 1e9;
}

static double run_ours(const struct ph_buf *file, size_t *lines)
{
	struct ph_json_reader r;
	struct ph_arena a;
	struct ph_json *v;
	struct ph_err err;
	double t0 = now_s();

	*lines = 0;
	ph_json_reader_init(&r);
	ph_arena_init(&a, 0, SIZE_MAX);
	for (const char *p = file->buf, *end = p + file->len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		ph_arena_reset(&a);
		if (ph_json_read(&r, &a, p, n, &v, &err)) {
			fprintf(stderr, "bench_json: line %zu: %s\n", *lines,
				err.msg);
			exit(1);
		}
		(*lines)++;
		p += n + 1;
	}
	ph_arena_release(&a);
	ph_json_reader_release(&r);
	return now_s() - t0;
}

static double run_jansson(const struct ph_buf *file)
{
	double t0 = now_s();
	json_error_t err;

	for (const char *p = file->buf, *end = p + file->len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *j = json_loadb(p, n, 0, &err);

		if (!j) {
			fprintf(stderr, "bench_json: jansson: %s\n", err.text);
			exit(1);
		}
		json_decref(j);
		p += n + 1;
	}
	return now_s() - t0;
}

int main(int argc, char **argv)
{
	size_t target = argc > 1 ? strtoull(argv[1], NULL, 10) : 50u << 20;
	struct ph_buf file = PH_BUF_INIT(PH_BUF_NO_CAP);
	double ours = 1e9, theirs = 1e9, mb;
	size_t lines = 0;
	int64_t t = 13701;

	for (uint64_t seq = 0; file.len < target; seq++) {
		t += next() % 4;
		if (gen_line(&file, seq, t)) {
			fprintf(stderr, "bench_json: out of memory\n");
			return 1;
		}
	}
	mb = (double)file.len / 1e6;
	for (int i = 0; i < 3; i++) {
		double a = run_ours(&file, &lines), b = run_jansson(&file);

		ours = a < ours ? a : ours;
		theirs = b < theirs ? b : theirs;
	}
	printf("{\"name\":\"json_parse_mbps\",\"value\":%.1f,\"unit\":\"MB/s\",\"bytes\":%zu,\"lines\":%zu}\n",
	       mb / ours, file.len, lines);
	printf("{\"name\":\"json_parse_jansson_mbps\",\"value\":%.1f,\"unit\":\"MB/s\",\"jansson\":\"%s\"}\n",
	       mb / theirs, JANSSON_VERSION);
	printf("{\"name\":\"json_parse_ratio\",\"value\":%.2f,\"unit\":\"x\"}\n",
	       theirs / ours);
	ph_buf_release(&file);
	return 0;
}
