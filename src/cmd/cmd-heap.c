/* SPDX-License-Identifier: Apache-2.0 */
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

/* Every heap verb's options; each verb's table names those it takes. */
struct heap_args {
	bool json;
	const char *map, *watch_class, *by, *app, *pid, *out, *session;
	int64_t limit;
};

#define OFF(f) offsetof(struct heap_args, f)
#define OPT_JSON                                                          \
	{                                                                 \
		.name = "json", .kind = PH_OPT_BOOL, .offset = OFF(json), \
		.help = "one JSON object instead of text"                 \
	}
#define OPT_MAP                                                                   \
	{                                                                         \
		.name = "map", .kind = PH_OPT_STR, .offset = OFF(map),            \
		.metavar = "FILE",                                                \
		.help = "an R8/ProGuard mapping file, to name obfuscated classes" \
	}
#define OPT_SESSION                                                             \
	{                                                                       \
		.name = "session", .kind = PH_OPT_STR, .offset = OFF(session),  \
		.metavar = "ID|DIR",                                            \
		.help = "add the leaks to this recorded session as leak events" \
	}

static const struct ph_opt leaks_opts[] = {
	OPT_MAP,
	{ .name = "class",
	  .kind = PH_OPT_STR,
	  .offset = OFF(watch_class),
	  .metavar = "NAME",
	  .help = "treat every instance of NAME or its subclasses as leaking" },
	OPT_JSON,
	OPT_SESSION,
	{ .kind = PH_OPT_END },
};

static const struct ph_opt top_opts[] = {
	OPT_MAP,
	{ .name = "by",
	  .kind = PH_OPT_STR,
	  .offset = OFF(by),
	  .metavar = "retained|shallow|count",
	  .help = "what ranks the classes (default retained)" },
	{ .name = "limit",
	  .kind = PH_OPT_INT,
	  .offset = OFF(limit),
	  .metavar = "N",
	  .help = "how many rows (default 20)" },
	OPT_JSON,
	{ .kind = PH_OPT_END },
};

static const struct ph_opt path_opts[] = {
	OPT_MAP,
	OPT_JSON,
	{ .kind = PH_OPT_END },
};

static const struct ph_opt stats_opts[] = {
	OPT_MAP,
	OPT_JSON,
	{ .kind = PH_OPT_END },
};

static const struct ph_opt dump_opts[] = {
	{ .name = "application-id",
	  .kind = PH_OPT_STR,
	  .offset = OFF(app),
	  .metavar = "ID",
	  .help = "dump this app on the adb device" },
	{ .name = "pid",
	  .kind = PH_OPT_STR,
	  .offset = OFF(pid),
	  .metavar = "PID",
	  .help = "or dump this local JVM (jcmd)" },
	{ .name = "out",
	  .kind = PH_OPT_STR,
	  .offset = OFF(out),
	  .metavar = "FILE",
	  .help = "keep the dump here" },
	OPT_MAP,
	OPT_JSON,
	OPT_SESSION,
	{ .kind = PH_OPT_END },
};

/* Every verb: argv[0] is the verb's word, which picks its table. */
static int heap_verb_exec(int argc, char **argv)
{
	const struct ph_cmd *self = ph_cmd_verb(&ph_cmd_heap, argv[0]);
	struct heap_args args = { .limit = 20 };
	struct ph_heap_cmd_opts o = { 0 };
	struct ph_opt_args pa;
	const char *sub = argv[0], *session;
	char sdir[4200];
	char **pos;
	int npos, rc = ph_cmd_parse(self, &args, argc, argv, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	pos = pa.pos;
	npos = pa.npos;
	o.json = args.json;
	o.map = args.map;
	o.watch_class = args.watch_class;
	o.by = args.by;
	if (o.by && strcmp(o.by, "retained") && strcmp(o.by, "shallow") &&
	    strcmp(o.by, "count"))
		return ph_cmd_usage_error(self,
					  "--by takes retained, shallow or "
					  "count");
	if (args.limit <= 0 || args.limit > LONG_MAX)
		return ph_cmd_usage_error(self, "--limit takes a count");
	o.limit = (long)args.limit;
	session = args.session;
	if (session && !session_dir(session, sdir, sizeof(sdir)))
		return 2;
	if (session)
		session = sdir;
	if (!strcmp(sub, "dump")) {
		const char *app = args.app;

		if (!!app == !!args.pid || npos)
			return ph_cmd_usage_error(
				self, "dump takes --application-id ID or "
				      "--pid PID");
		if (app && (strchr(app, '/') || strchr(app, ' ') || !*app))
			return ph_cmd_usage_error(
				self, "bad application id '%s'", app);
		return dump_exec(&o, app, args.pid, args.out, session);
	}
	if (npos < 1)
		return ph_cmd_usage_error(self, "%s needs a DUMP", sub);
	o.dump = pos[0];
	if (!strcmp(sub, "path")) {
		if (npos != 2 || !parse_id(pos[1], &o.object_id))
			return ph_cmd_usage_error(
				self, "path needs DUMP OBJECT_ID (0x... or "
				      "decimal)");
		return ph_heap_cmd_path(&o, stdout);
	}
	if (npos != 1)
		return ph_cmd_usage_error(self, "too many arguments");
	if (!strcmp(sub, "leaks"))
		return leaks_into(&o, session);
	if (!strcmp(sub, "top"))
		return ph_heap_cmd_top(&o, stdout);
	return ph_heap_cmd_stats(&o, stdout);
}

static int heap_exec(int argc, char **argv)
{
	return ph_cmd_run_verb(&ph_cmd_heap, argc, argv);
}

static const struct ph_cmd heap_leaks = {
	.name = "heap leaks",
	.summary = "leak traces, grouped by signature; exit 1 when the app "
		   "leaks, 3 when the dump was read only partially",
	.args = "DUMP",
	.opts = leaks_opts,
	.exec = heap_verb_exec,
};

static const struct ph_cmd heap_top = {
	.name = "heap top",
	.summary = "class histogram and the biggest retainers",
	.args = "DUMP",
	.opts = top_opts,
	.exec = heap_verb_exec,
};

static const struct ph_cmd heap_path = {
	.name = "heap path",
	.summary = "the shortest strong path from a GC root to an object",
	.args = "DUMP OBJECT_ID",
	.opts = path_opts,
	.exec = heap_verb_exec,
};

static const struct ph_cmd heap_stats = {
	.name = "heap stats",
	.summary = "records, roots, heaps, classes, reachable objects",
	.args = "DUMP",
	.opts = stats_opts,
	.exec = heap_verb_exec,
};

static const struct ph_cmd heap_dump = {
	.name = "heap dump",
	.summary = "dump a device app (adb) or a local JVM (jcmd), then "
		   "`leaks`; the leaks join the app's session while a host "
		   "records it",
	.opts = dump_opts,
	.about = "--application-id ID or --pid PID, one of them.",
	.exec = heap_verb_exec,
};

const struct ph_cmd ph_cmd_heap = {
	.name = "heap",
	.summary = "hprof heap dumps into leak traces and retained sizes",
	.verbs = (const struct ph_cmd *const[]){ &heap_leaks, &heap_top,
						 &heap_path, &heap_stats,
						 &heap_dump, NULL },
	.about = "PORTHOLE_ADB and PORTHOLE_JCMD name other adb/jcmd binaries.",
	.flags = PH_CMD_QUIET_SIGPIPE,
	.exec = heap_exec,
};
