/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_record.c: `porthole trace record --seconds N --out FILE
 * [--application-id ID] [--pid PID]...` on Linux.
 *
 * Records from the top-level tracefs instance, the one trace_marker writes
 * reach (an instance under instances/ would not see the markers
 * libporthole writes), these events: sched_switch, sched_waking,
 * block_rq_issue, block_rq_complete, cpu_frequency, thermal_temperature
 * and cdev_update (where the kernel has them), and print (the
 * trace_marker writes; the kernel's ftrace/print event has no enable
 * switch: it is on whenever tracing is), with trace_clock=mono so trace
 * time is the app's CLOCK_MONOTONIC in nanoseconds, and options
 * record-tgid (so each line names its process) and markers.
 *
 * Every setting it changes is read first and written back afterwards, in
 * reverse order, on every path: normal end, SIGINT/SIGTERM/SIGHUP (the
 * handler only sets a flag; the recording loop sees it, stops, writes what
 * it has and restores), and errors.  If tracefs is not mounted it is
 * mounted at /sys/kernel/tracing and unmounted at the end.  What is not
 * restored: the ring buffer's contents (cleared at the start; reading
 * trace_pipe consumes them).  SIGKILL cannot be caught: after one, the
 * settings above stay as recording left them (docs/trace.md lists them
 * for restoring by hand).
 *
 * Output: ftrace text as trace_pipe prints it, after a header naming the
 * clock (`# trace_clock: mono`) and the application's pids (each --pid,
 * then the processes whose name is the application id), which
 * `porthole trace analyze` reads.  trace_pipe is streamed to the file
 * while recording, so the ring buffer does not need to hold N seconds.
 */
#include "ph_common.h"
#include "ph_clock.h"
#include "ph_log.h"
#include "trace/trace_cli.h"
#include "trace/trace_sql.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* The settings changed, in the order they are changed. */
static const struct {
	const char *file, *value;
} settings[] = {
	{ "tracing_on", "0" },
	{ "current_tracer", "nop" },
	{ "trace_clock", "mono" },
	{ "options/record-tgid", "1" },
	{ "options/markers", "1" },
	{ "events/sched/sched_switch/enable", "1" },
	{ "events/sched/sched_waking/enable", "1" },
	{ "events/block/block_rq_issue/enable", "1" },
	{ "events/block/block_rq_complete/enable", "1" },
	{ "events/power/cpu_frequency/enable", "1" },
	/* the environment phase's thermal, where the kernel has the events
	 * (a machine without thermal zones records none: the report says) */
	{ "events/thermal/thermal_temperature/enable", "1" },
	{ "events/thermal/cdev_update/enable", "1" },
};
#define NSET PH_ARRAY_SIZE(settings)

struct rec {
	char root[64];
	bool mounted;	      /* we mounted tracefs */
	char saved[NSET][64]; /* original values */
	bool changed[NSET];
};

static int read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t k;

	if (fd < 0)
		return -1;
	k = read(fd, buf, n - 1);
	close(fd);
	if (k < 0)
		return -1;
	buf[k] = 0;
	while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == ' '))
		buf[--k] = 0;
	return 0;
}

static int write_small(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t n = strlen(v);
	ssize_t k;

	if (fd < 0)
		return -1;
	k = write(fd, v, n);
	close(fd);
	return k == (ssize_t)n ? 0 : -1;
}

/* trace_clock reads "[local] global mono ...": the bracketed one */
static void current_clock(char *v)
{
	char *o = strchr(v, '['), *c = o ? strchr(o, ']') : NULL;

	if (o && c) {
		memmove(v, o + 1, (size_t)(c - o - 1));
		v[c - o - 1] = 0;
	}
}

static int find_tracefs(struct rec *r)
{
	static const char *const roots[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };
	char p[128];

	for (size_t i = 0; i < PH_ARRAY_SIZE(roots); i++) {
		snprintf(p, sizeof(p), "%s/trace_marker", roots[i]);
		if (!access(p, F_OK)) {
			snprintf(r->root, sizeof(r->root), "%s", roots[i]);
			return 0;
		}
	}
	if (mount("nodev", roots[0], "tracefs", 0, NULL))
		return ph_error(PH_EIO,
				"tracefs is not mounted and mounting it at "
				"%s failed: %s (root is needed)",
				roots[0], strerror(errno));
	r->mounted = true;
	snprintf(r->root, sizeof(r->root), "%s", roots[0]);
	return 0;
}

