/* SPDX-License-Identifier: Apache-2.0 */
/*
 * opt.h: a command's options as one table, read by the parser, by
 * `--help` and by docs/cli.md's flag tables (`porthole help --markdown`),
 * so the three cannot drift apart.  git's parse-options and tmux's args
 * templates are the models.
 *
 * A table is a static const array of struct ph_opt ended by an entry
 * whose kind is PH_OPT_END.  Each entry names where its value goes as an
 * offset into a struct the command declares (its "args"), so the table
 * needs no pointer to a local and can be read without running the
 * command.  Values are borrowed: a string option's value points into
 * argv.
 *
 * Parsing rules, the same for every command:
 *   - `--name`, and `-x` for an entry with a short letter; a value is the
 *     next argument (`--out FILE`), whatever it starts with;
 *   - `--help` and `-h` ask for help wherever an option may stand;
 *   - `--` ends the options: what follows is positional (or, for a
 *     command that runs another, that command: struct ph_opt_args.rest);
 *   - any other argument that starts with '-', is longer than "-" and
 *     has no space in it is an unknown option; the rest are positional,
 *     in order, anywhere.
 * The same option given twice keeps the last value, but for a
 * PH_OPT_REPEATS one, which keeps them all.
 */
#ifndef PH_HOST_OPT_H
#define PH_HOST_OPT_H

#include "ph_common.h"

#include <stddef.h>

enum ph_opt_kind {
	PH_OPT_END = 0, /* ends a table */
	PH_OPT_BOOL,	/* a flag: bool, set true */
	PH_OPT_STR,	/* const char *, the argument as given */
	PH_OPT_INT,	/* int64_t: a whole decimal number */
	PH_OPT_NUM,	/* double: a decimal number */
	PH_OPT_CONST,	/* a flag: int, set to the entry's value */
};

enum {
	PH_OPT_REQUIRED = 1 << 0, /* the command refuses to run without it */
	/*
	 * A PH_OPT_STR given any number of times, each value kept: its
	 * value at offset is a struct ph_opt_strs.
	 */
	PH_OPT_REPEATS = 1 << 1,
};

/*
 * A PH_OPT_REPEATS option's values, in the order given.  n counts every
 * one given, also those past PH_OPT_STRS_MAX, which are not kept but the
 * first of them (past): the command says what too many means.
 */
#define PH_OPT_STRS_MAX 64
struct ph_opt_strs {
	const char *v[PH_OPT_STRS_MAX];
	size_t n;
	const char *past; /* the first value past PH_OPT_STRS_MAX, or NULL */
};

struct ph_opt {
	const char *name; /* the long name without "--": "json" */
	char short_name;  /* 'o' for -o, or 0 */
	enum ph_opt_kind kind;
	size_t offset;	     /* of its value in the command's args struct */
	const char *metavar; /* the value's name in help: "FILE"; NULL for
				a flag */
	const char *help;    /* one line, for --help and docs/cli.md */
	unsigned flags;	     /* PH_OPT_REQUIRED */
	int value;	     /* what a PH_OPT_CONST flag stores */
};

/* Where the positional arguments are after a parse. */
struct ph_opt_args {
	char **pos; /* the positional arguments, in order (argv[1..]) */
	int npos;
	char **rest; /* with PH_OPT_PARSE_REST: what followed "--" */
	int nrest;
	bool dashdash; /* "--" was given */
};

enum {
	/* what follows "--" is another command's argv, kept apart as rest */
	PH_OPT_PARSE_REST = 1 << 0,
};

enum {
	PH_OPT_BAD = -1, /* a usage error; why says which */
	PH_OPT_OK = 0,
	PH_OPT_HELP = 1, /* --help or -h was given */
};

/*
 * Parses argv[1..argc) (argv[0] is the command's name) against opts into
 * the struct at base (NULL: only checks the arguments).  Positional arguments
 * are moved to the front of argv (argv[1..]), which a is told about.  Returns
 * PH_OPT_OK, PH_OPT_HELP, or PH_OPT_BAD with one line in why naming the
 * argument
 * ("unknown option --x", "--out needs a value", "bad value for --limit:
 * x", "--scenario is required").
 */
int ph_opt_parse(const struct ph_opt *opts, void *base, int argc, char **argv,
		 unsigned flags, struct ph_opt_args *a, char *why,
		 size_t why_size);

/* The table's entry for --name (without dashes), or NULL. */
const struct ph_opt *ph_opt_find(const struct ph_opt *opts, const char *name);

/*
 * The options' synopsis, "--scenario NAME [--json] [--out FILE]", into
 * buf (truncated to size, always NUL-terminated).
 */
void ph_opt_synopsis(const struct ph_opt *opts, char *buf, size_t size);

/*
 * Prints s from column col, breaking lines before 80 columns at spaces
 * and going on at column indent; a synopsis breaks only before an
 * option, never between an option and its value.  Ends with a newline.
 */
void ph_opt_print_wrapped(FILE *f, const char *s, int col, int indent,
			  bool synopsis);

/* One line per option, "  -o, --out DIR   help", wrapped, for --help. */
void ph_opt_print_help(const struct ph_opt *opts, FILE *f);

/*
 * The options as a Markdown table (| option | meaning |), or the line
 * "No options." for an empty table: docs/cli.md's flag tables.
 */
void ph_opt_print_markdown(const struct ph_opt *opts, FILE *f);

#endif
