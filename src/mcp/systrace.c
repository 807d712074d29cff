/* SPDX-License-Identifier: Apache-2.0 */
/*
 * systrace.c: system traces for the MCP tools.  On this machine the trace
 * engine's tracefs recorder (`porthole trace record`, run as a child so
 * its output never reaches our stdout and its signal handling restores
 * tracefs); on a device, `perfetto` over adb: one-shot (-o, pull, rm), or
 * a detached ring-buffer session (--background-wait, whose exit status
 * says the session started, and which prints the pid to stop it by),
 * snapshotted with --clone-by-name and stopped with kill -TERM, waiting
 * for the process to be gone (it writes the ring out on the way) before
 * the pull and the clean-up (src/host/perfetto.c, which `capture
 * --systrace` shares).  The ring session is written down in
 * .porthole/traces/ring.json, so a restarted server can still snapshot
 * and stop it.  Captures land in .porthole/traces/.  The exact adb
 * commands are tested against a fake adb (tests/e2e/mcp_adb.py).
 */
#include "ph_common.h"
#include "mcp.h"
#include "ph_clock.h"
#include "ph_error.h"
#include "ph_log.h"
#include "systrace.h"
#include "host/perfetto.h"
#include "host/run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEVICE_DIR PH_PERFETTO_DIR
#define RING_NAME  "porthole-ring"
/* How long a stopped ring may take to write its buffer out. */
#define STOP_WAIT_MS 30000

int ph_systrace_dir(struct ph_mcp *m)
{
	char parent[4200];
	char *s;

	snprintf(parent, sizeof(parent), "%s", m->trace_dir);
	s = strrchr(parent, '/');
	if (s)
		*s = '\0';
	mkdir(parent, 0755);
	if (mkdir(m->trace_dir, 0755) && errno != EEXIST)
		return PH_EIO;
	return 0;
}

/* A fresh file name in the trace dir: <stem>-<epoch ms>.<ext>. */
static void fresh(struct ph_mcp *m, const char *stem, const char *ext,
		  char *out, size_t size)
{
	snprintf(out, size, "%s/%s-%" PRId64 ".%s", m->trace_dir, stem,
		 ph_clock_epoch_ms(), ext);
}

int64_t ph_systrace_app_pid(struct ph_mcp *m)
{
	int64_t pid = 0;

	if (!m->lv || !m->started)
		return 0;
	pthread_mutex_lock(&m->lv->link.mu);
	if (m->lv->link.ident.have)
		pid = m->lv->link.ident.pid;
	pthread_mutex_unlock(&m->lv->link.mu);
	return pid;
}

int ph_systrace_capture(struct ph_mcp *m, int seconds, bool (*stop)(void *ctx),
			void *ctx, char *path, size_t size, char *why,
			size_t wsize)
{
	struct ph_buf out = PH_BUF_INIT(1 << 16);
	char secs[16], pid[24];
	bool stopped = false;
	int rc;

	why[0] = '\0';
	if (ph_systrace_dir(m)) {
		snprintf(why, wsize, "cannot create %s", m->trace_dir);
		return PH_EIO;
	}
	snprintf(secs, sizeof(secs), "%d", seconds);
	if (ph_mcp_local(m)) {
		const char *app = ph_mcp_app_id(m);
		int64_t app_pid = ph_systrace_app_pid(m);
		char *argv[12];
		size_t k = 0;

		fresh(m, "trace", "txt", path, size);
		argv[k++] = m->self_exe;
		argv[k++] = "trace";
		argv[k++] = "record";
		argv[k++] = "--seconds";
		argv[k++] = secs;
		argv[k++] = "--out";
		argv[k++] = path;
		/* The app's own process, from its hello: its name on this
		 * machine need not be its application id. */
		if (app_pid > 0) {
			snprintf(pid, sizeof(pid), "%" PRId64, app_pid);
			argv[k++] = "--pid";
			argv[k++] = pid;
		}
		if (app) {
			argv[k++] = "--application-id";
			argv[k++] = (char *)app;
		}
		argv[k] = NULL;
		rc = ph_run_stoppable(argv, &out, (seconds + 20) * 1000, stop,
				      ctx, &stopped);
		if (stopped) {
			/* Cancelled: nothing is left behind to be asked. */
			unlink(path);
			path[0] = '\0';
			snprintf(why, wsize, "cancelled");
			ph_buf_release(&out);
			return PH_EAGAIN;
		}
		if (rc != 0) {
			snprintf(
				why, wsize,
				"the tracefs recorder failed (exit %d): %.300s",
				rc, out.buf);
			ph_buf_release(&out);
			return PH_EIO;
		}
	} else {
		char remote[300];

		fresh(m, "trace", "pftrace", path, size);
		snprintf(remote, sizeof(remote),
			 DEVICE_DIR "/porthole-%" PRId64 ".pftrace",
			 ph_clock_epoch_ms());
		if (ph_perfetto_record(seconds, remote, path, why, wsize)) {
			ph_buf_release(&out);
			return PH_EIO;
		}
		/* perfetto -t cannot be cut short over adb: a cancelled
		 * capture is dropped once it is back. */
		if (stop && stop(ctx)) {
			unlink(path);
			path[0] = '\0';
			snprintf(why, wsize, "cancelled");
			ph_buf_release(&out);
			return PH_EAGAIN;
		}
	}
	ph_buf_release(&out);
	return 0;
}