static void restore(struct rec *r)
{
	char p[160];

	for (size_t i = NSET; i-- > 0;) {
		if (!r->changed[i])
			continue;
		snprintf(p, sizeof(p), "%s/%s", r->root, settings[i].file);
		if (write_small(p, r->saved[i]))
			ph_warn("could not restore %s to '%s': %s", p,
				r->saved[i], strerror(errno));
		r->changed[i] = false;
	}
	if (r->mounted) {
		/* a writer holding trace_marker open makes it busy for a
		 * moment; then detach: gone from view, freed when closed */
		int rc = -1;

		for (int i = 0;
		     i < 20 && (rc = umount(r->root)) && errno == EBUSY; i++)
			usleep(20000);
		if (rc && umount2(r->root, MNT_DETACH))
			ph_warn("left tracefs mounted at %s: %s", r->root,
				strerror(errno));
	}
	r->mounted = false;
}

static int apply(struct rec *r)
{
	char p[160];

	for (size_t i = 0; i < NSET; i++) {
		snprintf(p, sizeof(p), "%s/%s", r->root, settings[i].file);
		if (read_small(p, r->saved[i], sizeof(r->saved[i]))) {
			if (errno == ENOENT &&
			    !strncmp(settings[i].file, "events/", 7)) {
				if (strncmp(settings[i].file, "events/thermal/",
					    15))
					ph_warn("%s: no such event on this "
						"kernel",
						settings[i].file);
				continue;
			}
			return ph_error(PH_EIO, "%s: %s", p, strerror(errno));
		}
		if (i == 2)
			current_clock(r->saved[i]);
		if (!strcmp(r->saved[i], settings[i].value))
			continue;
		/* marked first: a half-applied write is still undone */
		r->changed[i] = true;
		if (write_small(p, settings[i].value))
			return ph_error(PH_EIO, "cannot set %s to %s: %s", p,
					settings[i].value, strerror(errno));
	}
	return 0;
}

/* The pids whose comm or command's base name (cmdline's first word) is
 * id. */
static size_t app_pids(const char *id, int *pids, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0;
	char p[300], buf[4096];

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		const char *base;
		bool match = false;

		if (*end || pid <= 0 || pid == getpid())
			continue;
		snprintf(p, sizeof(p), "/proc/%ld/comm", pid);
		if (!read_small(p, buf, sizeof(buf)))
			match = !strncmp(buf, id, 15) &&
				strlen(buf) ==
					(strlen(id) < 15 ? strlen(id) : 15);
		snprintf(p, sizeof(p), "/proc/%ld/cmdline", pid);
		if (!match && !read_small(p, buf, sizeof(buf))) {
			base = strrchr(buf, '/');
			base = base ? base + 1 : buf;
			match = !strcmp(base, id);
		}
		if (match)
			pids[n++] = (int)pid;
	}
	closedir(d);
	return n;
}

static int64_t overruns(const struct rec *r)
{
	int64_t total = 0;

	for (int cpu = 0; cpu < 1024; cpu++) {
		char p[160], buf[2048], *o;

		snprintf(p, sizeof(p), "%s/per_cpu/cpu%d/stats", r->root, cpu);
		if (read_small(p, buf, sizeof(buf)))
			break;
		o = strstr(buf, "overrun: ");
		if (o)
			total += strtoll(o + 9, NULL, 10);
	}
	return total;
}

/* Streams trace_pipe into out until the deadline or a signal. */
static int stream(struct rec *r, int fd, FILE *out, int64_t deadline)
{
	static char buf[1 << 16];
	char p[160];
	bool draining = false;

	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int64_t left = deadline - ph_clock_mono_ns();
		ssize_t k;

		if (!draining && (left <= 0 || stop_signal)) {
			snprintf(p, sizeof(p), "%s/tracing_on", r->root);
			if (write_small(p, "0"))
				return ph_error(PH_EIO, "cannot stop tracing");
			draining = true;
		}
		if (!draining)
			(void)poll(&pfd, 1,
				   (int)(left / 1000000 < 100 ?
						 left / 1000000 + 1 :
						 100));
		k = read(fd, buf, sizeof(buf));
		if (k > 0) {
			if (fwrite(buf, 1, (size_t)k, out) != (size_t)k)
				return ph_error(PH_EIO, "write: %s",
						strerror(errno));
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			return ph_error(PH_EIO, "trace_pipe: %s",
					strerror(errno));
		if (draining && (k == 0 || errno == EAGAIN))
			return 0;
	}
}

