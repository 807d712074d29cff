/*
 * exits.c: why the process died last time.
 *
 * At start the agent writes a marker, <data dir>/exit-<pid>.rec, saying
 * "running".  A fatal signal (SEGV, BUS, FPE, ILL, ABRT) rewrites it from
 * the signal handler with async-signal-safe code only (open, write,
 * backtrace_symbols_fd, raw getdents64; no malloc, no stdio): the reason,
 * the wall-clock time, the build, the faulting address, the top frames and
 * a count of the other threads by state.  A clean exit (on_exit) rewrites
 * it with the exit status.  So at the next start, a marker still saying
 * "running" means the process was killed.
 *
 * The next start reports every record it has not reported before as an
 * `exit` event, renames it to exit-<pid>.seen (kept for `exit_trace`, at
 * most the newest 16), and answers `exit_trace` from those files.
 *
 *	record (text, one key=value per line, then the stack):
 *	state=running|crashed|exited   reason=REASON_*   pid=N
 *	timestamp=<epoch ms>  signal=N  fault=0x...  status=N  rss_kb=N
 *	foreground=0|1  version=...  threads=N  thread_states=R:1 S:4
 *	--- stack
 *	<one frame per line>
 */
#include "ph_common.h"
#include "collectors.h"
#include "ph_buf.h"
#include "ph_clock.h"
#include "ph_log.h"

#include <dirent.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
static struct sigaction previous[PH_ARRAY_SIZE(fatal_signals)];
static char record_path[440];
static char version[64];
static _Atomic int64_t last_rss_kb = 0;
static bool installed;
static char alt_stack[64 * 1024];

void ph_exits_note_rss(int64_t rss_kb)
{
	if (rss_kb >= 0)
		atomic_store_explicit(&last_rss_kb, rss_kb,
				      memory_order_relaxed);
}

/* --- async-signal-safe writing ---------------------------------------- */

static void put(int fd, const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void put_u64(int fd, uint64_t v, int base)
{
	char buf[24], *p = buf + sizeof(buf) - 1;

	*p = '\0';
	do {
		*--p = "0123456789abcdef"[v % (uint64_t)base];
		v /= (uint64_t)base;
	} while (v);
	put(fd, p);
}

static void put_kv(int fd, const char *key, int64_t v)
{
	put(fd, key);
	put(fd, "=");
	if (v < 0) {
		put(fd, "-");
		v = -v;
	}
	put_u64(fd, (uint64_t)v, 10);
	put(fd, "\n");
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Other threads by state, from /proc/self/task/<tid>/stat, no malloc. */
static void put_threads(int fd)
{
	char buf[4096], path[64], stat[256];
	int counts[26] = { 0 }, total = 0;
	int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (dir < 0)
		return;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1
			 */
			unsigned short reclen;
			const char *name = buf + off + 19;
			int sfd;
			ssize_t got;
			char *p = path;
			const char *prefix = "/proc/self/task/";

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			off += reclen;
			if (name[0] == '.')
				continue;
			while (*prefix)
				*p++ = *prefix++;
			for (const char *q = name; *q && p < path + 50;)
				*p++ = *q++;
			for (const char *q = "/stat"; *q;)
				*p++ = *q++;
			*p = '\0';
			sfd = open(path, O_RDONLY | O_CLOEXEC);
			if (sfd < 0)
				continue;
			got = read(sfd, stat, sizeof(stat) - 1);
			close(sfd);
			if (got <= 0)
				continue;
			stat[got] = '\0';
			for (p = stat + got; p > stat && *p != ')'; p--)
				;
			if (p[0] == ')' && p[1] == ' ' && p[2] >= 'A' &&
			    p[2] <= 'Z') {
				counts[p[2] - 'A']++;
				total++;
			}
		}
	}
	close(dir);
	put_kv(fd, "threads", total);
	put(fd, "thread_states=");
	for (int i = 0; i < 26; i++) {
		char st[3] = { (char)('A' + i), ':', '\0' };

		if (!counts[i])
			continue;
		put(fd, st);
		put_u64(fd, (uint64_t)counts[i], 10);
		put(fd, " ");
	}
	put(fd, "\n");
}

static void write_header(int fd, const char *state, const char *reason)
{
	put(fd, "state=");
	put(fd, state);
	put(fd, "\nreason=");
	put(fd, reason);
	put(fd, "\n");
	put_kv(fd, "pid", ph_agent.pid);
	put_kv(fd, "timestamp", wall_ms());
	put_kv(fd, "rss_kb", atomic_load(&last_rss_kb));
	put(fd, "version=");
	put(fd, version);
	put(fd, "\n");
}

