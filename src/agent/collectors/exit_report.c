/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exit_report.c: at start, the deaths of earlier processes of this app,
 * from the records exits.c left in the data dir; and the `exits` and
 * `exit_trace` methods over them.
 *
 * A record still saying "running" was killed.  What killed it is worked
 * out here, from what the process could leave behind and what the kernel
 * keeps, in this order:
 *   - the kernel log (/dev/kmsg) names the pid in an out-of-memory kill
 *     ("Killed process <pid> (name)", the system-wide and the cgroup OOM
 *     killer both) after the process started, on the same boot:
 *     REASON_LOW_MEMORY, the kernel's line as the description;
 *   - the state file says the main thread had gone ANR_MS or more without
 *     answering the watchdog: REASON_ANR, with where it was stuck;
 *   - otherwise REASON_SIGNALED (a SIGKILL, or a signal the app did not
 *     handle; which one is not recorded anywhere a later process can
 *     read).  A kernel log that cannot be read is said in the description.
 * A crashed record's stack is symbolized here (crash_stack), from the raw
 * addresses and module list its handler wrote.
 * The record and its state file are then merged into one file,
 * exit-<pid>.seen (the state's fields first, so they win), which `exits`
 * lists and `exit_trace` returns (the newest 16 are kept).
 */
#include "ph_common.h"
#include "collectors.h"
#include "ph_buf.h"
#include "ph_clock.h"
#include "ph_log.h"

#include "../platform.h"
#include "../symbolize.h"

#include <dirent.h>
#if PH_PLATFORM_LIBDW
#include <elfutils/libdwfl.h>
#endif
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* The kernel log's clock and ours can differ a little (see oom_kill_line). */
#define KERNEL_CLOCK_SLACK_MS 2000

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

/*
 * ph_buf_read_file for a file in the data dir, which anyone who can write
 * there could have made a FIFO (whose open waits for a writer, forever)
 * or a directory: opened without waiting, and read only when a regular
 * file (PH_ECORRUPT otherwise).  All or nothing, as ph_buf_read_file.
 */
static int read_regular(struct ph_buf *b, const char *path)
{
	size_t old = b->len;
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? PH_ENOENT : PH_EIO;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return PH_ECORRUPT;
	}
	do
		n = ph_buf_read_once(b, fd, 1 << 16);
	while (n > 0);
	close(fd);
	if (n < 0) {
		ph_buf_setlen(b, old);
		return (int)n;
	}
	return 0;
}

/* Why read_regular refused a file, for the log. */
static const char *unread_why(int rc)
{
	if (rc == PH_ECORRUPT)
		return "not a regular file";
	if (rc == PH_ETOOBIG)
		return "larger than a record can be";
	return strerror(errno);
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
 * A native crash's frames, symbolized now from what its handler wrote:
 * pcs= (raw addresses, the interrupted one first) and one module= line
 * per module they fall in (exits.c).  Each module file is opened at the
 * address it had in the dead process, and read only when its build id is
 * the one the crash recorded; a file rebuilt or replaced since gives
 * module+offset (the offset from its load bias, a file address for
 * addr2line) and says so.
 */
#define CRASH_MODULES 64
#define STALE_NOTE \
	" [not symbolized: the module's build id differs from the crashed one's]"

struct crash_module {
	uintptr_t lo, hi, bias;	   /* as the crashed process had them */
	char build_id[2 * 20 + 1]; /* hex, or "-" when it had none */
	char path[256];
#if PH_PLATFORM_LIBDW
	Dwfl_Module *mod; /* NULL: the file could not be read */
#endif
	bool stale; /* the file's build id is not the crash's */
};

#if PH_PLATFORM_LIBDW
static char *crash_debuginfo_path; /* libdwfl's default search */
static const Dwfl_Callbacks crash_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &crash_debuginfo_path,
};
#endif

/*
 * Whether module k repeats one of the k before it: its range overlaps
 * theirs, or it is the same file at the same load bias.  The handler
 * writes each loaded module once; libdwfl, handed one file twice at one
 * bias (whatever the ranges the line says), frees the first module it
 * made and the stack is then read from freed memory.
 */
static bool crash_module_repeats(const struct crash_module *m, size_t k)
{
	for (size_t i = 0; i < k; i++)
		if ((m[k].lo < m[i].hi && m[i].lo < m[k].hi) ||
		    (m[k].bias == m[i].bias && !strcmp(m[k].path, m[i].path)))
			return true;
	return false;
}