static void report(const char *path, double secs, bool cut, const char *appid,
		   const int *pids, size_t npids, int64_t lost, FILE *txt)
{
	struct ph_trace t;
	sqlite3 *db;
	int64_t slices = 0, threads = 0, app = 0;

	if (ph_trace_init(&t) || ph_trace_load_file(&t, path) ||
	    ph_trace_sql_open(&t, &db)) {
		ph_trace_release(&t);
		fprintf(txt, "recorded into %s, but it does not load back\n",
			path);
		return;
	}
	{
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(db,
				       "SELECT COUNT(*), COUNT(DISTINCT "
				       "tt.utid) FROM slice s JOIN "
				       "thread_track tt ON s.track_id = tt.id",
				       -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW) {
				slices = sqlite3_column_int64(st, 0);
				threads = sqlite3_column_int64(st, 1);
			}
			sqlite3_finalize(st);
		}
		for (size_t i = 0; i < npids; i++) {
			if (sqlite3_prepare_v2(
				    db,
				    "SELECT COUNT(*) FROM slice s JOIN "
				    "thread_track tt ON s.track_id = tt.id "
				    "JOIN thread th USING (utid) JOIN process "
				    "p USING (upid) WHERE p.pid = ?1",
				    -1, &st, NULL) != SQLITE_OK)
				break;
			sqlite3_bind_int(st, 1, pids[i]);
			if (sqlite3_step(st) == SQLITE_ROW)
				app += sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
		}
	}
	fprintf(txt,
		"recorded %.1f s%s into %s (clock mono): %zu sched_switch, "
		"%" PRId64 " trace_marker slices on %" PRId64 " thread(s)",
		secs, cut ? " (stopped early by a signal)" : "", path,
		t.tables[PH_T_SCHED].rows, slices, threads);
	if (appid || npids)
		fprintf(txt, ", %" PRId64 " of them in %s (%zu process(es))",
			app, appid ? appid : "the given pids", npids);
	fprintf(txt, "\n");
	if (lost)
		fprintf(txt,
			"warning: the ring buffer overran %" PRId64
			" event(s): the trace has holes\n",
			lost);
	sqlite3_close(db);
	ph_trace_release(&t);
}

int ph_trace_cmd_record(const struct ph_trace_record_opts *o, FILE *txt)
{
	const char *out = o->out, *appid = o->appid;
	double secs = o->seconds;
	struct rec r;
	struct sigaction sa, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	FILE *f = NULL;
	int fd = -1, rc = 0, pids[64];
	size_t npids = 0, ngiven = o->npids;
	char p[160];
	int64_t t0, lost = 0;

	if (ngiven > PH_ARRAY_SIZE(pids))
		return 2; /* the command refuses more */
	if (ngiven)
		memcpy(pids, o->pids, ngiven * sizeof(*pids));
	memset(&r, 0, sizeof(r));
	/* the output first: fail before touching the kernel */
	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "porthole trace record: %s: %s\n", out,
			strerror(errno));
		return 2;
	}
	stop_signal = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	npids = ngiven;
	if (appid) {
		int found[64];
		size_t nf = app_pids(appid, found, PH_ARRAY_SIZE(found));

		/* the given pids first, then the others named so, once */
		for (size_t i = 0; i < nf && npids < PH_ARRAY_SIZE(pids); i++) {
			bool dup = false;

			for (size_t j = 0; j < ngiven; j++)
				dup = dup || pids[j] == found[i];
			if (!dup)
				pids[npids++] = found[i];
		}
	}
	if ((rc = find_tracefs(&r)) || (rc = apply(&r)))
		goto out;
	/* opening `trace` with O_TRUNC clears the ring buffer */
	snprintf(p, sizeof(p), "%s/trace", r.root);
	fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/trace_pipe", r.root);
	fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = ph_error(PH_EIO, "%s: %s", p, strerror(errno));
		goto out;
	}
	fprintf(f, "# tracer: nop\n# trace_clock: mono\n"
		   "# porthole trace record: sched_switch sched_waking print "
		   "block_rq_issue block_rq_complete cpu_frequency\n");
	if (appid || npids) {
		fprintf(f, "# porthole application-id: %s pids:",
			appid ? appid : "-");
		for (size_t i = 0; i < npids; i++)
			fprintf(f, " %d", pids[i]);
		fprintf(f, "\n");
	}
	snprintf(p, sizeof(p), "%s/tracing_on", r.root);
	t0 = ph_clock_mono_ns();
	if (!stop_signal && write_small(p, "1")) {
		rc = ph_error(PH_EIO, "cannot start tracing: %s",
			      strerror(errno));
		goto out;
	}
	rc = stream(&r, fd, f, t0 + (int64_t)(secs * 1e9));
	secs = (double)(ph_clock_mono_ns() - t0) / 1e9;
	lost = overruns(&r);
out:
	if (fd >= 0)
		close(fd);
	restore(&r);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	if (fflush(f) || ferror(f))
		rc = rc ? rc : ph_error(PH_EIO, "%s: %s", out, strerror(errno));
	if (fclose(f) && !rc)
		rc = ph_error(PH_EIO, "%s: %s", out, strerror(errno));
	if (rc)
		return 2;
	report(out, secs, stop_signal != 0, appid, pids, npids, lost, txt);
	return stop_signal ? 1 : 0;
}
