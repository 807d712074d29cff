/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hello.c: the session's identity (docs/protocol.md section 2, Hello).
 */
#include "ph_common.h"
#include "collectors.h"

#include <sys/utsname.h>

/* "Manufacturer Model": on Linux, the DMI product, else the host name. */
static void device_name(char *buf, size_t size)
{
	FILE *f = fopen("/sys/class/dmi/id/product_name", "re");
	struct utsname u;

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	if (!buf[0] && !uname(&u))
		snprintf(buf, size, "Linux %s", u.machine);
}

/* First 16 hex digits of a hash of machine-id and package: never raw. */
static void device_id(const char *app_id, char *out, size_t size)
{
	char mid[64] = "";
	FILE *f = fopen("/etc/machine-id", "re");
	uint64_t h = 1469598103934665603ull; /* FNV-1a 64 */

	if (f) {
		if (!fgets(mid, sizeof(mid), f))
			mid[0] = '\0';
		fclose(f);
	}
	for (const char *p = mid; *p && *p != '\n'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (const char *p = app_id; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	snprintf(out, size, "%016" PRIx64, h);
}

void ph_collectors_hello(const struct ph_agent *a, struct ph_jw *w)
{
	static const char *const collectors[] = {
		"logs",	     "frames",	       "startup",   "main_thread",
		"memory",    "device",	       "exit_info", "inflight",
		"nav_state", "recompositions", "state",	    "semantics_tree",
		"sqlite",    "curl",	       "input",	    "jobs",
	};
	char dev[128], id[24];

	device_name(dev, sizeof(dev));
	device_id(a->app_id, id, sizeof(id));
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "protocol", 1);
	ph_jw_kv_str(w, "packageName", a->app_id);
	ph_jw_kv_str(w, "processName", a->app_id);
	if (a->version_name[0])
		ph_jw_kv_str(w, "versionName", a->version_name);
	ph_jw_kv_bool(w, "debuggable", true);
	ph_jw_kv_str(w, "device", dev);
	ph_jw_kv_int(w, "sdkInt", 0);
	ph_jw_kv_int(w, "startedAt", a->started_at);
	ph_jw_key(w, "collectors");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < PH_ARRAY_SIZE(collectors); i++)
		ph_jw_str(w, collectors[i]);
	ph_jw_arr_end(w);
	ph_jw_kv_str(w, "deviceId", id);
	ph_jw_kv_str(w, "runtime", "libporthole");
	ph_jw_kv_str(w, "runtimeVersion", PORTHOLE_VERSION);
	ph_jw_kv_int(w, "pid", a->pid);
	ph_jw_kv_str(w, "clock", "CLOCK_MONOTONIC");
	ph_jw_kv_str(w, "transport", "abstract");
	ph_jw_kv_str(w, "socket", a->socket_name);
	ph_jw_obj_end(w);
}