static void on_fatal(int sig, siginfo_t *info, void *uctx)
{
	int fd = open(record_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	void *pcs[32];
	int n;

	(void)uctx;
	if (fd >= 0) {
		write_header(fd, "crashed", "REASON_CRASH_NATIVE");
		put_kv(fd, "signal", sig);
		put(fd, "fault=0x");
		put_u64(fd, (uint64_t)(uintptr_t)info->si_addr, 16);
		put(fd, "\n");
		put_threads(fd);
		put(fd, "--- stack\n");
		n = backtrace(pcs, 32);
		/* Skip this handler and the kernel's sigreturn frame. */
		if (n > 2)
			backtrace_symbols_fd(pcs + 2, n - 2, fd);
		close(fd);
	}
	/* Die of the same signal, as if we had never been here. */
	for (size_t i = 0; i < PH_ARRAY_SIZE(fatal_signals); i++)
		if (fatal_signals[i] == sig)
			sigaction(sig, &previous[i], NULL);
	raise(sig);
}

static void on_exit_cb(int status, void *arg)
{
	int fd = open(record_path, O_WRONLY | O_TRUNC | O_CLOEXEC);

	(void)arg;
	if (fd < 0)
		return;
	write_header(fd, "exited", "REASON_EXIT_SELF");
	put_kv(fd, "status", status);
	close(fd);
}

int ph_exits_start(struct ph_agent *a)
{
	stack_t ss = { .ss_sp = alt_stack, .ss_size = sizeof(alt_stack) };
	int fd;

	if (a->cfg.flags & PORTHOLE_NO_EXITS)
		return 0;
	snprintf(version, sizeof(version), "%s", a->version_name);
	snprintf(record_path, sizeof(record_path), "%s/exit-%d.rec",
		 a->data_dir, a->pid);
	fd = open(record_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		ph_warn("exits not recorded: %s: %s", record_path,
			strerror(errno));
		return 0;
	}
	write_header(fd, "running", "REASON_SIGNALED");
	close(fd);
	if (installed)
		return 0;
	/*
	 * The first backtrace() loads libgcc (dlopen, malloc): here, not in
	 * the handler, whether or not the watchdog has done it already.
	 */
	{
		void *warm[4];

		(void)backtrace(warm, 4);
	}
	/* A stack overflow must still be able to write its record. */
	sigaltstack(&ss, NULL);
	for (size_t i = 0; i < PH_ARRAY_SIZE(fatal_signals); i++) {
		struct sigaction sa = { .sa_sigaction = on_fatal,
					.sa_flags = SA_SIGINFO | SA_ONSTACK };

		sigemptyset(&sa.sa_mask);
		sigaction(fatal_signals[i], &sa, &previous[i]);
	}
	on_exit(on_exit_cb, NULL);
	installed = true;
	return 0;
}

void ph_exits_stop(void)
{
}

/* --- reading records at the next start -------------------------------- */

static const char *value(const char *text, const char *key, char *buf,
			 size_t size)
{
	size_t klen = strlen(key);

	buf[0] = '\0';
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, "--- stack", 9))
			break;
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			size_t n = strcspn(p + klen + 1, "\n");

			snprintf(buf, size, "%.*s", (int)n, p + klen + 1);
			break;
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return buf;
}

/* "module(fn+0x1a)[0x...]" lines into "fn(?:-1)" frames, app first. */
static void stack_text(const char *text, struct ph_buf *out, int max)
{
	const char *p = strstr(text, "--- stack\n");
	int n = 0;

	for (p = p ? p + 10 : NULL; p && *p && n < max; n++) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *open = memchr(p, '(', len);
		const char *plus =
			open ? memchr(open, '+', len - (size_t)(open - p)) :
			       NULL;
		int rc = 0;

		if (n)
			rc = ph_buf_addch(out, '\n');
		if (!rc && open && plus && plus > open + 1)
			rc = ph_buf_addf(out, "%.*s(?:-1)",
					 (int)(plus - open - 1), open + 1);
		else if (!rc)
			rc = ph_buf_addf(out, "%.*s", (int)len, p);
		if (rc)
			break;
		p = end ? end + 1 : NULL;
	}
}