/*
 * The record's module= lines; a malformed one is skipped, and so is one
 * that repeats an earlier one (a record anyone could have written must
 * not crash the start).
 */
static size_t crash_modules(const char *text, struct crash_module *m,
			    size_t max)
{
	size_t n = 0;

	for (const char *p = text; p && *p && n < max;) {
		if (!strncmp(p, "--- stack", 9))
			break;
		if (!strncmp(p, "module=", 7) &&
		    sscanf(p + 7,
			   "%" SCNxPTR " %" SCNxPTR " %" SCNxPTR
			   " %40s %255[^\n]",
			   &m[n].lo, &m[n].hi, &m[n].bias, m[n].build_id,
			   m[n].path) == 5 &&
		    m[n].lo < m[n].hi && !crash_module_repeats(m, n))
			n++;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return n;
}

#if PH_PLATFORM_LIBDW
/*
 * A module file for libdwfl, or -1: opened without waiting, and only a
 * regular file.  The path is the record's, which could name a FIFO or a
 * terminal (/dev/stdin), whose open or read would hang the start.
 */
static int open_module_file(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Opens each module file at its old address; checks its build id. */
static void crash_report_modules(Dwfl *d, struct crash_module *m, size_t n)
{
	dwfl_report_begin(d);
	for (size_t i = 0; i < n; i++) {
		const unsigned char *bits;
		GElf_Addr at;
		char hex[sizeof(m[i].build_id)] = "";
		int len, fd;

		m[i].mod = NULL;
		m[i].stale = false;
		if (m[i].path[0] != '/')
			continue; /* the vdso: no file */
		fd = open_module_file(m[i].path);
		if (fd < 0)
			continue;
		/* libdwfl keeps fd with the module, and closes it at the end */
		m[i].mod = dwfl_report_elf(d, m[i].path, m[i].path, fd,
					   m[i].bias, false);
		if (!m[i].mod)
			close(fd);
		if (!m[i].mod || !strcmp(m[i].build_id, "-"))
			continue; /* no id to check: trusted */
		len = dwfl_module_build_id(m[i].mod, &bits, &at);
		for (int b = 0; b < len && 2 * b + 2 < (int)sizeof(hex); b++)
			snprintf(hex + 2 * b, 3, "%02x", bits[b]);
		m[i].stale = strcmp(hex, m[i].build_id) != 0;
	}
	dwfl_report_end(d, NULL, NULL);
}

/* Names f (the function, file and line at addr) from its module's file. */
static void crash_frame_names(const struct crash_module *in, uintptr_t addr,
			      struct ph_frame_info *f)
{
	const char *fn, *file;
	Dwfl_Line *line;
	int lineno = 0;

	if (!in->mod || in->stale)
		return;
	fn = ph_symbolize_fn_name(in->mod, addr);
	line = dwfl_module_getsrc(in->mod, addr);
	if (fn)
		snprintf(f->fn, sizeof(f->fn), "%s", fn);
	file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) :
		      NULL;
	if (file) {
		const char *slash = strrchr(file, '/');

		snprintf(f->file, sizeof(f->file), "%s",
			 slash ? slash + 1 : file);
		f->line = lineno;
	}
}
#else
/*
 * No libdw (platform.h): the frame keeps its module and offset, for the
 * host or a developer to symbolize against the build.
 */
static void crash_frame_names(const struct crash_module *in, uintptr_t addr,
			      struct ph_frame_info *f)
{
	(void)in;
	(void)addr;
	(void)f;
}
#endif

/*
 * One crashed frame; exact: the interrupted address, not a return one.
 * True when its module's file is no longer the crashed build.
 */
static bool crash_frame(const struct crash_module *m, size_t nm, uintptr_t pc,
			bool exact, struct ph_frame_info *f)
{
	uintptr_t addr = exact ? pc : pc - 1;
	const struct crash_module *in = NULL;

	memset(f, 0, sizeof(*f));
	f->pc = pc;
	f->line = -1;
	for (size_t i = 0; i < nm && !in; i++)
		if (addr >= m[i].lo && addr < m[i].hi)
			in = &m[i];
	if (!in)
		return false;
	{
		const char *slash = strrchr(in->path, '/');

		snprintf(f->module, sizeof(f->module), "%.*s",
			 (int)sizeof(f->module) - 1,
			 slash ? slash + 1 : in->path);
	}
	f->offset = pc - in->bias;
	f->app = ph_symbolize_is_app_path(in->path);
	crash_frame_names(in, addr, f);
	return in->stale;
}

/*
 * The crashed stack as mainStack lines, app frames first, then library
 * frames, at most PH_SENT_FRAMES; 0 if done, or -1 when the record has no
 * raw addresses (a record from an older agent: its backtrace text is used).
 */
static int crash_stack(const char *text, struct ph_buf *out)
{
	struct crash_module m[CRASH_MODULES];
	struct ph_frame_info fr[PH_MAX_FRAMES];
	uintptr_t pcs[PH_MAX_FRAMES];
	bool stale[PH_MAX_FRAMES];
	char line[400], pcs_text[PH_MAX_FRAMES * 20];
	size_t nm = crash_modules(text, m, CRASH_MODULES), n = 0, k = 0;
#if PH_PLATFORM_LIBDW
	Dwfl *d;
#endif

	if (!value(text, "pcs", pcs_text, sizeof(pcs_text))[0])
		return -1;
	for (char *p = pcs_text, *end; *p && n < PH_MAX_FRAMES; p = end) {
		pcs[n] = (uintptr_t)strtoull(p, &end, 16);
		if (end == p)
			break;
		n++;
	}
#if PH_PLATFORM_LIBDW
	d = dwfl_begin(&crash_callbacks);
	if (d)
		crash_report_modules(d, m, nm);
	else
		nm = 0;
#else
	for (size_t i = 0; i < nm; i++)
		m[i].stale = false; /* no build id is read to check */
#endif
	for (size_t i = 0; i < n; i++)
		stale[i] = crash_frame(m, nm, pcs[i], i == 0, &fr[i]);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n && k < PH_SENT_FRAMES; i++) {
			int rc;

			if (fr[i].app != (pass == 0))
				continue;
			if (fr[i].module[0] || fr[i].fn[0])
				ph_frame_format(&fr[i], line, sizeof(line));
			else
				snprintf(line, sizeof(line),
					 "0x%" PRIxPTR "(?:-1)", fr[i].pc);
			rc = ph_buf_addf(out, "%s%s%s", k ? "\n" : "", line,
					 stale[i] ? STALE_NOTE : "");
			if (rc)
				break; /* 4096 B cap (protocol section 8) */
			k++;
		}
#if PH_PLATFORM_LIBDW
	if (d)
		dwfl_end(d);
#endif
	return 0;
}

