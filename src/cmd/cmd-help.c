/* porthole help [CMD]: the list of commands, or one command's help. */
#include "ph_common.h"
#include "cmd.h"

static int help_exec(int argc, char **argv)
{
	const struct ph_cmd *cmd;

	if (argc > 1) {
		cmd = ph_cmd_find(argv[1]);
		if (!cmd) {
			fprintf(stderr, "porthole help: no command '%s'\n",
				argv[1]);
			return 2;
		}
		printf("usage: %s\n", cmd->usage);
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
	.usage = "porthole help [COMMAND]",
	.exec = help_exec,
};
