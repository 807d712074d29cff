/*
 * porthole heap: hprof heap dumps into leak traces and retained sizes.
 *
 *   porthole heap leaks DUMP [--map FILE] [--class NAME] [--json]
 *                       [--session ID|DIR]
 *   porthole heap top DUMP [--by retained|shallow|count] [--limit N] [--json]
 *   porthole heap path DUMP OBJECT_ID [--map FILE] [--json]
 *   porthole heap stats DUMP [--json]
 *   porthole heap dump (--application-id ID | --pid PID) [--out FILE]
 *                      [--map FILE] [--json] [--session ID|DIR]
 *
 * The engine is src/heap/; this file parses arguments, for `dump` drives
 * adb (or jcmd) to take the dump, and hands the leaks to a session as
 * `leak` events: the app's live session (a host recording it) after
 * `dump --application-id`, or the one --session names.  docs/heap.md is
 * the manual.
 */
#include "ph_common.h"
#include "cmd.h"
#include "heap/heap.h"
#include "host/env.h"
#include "host/run.h"
#include "host/session.h"
#include "ph_buf.h"
#include "ph_error.h"
#include "ph_log.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern const struct ph_cmd ph_cmd_heap;

/*
 * How long each helper may take before it gets SIGTERM: a stat is quick, a
 * dump of a large heap and its pull over USB are not.
 * PORTHOLE_HEAP_TIMEOUT_MS sets one bound for all of them.
 */
#define STAT_TIMEOUT_MS 15000
#define DUMP_TIMEOUT_MS 300000
#define PULL_TIMEOUT_MS 600000

static int helper_timeout(int deflt)
{
	const char *e = getenv("PORTHOLE_HEAP_TIMEOUT_MS");
	long v = e && *e ? strtol(e, NULL, 10) : 0;

	return v > 0 && v <= INT32_MAX ? (int)v : deflt;
}

/*
 * Runs argv through ph_run (its timeout, and its drain of output past the
 * cap, so a chatty helper never blocks on a full pipe): its exit status,
 * or -1 if it could not run, was killed or timed out.  What it printed
 * goes to `out` when given; otherwise, when it failed, to our stderr.
 */
static int run(char *const argv[], struct ph_buf *out, int timeout_ms)
{
	struct ph_buf said = PH_BUF_INIT(16384);
	int rc = ph_run(argv, out ? out : &said, helper_timeout(timeout_ms));

	if (rc && said.len)
		fprintf(stderr, "%s", said.buf);
	ph_buf_release(&said);
	return rc;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* `am dumpheap` returns at once; the file is done when its size settles. */
static int wait_device_file(char *adb, const char *remote)
{
	long last = -1;
	int stable = 0, dead = 0;

	for (int i = 0; i < 600; i++) {
		struct ph_buf b = PH_BUF_INIT(4096);
		char *argv[] = { adb,  "shell",	       "stat", "-c",
				 "%s", (char *)remote, NULL };
		long size = -1;

		int rc = run(argv, &b, STAT_TIMEOUT_MS);

		if (rc == 0)
			size = strtol(b.buf, NULL, 10);
		ph_buf_release(&b);
		/* adb itself timing out or missing is not "not there yet" */
		if (rc < 0 && ++dead >= 3)
			return -1;
		if (rc >= 0)
			dead = 0;
		if (size > 0 && size == last) {
			if (++stable >= 2)
				return 0;
		} else {
			stable = 0;
		}
		last = size;
		sleep_ms(250);
	}
	return -1;
}

/* The dump's wall-clock time on the session's uptime clock, or 0. */
static int64_t uptime_of(void *ctx, uint64_t wall_ms)
{
	int64_t t;

	if (wall_ms <= INT64_MAX &&
	    ph_session_uptime_at(ctx, (int64_t)wall_ms, &t))
		return t;
	fprintf(stderr,
		"porthole heap: the dump's time does not map onto the "
		"session's clock (no device:clocks event, or the dump is "
		"older than the process); its leak events get t 0\n");
	return 0;
}

/* --session ID|DIR: a session's directory into buf, or false, said. */
static bool session_dir(const char *arg, char *buf, size_t size)
{
	char sessions[4096], path[4400];
	struct stat st;

	if (strchr(arg, '/')) {
		snprintf(buf, size, "%s", arg);
	} else {
		ph_env_sessions_dir(sessions, sizeof(sessions));
		snprintf(buf, size, "%s/%s", sessions, arg);
	}
	snprintf(path, sizeof(path), "%s/events.ndjson", buf);
	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "porthole heap: no session at %s\n", buf);
		return false;
	}
	return true;
}

/*
 * `leaks`, and with a session directory, its `leak` events added to that
 * session (docs/heap.md, "Leaks in the app's session").
 */