/*
 * "R:1 S:3 " (the record's thread_states, the kernel's state letters)
 * into otherThreadStates {"running":0,"sleeping":3}: the thread that wrote
 * them (the crashed one; for an ANR, the agent's sampler or watchdog) was
 * running, and is not an other thread.
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

void ph_exits_read_boot_id(char *out, size_t size)
{
	struct ph_buf b = PH_BUF_INIT(256);

	out[0] = '\0';
	if (!ph_buf_read_file(&b, "/proc/sys/kernel/random/boot_id"))
		snprintf(out, size, "%.*s", (int)strcspn(b.buf, "\n"), b.buf);
	ph_buf_release(&b);
}

/*
 * Whether the kernel log holds an out-of-memory kill of `pid` no earlier
 * than since_mono_ms (its timestamps are CLOCK_MONOTONIC-like microseconds;
 * a little slack, as they come from the scheduler clock): 1 with the
 * kernel's line in `line`, 0 if none, or -errno when the log could not be
 * read (an unprivileged process where dmesg_restrict is set, Android's
 * apps).  /dev/kmsg hands out one record per read(), from the oldest.
 */
static int oom_kill_line(int pid, int64_t since_mono_ms, char *line,
			 size_t size)
{
	char rec[8192], want[48]; /* a record longer than rec is EINVAL */
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int found = 0;

	if (fd < 0)
		return -errno;
	snprintf(want, sizeof(want), "Killed process %d (", pid);
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		const char *msg, *p;
		long long usec;

		if (n < 0 && (errno == EPIPE || errno == EINTR))
			continue; /* overwritten while we read: go on */
		if (n <= 0)
			break; /* EAGAIN: the end (EINVAL: a record over 8 KiB)
				*/
		rec[n] = '\0';
		/* "prio,seq,usec,flags[,...];message\n[ continuation]" */
		msg = strchr(rec, ';');
		p = strchr(rec, ',');
		p = p ? strchr(p + 1, ',') : NULL;
		if (!msg || !p || !strstr(msg, want))
			continue;
		usec = strtoll(p + 1, NULL, 10);
		/* (added on the left: since_mono_ms is the record's, and
		 * could be INT64_MIN) */
		if (usec / 1000 + KERNEL_CLOCK_SLACK_MS < since_mono_ms)
			continue; /* an earlier process that had this pid */
		snprintf(line, size, "%.*s", (int)strcspn(msg + 1, "\n"),
			 msg + 1);
		found = 1;
		break;
	}
	close(fd);
	return found;
}

