/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_opt.c: the option tables' parser and its help (src/host/opt.c):
 * values into the args struct, positionals in order wherever they stand,
 * "--" and a command's rest, --help, and every usage error naming what
 * was wrong.
 */
#include "ph_common.h"
#include "harness.h"
#include "host/opt.h"

struct t_args {
	bool json;
	const char *out;
	int64_t limit;
	double secs;
	int mode;
};

#define OFF(f) offsetof(struct t_args, f)
static const struct ph_opt t_opts[] = {
	{ .name = "json",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(json),
	  .help = "JSON" },
	{ .name = "out",
	  .short_name = 'o',
	  .kind = PH_OPT_STR,
	  .offset = OFF(out),
	  .metavar = "DIR",
	  .help = "where" },
	{ .name = "limit",
	  .kind = PH_OPT_INT,
	  .offset = OFF(limit),
	  .metavar = "N",
	  .help = "how many" },
	{ .name = "secs",
	  .kind = PH_OPT_NUM,
	  .offset = OFF(secs),
	  .metavar = "S",
	  .help = "how long" },
	{ .name = "fast",
	  .kind = PH_OPT_CONST,
	  .offset = OFF(mode),
	  .value = 1,
	  .help = "fast | good" },
	{ .name = "slow",
	  .kind = PH_OPT_CONST,
	  .offset = OFF(mode),
	  .value = 2,
	  .help = "slow" },
	{ .kind = PH_OPT_END },
};

static const struct ph_opt t_req[] = {
	{ .name = "scenario",
	  .kind = PH_OPT_STR,
	  .offset = OFF(out),
	  .metavar = "NAME",
	  .help = "name",
	  .flags = PH_OPT_REQUIRED },
	{ .kind = PH_OPT_END },
};

void test_opt__values_and_positionals(void)
{
	char *argv[] = { "cmd",	   "a",	      "--json", "-o",	  "-x",
			 "b",	   "--limit", "-5",	"--secs", "1.5",
			 "--fast", "--slow",  "-",	NULL };
	struct t_args t = { 0 };
	struct ph_opt_args a;
	char why[200];

	CHECK_INT(ph_opt_parse(t_opts, &t, 13, argv, 0, &a, why, sizeof(why)),
		  PH_OPT_OK);
	CHECK(t.json);
	CHECK_STR(t.out, "-x"); /* a value is the next argument, always */
	CHECK_INT(t.limit, -5);
	CHECK(t.secs == 1.5);
	CHECK_INT(t.mode, 2); /* the last of two flags into one field */
	CHECK_INT(a.npos, 3);
	CHECK_STR(a.pos[0], "a");
	CHECK_STR(a.pos[1], "b");
	CHECK_STR(a.pos[2], "-"); /* standard input, not an option */
	CHECK(!a.dashdash);
}

void test_opt__dashdash(void)
{
	char *argv[] = { "cmd", "--json", "--", "prog", "--json", NULL };
	char *argv2[] = { "cmd", "x", "--", "--json", NULL };
	struct t_args t = { 0 };
	struct ph_opt_args a;
	char why[200];

	CHECK_INT(ph_opt_parse(t_opts, &t, 5, argv, PH_OPT_PARSE_REST, &a, why,
			       sizeof(why)),
		  PH_OPT_OK);
	CHECK(a.dashdash);
	CHECK_INT(a.npos, 0);
	CHECK_INT(a.nrest, 2);
	CHECK_STR(a.rest[0], "prog");
	CHECK_STR(a.rest[1], "--json");
	/* without a command to run, what follows -- is positional */
	t.json = false;
	CHECK_INT(ph_opt_parse(t_opts, &t, 4, argv2, 0, &a, why, sizeof(why)),
		  PH_OPT_OK);
	CHECK(!t.json);
	CHECK_INT(a.npos, 2);
	CHECK_STR(a.pos[1], "--json");
	CHECK_INT(a.nrest, 0);
}

void test_opt__help(void)
{
	char *argv[] = { "cmd", "x", "-h", NULL };
	char *argv2[] = { "cmd", "--out", "--help", NULL };
	struct t_args t = { 0 };
	struct ph_opt_args a;
	char why[200];

	CHECK_INT(ph_opt_parse(t_opts, &t, 3, argv, 0, &a, why, sizeof(why)),
		  PH_OPT_HELP);
	/* a value that reads "--help" is the value */
	CHECK_INT(ph_opt_parse(t_opts, &t, 3, argv2, 0, &a, why, sizeof(why)),
		  PH_OPT_OK);
	CHECK_STR(t.out, "--help");
}

