/*
 * cmd.h: the shape of a subcommand.
 *
 * Each subcommand lives in src/cmd/cmd-<name>.c and exports one
 * `const struct ph_cmd ph_cmd_<name>`; main.c lists them in one table and
 * does the shared set-up their flags ask for (tmux's cmd_entry, git's
 * cmd_struct).  Adding a subcommand is one file and one table line.
 *
 * exec returns the process exit status: 0 success, 1 "found something"
 * where a command defines it, 2 bad arguments or internal error.
 */
#ifndef PH_CMD_H
#define PH_CMD_H

#include "ph_common.h"

enum {
	PH_CMD_QUIET_SIGPIPE = 1 << 0, /* exit quietly when stdout goes away */
};

struct ph_cmd {
	const char *name;
	const char *summary; /* one line, for `porthole help` */
	const char *usage;   /* the full help text */
	unsigned flags;
	int (*exec)(int argc, char **argv); /* argv[0] is the command name */
};

/* Prints "porthole <cmd>: <why>" and the usage line to stderr; returns 2. */
int ph_cmd_usage_error(const struct ph_cmd *cmd, const char *fmt, ...)
	PH_PRINTF(2, 3);

/* A whole decimal integer (all of s, in range) into *out; false if not. */
bool ph_cmd_int(const char *s, int64_t *out);

/*
 * The io view's options, which `porthole io` and `porthole iotrace
 * attach` share (cmd-io.c): --pid N and --offset-ms MS at argv[*i], into
 * o.  1 when it took the option and its value (*i is on the value), 0
 * when argv[*i] is another or its value is bad: the caller's usage error
 * names it.
 */
struct ph_io_opts;
int ph_cmd_io_view_opt(int argc, char **argv, int *i, struct ph_io_opts *o);

const struct ph_cmd *ph_cmd_find(const char *name);
extern const struct ph_cmd *const ph_cmds[];

#endif