/* --- the ring session ---------------------------------------------------- */

static void ring_path(struct ph_mcp *m, char *out, size_t size)
{
	snprintf(out, size, "%s/ring.json", m->trace_dir);
}

int ph_systrace_ring_load(struct ph_mcp *m, struct ph_systrace_ring *r)
{
	struct ph_buf b = PH_BUF_INIT(1 << 16);
	struct ph_arena a;
	struct ph_json *root;
	char p[4300];
	int64_t v;
	int rc = PH_ENOENT;

	memset(r, 0, sizeof(*r));
	ring_path(m, p, sizeof(p));
	ph_arena_init(&a, 1 << 12, 1 << 20);
	if (!ph_buf_read_file(&b, p) &&
	    !ph_json_parse(&a, b.buf, b.len, &root, NULL)) {
		const struct ph_json *mode = ph_json_get(root, "mode");
		const struct ph_json *out = ph_json_get(root, "out");

		r->device = ph_json_streq(mode, "device");
		if (ph_json_as_int(ph_json_get(root, "pid"), &v))
			r->pid = v;
		if (ph_json_as_int(ph_json_get(root, "startedAt"), &v))
			r->started_at = v;
		if (ph_json_is(out, PH_JSON_STRING))
			snprintf(r->out, sizeof(r->out), "%.*s", (int)out->n,
				 out->u.s);
		r->active = true;
		rc = 0;
	}
	ph_arena_release(&a);
	ph_buf_release(&b);
	return rc;
}

static int ring_save(struct ph_mcp *m, const struct ph_systrace_ring *r)
{
	struct ph_buf b = PH_BUF_INIT(1 << 16);
	struct ph_jw jw;
	char p[4300];
	int fd, rc = PH_EIO;

	ph_jw_init(&jw, &b);
	ph_jw_obj_begin(&jw);
	ph_jw_kv_str(&jw, "mode", r->device ? "device" : "local");
	ph_jw_kv_int(&jw, "pid", r->pid);
	ph_jw_kv_int(&jw, "startedAt", r->started_at);
	ph_jw_kv_str(&jw, "out", r->out);
	ph_jw_obj_end(&jw);
	ring_path(m, p, sizeof(p));
	if (!ph_jw_finish(&jw) &&
	    (fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >=
		    0) {
		if (write(fd, b.buf, b.len) == (ssize_t)b.len)
			rc = 0;
		close(fd);
	}
	ph_buf_release(&b);
	return rc;
}

/* Is pid still our recorder?  (A restarted server checks before kill.) */
static bool is_recorder(int64_t pid)
{
	char p[64], cmd[512] = "";
	int fd;
	ssize_t n;

	if (pid <= 0)
		return false;
	snprintf(p, sizeof(p), "/proc/%" PRId64 "/cmdline", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, cmd, sizeof(cmd) - 1);
	close(fd);
	if (n <= 0)
		return false;
	for (ssize_t i = 0; i < n; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	cmd[n] = '\0';
	return strstr(cmd, "trace record") != NULL;
}

int ph_systrace_ring_start(struct ph_mcp *m, struct ph_systrace_ring *r,
			   char *why, size_t wsize)
{
	struct ph_systrace_ring old;

	if (!ph_systrace_ring_load(m, &old) &&
	    (old.device || is_recorder(old.pid))) {
		snprintf(why, wsize,
			 "a ring session is already running (since %" PRId64
			 "); snapshot or stop it first",
			 old.started_at);
		return PH_EAGAIN;
	}
	if (ph_systrace_dir(m)) {
		snprintf(why, wsize, "cannot create %s", m->trace_dir);
		return PH_EIO;
	}
	memset(r, 0, sizeof(*r));
	r->started_at = ph_clock_epoch_ms();
	if (ph_mcp_local(m)) {
		const char *app = ph_mcp_app_id(m);
		pid_t pid;

		fresh(m, "ring", "txt", r->out, sizeof(r->out));
		pid = fork();
		if (pid < 0) {
			snprintf(why, wsize, "fork: %s", strerror(errno));
			return PH_EIO;
		}
		if (pid == 0) {
			int nul = open("/dev/null", O_RDWR);

			/* detached: it outlives this server until stopped */
			setsid();
			if (nul >= 0) {
				dup2(nul, 0);
				dup2(nul, 1);
				dup2(nul, 2);
			}
			execl(m->self_exe, m->self_exe, "trace", "record",
			      "--seconds", "86400", "--out", r->out,
			      app ? "--application-id" : (char *)NULL, app,
			      (char *)NULL);
			_exit(127);
		}
		r->pid = pid;
		usleep(300000);
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			snprintf(why, wsize,
				 "the tracefs recorder exited at once (not "
				 "root, or no tracefs?); try "
				 "capture_system_trace for its message");
			return PH_EIO;
		}
	} else {
		r->device = true;
		snprintf(r->out, sizeof(r->out),
			 DEVICE_DIR "/" RING_NAME ".pftrace");
		if (ph_perfetto_start(RING_NAME, 3600, r->out, &r->pid, why,
				      wsize))
			return PH_EIO;
	}
	r->active = true;
	if (ring_save(m, r))
		ph_warn("mcp: could not write ring.json");
	return 0;
}

/* Copies the bytes of a growing file (what the recorder wrote so far). */
static int copy_file(const char *from, const char *to)
{
	struct ph_buf b = PH_BUF_INIT((size_t)1 << 30);
	int fd, rc = PH_EIO;

	if (ph_buf_read_file(&b, from)) {
		ph_buf_release(&b);
		return PH_EIO;
	}
	fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, b.buf, b.len) == (ssize_t)b.len)
			rc = 0;
		close(fd);
	}
	ph_buf_release(&b);
	return rc;
}