/* This boot's id, read once per report (ph_exits_report_previous). */
static char boot_now[40];

/*
 * Where one report's exit events go, and whether the kernel log is read
 * (ph_exits_report_dir).  The agent's: its queue, and the log.
 */
struct report_to {
	bool kmsg; /* look for an out-of-memory kill in /dev/kmsg */
	void (*sink)(const struct ph_rec *r, void *ctx); /* NULL: the queue */
	void *ctx;
};

/*
 * Why a process whose record still says "running" is gone, as the lines
 * that go before its record (they win over the record's own): reason and
 * description.
 */
static void explain_kill(const char *rec, const char *state, bool kmsg,
			 struct ph_buf *out)
{
	char v[64], line[400];
	int pid = (int)strtol(value(rec, "pid", v, sizeof(v)), NULL, 10);
	int64_t started =
		strtoll(value(rec, "started_mono_ms", v, sizeof(v)), NULL, 10);
	int64_t stuck = strtoll(value(state, "unresponsive_ms", v, sizeof(v)),
				NULL, 10);
	int kernel = 0;
	int rc;

	if (value(rec, "boot_id", v, sizeof(v))[0] && strcmp(v, boot_now)) {
		rc = ph_buf_addstr(out, "reason=REASON_SIGNALED\n"
					"description=killed, or still running "
					"when the system restarted: no exit or "
					"crash was recorded\n");
		(void)rc;
		return;
	}
	if (kmsg)
		kernel = oom_kill_line(pid, started, line, sizeof(line));
	if (kernel == 1)
		rc = ph_buf_addf(out,
				 "reason=REASON_LOW_MEMORY\n"
				 "description=killed by the kernel's "
				 "out-of-memory killer: %s\n",
				 line);
	else if (value(state, "unresponsive_since", v, sizeof(v))[0] &&
		 stuck >= PH_ANR_MS)
		rc = ph_buf_addf(out,
				 "reason=REASON_ANR\n"
				 "description=killed while the main thread "
				 "had not answered for %lld ms\n",
				 (long long)stuck);
	else
		rc = ph_buf_addf(out,
				 "reason=REASON_SIGNALED\n"
				 "description=killed: no exit or crash was "
				 "recorded%s%s%s\n",
				 kernel < 0 ? " (the kernel log, which would "
					      "name an out-of-memory kill, "
					      "could not be read: " :
					      "",
				 kernel < 0 ? strerror(-kernel) : "",
				 kernel < 0 ? ")" : "");
	(void)rc; /* the buffer's cap is far above these lines */
}

static void state_path_of(const char *rec_path, char *out, size_t size)
{
	snprintf(out, size, "%.*s.state", (int)(strlen(rec_path) - 4),
		 rec_path);
}

static void unlink_state(const char *rec_path)
{
	char path[720];

	state_path_of(rec_path, path, sizeof(path));
	unlink(path);
}

/* The start of a record's stack section, or its end when it has none. */
static const char *stack_part(const char *text)
{
	const char *p = strstr(text, "--- stack\n");

	return p ? p : text + strlen(text);
}

/*
 * A killed process's record made whole: why, then its last state's
 * fields, then the record's own, then the last state's stack.  Written to
 * `seen` (a new file renamed in place); 0 if done.
 */
static int resolve_kill(const char *rec_path, const char *rec, const char *seen,
			bool kmsg, struct ph_buf *merged)
{
	char state_path[720], tmp[730];
	struct ph_buf state = PH_BUF_INIT(64 * 1024);
	const char *st_stack;
	int fd, rc;

	state_path_of(rec_path, state_path, sizeof(state_path));
	if (read_regular(&state, state_path))
		ph_buf_reset(&state); /* the process died before its first */
	st_stack = stack_part(state.buf);
	explain_kill(rec, state.buf, kmsg, merged);
	rc = ph_buf_addf(merged, "%.*s%s%s", (int)(st_stack - state.buf),
			 state.buf, rec, st_stack);
	ph_buf_release(&state);
	if (rc)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s.new", seen);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return PH_EIO;
	rc = write(fd, merged->buf, merged->len) == (ssize_t)merged->len ?
		     0 :
		     PH_EIO;
	if (close(fd) || rc || rename(tmp, seen)) {
		unlink(tmp);
		return PH_EIO;
	}
	unlink(state_path);
	unlink(rec_path);
	return 0;
}

