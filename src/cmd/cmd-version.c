/* SPDX-License-Identifier: Apache-2.0 */
/* porthole version: the build's version and protocol. */
#include "ph_common.h"
#include "cmd.h"
#include "porthole.h"

/* The host and the agent are released together, under one version. */
#ifndef PH_VERSION
#define PH_VERSION PORTHOLE_VERSION
#endif

extern const struct ph_cmd ph_cmd_version;

static const struct ph_opt version_opts[] = { { .kind = PH_OPT_END } };

static int version_exec(int argc, char **argv)
{
	struct ph_opt_args a;
	int rc = ph_cmd_parse(&ph_cmd_version, NULL, argc, argv, &a);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (a.npos)
		return ph_cmd_usage_error(&ph_cmd_version,
					  "takes no arguments");
	printf("porthole %s (protocol 1)\n", PH_VERSION);
	return 0;
}

const struct ph_cmd ph_cmd_version = {
	.name = "version",
	.summary = "print the version and the wire protocol it speaks",
	.opts = version_opts,
	.exec = version_exec,
};
