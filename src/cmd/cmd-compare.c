/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole compare BASE NEW [--fail-on regression] [--json]: per-metric
 * diff of two captures with noise floors (src/host/compare.h).  Exit 2
 * with one line when they are not comparable; 1 on a regression with
 * --fail-on regression; else 0.
 */
#include "ph_common.h"
#include "cmd.h"
#include "host/capture.h"
#include "host/compare.h"

static const struct ph_cmd *self(void);

struct compare_args {
	const char *fail_on;
	bool json;
};

#define OFF(f) offsetof(struct compare_args, f)
static const struct ph_opt compare_opts[] = {
	{ .name = "fail-on",
	  .kind = PH_OPT_STR,
	  .offset = OFF(fail_on),
	  .metavar = "regression",
	  .help = "exit 1 when a metric regressed" },
	{ .name = "json",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(json),
	  .help = "one JSON object instead of the table" },
	{ .kind = PH_OPT_END },
};

static int compare_exec(int argc, char **argv)
{
	struct compare_args args = { 0 };
	struct ph_opt_args pa;
	const char *files[2] = { 0 };
	const struct ph_json *cap[2];
	struct ph_buf in[2] = { PH_BUF_INIT(PH_BUF_NO_CAP),
				PH_BUF_INIT(PH_BUF_NO_CAP) };
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_compare_result r;
	struct ph_arena arena;
	bool fail, json;
	int status = ph_cmd_parse(self(), &args, argc, argv, &pa);
	char why[600];

	if (status != PH_CMD_GO_ON)
		return status;
	status = 0;
	if (args.fail_on && strcmp(args.fail_on, "regression"))
		return ph_cmd_usage_error(self(),
					  "--fail-on takes 'regression'");
	if (pa.npos > 2)
		return ph_cmd_usage_error(self(), "two files only");
	if (pa.npos != 2)
		return ph_cmd_usage_error(self(), "BASE and NEW are required");
	files[0] = pa.pos[0];
	files[1] = pa.pos[1];
	fail = args.fail_on != NULL;
	json = args.json;
	ph_arena_init(&arena, 1 << 20, (size_t)2 << 30);
	for (int k = 0; k < 2; k++) {
		if (ph_capture_load(files[k], &arena, &in[k], &cap[k], why,
				    sizeof(why))) {
			fprintf(stderr, "porthole compare: %s\n", why);
			status = 2;
			goto out;
		}
	}
	if ((json ? ph_compare_json : ph_compare)(cap[0], cap[1], &out, &r)) {
		fprintf(stderr, "porthole compare: %s\n",
			r.refusal[0] ? r.refusal : "out of memory");
		status = 2;
		goto out;
	}
	if (r.warning[0])
		fprintf(stderr, "porthole compare: warning: %s\n", r.warning);
	fwrite(out.buf, 1, out.len, stdout);
	status = fail && r.regressions ? 1 : 0;
out:
	ph_buf_release(&in[0]);
	ph_buf_release(&in[1]);
	ph_buf_release(&out);
	ph_arena_release(&arena);
	return status;
}

const struct ph_cmd ph_cmd_compare = {
	.name = "compare",
	.summary = "diff two captures metric by metric, with noise floors",
	.args = "BASE NEW",
	.opts = compare_opts,
	.about = "exit 0 no regression (or no --fail-on), 1 a regression\n"
		 "with --fail-on regression, 2 not comparable or bad input",
	.flags = PH_CMD_QUIET_SIGPIPE,
	.exec = compare_exec,
};

static const struct ph_cmd *self(void)
{
	return &ph_cmd_compare;
}
