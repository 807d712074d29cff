/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd.h: the shape of a subcommand.
 *
 * Each subcommand lives in src/cmd/cmd-<name>.c and exports one
 * `const struct ph_cmd ph_cmd_<name>`; main.c lists them in one table and
 * does the shared set-up their flags ask for (tmux's cmd_entry, git's
 * cmd_struct).  Adding a subcommand is one file and one table line; its
 * options are one ph_opt table (host/opt.h) that its parse, its --help
 * and docs/cli.md read, and tests/e2e/cli_help.sh walks ph_cmds[] to
 * check that each answers --help and is in docs/cli.md.
 *
 * exec returns the process exit status: 0 success, 1 "found something"
 * where a command defines it, 2 bad arguments or internal error.
 */
#ifndef PH_CMD_H
#define PH_CMD_H

#include "ph_common.h"
#include "host/opt.h"

enum {
	PH_CMD_QUIET_SIGPIPE = 1 << 0, /* exit quietly when stdout goes away */
	PH_CMD_TAKES_COMMAND = 1 << 1, /* `-- CMD...` follows its options */
};

/*
 * A command, or one verb of a command of verbs (`trace analyze`: its
 * name is "trace analyze").  Every command has an options table, empty
 * when it takes none: its parse, its --help and docs/cli.md's flag table
 * all read it (host/opt.h).
 */
struct ph_cmd {
	const char *name;
	const char *summary;	   /* one line, for `porthole help` */
	const char *args;	   /* positionals for the synopsis: "BASE NEW";
				      one starting "--" goes after the options */
	const struct ph_opt *opts; /* its options, PH_OPT_END-terminated */
	const char *about;	   /* more help after the options, or NULL */
	const struct ph_cmd *const *verbs; /* a command of verbs: NULL-ended */
	unsigned flags;
	int (*exec)(int argc, char **argv); /* argv[0] is the command name */
};

/* Prints "porthole <cmd>: <why>" and the usage line to stderr; returns 2. */
int ph_cmd_usage_error(const struct ph_cmd *cmd, const char *fmt, ...)
	PH_PRINTF(2, 3);

/* "porthole NAME ARGS [--opt X]...", the usage line, into buf. */
void ph_cmd_synopsis(const struct ph_cmd *cmd, char *buf, size_t size);

/* The whole help of a command (usage, summary, options, about) to f. */
void ph_cmd_print_help(const struct ph_cmd *cmd, FILE *f);

/*
 * Parses argv with cmd's table into the args struct at base (host/opt.h).
 * PH_CMD_GO_ON when the command should run; otherwise the exit status to
 * return: 0 after printing --help to stdout, 2 after a usage error naming
 * the argument and the usage line on stderr.
 */
#define PH_CMD_GO_ON (-1)
int ph_cmd_parse(const struct ph_cmd *cmd, void *base, int argc, char **argv,
		 struct ph_opt_args *a);

/*
 * Runs the verb argv[1] of a command of verbs with argv from the verb on:
 * `--help`, `-h` or `help` as the verb prints the command's help; no verb
 * or an unknown one is a usage error.
 */
int ph_cmd_run_verb(const struct ph_cmd *cmd, int argc, char **argv);

/* The verb of cmd called word ("analyze"), or NULL. */
const struct ph_cmd *ph_cmd_verb(const struct ph_cmd *cmd, const char *word);

/* A whole decimal integer (all of s, in range) into *out; false if not. */
bool ph_cmd_int(const char *s, int64_t *out);

/*
 * The io view's options, which `porthole io` and `porthole iotrace
 * attach` share (cmd-io.c): --pid N and --offset-ms MS, two table entries
 * into the const char * fields pid and offset_ms of the args struct T;
 * ph_cmd_io_view_check() checks them and stores them into o: 0, or 2
 * after a usage error naming the bad one.
 */
#define PH_CMD_IO_VIEW_OPTS(T)                                            \
	{ .name = "pid",                                                  \
	  .kind = PH_OPT_STR,                                             \
	  .offset = offsetof(T, pid),                                     \
	  .metavar = "N",                                                 \
	  .help = "the app's pid, when its hello has none" },             \
	{                                                                 \
		.name = "offset-ms", .kind = PH_OPT_STR,                  \
		.offset = offsetof(T, offset_ms), .metavar = "MS",        \
		.help = "app t = the recording's mono_ns + MS (default: " \
			"checked through both sides' wall-clock offsets)" \
	}
struct ph_io_opts;
int ph_cmd_io_view_check(const struct ph_cmd *cmd, const char *pid,
			 const char *offset_ms, struct ph_io_opts *o);

const struct ph_cmd *ph_cmd_find(const char *name);
extern const struct ph_cmd *const ph_cmds[];

#endif