/*
 * The exit event of a record (rec: made whole by resolve_kill when it was
 * killed) into r; stack is scratch for its main stack.
 */
static void exit_event(struct ph_rec *r, const char *rec, struct ph_buf *stack)
{
	char reason[48], v[64];

	value(rec, "reason", reason, sizeof(reason));
	ph_rec_str(r, PH_KEY_REASON, reason[0] ? reason : "REASON_UNKNOWN", 48);
	ph_rec_int(r, PH_KEY_IMPORTANCE,
		   value(rec, "importance", v, sizeof(v))[0] ?
			   strtoll(v, NULL, 10) :
			   PH_IMPORTANCE_FOREGROUND);
	ph_rec_int(r, PH_KEY_TIMESTAMP,
		   strtoll(value(rec, "timestamp", v, sizeof(v)), NULL, 10));
	ph_rec_int(r, PH_KEY_PSS,
		   strtoll(value(rec, "pss_kb", v, sizeof(v)), NULL, 10));
	ph_rec_int(r, PH_KEY_RSS,
		   strtoll(value(rec, "rss_kb", v, sizeof(v)), NULL, 10));
	ph_rec_int(r, PH_KEY_PID,
		   strtoll(value(rec, "pid", v, sizeof(v)), NULL, 10));
	{
		char d[512];

		if (value(rec, "description", d, sizeof(d))[0])
			ph_rec_str(r, PH_KEY_DESCRIPTION, d, sizeof(d));
	}
	if (value(rec, "signal", v, sizeof(v))[0])
		ph_rec_int(r, PH_KEY_SIGNAL, strtoll(v, NULL, 10));
	if (value(rec, "status", v, sizeof(v))[0])
		ph_rec_int(r, PH_KEY_EXIT_STATUS, strtoll(v, NULL, 10));
	if (value(rec, "fault", v, sizeof(v))[0])
		ph_rec_str(r, PH_KEY_FAULT_ADDR, v, 24);
	if (value(rec, "version", v, sizeof(v))[0])
		ph_rec_str(r, PH_KEY_VERSION_NAME, v, 64);
	ph_rec_bool(r, PH_KEY_VERSION_ASSUMED, false);
	/* A stack: a native crash's, or an ANR's (mainStack: ANR or native
	 * crash only, as the runtime sends it). */
	if (!strcmp(reason, "REASON_CRASH_NATIVE") && !crash_stack(rec, stack))
		; /* symbolized from its raw addresses */
	else if (!strcmp(reason, "REASON_CRASH_NATIVE") ||
		 !strcmp(reason, "REASON_ANR"))
		stack_text(rec, stack, 12);
	if (stack->len) {
		char states[720];

		long long threads =
			strtoll(value(rec, "threads", v, sizeof(v)), NULL, 10);

		ph_rec_strn(r, PH_KEY_MAIN_STACK, PH_F_STR, stack->buf,
			    stack->len, 4096);
		/* the crashed or stuck thread is one: fewer is no count */
		if (threads >= 1)
			ph_rec_int(r, PH_KEY_OTHER_THREAD_COUNT, threads - 1);
		thread_states(r, value(rec, "thread_states", states,
				       sizeof(states)));
	}
}

static void report_one(const char *path, const struct report_to *to)
{
	struct ph_buf text = PH_BUF_INIT(256 * 1024);
	struct ph_buf merged = PH_BUF_INIT(384 * 1024);
	struct ph_buf stack = PH_BUF_INIT(4096);
	char state[16], v[64], seen[720];
	const char *rec;
	uint64_t pos = 0;
	struct ph_rec *r, own = { 0 };
	int rc = read_regular(&text, path);

	if (rc) {
		/* Left in place and said why: tried again at the next start. */
		if (rc != PH_ENOENT)
			ph_warn("exit record %s not reported: %s", path,
				unread_why(rc));
		goto out;
	}
	snprintf(seen, sizeof(seen), "%.*s.seen", (int)(strlen(path) - 4),
		 path);
	value(text.buf, "state", state, sizeof(state));
	rec = text.buf;
	if (!strcmp(state, "running")) {
		if (resolve_kill(path, text.buf, seen, to->kmsg, &merged))
			goto out; /* try again next start */
		rec = merged.buf;
	} else if (!strcmp(state, "exited") &&
		   !strcmp(value(rec, "status", v, sizeof(v)), "0")) {
		/* A clean exit with status 0 is an ordinary end, not worth
		 * an event; everything else is. */
		rename(path, seen);
		unlink_state(path);
		goto out;
	}
	if (to->sink) {
		r = &own;
		ph_rec_head(r, PH_KIND_EXIT, 0);
	} else {
		r = ph_emit_begin(PH_KIND_EXIT, &pos);
	}
	if (!r)
		goto out; /* try again next start */
	exit_event(r, rec, &stack);
	if (to->sink)
		to->sink(r, to->ctx);
	else
		ph_emit_commit(pos);
	if (rec == text.buf) {
		/* A crash or an exit: the state file has nothing to add. */
		rename(path, seen);
		unlink_state(path);
	}
out:
	ph_buf_release(&text);
	ph_buf_release(&merged);
	ph_buf_release(&stack);
}

