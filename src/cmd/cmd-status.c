/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole status [--application-id ID]: connected or not, and why not,
 * each reason with its fix.  Exit 0 when connected, 1 when not.  When
 * connected, a main thread stuck now (the newest `blocked` event in the
 * agent's ring is ongoing) is said too, with its stack.
 */
#include "ph_common.h"
#include "cmd.h"
#include "host/env.h"
#include "host/link.h"
#include "host/session.h"
#include "ph_arena.h"
#include "ph_json.h"

#include <unistd.h>

extern const struct ph_cmd ph_cmd_status;

static bool run_ok(const char *cmd, char *out, size_t size)
{
	FILE *p = popen(cmd, "r");

	out[0] = '\0';
	if (!p)
		return false;
	if (!fgets(out, (int)size, p))
		out[0] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	return pclose(p) == 0;
}

static void last_session(const char *app_id)
{
	struct ph_session_info *v;
	char dir[4200];
	size_t n;

	ph_env_sessions_dir(dir, sizeof(dir));
	if (ph_sessions_list(dir, &v, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		if (app_id && strcmp(v[i].package, app_id))
			continue;
		printf("  last session: %s (%" PRIu64 " events%s)\n", v[i].id,
		       v[i].events, v[i].recording ? ", still recording" : "");
		printf("  its exit, if it died, is reported when the app starts "
		       "again (porthole report %s/events.ndjson)\n",
		       v[i].path);
		break;
	}
	free(v);
}

/*
 * Asks the agent for its newest `blocked` event; when it is ongoing, the
 * main thread was stuck at most a second ago (the watchdog repeats it each
 * second while the stall lasts): prints for how long, and where.
 */
static void main_thread_status(struct ph_link *l)
{
	struct ph_buf out = PH_BUF_INIT(1 << 20);
	struct ph_arena a;
	struct ph_json *root;
	const struct ph_json *ev, *data, *stack;
	int64_t t, now, ms;

	ph_arena_init(&a, 1 << 14, 1 << 22);
	if (ph_link_request(l, "timeline",
			    "{\"kinds\":[\"blocked\"],\"limit\":1}", &out,
			    3000) ||
	    ph_json_parse(&a, out.buf, out.len, &root, NULL)) {
		printf("  main thread: not seen (no answer to timeline)\n");
		goto out;
	}
	ev = ph_json_at(ph_json_get(ph_json_get(root, "result"), "events"), 0);
	data = ph_json_get(ev, "data");
	if (!ph_json_is(ph_json_get(data, "ongoing"), PH_JSON_TRUE) ||
	    !ph_json_as_int(ph_json_get(ev, "t"), &t))
		goto out;
	if (!ph_json_as_int(ph_json_get(ph_json_get(root, "result"), "now"),
			    &now) ||
	    now < t)
		now = t;
	ms = now - t;
	if (ph_json_as_int(ph_json_get(data, "durationMs"), &t) && t > ms)
		ms = t;
	printf("  main thread not answering for %" PRId64 ".%" PRId64
	       " s (since t=%" PRId64 ")\n",
	       ms / 1000, ms % 1000 / 100, now - ms);
	stack = ph_json_get(data, "stack");
	if (!ph_json_is(stack, PH_JSON_STRING))
		stack = ph_json_get(data, "top");
	if (ph_json_is(stack, PH_JSON_STRING)) {
		printf("  stack:\n");
		for (size_t i = 0, b = 0; i <= stack->n; i++) {
			if (i < stack->n && stack->u.s[i] != '\n')
				continue;
			printf("    %.*s\n", (int)(i - b), stack->u.s + b);
			b = i + 1;
		}
	}
out:
	ph_arena_release(&a);
	ph_buf_release(&out);
}

struct status_args {
	const char *app_id;
};

static const struct ph_opt status_opts[] = {
	{ .name = "application-id",
	  .kind = PH_OPT_STR,
	  .offset = offsetof(struct status_args, app_id),
	  .metavar = "ID",
	  .help = "the app to look for (default $PORTHOLE_APPLICATION_ID)" },
	{ .kind = PH_OPT_END },
};

static int status_exec(int argc, char **argv)
{
	struct status_args args = { .app_id = ph_env_app_id() };
	struct ph_opt_args pa;
	const char *app_id;
	int rc;
	char socks[8][256], name[300], out[256];
	size_t n;
	struct ph_link l = { 0 };
	bool ok;

	rc = ph_cmd_parse(&ph_cmd_status, &args, argc, argv, &pa);
	if (rc != PH_CMD_GO_ON)
		return rc;
	if (pa.npos)
		return ph_cmd_usage_error(&ph_cmd_status,
					  "unexpected argument %s", pa.pos[0]);
	app_id = args.app_id;
	n = ph_link_local_sockets(socks, 8);
	if (!app_id && n != 1) {
		printf("not connected: the socket name is unknown\n");
		if (n)
			for (size_t i = 0; i < n; i++)
				printf("  running here: @%s\n", socks[i]);
		printf("  fix: pass --application-id ID or set "
		       "PORTHOLE_APPLICATION_ID\n");
		return 1;
	}
	l.app_id = app_id;
	l.host = ph_env_host();
	l.port = ph_env_port();
	l.once = true;
	snprintf(name, sizeof(name), "porthole.%s", app_id ? app_id : "");
	if (!l.host && app_id) {
		bool local = false;

		for (size_t i = 0; i < n; i++)
			local |= !strcmp(socks[i], name);
		if (!local) {
			char cmd[400];

			if (!run_ok("command -v adb", out, sizeof(out))) {
				printf("not connected: %s is not running on "
				       "this machine, and there is no adb to "
				       "reach a device\n  fix: start the app "
				       "(linked with libporthole), or install "
				       "adb for a device\n",
				       app_id);
				last_session(app_id);
				return 1;
			}
			if (!run_ok("adb get-state 2>/dev/null", out,
				    sizeof(out)) ||
			    strcmp(out, "device")) {
				printf("not connected: no device attached (adb "
				       "get-state: %s)\n  fix: connect a device "
				       "and allow USB debugging (adb devices)\n",
				       out[0] ? out : "none");
				last_session(app_id);
				return 1;
			}
			if (!strpbrk(app_id, "'\"`$;&|<> \\")) {
				snprintf(
					cmd, sizeof(cmd),
					"adb shell pm list packages %s 2>/dev/null"
					" | grep -qx 'package:%s'",
					app_id, app_id);
				if (!run_ok(cmd, out, sizeof(out))) {
					printf("not connected: %s is not "
					       "installed on the device\n  fix: "
					       "install its debug build\n",
					       app_id);
					return 1;
				}
				snprintf(cmd, sizeof(cmd),
					 "adb shell pidof %s 2>/dev/null",
					 app_id);
				if (!run_ok(cmd, out, sizeof(out))) {
					printf("not connected: %s is installed "
					       "but not running\n  fix: start "
					       "it\n",
					       app_id);
					last_session(app_id);
					return 1;
				}
			}
		}
	}
	if (ph_link_start(&l))
		return 2;
	ok = ph_link_wait_connected(&l, 3000);
	if (ok) {
		printf("connected: %s via %s\n  app %s %s on %s, protocol %d, "
		       "started at t=%" PRId64 "\n",
		       l.ident.package, l.target, l.ident.package,
		       l.ident.version, l.ident.device, l.ident.protocol,
		       l.ident.started_at);
		if (l.warning[0])
			printf("  warning: %s\n  fix: check the app id\n",
			       l.warning);
		main_thread_status(&l);
	} else {
		printf("not connected: %s\n  fix: %s\n",
		       l.error[0] ? l.error : "no answer within 3 s",
		       ph_link_fix(l.error));
		last_session(app_id);
	}
	ph_link_stop(&l);
	ph_link_release(&l);
	return ok ? 0 : 1;
}

const struct ph_cmd ph_cmd_status = {
	.name = "status",
	.summary = "connected or not, and why not, with the fix",
	.opts = status_opts,
	.about = "exit 0 connected, 1 not connected",
	.exec = status_exec,
};
