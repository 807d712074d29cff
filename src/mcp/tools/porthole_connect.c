/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole_connect: connect (or reconnect) to an app; on a device, check
 * that it is installed, launch or restart it when asked.  On this machine
 * Porthole cannot start an app it did not build: it says so.
 */
#include "ph_common.h"
#include "mcp/mcp.h"

#include <unistd.h>

static bool safe_id(const char *s)
{
	if (!s || !*s || strlen(s) > 200)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' ||
		      *s == '-'))
			return false;
	return true;
}

static int adb(struct ph_mcp_call *c, struct ph_buf *out, const char *a1,
	       const char *a2, const char *a3, const char *a4, const char *a5,
	       const char *a6, const char *a7)
{
	char *argv[] = { "adb",	     (char *)a1, (char *)a2,
			 (char *)a3, (char *)a4, (char *)a5,
			 (char *)a6, (char *)a7, NULL };

	(void)c;
	ph_buf_reset(out);
	return ph_mcp_run(argv, out, 15000);
}

static int porthole_connect_call(struct ph_mcp_call *c)
{
	struct ph_mcp *m = c->m;
	const char *id = ph_mcp_arg_str(c, "applicationId", ph_mcp_app_id(m));
	bool launch = ph_mcp_arg_bool(c, "launch", false);
	bool restart = ph_mcp_arg_bool(c, "restart", false);
	struct ph_buf out = PH_BUF_INIT(1 << 16);
	char sock[300], socks[8][256], why[400];
	bool local = false, device = false;
	size_t n;
	static char keep[256]; /* the link keeps a pointer to the app id */

	if (!id)
		return ph_mcp_fail(c,
				   "no app id: pass applicationId (the app's "
				   "package name; its socket is "
				   "porthole.<id>)");
	if (!safe_id(id))
		return ph_mcp_fail(c,
				   "'%s' is not an app id (letters, digits, "
				   "'.', '_', '-')",
				   id);
	if (!m->lv)
		return ph_mcp_fail(c, "this server has no device link");
	snprintf(sock, sizeof(sock), "porthole.%s", id);
	n = ph_link_local_sockets(socks, 8);
	for (size_t i = 0; i < n; i++)
		local |= !strcmp(socks[i], sock);
	ph_jw_kv_str(&c->jw, "applicationId", id);
	ph_jw_kv_bool(&c->jw, "runningHere", local);
	if (!local) {
		device = adb(c, &out, "get-state", NULL, NULL, NULL, NULL, NULL,
			     NULL) == 0 &&
			 !strncmp(out.buf, "device", 6);
		ph_jw_kv_bool(&c->jw, "device", device);
		if (!device) {
			ph_buf_release(&out);
			return ph_mcp_fail(
				c,
				"%s is not running on this machine (no @%s) and "
				"no device is attached over adb. Start the app "
				"(a debug build linked with libporthole); "
				"Porthole cannot start a local program it did "
				"not launch.",
				id, sock);
		}
		if (adb(c, &out, "shell", "pm", "path", id, NULL, NULL, NULL) ||
		    !strstr(out.buf, "package:")) {
			ph_buf_release(&out);
			return ph_mcp_fail(c,
					   "%s is not installed on the device; "
					   "install its debug build",
					   id);
		}
		ph_jw_kv_bool(&c->jw, "installed", true);
		if (restart && adb(c, &out, "shell", "am", "force-stop", id,
				   NULL, NULL, NULL)) {
			ph_mcp_fail(c, "could not stop %s: %.200s", id,
				    out.buf);
			ph_buf_release(&out);
			return 0;
		}
		/*
		 * monkey with the launcher category and one event starts the
		 * launcher activity without naming it; it needs the count
		 * ("** Error: Count not specified" otherwise).  It says
		 * "Events injected: 1" when it did; "** No activities found
		 * to run, monkey aborted." when the app has no launcher
		 * activity, with a status adb may or may not pass on.
		 */
		if (launch || restart) {
			int rc = adb(c, &out, "shell", "monkey", "-p", id, "-c",
				     "android.intent.category.LAUNCHER", "1");

			if (rc || !strstr(out.buf, "Events injected: 1")) {
				const char *said = strstr(out.buf, "** ");
				size_t k;

				said = said ? said : out.buf;
				k = strcspn(said, "\n");
				ph_mcp_fail(c, "could not launch %s: %.*s", id,
					    (int)(k > 200 ? 200 : k), said);
				ph_buf_release(&out);
				return 0;
			}
			ph_jw_kv_bool(&c->jw, "launched", true);
		}
	} else if (launch || restart) {
		ph_jw_kv_str(&c->jw, "launchNote",
			     "the app runs on this machine: Porthole does not "
			     "start or restart local programs");
	}
	/* (Re)point the link at this id when it differs. */
	if (!m->lv->link.app_id || strcmp(m->lv->link.app_id, id)) {
		snprintf(keep, sizeof(keep), "%s", id);
		if (m->started)
			ph_live_stop(m->lv);
		m->lv->link.app_id = keep;
		if (ph_live_start(m->lv)) {
			ph_buf_release(&out);
			return ph_mcp_fail(c,
					   "could not start the device link");
		}
		m->started = true;
		m->banner_from = INT64_MIN;
	}
	ph_buf_release(&out);
	if (ph_link_wait_connected(&m->lv->link, 5000)) {
		ph_mcp_line(c, "connected to %s via %s", id,
			    m->lv->link.target);
		if (launch && local)
			ph_mcp_more(c, " (already running here; not "
				       "relaunched)");
		ph_mcp_more(c, "; next: findings");
		ph_jw_kv_bool(&c->jw, "connected", true);
		return 0;
	}
	ph_jw_kv_bool(&c->jw, "connected", false);
	return ph_mcp_fail(c, "not connected to %s within 5 s: %s", id,
			   ph_mcp_why_not(m, why, sizeof(why)));
}

const struct ph_mcp_tool ph_mcp_tool_porthole_connect = {
	.name = "porthole_connect",
	.title = "Connect to the app",
	.description = "Connects Porthole to an app by id (its package "
		       "name). On a device (adb) it checks the app is "
		       "installed and, when asked, launches or restarts it; "
		       "on this machine it connects to the app's socket and "
		       "says so when the app is not running.",
	.props = "\"applicationId\":{\"type\":\"string\",\"description\":"
		 "\"the app id; default: the one the server was started "
		 "with\"},"
		 "\"launch\":{\"type\":\"boolean\",\"default\":false,"
		 "\"description\":\"on a device: launch the app\"},"
		 "\"restart\":{\"type\":\"boolean\",\"default\":false,"
		 "\"description\":\"on a device: force-stop, then launch\"}",
	.flags = PH_TOOL_OPENWORLD,
	.call = porthole_connect_call,
};