void test_opt__errors_name_the_argument(void)
{
	static const struct {
		int argc;
		char *argv[4];
		const struct ph_opt *opts;
		const char *why;
	} cases[] = {
		{ 2, { "c", "--bogus" }, t_opts, "unknown option --bogus" },
		{ 2, { "c", "-q" }, t_opts, "unknown option -q" },
		{ 2, { "c", "--out" }, t_opts, "--out needs a value (DIR)" },
		{ 3,
		  { "c", "--limit", "5x" },
		  t_opts,
		  "bad value for --limit: 5x" },
		{ 3, { "c", "--secs", "" }, t_opts, "bad value for --secs: " },
		{ 2, { "c", "x" }, t_req, "--scenario is required" },
	};

	for (size_t i = 0; i < PH_ARRAY_SIZE(cases); i++) {
		char *argv[4];
		struct t_args t = { 0 };
		struct ph_opt_args a;
		char why[200];

		memcpy(argv, cases[i].argv, sizeof(argv));
		CHECK_INT(ph_opt_parse(cases[i].opts, &t, cases[i].argc, argv,
				       0, &a, why, sizeof(why)),
			  PH_OPT_BAD);
		CHECK_STR(why, cases[i].why);
	}
}

void test_opt__synopsis_help_markdown(void)
{
	char buf[300], *text = NULL;
	size_t len = 0;
	FILE *f;

	ph_opt_synopsis(t_req, buf, sizeof(buf));
	CHECK_STR(buf, "--scenario NAME");
	ph_opt_synopsis(t_opts, buf, sizeof(buf));
	CHECK_STR(buf, "[--json] [--out DIR] [--limit N] [--secs S] [--fast] "
		       "[--slow]");
	f = open_memstream(&text, &len);
	CHECK(f);
	ph_opt_print_help(t_opts, f);
	fclose(f);
	CHECK(strstr(text, "  -o, --out DIR  where\n"));
	CHECK(strstr(text, "  --json         JSON\n"));
	free(text);
	f = open_memstream(&text, &len);
	CHECK(f);
	ph_opt_print_markdown(t_opts, f);
	fclose(f);
	CHECK(!strncmp(text, "| option | meaning |\n|---|---|\n", 30));
	CHECK(strstr(text, "| `-o, --out DIR` | where |\n"));
	CHECK(strstr(text, "| `--fast` | fast \\| good |\n"));
	free(text);
}

struct t_many {
	struct ph_opt_strs set;
	const char *one;
};

static const struct ph_opt t_many_opts[] = {
	{ .name = "set",
	  .kind = PH_OPT_STR,
	  .offset = offsetof(struct t_many, set),
	  .metavar = "k=v",
	  .help = "a parameter",
	  .flags = PH_OPT_REPEATS },
	{ .name = "one",
	  .kind = PH_OPT_STR,
	  .offset = offsetof(struct t_many, one),
	  .metavar = "X",
	  .help = "the last one given" },
	{ .kind = PH_OPT_END },
};

/* A repeated option keeps every value in order; past the cap it counts
 * them and keeps the first it could not hold, for the command to name. */
void test_opt__repeats_keep_every_value(void)
{
	char *argv[2 + 2 * (PH_OPT_STRS_MAX + 2) + 4];
	char vals[PH_OPT_STRS_MAX + 2][8];
	struct t_many t = { 0 };
	struct ph_opt_args a;
	char why[200];
	int n = 0;

	argv[n++] = "cmd";
	argv[n++] = "--one";
	argv[n++] = "first";
	argv[n++] = "--set";
	argv[n++] = "a=1";
	argv[n++] = "--one";
	argv[n++] = "second";
	argv[n++] = "--set";
	argv[n++] = "b=2";
	argv[n] = NULL;
	CHECK_INT(ph_opt_parse(t_many_opts, &t, n, argv, 0, &a, why,
			       sizeof(why)),
		  PH_OPT_OK);
	CHECK_INT(t.set.n, 2);
	CHECK_STR(t.set.v[0], "a=1");
	CHECK_STR(t.set.v[1], "b=2");
	CHECK(!t.set.past);
	CHECK_STR(t.one, "second");

	memset(&t, 0, sizeof(t));
	n = 1;
	for (int i = 0; i < PH_OPT_STRS_MAX + 2; i++) {
		snprintf(vals[i], sizeof(vals[i]), "k%d", i);
		argv[n++] = "--set";
		argv[n++] = vals[i];
	}
	argv[n] = NULL;
	CHECK_INT(ph_opt_parse(t_many_opts, &t, n, argv, 0, &a, why,
			       sizeof(why)),
		  PH_OPT_OK);
	CHECK_INT(t.set.n, PH_OPT_STRS_MAX + 2);
	CHECK_STR(t.set.v[PH_OPT_STRS_MAX - 1], vals[PH_OPT_STRS_MAX - 1]);
	CHECK_STR(t.set.past, vals[PH_OPT_STRS_MAX]);
	/* checking without a struct keeps nothing and still accepts them */
	CHECK_INT(ph_opt_parse(t_many_opts, NULL, n, argv, 0, &a, why,
			       sizeof(why)),
		  PH_OPT_OK);
}
