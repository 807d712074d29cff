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

int ph_cmd_usage_error(const struct ph_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "porthole %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: %.*s\n", (int)strcspn(cmd->usage, "\n"),
		cmd->usage);
	return 2;
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
