/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_iotrace_raw: the trace_pipe_raw page decoder on arbitrary bytes,
 * with this kernel's formats (tests/golden/iotrace/raw-6.18/).
 *
 * Checks, beyond "no crash, no read outside the page": every record it
 * hands out is sane (event and op in range, comm <= 16 bytes), and the
 * counters add up (no more block events than 4-byte words in the page).
 */
#include "ph_common.h"
#include "iotrace/rawpipe.h"

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static const char issue[] =
	"name: block_rq_issue\n"
	"ID: 2104\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n"
	"\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n"
	"\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;\n"
	"\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;\n"
	"\n";

static const char insert[] =
	"name: block_rq_insert\n"
	"ID: 2105\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n"
	"\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n"
	"\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;\n"
	"\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;\n"
	"\n";

static const char complete[] =
	"name: block_rq_complete\n"
	"ID: 2107\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:int error;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n"
	"\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n"
	"\tfield:__data_loc char[] cmd;\toffset:44;\tsize:4;\tsigned:0;\n"
	"\n";

static int check(void *ctx, const struct ph_iot_rec *r)
{
	(void)ctx;
	if (r->event < PH_IOT_EV_ISSUE || r->event >= PH_IOT_EV_COUNT ||
	    r->op >= PH_IOT_OP_COUNT || r->comm_len > PH_IOT_COMM_MAX ||
	    r->tgid != -1)
		__builtin_trap();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ph_iot_raw r;
	static bool ready;
	const char *formats[PH_IOT_EV_COUNT] = { NULL, issue, insert,
						 complete };
	uint8_t *copy = malloc(size ? size : 1);
	uint64_t before;

	if (!ready) {
		if (ph_iot_raw_init_text(&r, header_page, formats, 4096))
			__builtin_trap();
		ready = true;
	}
	/* a private copy, so a read past the page is caught */
	memcpy(copy, data, size);
	before = r.events + r.other_events + r.bad_events;
	ph_iot_raw_page(&r, copy, size, 1, check, NULL);
	if (r.events + r.other_events + r.bad_events - before > size / 4 + 1)
		__builtin_trap();
	free(copy);
	return 0;
}
