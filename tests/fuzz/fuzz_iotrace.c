/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_iotrace: the ftrace block line parser and the text reader on arbitrary
 * bytes.
 *
 * Checks, beyond "no crash, no read outside the input":
 *  - the fast header path and the general one agree on every line, both
 *    on the classification and on every field;
 *  - the batch reader (ph_iot_parse_lines(), with its memory of line
 *    shapes) says of each line what ph_iot_parse_line() says, under every
 *    instruction set the CPU has;
 *  - a parsed record is sane (op and event in range, comm <= 16 bytes);
 *  - every line is counted exactly once, and a text reader fed the input in
 *    two pieces (split where the first byte says) counts the same as one
 *    fed it whole;
 *  - each ds row it emits is one line of 17 CSV fields.
 */
#include "ph_common.h"
#include "iotrace/block_parse.h"
#include "iotrace/csv_out.h"
#include "iotrace/text_reader.h"

static struct ph_iot_clock clock_;

static int check_row(void *ctx, struct ph_iot_row *row)
{
	char buf[PH_IOT_DS_ROW_MAX];
	size_t n = ph_iot_ds_row(&clock_, row, buf), fields = 1;
	bool quoted = false;

	(void)ctx;
	if (n > sizeof(buf) || !n || buf[n - 1] != '\n')
		__builtin_trap();
	for (size_t i = 0; i + 1 < n; i++) {
		if (buf[i] == '"')
			quoted = !quoted;
		else if (!quoted && (buf[i] == '\n' || buf[i] == '\r'))
			__builtin_trap();
		else if (!quoted && buf[i] == ',')
			fields++;
	}
	if (quoted || fields != 17)
		__builtin_trap();
	return 0;
}

static void same_record(const struct ph_iot_rec *a, const struct ph_iot_rec *b,
			enum ph_iot_line kind)
{
	if (a->ts_ns != b->ts_ns || a->pid != b->pid || a->tgid != b->tgid ||
	    a->cpu != b->cpu)
		__builtin_trap();
	if (kind != PH_IOT_LINE_BLOCK)
		return;
	if (a->event != b->event || a->sector != b->sector ||
	    a->nr_sector != b->nr_sector || a->dev != b->dev ||
	    a->bytes != b->bytes || a->op != b->op || a->flags != b->flags ||
	    a->has_error != b->has_error || a->error != b->error ||
	    a->comm_len != b->comm_len || memcmp(a->comm, b->comm, a->comm_len))
		__builtin_trap();
	if (a->op >= PH_IOT_OP_COUNT || a->comm_len > PH_IOT_COMM_MAX ||
	    a->event < PH_IOT_EV_ISSUE || a->event >= PH_IOT_EV_COUNT)
		__builtin_trap();
}

static void lines(const char *data, size_t size)
{
	const char *p = data, *e = data + size;

	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
		struct ph_iot_rec a, b;
		enum ph_iot_bad wa = PH_IOT_BAD_COUNT, wb = PH_IOT_BAD_COUNT;
		enum ph_iot_line ka, kb;
		/* a private copy, so a read past the line is caught */
		char *copy = malloc(n ? n : 1);

		memcpy(copy, p, n);
		ka = ph_iot_parse_line(copy, n, &a, &wa);
		kb = ph_iot_parse_line_general(copy, n, &b, &wb);
		if (ka != kb)
			__builtin_trap();
		if (ka == PH_IOT_LINE_MALFORMED &&
		    (wa != wb || wa >= PH_IOT_BAD_COUNT))
			__builtin_trap();
		if (ka == PH_IOT_LINE_BLOCK || ka == PH_IOT_LINE_OTHER)
			same_record(&a, &b, ka);
		free(copy);
		p = nl ? nl + 1 : e;
	}
}

/* ph_iot_parse_lines() over data, under isa, against the line parser. */
static void batch(const char *data, size_t size, enum ph_iot_isa isa)
{
	struct ph_iot_lines l;
	struct ph_iot_parsed out[8];
	const char *p = data, *e = data + size;

	if (!ph_iot_parse_set_isa(isa))
		return;
	ph_iot_lines_init(&l);
	while (p < e) {
		size_t used, n = ph_iot_parse_lines(&l, p, (size_t)(e - p), out,
						    PH_ARRAY_SIZE(out), &used);

		for (size_t i = 0; i < n; i++) {
			struct ph_iot_rec r;
			enum ph_iot_bad why = PH_IOT_BAD_COUNT;
			enum ph_iot_line k = ph_iot_parse_line(
				out[i].line, out[i].len, &r, &why);

			if (k != out[i].kind ||
			    (k == PH_IOT_LINE_MALFORMED && why != out[i].why))
				__builtin_trap();
			if (k == PH_IOT_LINE_BLOCK || k == PH_IOT_LINE_OTHER)
				same_record(&out[i].rec, &r, k);
		}
		p += used;
		if (n < PH_ARRAY_SIZE(out)) { /* a line it leaves, or the end */
			const char *nl = memchr(p, '\n', (size_t)(e - p));

			p = nl ? nl + 1 : e;
		}
	}
}

static void counts(const struct ph_iot_text_reader *s)
{
	const struct ph_iot_parse_stats *st = &s->st;
	uint64_t sum = st->blank + st->comments + st->html + st->other_events +
		       st->unknown + st->malformed + st->too_long +
		       st->lost_markers;
	uint64_t bad = 0;

	for (int i = 1; i < PH_IOT_EV_COUNT; i++)
		sum += st->block[i];
	for (int i = 0; i < PH_IOT_BAD_COUNT; i++)
		bad += st->bad[i];
	if (sum != st->lines || bad != st->malformed ||
	    s->pair.st.paired + s->pair.st.unmatched !=
		    st->block[PH_IOT_EV_COMPLETE])
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ph_iot_text_reader one, two;
	char *copy = malloc(size ? size : 1);
	size_t cut = size ? data[0] % (size + 1) : 0;

	ph_iot_clock_init(&clock_, 0);
	memcpy(copy, data, size);
	lines(copy, size);
	batch(copy, size, PH_IOT_ISA_AVX2);
	batch(copy, size, PH_IOT_ISA_PORTABLE);
	batch(copy, size, PH_IOT_ISA_BASE); /* the default where no AVX2 */
	ph_iot_parse_set_isa(PH_IOT_ISA_AVX2);

	ph_iot_text_reader_init(&one, check_row, NULL);
	ph_iot_text_reader_feed(&one, copy, size);
	ph_iot_text_reader_end_input(&one);
	counts(&one);

	ph_iot_text_reader_init(&two, check_row, NULL);
	ph_iot_text_reader_feed(&two, copy, cut);
	ph_iot_text_reader_feed(&two, copy + cut, size - cut);
	ph_iot_text_reader_end_input(&two);
	counts(&two);
	if (memcmp(&one.st, &two.st, sizeof(one.st)) ||
	    one.pair.st.paired != two.pair.st.paired ||
	    one.pair.st.unmatched != two.pair.st.unmatched)
		__builtin_trap();

	ph_iot_text_reader_release(&one);
	ph_iot_text_reader_release(&two);
	free(copy);
	return 0;
}
