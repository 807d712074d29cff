/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capture_run.c: the run behind `porthole capture` (capture_run.h).
 *
 * CMD is started with PORTHOLE_ANNOUNCE naming a file the agent writes
 * its socket name to (or the link connects to porthole.ID, or to the
 * TCP device PORTHOLE_HOST names), and its app is recorded from start to
 * exit: the process's lifetime is the window.  Beside it, started before
 * CMD and stopped after it:
 *  - a system trace: on this machine the trace engine's tracefs recorder
 *    (`porthole trace record`, a child), on an Android device its
 *    perfetto over adb (perfetto.h), then pulled.  Which one is decided
 *    before CMD runs, as the link will connect: an app id whose socket
 *    is not on this machine, with a device attached, is the device's;
 *  - this machine's block I/O: the iotrace collector (`porthole iotrace
 *    record`, a child, root), joined with the app's events
 *    (host/io/merge.h).  The recording is removed unless iotrace_out
 *    keeps it.
 * Both are merged into the analysis, which is saved as the capture file.
 */
#include "ph_common.h"
#include "ph_clock.h"
#include "ph_log.h"
#include "host/capture.h"
#include "host/capture_run.h"
#include "host/env.h"
#include "host/findings.h"
#include "host/io/merge.h"
#include "host/live.h"
#include "host/perfetto.h"
#include "host/systrace.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* One line when the app answers hello, so a person sees it working. */
static void say_connected(void *ctx, const struct ph_ident *id,
			  const char *target)
{
	FILE *log = ctx;

	if (id->pid)
		fprintf(log,
			"porthole capture: connected to %s (pid %" PRId64
			") on %s\n",
			id->package, id->pid, target);
	else
		fprintf(log, "porthole capture: connected to %s on %s\n",
			id->package, target);
}

/* Whether the recorder (pid) has tracing on: trace_pipe open, then
 * tracing_on at 1 in the same tracefs (recording set it 0 before). */
static bool recording(pid_t pid)
{
	char dir[64], p[400], link[300], root[300], on[8] = "";
	struct dirent *de;
	bool open_pipe = false;
	DIR *d;
	int fd;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	while (d && (de = readdir(d)) && !open_pipe) {
		ssize_t n;

		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		n = readlink(p, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (n > 11 && !strcmp(link + n - 11, "/trace_pipe")) {
			snprintf(root, sizeof(root), "%.*s", (int)(n - 11),
				 link);
			open_pipe = true;
		}
	}
	if (d)
		closedir(d);
	if (!open_pipe)
		return false;
	snprintf(p, sizeof(p), "%s/tracing_on", root);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (read(fd, on, sizeof(on) - 1) <= 0)
		on[0] = '\0';
	close(fd);
	return on[0] == '1';
}

/*
 * Starts `porthole trace record` (this binary) into path for at most
 * seconds, and waits until it records; its pid, or -1 (it said why).
 */
static pid_t systrace_start(const char *path, double seconds)
{
	char secs[32];
	pid_t pid;

	snprintf(secs, sizeof(secs), "%.3f", seconds);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (null >= 0)
			dup2(null, 1); /* its summary line; errors stay */
		execl("/proc/self/exe", "porthole", "trace", "record",
		      "--seconds", secs, "--out", path, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1000; i++) {
		int st;

		if (recording(pid))
			return pid;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return -1;
		usleep(5000);
	}
	kill(pid, SIGINT);
	waitpid(pid, NULL, 0);
	return -1;
}

/*
 * Whether the app named app_id will be reached on a device: its socket is
 * not listening here and adb has a device (the link's order, link.h).
 */
static bool on_device(const char *app_id)
{
	char names[64][256];
	char want[300];
	size_t n;

	if (!app_id)
		return false; /* announced: an app on this machine */
	snprintf(want, sizeof(want), "porthole.%s", app_id);
	n = ph_link_local_sockets(names, PH_ARRAY_SIZE(names));
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], want))
			return false;
	return ph_link_adb_device();
}

static void systrace_stop(pid_t pid)
{
	int st;

	if (pid <= 0)
		return;
	kill(pid, SIGINT); /* it stops, writes what it has, restores */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* The iotrace collector's first line once tracing is on, and the one it
 * prints instead when block tracing cannot be used (iotrace/collector.c). */
#define IOT_READY "recording block I/O"
#define IOT_NO	  "block tracing unavailable"

/* What the collector's log (its stderr) says so far: 1 recording, -1 it
 * cannot trace (why), 0 not yet. */
static int iotrace_said(const char *log, char *why, size_t why_size)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	const char *no;
	int said = 0;

	if (ph_buf_read_file(&b, log) || !b.len)
		goto out;
	if (strstr(b.buf, IOT_READY)) {
		said = 1;
	} else if ((no = strstr(b.buf, IOT_NO))) {
		size_t n = strcspn(no, "\n");

		snprintf(why, why_size, "%.*s", (int)n, no);
		said = -1;
	}
out:
	ph_buf_release(&b);
	return said;
}

/* The log's last line (the collector's error when it gave up). */
static void log_last(const char *log, char *why, size_t why_size)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);

	why[0] = '\0';
	if (!ph_buf_read_file(&b, log)) {
		size_t end = b.len, start;

		while (end && b.buf[end - 1] == '\n')
			end--;
		start = end;
		while (start && b.buf[start - 1] != '\n')
			start--;
		snprintf(why, why_size, "%.*s", (int)(end - start),
			 b.buf + start);
	}
	ph_buf_release(&b);
}

/*
 * Starts `porthole iotrace record --out dir` (this binary; its stderr to
 * log) and waits until it traces; its pid, or -1 (why).  Snapshots are
 * off: the capture joins the block requests only.
 */
static pid_t iotrace_start(const char *dir, const char *log, char *why,
			   size_t why_size)
{
	pid_t pid;
	int st;

	why[0] = '\0';
	pid = fork();
	if (pid < 0) {
		snprintf(why, why_size, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		int err = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			       0600);

		if (null >= 0)
			dup2(null, 1); /* its summary */
		if (err >= 0)
			dup2(err, 2);
		/* its ready line is an info line: never filtered out */
		setenv("PORTHOLE_LOG", "info", 1);
		execl("/proc/self/exe", "porthole", "iotrace", "record",
		      "--no-snapshots", "--out", dir, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 2000; i++) {
		int said = iotrace_said(log, why, why_size);

		if (said > 0)
			return pid;
		if (said < 0)
			break;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			log_last(log, why, why_size);
			if (!why[0])
				snprintf(why, why_size,
					 "the collector exited (status %d) "
					 "before recording",
					 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			return -1;
		}
		usleep(5000);
	}
	if (!why[0])
		snprintf(why, why_size,
			 "the collector did not start tracing "
			 "within 10 s");
	kill(pid, SIGINT);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return -1;
}

/* Stops the collector (it drains, pairs, restores tracefs, writes the
 * manifest) and passes on its warnings and errors; 0 when it exited 0. */
static int iotrace_stop(pid_t pid, const char *log, FILE *said)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	int st = 0;

	if (pid <= 0)
		return -1;
	kill(pid, SIGINT);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!ph_buf_read_file(&b, log)) {
		for (char *l = b.buf, *e; l && *l; l = e ? e + 1 : NULL) {
			e = strchr(l, '\n');
			if (e)
				*e = '\0';
			if (*l && !strstr(l, ": info: ")) /* warnings */
				fprintf(said, "porthole capture: iotrace: %s\n",
					l);
		}
	}
	ph_buf_release(&b);
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

int ph_capture_run(const struct ph_capture_run_opts *o,
		   struct ph_capture_run_result *res)
{
	const char *scenario = o->scenario, *out = o->out;
	const char *driver = o->driver, *app_id = o->app_id;
	char *const *cmdv = o->cmdv;
	/* mkdtemp fills in the Xs: the announce file and iotrace scratch */
	char announce_dir[] = "/tmp/porthole-capture-XXXXXX";
	char announce[200];
	struct ph_capture_info info = { 0 };
	struct ph_analysis *a;
	struct ph_live lv;
	int status = 0, exit_status;
	int64_t t0, t1;
	pid_t pid, rec = -1;
	bool systrace = o->systrace, secs_given = o->systrace_seconds_given;
	bool dev_trace = false;
	double sys_secs = o->systrace_seconds;
	char trace_path[240], dev_path[240], remote[200], why[600];
	int64_t dev_pid = 0; /* perfetto's, on the device */
	bool iotrace = o->iotrace;
	const char *iot_out = o->iotrace_out; /* kept there, or a temp dir */
	char iot_dir[240], iot_log[240];
	pid_t iorec = -1;
	struct ph_io_view *io = NULL;

	memset(res, 0, sizeof(*res));
	if (!mkdtemp(announce_dir)) {
		fprintf(o->log, "porthole capture: %s\n", strerror(errno));
		return 2;
	}
	snprintf(announce, sizeof(announce), "%s/socket", announce_dir);
	if (ph_live_init(&lv)) {
		rmdir(announce_dir);
		return 2;
	}
	lv.on_hello = say_connected;
	lv.ctx = o->log;
	/* PORTHOLE_HOST (read by ph_live_init) names a TCP device and wins:
	 * the app CMD starts is there, not here. */
	if (app_id)
		lv.link.app_id = app_id;
	else
		lv.link.announce = announce;
	snprintf(trace_path, sizeof(trace_path), "%s/systrace.txt",
		 announce_dir);
	snprintf(dev_path, sizeof(dev_path), "%s/systrace.pftrace",
		 announce_dir);
	snprintf(iot_dir, sizeof(iot_dir), "%s/iotrace", announce_dir);
	snprintf(iot_log, sizeof(iot_log), "%s/iotrace.log", announce_dir);
	if (iotrace && on_device(app_id)) {
		fprintf(o->log, "porthole capture: --iotrace records this "
				"machine's block I/O, and the app is on a "
				"device; capturing without it\n");
	} else if (iotrace) {
		iorec = iotrace_start(iot_out ? iot_out : iot_dir, iot_log, why,
				      sizeof(why));
		if (iorec < 0)
			fprintf(o->log,
				"porthole capture: block I/O is not recorded "
				"(%s); capturing without it\n",
				why);
	}
	/* Recording before the command starts: its whole life. */
	if (systrace && on_device(app_id)) {
		/* At most an hour unless told: a capture killed with -9
		 * leaves the device's session running until then. */
		int secs = !secs_given	  ? 3600 :
			   sys_secs < 1e6 ? (int)(sys_secs + 0.999) :
					    1000000;

		snprintf(remote, sizeof(remote),
			 PH_PERFETTO_DIR "/porthole-capture-%" PRId64
					 ".pftrace",
			 ph_clock_epoch_ms());
		if (ph_perfetto_start(NULL, secs, remote, &dev_pid, why,
				      sizeof(why))) {
			fprintf(o->log,
				"porthole capture: the system trace did not "
				"start on the device (%s); capturing without "
				"it\n",
				why);
			dev_pid = 0;
		}
	} else if (systrace) {
		rec = systrace_start(trace_path, sys_secs);
		if (rec < 0)
			fprintf(o->log, "porthole capture: the system trace "
					"did not start; capturing without "
					"it\n");
	}
	t0 = ph_clock_uptime_ms();
	pid = fork();
	if (pid < 0) {
		fprintf(o->log, "porthole capture: fork: %s\n",
			strerror(errno));
		status = 2;
		goto out;
	}
	if (pid == 0) {
		setenv("PORTHOLE_ANNOUNCE", announce, 1);
		execvp(cmdv[0], (char **)cmdv);
		/* the child's stderr: CMD's own, which would have said it */
		fprintf(stderr, "porthole capture: %s: %s\n", cmdv[0],
			strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	signal(SIGINT, forward);
	signal(SIGTERM, forward);
	if (ph_live_start(&lv)) {
		status = 2;
		kill(pid, SIGTERM);
	}
	while (waitpid(pid, &exit_status, 0) < 0 && errno == EINTR)
		;
	t1 = ph_clock_uptime_ms();
	child_pid = 0;
	/* The app closed its socket when it exited: let the reader drain. */
	for (int w = 0; w < 200; w++) {
		enum ph_link_state st;

		pthread_mutex_lock(&lv.link.mu);
		st = lv.link.state;
		pthread_mutex_unlock(&lv.link.mu);
		if (st != PH_LINK_CONNECTED)
			break;
		usleep(5000);
	}
	ph_live_stop(&lv); /* stops the link, stores what is queued */
	systrace_stop(rec);
	if (iorec > 0 && iotrace_stop(iorec, iot_log, o->log))
		fprintf(o->log, "porthole capture: the iotrace collector did "
				"not exit cleanly; joining what it wrote\n");
	if (dev_pid > 0) {
		/* perfetto writes its buffer out on SIGTERM: wait for it. */
		dev_trace = !ph_perfetto_stop(dev_pid, remote, dev_path, 30000,
					      why, sizeof(why));
		dev_pid = 0;
		if (!dev_trace)
			fprintf(o->log,
				"porthole capture: the device's system trace: "
				"%s\n",
				why);
	}
	if (lv.link.state == PH_LINK_REFUSED) {
		fprintf(o->log, "porthole capture: %s\n", lv.link.error);
		status = 2;
	} else if (!lv.link.hellos) {
		info.never_connected = true;
		fprintf(o->log,
			"porthole capture: never connected to the app (%s); "
			"does it link libporthole?  Nothing was observed\n",
			lv.link.error[0] ? lv.link.error : lv.link.target);
	}
	{
		/* On this machine the app's clock is ours: the window is the
		 * process's lifetime.  Through adb it is whatever was seen. */
		struct ph_window w = lv.link.host || app_id ?
					     PH_WINDOW_ALL :
					     (struct ph_window){ t0, t1 };

		a = ph_live_analyze(&lv, w);
	}
	if (!a) {
		status = 2;
		goto out;
	}
	if (lv.link.warning[0])
		ph_analysis_note(a, "%s", lv.link.warning);
	if (info.never_connected) {
		/* No check looked at anything: none of them is quiet. */
		a->nquiet = 0;
		ph_analysis_note(a, "never connected: nothing observed (%s)",
				 lv.link.error[0] ? lv.link.error :
						    lv.link.target);
	}
	if (rec > 0) {
		int n = ph_systrace_merge(a, trace_path,
					  a->ident.pid ? a->ident.pid : pid, t0,
					  t1, why, sizeof(why));

		if (n < 0)
			fprintf(o->log, "porthole capture: %s\n", why);
		unlink(trace_path);
	} else if (dev_trace && !lv.link.via_adb) {
		ph_analysis_note(a, "system trace: recorded on the device, but "
				    "the app was reached on this machine; not "
				    "merged");
	} else if (dev_trace) {
		/* The window is what was seen of the app, on its clock; the
		 * trace's own clock is converted through its snapshots. */
		int n = ph_systrace_merge(a, dev_path, a->ident.pid, a->first_t,
					  a->last_t, why, sizeof(why));

		if (n < 0)
			fprintf(o->log, "porthole capture: %s\n", why);
	}
	if (iorec > 0 && lv.link.via_adb) {
		ph_analysis_note(a, "block I/O: recorded on this machine, but "
				    "the app was reached on a device; not "
				    "merged");
	} else if (iorec > 0) {
		char sp[sizeof(lv.session_path)];

		pthread_mutex_lock(&lv.mu);
		snprintf(sp, sizeof(sp), "%s", lv.session_path);
		pthread_mutex_unlock(&lv.mu);
		io = ph_io_merge(a, &lv.store, sp, iot_out ? iot_out : iot_dir,
				 iot_out != NULL,
				 a->ident.pid ? a->ident.pid : pid, why,
				 sizeof(why));
		if (!io)
			fprintf(o->log, "porthole capture: block I/O: %s\n",
				why);
	}
	info.io = io;
	ph_analysis_resolve_where(a, ph_env_project_root());
	info.scenario = scenario;
	info.driver = driver;
	info.argv = cmdv;
	info.exit_status = WIFEXITED(exit_status) ? WEXITSTATUS(exit_status) :
						    128 + WTERMSIG(exit_status);
	if (ph_capture_save(a, &info, out)) {
		res->saved = -1;
		status = 2;
	} else {
		res->saved = 1;
		res->findings = a->nf;
		for (size_t k = 0; k < a->nf; k++)
			res->errors += a->f[k].severity == PH_SEV_ERROR;
	}
	res->seconds = (double)(t1 - t0) / 1000.0;
	ph_analysis_free(a);
	ph_io_view_free(io);
	if (!status)
		status = info.never_connected ? PH_CAPTURE_NEVER_CONNECTED :
						info.exit_status;
out:
	if (dev_pid > 0) /* CMD never ran: stop the device's session */
		ph_perfetto_stop(dev_pid, remote, NULL, 30000, why,
				 sizeof(why));
	if (pid < 0) { /* and the local recorders */
		systrace_stop(rec);
		iotrace_stop(iorec, iot_log, o->log);
	}
	ph_live_release(&lv);
	unlink(announce);
	unlink(trace_path);
	unlink(dev_path);
	unlink(iot_log);
	nftw(iot_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	rmdir(announce_dir);
	return status;
}
