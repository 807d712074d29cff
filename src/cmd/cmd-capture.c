/*
 * porthole capture --scenario NAME [--out FILE] [--driver NAME]
 *                  [--application-id ID] [--systrace [--systrace-seconds N]]
 *                  -- CMD [ARGS...]
 *
 * Runs CMD, records its app from start to exit (the process lifetime is
 * the window), writes the capture file and exits with CMD's status.  The
 * app is found without guessing: CMD inherits PORTHOLE_ANNOUNCE naming a
 * file the agent writes its socket name to (or --application-id names it).
 */
#include "ph_common.h"
#include "cmd.h"
#include "ph_clock.h"
#include "ph_log.h"
#include "host/capture.h"
#include "host/env.h"
#include "host/findings.h"
#include "host/live.h"
#include "host/systrace.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static const struct ph_cmd *self(void);

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

static void systrace_stop(pid_t pid)
{
	int st;

	if (pid <= 0)
		return;
	kill(pid, SIGINT); /* it stops, writes what it has, restores */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

static int capture_exec(int argc, char **argv)
{
	const char *scenario = NULL, *out = "porthole-trace.json";
	const char *driver = "porthole capture", *app_id = NULL;
	char announce_dir[] = "/tmp/porthole-capture-XXXXXX";
	char announce[200];
	struct ph_capture_info info = { 0 };
	struct ph_analysis *a;
	struct ph_live lv;
	int i, status = 0, exit_status;
	int64_t t0, t1;
	pid_t pid, rec = -1;
	bool systrace = false;
	double sys_secs = 86400;
	char trace_path[240];

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--scenario") && v)
			scenario = argv[++i];
		else if (!strcmp(argv[i], "--out") && v)
			out = argv[++i];
		else if (!strcmp(argv[i], "--driver") && v)
			driver = argv[++i];
		else if (!strcmp(argv[i], "--application-id") && v)
			app_id = argv[++i];
		else if (!strcmp(argv[i], "--systrace"))
			systrace = true;
		else if (!strcmp(argv[i], "--systrace-seconds") && v &&
			 (sys_secs = strtod(argv[++i], NULL)) > 0)
			systrace = true;
		else
			return ph_cmd_usage_error(self(), "unknown option %s",
						  argv[i]);
	}
	if (!scenario)
		return ph_cmd_usage_error(self(),
					  "--scenario NAME is required");
	if (i >= argc - 1)
		return ph_cmd_usage_error(self(), "no command after --");
	if (!mkdtemp(announce_dir)) {
		fprintf(stderr, "porthole capture: %s\n", strerror(errno));
		return 2;
	}
	snprintf(announce, sizeof(announce), "%s/socket", announce_dir);
	if (ph_live_init(&lv)) {
		rmdir(announce_dir);
		return 2;
	}
	if (app_id)
		lv.link.app_id = app_id;
	else
		lv.link.announce = announce;
	lv.link.host = NULL;
	snprintf(trace_path, sizeof(trace_path), "%s/systrace.txt",
		 announce_dir);
	if (systrace) {
		/* Recording before the command starts: its whole life. */
		rec = systrace_start(trace_path, sys_secs);
		if (rec < 0)
			fprintf(stderr, "porthole capture: the system trace "
					"did not start; capturing without "
					"it\n");
	}
	t0 = ph_clock_uptime_ms();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "porthole capture: fork: %s\n",
			strerror(errno));
		status = 2;
		goto out;
	}
	if (pid == 0) {
		setenv("PORTHOLE_ANNOUNCE", announce, 1);
		execvp(argv[i + 1], argv + i + 1);
		fprintf(stderr, "porthole capture: %s: %s\n", argv[i + 1],
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
	if (lv.link.state == PH_LINK_REFUSED) {
		fprintf(stderr, "porthole capture: %s\n", lv.link.error);
		status = 2;
	} else if (!lv.link.connects) {
		fprintf(stderr,
			"porthole capture: never connected to the app (%s); "
			"does it link libporthole?\n",
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
	if (rec > 0) {
		char why[600];
		int n = ph_systrace_merge(a, trace_path,
					  a->ident.pid ? a->ident.pid : pid, t0,
					  t1, why, sizeof(why));

		if (n < 0)
			fprintf(stderr, "porthole capture: %s\n", why);
		unlink(trace_path);
	}
	ph_analysis_resolve_where(a, ph_env_project_root());
	info.scenario = scenario;
	info.driver = driver;
	info.argv = argv + i + 1;
	info.exit_status = WIFEXITED(exit_status) ? WEXITSTATUS(exit_status) :
						    128 + WTERMSIG(exit_status);
	if (ph_capture_save(a, &info, out)) {
		fprintf(stderr, "porthole capture: cannot write %s\n", out);
		status = 2;
	} else {
		size_t errors = 0;

		for (size_t k = 0; k < a->nf; k++)
			errors += a->f[k].severity == PH_SEV_ERROR;
		fprintf(stderr,
			"porthole capture: %zu finding%s (%zu error%s) in %.1f "
			"s -> %s\n",
			a->nf, a->nf == 1 ? "" : "s", errors,
			errors == 1 ? "" : "s", (double)(t1 - t0) / 1000.0,
			out);
	}
	ph_analysis_free(a);
	if (!status)
		status = info.exit_status;
out:
	ph_live_release(&lv);
	unlink(announce);
	unlink(trace_path);
	rmdir(announce_dir);
	return status;
}

const struct ph_cmd ph_cmd_capture = {
	.name = "capture",
	.summary = "run a command, record its app, write a capture file",
	.usage =
		"porthole capture --scenario NAME [--out FILE] [--driver NAME]\n"
		"                 [--application-id ID] [--systrace "
		"[--systrace-seconds N]]\n"
		"                 -- CMD [ARGS...]\n"
		"  --scenario NAME        the run's name (compare refuses to mix)\n"
		"  --out FILE             default porthole-trace.json\n"
		"  --driver NAME          who drives the run (e.g. a UI test)\n"
		"  --application-id ID    connect to porthole.ID instead of\n"
		"                         waiting for the app's announcement\n"
		"  --systrace             also record a system trace (tracefs,\n"
		"                         trace_clock=mono; root) over the same\n"
		"                         window and merge its findings, tagged\n"
		"                         [trace]; --systrace-seconds N stops it\n"
		"                         after N s\n"
		"Exits with CMD's status.",
	.exec = capture_exec,
};

static const struct ph_cmd *self(void)
{
	return &ph_cmd_capture;
}