static int leaks_into(struct ph_heap_cmd_opts *o, const char *dir)
{
	struct ph_buf ev = PH_BUF_INIT(PH_BUF_NO_CAP);
	size_t lines = 0;
	int status, rc;

	if (!dir)
		return ph_heap_cmd_leaks(o, stdout);
	o->events = &ev;
	o->uptime_of = uptime_of;
	o->uptime_ctx = (void *)dir;
	status = ph_heap_cmd_leaks(o, stdout);
	if ((status <= 1 || status == 3) && ev.len) {
		for (size_t i = 0; i < ev.len; i++)
			lines += ev.buf[i] == '\n';
		rc = ph_session_add_events(dir, ev.buf, ev.len);
		if (rc) {
			fprintf(stderr,
				"porthole heap: could not add the leak "
				"events to %s (%s)\n",
				dir, ph_strerror(rc));
			status = 2;
		} else {
			fprintf(stderr,
				"porthole heap: %zu leak event%s added to "
				"the session %s\n",
				lines, lines == 1 ? "" : "s", dir);
		}
	} else if (status <= 1) {
		fprintf(stderr,
			"porthole heap: no leaks; nothing added to the "
			"session %s\n",
			dir);
	} else if (status == 3) {
		fprintf(stderr,
			"porthole heap: no leaks in the part of the dump "
			"that was read; nothing added to the session %s\n",
			dir);
	}
	ph_buf_release(&ev);
	return status;
}

static int dump_exec(struct ph_heap_cmd_opts *o, const char *app,
		     const char *pid, const char *outpath, const char *session)
{
	char out_default[256], remote[256], live[4200];
	const char *adb_env = getenv("PORTHOLE_ADB");
	const char *jcmd_env = getenv("PORTHOLE_JCMD");
	char *adb = (char *)(adb_env && *adb_env ? adb_env : "adb");
	char *jcmd = (char *)(jcmd_env && *jcmd_env ? jcmd_env : "jcmd");
	int rc;

	if (!outpath) {
		snprintf(out_default, sizeof(out_default), "%s-%ld.hprof",
			 app ? app : pid, (long)time(NULL));
		outpath = out_default;
	}
	if (pid) {
		char *argv[] = { jcmd, (char *)pid, "GC.heap_dump",
				 (char *)outpath, NULL };

		unlink(outpath); /* jcmd refuses to overwrite */
		rc = run(argv, NULL, DUMP_TIMEOUT_MS);
		if (rc) {
			fprintf(stderr,
				"porthole heap: jcmd %s GC.heap_dump failed "
				"(%d)\n",
				pid, rc);
			return 2;
		}
	} else {
		snprintf(remote, sizeof(remote),
			 "/data/local/tmp/porthole-%s.hprof", app);
		char *dump[] = { adb,	      "shell", "am", "dumpheap",
				 (char *)app, remote,  NULL };
		char *pull[] = { adb, "pull", remote, (char *)outpath, NULL };
		char *rm[] = { adb, "shell", "rm", "-f", remote, NULL };

		rc = run(dump, NULL, DUMP_TIMEOUT_MS);
		if (rc) {
			fprintf(stderr,
				"porthole heap: adb shell am dumpheap %s "
				"failed (%d); is the app running and "
				"debuggable?\n",
				app, rc);
			run(rm, NULL, STAT_TIMEOUT_MS);
			return 2;
		}
		if (wait_device_file(adb, remote)) {
			fprintf(stderr,
				"porthole heap: %s never appeared on the "
				"device\n",
				remote);
			run(rm, NULL, STAT_TIMEOUT_MS);
			return 2;
		}
		rc = run(pull, NULL, PULL_TIMEOUT_MS);
		/* the device side goes, whatever the pull did */
		if (run(rm, NULL, STAT_TIMEOUT_MS))
			fprintf(stderr,
				"porthole heap: could not remove %s "
				"from the device\n",
				remote);
		if (rc) {
			fprintf(stderr, "porthole heap: adb pull %s failed\n",
				remote);
			return 2;
		}
	}
	fprintf(stderr, "porthole heap: dump saved to %s\n", outpath);
	o->dump = outpath;
	if (!session && app) {
		/* while a host records the app, the leaks go on its timeline */
		char sessions[4096];

		ph_env_sessions_dir(sessions, sizeof(sessions));
		if (ph_sessions_live(sessions, app, live, sizeof(live)))
			session = live;
		else
			fprintf(stderr,
				"porthole heap: no host is recording %s "
				"(porthole watch, mcp or ui), so the leaks "
				"go to no session; --session names one\n",
				app);
	}
	return leaks_into(o, session);
}

static bool parse_id(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return !errno && end != s && !*end;
}

