/* SPDX-License-Identifier: Apache-2.0 */
/* perfetto.c: system traces recorded on a device over adb (perfetto.h). */
#include "ph_common.h"
#include "perfetto.h"
#include "ph_buf.h"
#include "ph_clock.h"
#include "ph_error.h"
#include "run.h"

#include <unistd.h>

/* What a recording asks the device for: scheduling, CPU frequency and
 * idle, and the framework's atrace categories the trace questions read. */
static const char *const categories[] = {
	"sched", "freq", "idle",	  "am",	   "wm",
	"gfx",	 "view", "binder_driver", "dalvik"
};

#define ADB_MS	 10000 /* a quick adb shell command */
#define PULL_MS	 60000
#define START_MS 40000

/* `adb pull REMOTE LOCAL`, then `adb shell rm -f REMOTE` whatever it did. */
static int pull_and_remove(const char *remote, const char *local,
			   struct ph_buf *out)
{
	char *pull[] = { "adb", "pull", (char *)remote, (char *)local, NULL };
	char *rm[] = { "adb", "shell", "rm", "-f", (char *)remote, NULL };
	int rc = 0;

	if (local) {
		ph_buf_reset(out);
		rc = ph_run(pull, out, PULL_MS);
	}
	ph_run(rm, NULL, ADB_MS);
	return rc;
}

/* argv[k..]: the categories, then NULL; the new k. */
static size_t add_categories(char **argv, size_t k)
{
	for (size_t i = 0; i < PH_ARRAY_SIZE(categories); i++)
		argv[k++] = (char *)categories[i];
	argv[k] = NULL;
	return k;
}

int ph_perfetto_record(int seconds, const char *remote, const char *local,
		       char *why, size_t wsize)
{
	struct ph_buf out = PH_BUF_INIT(1 << 16);
	char tsec[24];
	char *argv[24];
	size_t k = 0;
	int rc;

	why[0] = '\0';
	snprintf(tsec, sizeof(tsec), "%ds", seconds);
	argv[k++] = "adb";
	argv[k++] = "shell";
	argv[k++] = "perfetto";
	argv[k++] = "-o";
	argv[k++] = (char *)remote;
	argv[k++] = "-t";
	argv[k++] = tsec;
	add_categories(argv, k);
	rc = ph_run(argv, &out, (seconds + 30) * 1000);
	if (rc == 0)
		rc = pull_and_remove(remote, local, &out);
	if (rc != 0)
		snprintf(why, wsize,
			 "perfetto over adb failed (exit %d): %.300s", rc,
			 out.buf);
	ph_buf_release(&out);
	return rc ? PH_EIO : 0;
}

/*
 * The pid `perfetto --background-wait` prints on stdout: the last line
 * that is a number alone (adb shell brings its log lines on stderr into
 * the same output, before it).  0 when there is none.
 */
static int64_t printed_pid(const char *out)
{
	int64_t pid = 0;

	while (*out) {
		size_t n = strcspn(out, "\r\n"), d = strspn(out, "0123456789");

		if (d && d == n && d < 12)
			pid = strtoll(out, NULL, 10);
		out += n;
		out += strspn(out, "\r\n");
	}
	return pid;
}

int ph_perfetto_start(const char *name, int seconds, const char *remote,
		      int64_t *pid, char *why, size_t wsize)
{
	struct ph_buf out = PH_BUF_INIT(1 << 16);
	char tsec[24];
	char *argv[28];
	size_t k = 0;
	int rc = 0;

	why[0] = '\0';
	*pid = 0;
	snprintf(tsec, sizeof(tsec), "%ds", seconds);
	argv[k++] = "adb";
	argv[k++] = "shell";
	argv[k++] = "perfetto";
	/* -wait: its exit status says whether the session started (a
	 * second session of this name is refused there, where --background
	 * would print a pid and exit 0 regardless). */
	argv[k++] = "--background-wait";
	if (name) {
		argv[k++] = "--unique-session-name";
		argv[k++] = (char *)name;
	}
	argv[k++] = "-b";
	argv[k++] = "64mb";
	argv[k++] = "-o";
	argv[k++] = (char *)remote;
	argv[k++] = "-t";
	argv[k++] = tsec;
	add_categories(argv, k);
	if (ph_run(argv, &out, START_MS) != 0) {
		snprintf(why, wsize,
			 "perfetto --background-wait over adb failed: %.300s",
			 out.buf);
		rc = PH_EIO;
	} else if ((*pid = printed_pid(out.buf)) <= 0) {
		snprintf(why, wsize,
			 "perfetto started a session but printed no pid to "
			 "stop it by: %.300s",
			 out.buf);
		rc = PH_EIO;
	}
	ph_buf_release(&out);
	return rc;
}

int ph_perfetto_stop(int64_t pid, const char *remote, const char *local,
		     int wait_ms, char *why, size_t wsize)
{
	struct ph_buf out = PH_BUF_INIT(1 << 16);
	char spid[32];
	char *term[] = { "adb", "shell", "kill", "-TERM", spid, NULL };
	char *alive[] = { "adb", "shell", "kill", "-0", spid, NULL };
	int64_t end = ph_clock_uptime_ms() + wait_ms;
	int rc;

	why[0] = '\0';
	snprintf(spid, sizeof(spid), "%" PRId64, pid);
	/* SIGTERM: perfetto writes the buffer to its -o file, then exits;
	 * the file is whole only once the process is gone. */
	if (pid > 0 && !ph_run(term, NULL, ADB_MS))
		while (ph_clock_uptime_ms() < end &&
		       !ph_run(alive, NULL, ADB_MS))
			usleep(100000);
	rc = pull_and_remove(remote, local, &out);
	if (rc) {
		snprintf(why, wsize, "its trace could not be pulled: %.300s",
			 out.buf);
		why[strcspn(why, "\r\n")] = '\0';
	}
	ph_buf_release(&out);
	return rc ? PH_EIO : 0;
}

int ph_perfetto_clone(const char *name, const char *remote, const char *local,
		      char *why, size_t wsize)
{
	struct ph_buf out = PH_BUF_INIT(1 << 16);
	char *argv[] = { "adb",		 "shell",
			 "perfetto",	 "--clone-by-name",
			 (char *)name,	 "-o",
			 (char *)remote, NULL };
	int rc;

	why[0] = '\0';
	rc = ph_run(argv, &out, PULL_MS);
	if (!rc)
		rc = pull_and_remove(remote, local, &out);
	if (rc)
		snprintf(why, wsize, "perfetto --clone-by-name failed: %.300s",
			 out.buf);
	ph_buf_release(&out);
	return rc ? PH_EIO : 0;
}