/*
 * Reported records are kept for `exits` and `exit_trace`, the newest
 * SEEN_KEPT of them (by modification time); older ones are removed.
 */
#define SEEN_KEPT 16

static void prune_seen(const char *dir)
{
	struct {
		char name[64];
		struct timespec at;
	} seen[SEEN_KEPT + 1];
	size_t n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[700];

	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name), oldest = 0;
		struct stat st;

		if (strncmp(e->d_name, "exit-", 5) || len < 10 ||
		    len >= sizeof(seen[0].name) ||
		    strcmp(e->d_name + len - 5, ".seen"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		snprintf(seen[n].name, sizeof(seen[n].name), "%s", e->d_name);
		seen[n].at = st.st_mtim;
		if (++n <= SEEN_KEPT)
			continue;
		/* One too many: remove the oldest of them. */
		for (size_t i = 1; i < n; i++)
			if (seen[i].at.tv_sec < seen[oldest].at.tv_sec ||
			    (seen[i].at.tv_sec == seen[oldest].at.tv_sec &&
			     seen[i].at.tv_nsec < seen[oldest].at.tv_nsec))
				oldest = i;
		snprintf(path, sizeof(path), "%s/%s", dir, seen[oldest].name);
		unlink(path);
		seen[oldest] = seen[--n];
	}
	if (d)
		closedir(d);
}

static void report_dir(const char *dir, int mine_pid,
		       const struct report_to *to)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[700], mine[32];

	if (!d)
		return;
	ph_exits_read_boot_id(boot_now, sizeof(boot_now));
	snprintf(mine, sizeof(mine), "exit-%d.rec", mine_pid);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (strncmp(e->d_name, "exit-", 5) || n < 5 ||
		    strcmp(e->d_name + n - 4, ".rec") ||
		    !strcmp(e->d_name, mine))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		report_one(path, to);
	}
	closedir(d);
	prune_seen(dir);
}

void ph_exits_report_previous(struct ph_agent *a)
{
	static const struct report_to queue = { .kmsg = true };

	report_dir(a->data_dir, a->pid, &queue);
}

void ph_exits_report_dir(const char *dir, int mine_pid, bool kmsg,
			 void (*sink)(const struct ph_rec *r, void *ctx),
			 void *ctx)
{
	const struct report_to to = { .kmsg = kmsg, .sink = sink, .ctx = ctx };

	report_dir(dir, mine_pid, &to);
}

/*
 * A record's timestamp, read one way for `exits` to list and `exit_trace`
 * to find (a value cut shorter in one of them listed a record the other
 * could not find).
 */
static int64_t record_timestamp(const char *text)
{
	char v[64];

	return strtoll(value(text, "timestamp", v, sizeof(v)), NULL, 10);
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
		char path[700];

		if (strncmp(e->d_name, "exit-", 5))
			continue;
		snprintf(path, sizeof(path), "%s/%s", ph_agent.data_dir,
			 e->d_name);
		ph_buf_reset(&text);
		if (read_regular(&text, path))
			continue;
		found = want >= 0 && record_timestamp(text.buf) == want;
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
	ph_jw_kv_int(w, "timestamp", record_timestamp(text));
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
	if (value(text, "importance", v, sizeof(v))[0])
		ph_jw_kv_int(w, "importance", strtoll(v, NULL, 10));
	{
		char d[512];

		if (value(text, "description", d, sizeof(d))[0])
			ph_jw_kv_str(w, "description", d);
	}
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
		if (!read_regular(&text, path))
			list_one(w, text.buf, seen);
	}
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
	if (d)
		closedir(d);
	ph_buf_release(&text);
	return NULL;
}