/*
 * "R:1 S:3 " (the record's thread_states, the kernel's state letters)
 * into otherThreadStates {"running":0,"sleeping":3}: the thread that
 * crashed was running, and is not an other thread.
 */
static void thread_states(struct ph_rec *r, const char *text)
{
	static const char *const names[26] = {
		['D' - 'A'] = "disk-sleep", ['I' - 'A'] = "idle",
		['R' - 'A'] = "running",    ['S' - 'A'] = "sleeping",
		['T' - 'A'] = "stopped",    ['Z' - 'A'] = "zombie",
	};
	bool crashed_one = false;

	for (const char *p = text; p[0] >= 'A' && p[0] <= 'Z' && p[1] == ':';) {
		char *end;
		long long n = strtoll(p + 2, &end, 10);
		const char *name = names[p[0] - 'A'];

		if (p[0] == 'R' && !crashed_one && n > 0) {
			crashed_one = true;
			n--;
		}
		if (name && n > 0)
			ph_rec_obj_int(r, PH_KEY_OTHER_THREAD_STATES, name, n);
		p = end;
		while (*p == ' ')
			p++;
	}
}

static void report_one(const char *path)
{
	struct ph_buf text = PH_BUF_INIT(256 * 1024);
	struct ph_buf stack = PH_BUF_INIT(4096);
	char state[16], reason[48], v[64], seen[720];
	uint64_t pos;
	struct ph_rec *r;

	if (ph_buf_read_file(&text, path))
		goto out;
	value(text.buf, "state", state, sizeof(state));
	value(text.buf, "reason", reason, sizeof(reason));
	/* A clean exit with status 0 is an ordinary end, not worth an event;
	 * everything else is. */
	if (!strcmp(state, "exited") &&
	    !strcmp(value(text.buf, "status", v, sizeof(v)), "0"))
		goto mark;
	r = ph_emit_begin(PH_KIND_EXIT, &pos);
	if (!r)
		goto out; /* try again next start */
	ph_rec_str(r, PH_KEY_REASON, reason[0] ? reason : "REASON_UNKNOWN", 48);
	ph_rec_int(r, PH_KEY_IMPORTANCE, 100);
	ph_rec_int(r, PH_KEY_TIMESTAMP,
		   strtoll(value(text.buf, "timestamp", v, sizeof(v)), NULL,
			   10));
	ph_rec_int(r, PH_KEY_PSS, 0);
	ph_rec_int(r, PH_KEY_RSS,
		   strtoll(value(text.buf, "rss_kb", v, sizeof(v)), NULL, 10));
	ph_rec_int(r, PH_KEY_PID,
		   strtoll(value(text.buf, "pid", v, sizeof(v)), NULL, 10));
	if (!strcmp(state, "running"))
		ph_rec_str(r, PH_KEY_DESCRIPTION,
			   "killed: no exit or crash was recorded", 64);
	if (value(text.buf, "signal", v, sizeof(v))[0])
		ph_rec_int(r, PH_KEY_SIGNAL, strtoll(v, NULL, 10));
	if (value(text.buf, "status", v, sizeof(v))[0])
		ph_rec_int(r, PH_KEY_EXIT_STATUS, strtoll(v, NULL, 10));
	if (value(text.buf, "fault", v, sizeof(v))[0])
		ph_rec_str(r, PH_KEY_FAULT_ADDR, v, 24);
	if (value(text.buf, "version", v, sizeof(v))[0])
		ph_rec_str(r, PH_KEY_VERSION_NAME, v, 64);
	ph_rec_bool(r, PH_KEY_VERSION_ASSUMED, false);
	stack_text(text.buf, &stack, 12);
	if (stack.len) {
		ph_rec_strn(r, PH_KEY_MAIN_STACK, PH_F_STR, stack.buf,
			    stack.len, 4096);
		ph_rec_int(r, PH_KEY_OTHER_THREAD_COUNT,
			   strtoll(value(text.buf, "threads", v, sizeof(v)),
				   NULL, 10) -
				   1);
		thread_states(r, value(text.buf, "thread_states", seen,
				       sizeof(seen)));
	}
	ph_emit_commit(pos);
mark:
	snprintf(seen, sizeof(seen), "%.*s.seen", (int)(strlen(path) - 4),
		 path);
	rename(path, seen);
out:
	ph_buf_release(&text);
	ph_buf_release(&stack);
}

