/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c: the porthole binary.  One table of subcommands; shared set-up.
 */
#include "ph_common.h"
#include "cmd.h"
#include "ph_log.h"

#include <signal.h>
#include <unistd.h>

extern const struct ph_cmd ph_cmd_help;
extern const struct ph_cmd ph_cmd_version;
extern const struct ph_cmd ph_cmd_trace;
extern const struct ph_cmd ph_cmd_heap;
extern const struct ph_cmd ph_cmd_iotrace;
extern const struct ph_cmd ph_cmd_io;
extern const struct ph_cmd ph_cmd_report;
extern const struct ph_cmd ph_cmd_capture;
extern const struct ph_cmd ph_cmd_compare;
extern const struct ph_cmd ph_cmd_save;
extern const struct ph_cmd ph_cmd_sessions;
extern const struct ph_cmd ph_cmd_watch;
extern const struct ph_cmd ph_cmd_status;
extern const struct ph_cmd ph_cmd_mcp;
extern const struct ph_cmd ph_cmd_ui;

/* One line per command, in `porthole help` order. */
/* clang-format off */
const struct ph_cmd *const ph_cmds[] = {
	&ph_cmd_help,
	&ph_cmd_version,
	&ph_cmd_trace,
	&ph_cmd_heap,
	&ph_cmd_iotrace,
	&ph_cmd_io,
	&ph_cmd_capture,
	&ph_cmd_report,
	&ph_cmd_compare,
	&ph_cmd_save,
	&ph_cmd_sessions,
	&ph_cmd_watch,
	&ph_cmd_status,
	&ph_cmd_mcp,
	&ph_cmd_ui,
	NULL,
};
/* clang-format on */

const struct ph_cmd *ph_cmd_find(const char *name)
{
	for (size_t i = 0; ph_cmds[i]; i++)
		if (!strcmp(ph_cmds[i]->name, name))
			return ph_cmds[i];
	return NULL;
}

void ph_cmd_synopsis(const struct ph_cmd *cmd, char *buf, size_t size)
{
	const char *args = cmd->args ? cmd->args : "";
	bool after = strstr(args, "--"); /* "-- CMD..." follows the options */
	char opts[1024];
	size_t len;

	if (cmd->verbs) {
		len = (size_t)snprintf(buf, size, "porthole %s ", cmd->name);
		for (size_t i = 0; cmd->verbs[i] && len < size; i++) {
			const char *w = strrchr(cmd->verbs[i]->name, ' ');

			len += (size_t)snprintf(buf + len, size - len, "%s%s",
						i ? "|" : "", w ? w + 1 : "");
		}
		if (len < size)
			snprintf(buf + len, size - len, " ...");
		return;
	}
	ph_opt_synopsis(cmd->opts, opts, sizeof(opts));
	snprintf(buf, size, "porthole %s%s%s%s%s%s%s", cmd->name,
		 *args && !after ? " " : "", after ? "" : args,
		 *opts ? " " : "", opts, after ? " " : "", after ? args : "");
}

int ph_cmd_usage_error(const struct ph_cmd *cmd, const char *fmt, ...)
{
	char syn[1400];
	va_list ap;

	fprintf(stderr, "porthole %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	ph_cmd_synopsis(cmd, syn, sizeof(syn));
	fprintf(stderr, "\nusage: %s\n", syn);
	return 2;
}

void ph_cmd_print_help(const struct ph_cmd *cmd, FILE *f)
{
	char syn[1400];

	ph_cmd_synopsis(cmd, syn, sizeof(syn));
	/* continuation lines line up after "usage: porthole NAME " */
	fputs("usage: ", f);
	ph_opt_print_wrapped(f, syn, 7, 7 + 10 + (int)strlen(cmd->name), true);
	fputc('\n', f);
	ph_opt_print_wrapped(f, cmd->summary, 0, 0, false);
	if (cmd->verbs) {
		fprintf(f, "\nsubcommands:\n");
		for (size_t i = 0; cmd->verbs[i]; i++) {
			const struct ph_cmd *v = cmd->verbs[i];

			ph_cmd_synopsis(v, syn, sizeof(syn));
			fputs("  ", f);
			ph_opt_print_wrapped(
				f, syn, 2, 2 + 10 + (int)strlen(v->name), true);
			fputs("      ", f);
			ph_opt_print_wrapped(f, v->summary, 6, 6, false);
		}
		fprintf(f,
			"\n'porthole %s SUBCOMMAND --help' shows its "
			"options.\n",
			cmd->name);
	} else if (cmd->opts && cmd->opts->kind != PH_OPT_END) {
		fprintf(f, "\noptions:\n");
		ph_opt_print_help(cmd->opts, f);
	}
	if (cmd->about)
		fprintf(f, "\n%s\n", cmd->about);
}

int ph_cmd_parse(const struct ph_cmd *cmd, void *base, int argc, char **argv,
		 struct ph_opt_args *a)
{
	unsigned flags = cmd->flags & PH_CMD_TAKES_COMMAND ? PH_OPT_PARSE_REST :
							     0;
	char why[300];

	switch (ph_opt_parse(cmd->opts, base, argc, argv, flags, a, why,
			     sizeof(why))) {
	case PH_OPT_OK: return PH_CMD_GO_ON;
	case PH_OPT_HELP: ph_cmd_print_help(cmd, stdout); return 0;
	default: return ph_cmd_usage_error(cmd, "%s", why);
	}
}

const struct ph_cmd *ph_cmd_verb(const struct ph_cmd *cmd, const char *word)
{
	for (size_t i = 0; cmd->verbs && cmd->verbs[i]; i++) {
		const char *w = strrchr(cmd->verbs[i]->name, ' ');

		if (w && !strcmp(w + 1, word))
			return cmd->verbs[i];
	}
	return NULL;
}

int ph_cmd_run_verb(const struct ph_cmd *cmd, int argc, char **argv)
{
	const struct ph_cmd *verb;

	if (argc < 2)
		return ph_cmd_usage_error(cmd, "which subcommand?");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		ph_cmd_print_help(cmd, stdout);
		return 0;
	}
	verb = ph_cmd_verb(cmd, argv[1]);
	if (!verb)
		return ph_cmd_usage_error(cmd, "no subcommand '%s'", argv[1]);
	return verb->exec(argc - 1, argv + 1);
}

bool ph_cmd_int(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

/*
 * git's run_builtin() habit: output that could not be written is a
 * failure, so `porthole report > /full/disk` does not exit 0.
 */
static int finish_stdout(int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			ph_log(PH_LOG_ERROR, "could not write output: %s",
			       strerror(errno));
		return status ? status : 2;
	}
	return status;
}

int main(int argc, char **argv)
{
	const struct ph_cmd *cmd;

	if (argc < 2) {
		ph_cmd_help.exec(1, (char *[]){ "help", NULL });
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		argv[1] = "help";
	if (!strcmp(argv[1], "--version"))
		argv[1] = "version";
	cmd = ph_cmd_find(argv[1]);
	if (!cmd) {
		fprintf(stderr,
			"porthole: '%s' is not a command; see 'porthole help'\n",
			argv[1]);
		return 2;
	}
	if (cmd->flags & PH_CMD_QUIET_SIGPIPE)
		signal(SIGPIPE, SIG_DFL);
	else
		signal(SIGPIPE, SIG_IGN);
	return finish_stdout(cmd->exec(argc - 1, argv + 1));
}
