/* porthole version: the build's version and protocol. */
#include "ph_common.h"
#include "cmd.h"
#include "porthole.h"

/* The host and the agent are released together, under one version. */
#ifndef PH_VERSION
#define PH_VERSION PORTHOLE_VERSION
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