void ph_exits_report_previous(struct ph_agent *a)
{
	DIR *d = opendir(a->data_dir);
	struct dirent *e;
	char path[700], mine[32];

	if (!d)
		return;
	snprintf(mine, sizeof(mine), "exit-%d.rec", a->pid);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (strncmp(e->d_name, "exit-", 5) || n < 5 ||
		    strcmp(e->d_name + n - 4, ".rec") ||
		    !strcmp(e->d_name, mine))
			continue;
		snprintf(path, sizeof(path), "%s/%s", a->data_dir, e->d_name);
		report_one(path);
	}
	closedir(d);
}

/* exit_trace {timestamp}: the record of the exit at that wall-clock ms. */
const char *ph_collectors_exit_trace(const struct ph_json *params,
				     struct ph_jw *w)
{
	DIR *d = opendir(ph_agent.data_dir);
	struct dirent *e;
	int64_t want = -1;
	bool found = false;
	struct ph_buf text = PH_BUF_INIT(256 * 1024);

	if (!ph_json_as_int(ph_json_get(params, "timestamp"), &want))
		want = -1;
	while (d && !found && (e = readdir(d))) {
		char path[700], v[32];

		if (strncmp(e->d_name, "exit-", 5))
			continue;
		snprintf(path, sizeof(path), "%s/%s", ph_agent.data_dir,
			 e->d_name);
		ph_buf_reset(&text);
		if (ph_buf_read_file(&text, path))
			continue;
		found = want >= 0 &&
			strtoll(value(text.buf, "timestamp", v, sizeof(v)),
				NULL, 10) == want;
	}
	if (d)
		closedir(d);
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "timestamp", want);
	ph_jw_kv_bool(w, "found", found);
	if (found)
		ph_jw_kv_str(w, "text", text.buf);
	ph_jw_kv_bool(w, "truncated", false);
	if (want < 0)
		ph_jw_kv_str(w, "error",
			     "timestamp (an exit's wall-clock ms) "
			     "is required");
	ph_jw_obj_end(w);
	ph_buf_release(&text);
	return NULL;
}

/* One line of the exits list: a record's fields, and whether reported. */
static void list_one(struct ph_jw *w, const char *text, bool reported)
{
	char v[64];

	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "timestamp",
		     strtoll(value(text, "timestamp", v, sizeof(v)), NULL, 10));
	ph_jw_kv_int(w, "pid",
		     strtoll(value(text, "pid", v, sizeof(v)), NULL, 10));
	/* running: the process never wrote its end, so it was killed */
	ph_jw_kv_str(w, "state", value(text, "state", v, sizeof(v)));
	ph_jw_kv_str(w, "reason", value(text, "reason", v, sizeof(v)));
	if (value(text, "signal", v, sizeof(v))[0])
		ph_jw_kv_int(w, "signal", strtoll(v, NULL, 10));
	if (value(text, "status", v, sizeof(v))[0])
		ph_jw_kv_int(w, "status", strtoll(v, NULL, 10));
	ph_jw_kv_str(w, "versionName", value(text, "version", v, sizeof(v)));
	ph_jw_kv_bool(w, "reported", reported);
	ph_jw_obj_end(w);
}

/*
 * exits: every exit recorded in the data dir but this process's own, the
 * ones already reported as exit events included; exit_trace gives one's
 * whole record by its timestamp.
 */
const char *ph_collectors_exits(struct ph_jw *w)
{
	DIR *d = opendir(ph_agent.data_dir);
	struct dirent *e;
	struct ph_buf text = PH_BUF_INIT(256 * 1024);
	char mine[32];

	snprintf(mine, sizeof(mine), "exit-%d.rec", ph_agent.pid);
	ph_jw_obj_begin(w);
	ph_jw_key(w, "exits");
	ph_jw_arr_begin(w);
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		bool seen = n > 5 && !strcmp(e->d_name + n - 5, ".seen");
		char path[700];

		if (strncmp(e->d_name, "exit-", 5) ||
		    !strcmp(e->d_name, mine) ||
		    (!seen && (n < 4 || strcmp(e->d_name + n - 4, ".rec"))))
			continue;
		snprintf(path, sizeof(path), "%s/%s", ph_agent.data_dir,
			 e->d_name);
		ph_buf_reset(&text);
		if (!ph_buf_read_file(&text, path))
			list_one(w, text.buf, seen);
	}
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
	if (d)
		closedir(d);
	ph_buf_release(&text);
	return NULL;
}