static int heap_exec(int argc, char **argv)
{
	struct ph_heap_cmd_opts o = { .limit = 20 };
	const char *sub, *app = NULL, *pid = NULL, *outpath = NULL;
	const char *session = NULL;
	char sdir[4200];
	const char *pos[3] = { 0 };
	int npos = 0;

	if (argc < 2)
		return ph_cmd_usage_error(&ph_cmd_heap, "which subcommand?");
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "help")) {
		printf("%s\n", ph_cmd_heap.usage);
		return 0;
	}
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		bool has_val = i + 1 < argc;

		if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "--map") && has_val) {
			o.map = argv[++i];
		} else if (!strcmp(a, "--class") && has_val) {
			o.watch_class = argv[++i];
		} else if (!strcmp(a, "--by") && has_val) {
			o.by = argv[++i];
			if (strcmp(o.by, "retained") &&
			    strcmp(o.by, "shallow") && strcmp(o.by, "count"))
				return ph_cmd_usage_error(
					&ph_cmd_heap,
					"--by takes retained, shallow or count");
		} else if (!strcmp(a, "--limit") && has_val) {
			char *end;

			o.limit = strtol(argv[++i], &end, 10);
			if (*end || o.limit <= 0)
				return ph_cmd_usage_error(
					&ph_cmd_heap, "--limit takes a count");
		} else if (!strcmp(a, "--application-id") && has_val) {
			app = argv[++i];
		} else if (!strcmp(a, "--pid") && has_val) {
			pid = argv[++i];
		} else if (!strcmp(a, "--out") && has_val) {
			outpath = argv[++i];
		} else if (!strcmp(a, "--session") && has_val) {
			session = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			return ph_cmd_usage_error(&ph_cmd_heap,
						  "unknown option %s", a);
		} else if (npos < 3) {
			pos[npos++] = a;
		} else {
			return ph_cmd_usage_error(&ph_cmd_heap,
						  "too many arguments");
		}
	}
	if (session && strcmp(sub, "leaks") && strcmp(sub, "dump"))
		return ph_cmd_usage_error(&ph_cmd_heap,
					  "--session goes with leaks and dump");
	if (session && !session_dir(session, sdir, sizeof(sdir)))
		return 2;
	if (session)
		session = sdir;
	if (!strcmp(sub, "dump")) {
		if (!!app == !!pid || npos)
			return ph_cmd_usage_error(
				&ph_cmd_heap,
				"dump takes --application-id ID or --pid PID");
		if (app && (strchr(app, '/') || strchr(app, ' ') || !*app))
			return ph_cmd_usage_error(
				&ph_cmd_heap, "bad application id '%s'", app);
		return dump_exec(&o, app, pid, outpath, session);
	}
	if (npos < 1)
		return ph_cmd_usage_error(&ph_cmd_heap, "%s needs a DUMP", sub);
	o.dump = pos[0];
	if (!strcmp(sub, "path")) {
		if (npos != 2 || !parse_id(pos[1], &o.object_id))
			return ph_cmd_usage_error(
				&ph_cmd_heap,
				"path needs DUMP OBJECT_ID (0x... or decimal)");
		return ph_heap_cmd_path(&o, stdout);
	}
	if (npos != 1)
		return ph_cmd_usage_error(&ph_cmd_heap, "too many arguments");
	if (!strcmp(sub, "leaks"))
		return leaks_into(&o, session);
	if (!strcmp(sub, "top"))
		return ph_heap_cmd_top(&o, stdout);
	if (!strcmp(sub, "stats"))
		return ph_heap_cmd_stats(&o, stdout);
	return ph_cmd_usage_error(&ph_cmd_heap, "no subcommand '%s'", sub);
}

const struct ph_cmd ph_cmd_heap = {
	.name = "heap",
	.summary = "hprof heap dumps into leak traces and retained sizes",
	.usage = "porthole heap leaks|top|path|stats|dump ...\n"
		 "  heap leaks DUMP [--map FILE] [--class NAME] [--json] "
		 "[--session ID|DIR]\n"
		 "      leak traces, grouped by signature; exit 1 when the "
		 "app leaks,\n"
		 "      3 when the dump was read only partially;\n"
		 "      --session adds them to a recorded session as leak "
		 "events\n"
		 "  heap top DUMP [--by retained|shallow|count] [--limit N] "
		 "[--json]\n"
		 "      class histogram and the biggest retainers\n"
		 "  heap path DUMP OBJECT_ID [--map FILE] [--json]\n"
		 "      the shortest strong path from a GC root to an object\n"
		 "  heap stats DUMP [--json]\n"
		 "      records, roots, heaps, classes, reachable objects\n"
		 "  heap dump (--application-id ID | --pid PID) [--out FILE] "
		 "[--session ID|DIR]\n"
		 "      dump a device app (adb) or a local JVM (jcmd), then "
		 "`leaks`;\n"
		 "      the leaks join the app's session while a host records "
		 "it\n"
		 "  PORTHOLE_ADB and PORTHOLE_JCMD name other adb/jcmd "
		 "binaries.",
	.flags = PH_CMD_QUIET_SIGPIPE,
	.exec = heap_exec,
};