int ph_systrace_ring_snapshot(struct ph_mcp *m, char *path, size_t size,
			      char *why, size_t wsize)
{
	struct ph_systrace_ring r;

	if (ph_systrace_ring_load(m, &r)) {
		snprintf(why, wsize,
			 "no ring session is running; start one "
			 "with system_trace_start");
		return PH_ENOENT;
	}
	if (!r.device) {
		if (!is_recorder(r.pid)) {
			snprintf(why, wsize,
				 "the ring recorder (pid %" PRId64
				 ") is gone; start it again",
				 r.pid);
			return PH_ENOENT;
		}
		fresh(m, "snapshot", "txt", path, size);
		if (copy_file(r.out, path)) {
			snprintf(why, wsize, "cannot copy %s", r.out);
			return PH_EIO;
		}
		return 0;
	} else {
		char remote[300];

		snprintf(remote, sizeof(remote),
			 DEVICE_DIR "/porthole-snap-%" PRId64 ".pftrace",
			 ph_clock_epoch_ms());
		fresh(m, "snapshot", "pftrace", path, size);
		return ph_perfetto_clone(RING_NAME, remote, path, why, wsize) ?
			       PH_EIO :
			       0;
	}
}

int ph_systrace_ring_stop(struct ph_mcp *m, char *path, size_t size, char *why,
			  size_t wsize)
{
	struct ph_systrace_ring r;
	char p[4300];

	path[0] = '\0';
	why[0] = '\0';
	if (ph_systrace_ring_load(m, &r)) {
		snprintf(why, wsize, "no ring session is running");
		return PH_ENOENT;
	}
	if (!r.device) {
		if (is_recorder(r.pid)) {
			/* SIGINT: the recorder restores tracefs and exits */
			kill((pid_t)r.pid, SIGINT);
			for (int i = 0; i < 100 && is_recorder(r.pid); i++) {
				waitpid((pid_t)r.pid, NULL, WNOHANG);
				usleep(50000);
			}
		}
		snprintf(path, size, "%s", r.out);
	} else {
		fresh(m, "ring", "pftrace", path, size);
		if (ph_perfetto_stop(r.pid, r.out, path, STOP_WAIT_MS, why,
				     wsize))
			path[0] = '\0';
	}
	ring_path(m, p, sizeof(p));
	unlink(p);
	return 0;
}

/* The newest trace file in the trace dir, into path. */
int ph_systrace_newest(struct ph_mcp *m, char *path, size_t size)
{
	char *argv[] = { "sh", "-c", NULL, NULL };
	char cmd[4400];
	struct ph_buf out = PH_BUF_INIT(1 << 14);
	int rc;

	if (strpbrk(m->trace_dir, "'\"`$\\"))
		return PH_EINVAL;
	snprintf(cmd, sizeof(cmd),
		 "ls -t '%s' 2>/dev/null | grep -v '^ring\\.json$' | head -1",
		 m->trace_dir);
	argv[2] = cmd;
	rc = ph_mcp_run(argv, &out, 5000);
	out.buf[strcspn(out.buf, "\n")] = '\0';
	if (rc || !out.buf[0]) {
		ph_buf_release(&out);
		return PH_ENOENT;
	}
	snprintf(path, size, "%s/%s", m->trace_dir, out.buf);
	ph_buf_release(&out);
	return 0;
}
