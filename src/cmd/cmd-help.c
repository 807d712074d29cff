/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole help [CMD [SUBCOMMAND]] [--markdown] [--list]: the list of
 * commands, one command's help, or, drawn from the same option tables,
 * docs/cli.md's flag tables and the list of every command a test walks.
 */
#include "ph_common.h"
#include "cmd.h"

extern const struct ph_cmd ph_cmd_help;

struct help_args {
	bool markdown;
	bool list;
};

#define OFF(f) offsetof(struct help_args, f)
static const struct ph_opt help_opts[] = {
	{ .name = "markdown",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(markdown),
	  .help = "every command's options as Markdown (docs/cli.md)" },
	{ .name = "list",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(list),
	  .help = "every command and subcommand name, one a line" },
	{ .kind = PH_OPT_END },
};

/* One command's section of docs/cli.md's generated part. */
static void markdown_of(const struct ph_cmd *cmd)
{
	char syn[1400];

	ph_cmd_synopsis(cmd, syn, sizeof(syn));
	printf("### porthole %s\n\n`%s`\n\n%s\n\n", cmd->name, syn,
	       cmd->summary);
	if (cmd->verbs) {
		for (size_t i = 0; cmd->verbs[i]; i++)
			markdown_of(cmd->verbs[i]);
		return;
	}
	ph_opt_print_markdown(cmd->opts, stdout);
	printf("\n");
}

static void list_of(const struct ph_cmd *cmd)
{
	printf("%s\n", cmd->name);
	for (size_t i = 0; cmd->verbs && cmd->verbs[i]; i++)
		list_of(cmd->verbs[i]);
}

static int help_exec(int argc, char **argv)
{
	struct help_args h = { 0 };
	struct ph_opt_args a;
	const struct ph_cmd *cmd;
	int rc = ph_cmd_parse(&ph_cmd_help, &h, argc, argv, &a);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if ((h.markdown || h.list) && a.npos)
		return ph_cmd_usage_error(&ph_cmd_help,
					  "--markdown and --list take no "
					  "command");
	if (h.markdown || h.list) {
		for (size_t i = 0; ph_cmds[i]; i++)
			(h.markdown ? markdown_of : list_of)(ph_cmds[i]);
		return 0;
	}
	if (a.npos > 2)
		return ph_cmd_usage_error(&ph_cmd_help, "too many arguments");
	if (a.npos) {
		cmd = ph_cmd_find(a.pos[0]);
		if (!cmd) {
			fprintf(stderr, "porthole help: no command '%s'\n",
				a.pos[0]);
			return 2;
		}
		if (a.npos == 2 && !(cmd = ph_cmd_verb(cmd, a.pos[1]))) {
			fprintf(stderr,
				"porthole help: no subcommand '%s %s'\n",
				a.pos[0], a.pos[1]);
			return 2;
		}
		ph_cmd_print_help(cmd, stdout);
		return 0;
	}
	printf("usage: porthole <command> [args]\n\n"
	       "Porthole: a window into a running app.\n\ncommands:\n");
	for (size_t i = 0; ph_cmds[i]; i++)
		printf("  %-10s %s\n", ph_cmds[i]->name, ph_cmds[i]->summary);
	printf("\n'porthole help <command>' shows one command's options.\n");
	return 0;
}

const struct ph_cmd ph_cmd_help = {
	.name = "help",
	.summary = "list the commands, or show one command's help",
	.args = "[COMMAND [SUBCOMMAND]]",
	.opts = help_opts,
	.exec = help_exec,
};
