/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole mcp [--application-id ID]: the MCP server on stdio
 * (docs/mcp.md).  stdout carries nothing but protocol; diagnostics go to
 * stderr.  Exit 0 when the client closes stdin, 2 on bad arguments or
 * when the output cannot be written.
 */
#include "ph_common.h"
#include "cmd.h"
#include "ph_log.h"
#include "host/live.h"
#include "mcp/mcp.h"

#include <signal.h>
#include <unistd.h>

extern const struct ph_cmd ph_cmd_mcp;

struct mcp_args {
	const char *app_id;
	bool no_link;
};

#define OFF(f) offsetof(struct mcp_args, f)
static const struct ph_opt mcp_opts[] = {
	{ .name = "application-id",
	  .kind = PH_OPT_STR,
	  .offset = OFF(app_id),
	  .metavar = "ID",
	  .help = "the app to connect to (default $PORTHOLE_APPLICATION_ID)" },
	{ .name = "no-link",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(no_link),
	  .help = "answer from sessions on disk only" },
	{ .kind = PH_OPT_END },
};

static int mcp_exec(int argc, char **argv)
{
	struct ph_live lv;
	struct ph_mcp m;
	struct mcp_args args = { 0 };
	struct ph_opt_args pa;
	const char *app_id;
	bool no_link;
	int rc = ph_cmd_parse(&ph_cmd_mcp, &args, argc, argv, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (pa.npos)
		return ph_cmd_usage_error(&ph_cmd_mcp, "unexpected argument %s",
					  pa.pos[0]);
	app_id = args.app_id;
	no_link = args.no_link;
	/* A client that goes away must not kill us mid-write: EPIPE. */
	signal(SIGPIPE, SIG_IGN);
	if (ph_live_init(&lv))
		return 2;
	if (app_id)
		lv.link.app_id = app_id;
	if (ph_mcp_init(&m, &lv)) {
		ph_live_release(&lv);
		return 2;
	}
	/* The link finds the app itself (and says why not): start it. */
	if (!no_link) {
		if (ph_live_start(&lv))
			ph_warn("mcp: the device link did not start");
		else
			m.started = true;
	}
	/* Give the link a moment so the first call finds the app. */
	if (m.started)
		ph_link_wait_connected(&lv.link, 1500);
	rc = ph_mcp_serve(&m, 0, 1);
	if (m.started)
		ph_live_stop(&lv);
	ph_mcp_release(&m);
	ph_live_release(&lv);
	return rc ? 2 : 0;
}

const struct ph_cmd ph_cmd_mcp = {
	.name = "mcp",
	.summary = "the MCP server a coding assistant talks to (stdio)",
	.opts = mcp_opts,
	.about = "JSON-RPC 2.0 over stdio, one message per line; see "
		 "docs/mcp.md.",
	.exec = mcp_exec,
};
