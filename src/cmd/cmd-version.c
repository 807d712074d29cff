/* porthole version: the build's version and protocol. */
#include "ph_common.h"
#include "cmd.h"

#ifndef PH_VERSION
#define PH_VERSION "0.1.0-dev"
#endif

static int version_exec(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("porthole %s (protocol 1)\n", PH_VERSION);
	return 0;
}

const struct ph_cmd ph_cmd_version = {
	.name = "version",
	.summary = "print the version and the wire protocol it speaks",
	.usage = "porthole version",
	.exec = version_exec,
};
