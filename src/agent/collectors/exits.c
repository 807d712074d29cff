/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exits.c: leaving word of how this process ends, for the next start to
 * report (exit_report.c).
 *
 * At start the agent writes a marker, <data dir>/exit-<pid>.rec, saying
 * "running".  A fatal signal (SEGV, BUS, FPE, ILL, ABRT) rewrites it from
 * the signal handler with async-signal-safe code only (open, write,
 * backtrace_symbols_fd, raw getdents64; no malloc, no stdio): the reason,
 * the signal's name, the wall-clock time, the build, the faulting address
 * (SEGV, BUS), the crashed thread's raw addresses with the path, load bias
 * and build id of each module they fall in (listed at start), and a count
 * of the other threads by state; the next start symbolizes the addresses.
 * The handler then passes the signal on to the handler installed before
 * it, and dies of it.  A clean exit (on_exit) rewrites
 * it with the exit status.  So at the next start, a marker still saying
 * "running" means the process was killed.
 *
 * A kill leaves no last words, so what would explain one is kept beside
 * the marker while it changes, in exit-<pid>.state, by the agent's own
 * threads (a new file renamed over the old, never half-written): once a
 * second by the sampler (alive at, memory, importance), and by the
 * watchdog when the main thread has gone PH_ANR_MS without answering and
 * again when it answers (since when, where it was stuck).  The handlers
 * never touch that file, so the two never race.
 *
 *	marker (text, one key=value per line, then the stack):
 *	state=running|crashed|exited   reason=REASON_*   pid=N
 *	timestamp=<epoch ms>  rss_kb=N  pss_kb=N  importance=100|400
 *	version=...  boot_id=...  started_mono_ms=N
 *	signal=N  signal_name=SIGSEGV  description=SIGSEGV at fault address 0x8
 *	fault=0x...  status=N  threads=N  thread_states=R:1 S:4
 *	pcs=0x... 0x...   (the interrupted address first, then return addresses)
 *	module=<lo> <hi> <bias> <build id hex, or -> <path>   (one per module)
 *	--- stack
 *	<one frame per line>
 *
 *	state: timestamp=<epoch ms, last seen alive>  mono_ms=N
 *	rss_kb  pss_kb  importance  [unresponsive_since=<epoch ms>
 *	unresponsive_ms=N  threads  thread_states  --- stack]
 */
#include "ph_common.h"
#include "collectors.h"
#include "ph_buf.h"
#include "ph_clock.h"
#include "ph_log.h"
#include "../platform.h"
#include "../symbolize.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
static struct sigaction previous[PH_ARRAY_SIZE(fatal_signals)];
static char record_path[440];
static char state_path[448];
static char version[64];
static char boot_id[40];
static int64_t started_mono_ms;
static _Atomic int64_t last_rss_kb = 0;
static _Atomic int64_t last_pss_kb = 0;
/* Android's: IMPORTANCE_FOREGROUND while a screen shows, else CACHED. */
static _Atomic int importance = PH_IMPORTANCE_FOREGROUND;
static bool installed;
#define ALT_STACK_SIZE (64 * 1024)
static char alt_stack[ALT_STACK_SIZE];
static pthread_key_t altstack_key;
static pthread_once_t altstack_once = PTHREAD_ONCE_INIT;

/*
 * The loaded modules, listed at start (dl_iterate_phdr: it locks and may
 * allocate, so never from the handler), for the handler to name each
 * crashed frame's file, load bias and build id.  A library dlopen'd after
 * start is not in the list; its frames keep only their raw address.
 */
#define MAX_MODULES  128
#define MAX_BUILD_ID 20 /* SHA-1, what GNU ld writes */
struct module {
	uintptr_t lo, hi; /* its mapped PT_LOAD range */
	uintptr_t bias;	  /* dlpi_addr: file address + bias = address */
	unsigned char build_id[MAX_BUILD_ID];
	size_t build_id_len; /* 0: none found */
	char path[256];
};
static struct module modules[MAX_MODULES];
static size_t n_modules;

/* The state file's: guarded by state_mu (the sampler and the watchdog). */
static pthread_mutex_t state_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t unresponsive_since = -1; /* epoch ms the ping was posted */
static struct ph_buf unresponsive_stack = PH_BUF_INIT(4096);

void ph_exits_note_memory(int64_t rss_kb, int64_t pss_kb)
{
	if (rss_kb >= 0)
		atomic_store_explicit(&last_rss_kb, rss_kb,
				      memory_order_relaxed);
	if (pss_kb >= 0)
		atomic_store_explicit(&last_pss_kb, pss_kb,
				      memory_order_relaxed);
}

/*
 * From the lifecycle calls, on the app's thread: a store, nothing more.
 * An app that never reports a screen stays foreground.
 */
void ph_exits_note_screens(int visible)
{
	atomic_store_explicit(&importance,
			      visible > 0 ? PH_IMPORTANCE_FOREGROUND :
					    PH_IMPORTANCE_CACHED,
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

static void put_memory(int fd)
{
	put_kv(fd, "rss_kb", atomic_load(&last_rss_kb));
	put_kv(fd, "pss_kb", atomic_load(&last_pss_kb));
	put_kv(fd, "importance", atomic_load(&importance));
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
	put_memory(fd);
	put(fd, "version=");
	put(fd, version);
	put(fd, "\nboot_id=");
	put(fd, boot_id);
	put(fd, "\n");
	put_kv(fd, "started_mono_ms", started_mono_ms);
}

/* --- the state file: what a kill would take with it --------------------- */

static void write_state_locked(void)
{
	char tmp[456];
	int fd;

	if (!state_path[0])
		return;
	snprintf(tmp, sizeof(tmp), "%s.new", state_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	put_kv(fd, "timestamp", wall_ms());
	put_kv(fd, "mono_ms", ph_clock_uptime_ms());
	put_memory(fd);
	if (unresponsive_since >= 0) {
		put_kv(fd, "unresponsive_since", unresponsive_since);
		put_kv(fd, "unresponsive_ms", wall_ms() - unresponsive_since);
		put_threads(fd); /* as a crash records them, now */
		put(fd, "--- stack\n");
		put(fd, unresponsive_stack.buf);
		put(fd, "\n");
	}
	if (close(fd) || rename(tmp, state_path))
		unlink(tmp);
}

void ph_exits_note_alive(void)
{
	pthread_mutex_lock(&state_mu);
	write_state_locked();
	pthread_mutex_unlock(&state_mu);
}

/*
 * From the watchdog: the ping posted at posted_ms (uptime) has gone
 * unanswered ANR-long; pcs is where the main thread was when sampled.
 * Symbolized here, off the main thread, so the next start can name it.
 */
void ph_exits_note_unresponsive(int64_t posted_ms, const uintptr_t *pcs,
				size_t n)
{
	pthread_mutex_lock(&state_mu);
	unresponsive_since = wall_ms() - (ph_clock_uptime_ms() - posted_ms);
	ph_buf_reset(&unresponsive_stack);
	ph_symbolize_text(pcs, n, &unresponsive_stack);
	write_state_locked();
	pthread_mutex_unlock(&state_mu);
}

void ph_exits_note_answered(void)
{
	pthread_mutex_lock(&state_mu);
	if (unresponsive_since >= 0) {
		unresponsive_since = -1;
		write_state_locked();
	}
	pthread_mutex_unlock(&state_mu);
}

/* The GNU build id among a module's notes, if it has one. */
static void find_build_id(const struct dl_phdr_info *info, struct module *m)
{
	for (int i = 0; i < info->dlpi_phnum && !m->build_id_len; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		/* Nhdr, name and desc, each padded to 4 bytes. */
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh =
				(const ElfW(Nhdr) *)(const void *)p;
			const char *desc =
				p + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID &&
			    nh->n_namesz == 4 &&
			    !memcmp(p + sizeof(*nh), "GNU", 4) &&
			    nh->n_descsz <= MAX_BUILD_ID) {
				memcpy(m->build_id, desc, nh->n_descsz);
				m->build_id_len = nh->n_descsz;
				break;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

static int list_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module *m = &modules[n_modules];

	(void)size;
	(void)arg;
	if (n_modules == MAX_MODULES)
		return 1;
	memset(m, 0, sizeof(*m));
	m->lo = UINTPTR_MAX;
	m->bias = (uintptr_t)info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = m->bias + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (lo < m->lo)
			m->lo = lo;
		if (lo + ph->p_memsz > m->hi)
			m->hi = lo + ph->p_memsz;
	}
	if (m->lo >= m->hi)
		return 0;
	/* The program itself comes with an empty name. */
	if (info->dlpi_name && info->dlpi_name[0])
		snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
	else {
		ssize_t n = readlink("/proc/self/exe", m->path,
				     sizeof(m->path) - 1);

		m->path[n > 0 ? n : 0] = '\0';
	}
	find_build_id(info, m);
	n_modules++;
	return 0;
}

static const struct module *module_of(uintptr_t pc)
{
	for (size_t i = 0; i < n_modules; i++)
		if (pc >= modules[i].lo && pc < modules[i].hi)
			return &modules[i];
	return NULL;
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGFPE: return "SIGFPE";
	case SIGILL: return "SIGILL";
	case SIGABRT: return "SIGABRT";
	}
	return "signal";
}

/* Where the signal interrupted the thread, or 0 on an unknown machine. */
static uintptr_t interrupted_pc(const void *uctx)
{
	const ucontext_t *uc = uctx;

	if (!uc)
		return 0;
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
	return 0;
#endif
}

/*
 * The crashed thread's addresses, the interrupted one first: what
 * backtrace() finds past this handler and the sigreturn frame.
 */
static int crashed_stack(const void *uctx, uintptr_t *out, int max)
{
	void *raw[PH_MAX_FRAMES + 4];
	int n = ph_platform_backtrace(raw, PH_MAX_FRAMES + 4), from = 2, k = 0;
	uintptr_t at = interrupted_pc(uctx);

	for (int i = 0; i < n; i++)
		if (at && (uintptr_t)raw[i] == at) {
			from = i;
			break;
		}
	if (at && (from >= n || (uintptr_t)raw[from] != at))
		out[k++] = at; /* the unwinder lost the signal frame */
	for (int i = from; i < n && k < max; i++)
		out[k++] = (uintptr_t)raw[i];
	return k;
}

static void put_hex_line(int fd, const char *key, uintptr_t v)
{
	put(fd, key);
	put(fd, "=0x");
	put_u64(fd, v, 16);
	put(fd, "\n");
}

/*
 * pcs=<hex> ... (the interrupted one first), then one line per module
 * that holds any of them: module=<lo> <hi> <bias> <build id|-> <path>,
 * for the next start to symbolize (exit_report.c).
 */
static void put_crash_frames(int fd, const uintptr_t *pcs, int n)
{
	put(fd, "pcs=");
	for (int i = 0; i < n; i++) {
		put(fd, i ? " 0x" : "0x");
		put_u64(fd, pcs[i], 16);
	}
	put(fd, "\n");
	for (size_t m = 0; m < n_modules; m++) {
		const struct module *mod = &modules[m];
		bool used = false;

		for (int i = 0; i < n && !used; i++)
			used = module_of(pcs[i]) == mod;
		if (!used)
			continue;
		put(fd, "module=0x");
		put_u64(fd, mod->lo, 16);
		put(fd, " 0x");
		put_u64(fd, mod->hi, 16);
		put(fd, " 0x");
		put_u64(fd, mod->bias, 16);
		put(fd, " ");
		for (size_t b = 0; b < mod->build_id_len; b++) {
			char hex[3] = {
				"0123456789abcdef"[mod->build_id[b] >> 4],
				"0123456789abcdef"[mod->build_id[b] & 15], '\0'
			};

			put(fd, hex);
		}
		put(fd, mod->build_id_len ? " " : "- ");
		put(fd, mod->path);
		put(fd, "\n");
	}
}

/*
 * Whether this process is the one whose record it is: a fork's child
 * (also one made by clone(), past pthread_atfork) inherits the handlers,
 * and its crash or exit is not the app's.  getpid() is async-signal-safe.
 */
static bool own_record(void)
{
	return (int)getpid() == ph_agent.pid;
}

static void write_crash(int sig, const siginfo_t *info, const void *uctx)
{
	int fd = own_record() ?
			 open(record_path, O_WRONLY | O_TRUNC | O_CLOEXEC) :
			 -1;
	uintptr_t pcs[PH_MAX_FRAMES];
	int n;
	/* The address that faulted means something for these only. */
	bool fault = sig == SIGSEGV || sig == SIGBUS;

	if (fd < 0)
		return;
	write_header(fd, "crashed", "REASON_CRASH_NATIVE");
	put_kv(fd, "signal", sig);
	put(fd, "signal_name=");
	put(fd, signal_name(sig));
	put(fd, "\ndescription=");
	put(fd, signal_name(sig));
	if (fault) {
		put(fd, " at fault address 0x");
		put_u64(fd, (uint64_t)(uintptr_t)info->si_addr, 16);
		put(fd, "\n");
		put_hex_line(fd, "fault", (uintptr_t)info->si_addr);
	} else {
		put(fd, "\n");
	}
	put_threads(fd);
	n = crashed_stack(uctx, pcs, PH_MAX_FRAMES);
	put_crash_frames(fd, pcs, n);
	put(fd, "--- stack\n");
#if defined(__GLIBC__)
	backtrace_symbols_fd((void *const *)pcs, n, fd);
#else
	/* no backtrace_symbols_fd() in musl or bionic: the addresses */
	for (int i = 0; i < n; i++) {
		put(fd, "[0x");
		put_u64(fd, (uint64_t)pcs[i], 16);
		put(fd, "]\n");
	}
#endif
	close(fd);
}

/*
 * Writes the record, then hands the signal on as if the agent had never
 * been here: to the handler installed before it (an app's own crash
 * reporter), with the same arguments, and then to the default action, so
 * the process still dies of this signal.
 */
static void on_fatal(int sig, siginfo_t *info, void *uctx)
{
	struct sigaction *prev = NULL;
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	write_crash(sig, info, uctx);
	for (size_t i = 0; i < PH_ARRAY_SIZE(fatal_signals); i++)
		if (fatal_signals[i] == sig)
			prev = &previous[i];
	/* SIG_DFL or SIG_IGN: nobody to call (an ignored fault would loop) */
	if (prev && prev->sa_handler != SIG_DFL &&
	    prev->sa_handler != SIG_IGN) {
		if (prev->sa_flags & SA_SIGINFO)
			prev->sa_sigaction(sig, info, uctx);
		else
			prev->sa_handler(sig);
	}
	/*
	 * The previous handler returned (or there was none): die of the
	 * signal.  Blocked while this handler runs, the raised one is
	 * delivered, to the default action, as it returns; a fault that
	 * recurs on the same instruction ends the process the same way.
	 */
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

/* At an agent thread's exit: its alternate stack, unused from here on. */
static void drop_altstack(void *stack)
{
	stack_t off = { .ss_flags = SS_DISABLE };

	sigaltstack(&off, NULL);
	munmap(stack, ALT_STACK_SIZE);
}

static void make_altstack_key(void)
{
	if (pthread_key_create(&altstack_key, drop_altstack))
		altstack_key = (pthread_key_t)-1;
}

/* Whether the calling thread has an alternate signal stack already. */
static bool has_altstack(void)
{
	stack_t cur;

	return !sigaltstack(NULL, &cur) && !(cur.ss_flags & SS_DISABLE);
}

void ph_exits_thread_altstack(void)
{
	stack_t ss = { .ss_size = ALT_STACK_SIZE };

	pthread_once(&altstack_once, make_altstack_key);
	if (altstack_key == (pthread_key_t)-1 || has_altstack())
		return;
	ss.ss_sp = mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (ss.ss_sp == MAP_FAILED)
		return;
	if (sigaltstack(&ss, NULL) ||
	    pthread_setspecific(altstack_key, ss.ss_sp)) {
		drop_altstack(ss.ss_sp);
		return;
	}
}

static void on_exit_cb(int status)
{
	int fd = own_record() ?
			 open(record_path, O_WRONLY | O_TRUNC | O_CLOEXEC) :
			 -1;

	if (fd < 0)
		return;
	write_header(fd, "exited", "REASON_EXIT_SELF");
	/* without glibc's on_exit() the status is not known (platform.h) */
	if (status != PH_EXIT_STATUS_UNKNOWN)
		put_kv(fd, "status", status);
	close(fd);
}

int ph_exits_start(struct ph_agent *a)
{
	stack_t ss = { .ss_sp = alt_stack, .ss_size = sizeof(alt_stack) };
	int fd;

	/*
	 * Written now, on this thread: the first write to its page takes the
	 * page fault here, not in an app's lifecycle call (which must take
	 * none), and a restarted agent starts in the foreground.
	 */
	atomic_store(&importance, PH_IMPORTANCE_FOREGROUND);
	if (a->cfg.flags & PORTHOLE_NO_EXITS)
		return 0;
	snprintf(version, sizeof(version), "%s", a->version_name);
	snprintf(record_path, sizeof(record_path), "%s/exit-%d.rec",
		 a->data_dir, a->pid);
	snprintf(state_path, sizeof(state_path), "%s/exit-%d.state",
		 a->data_dir, a->pid);
	ph_exits_read_boot_id(boot_id, sizeof(boot_id));
	started_mono_ms = ph_clock_uptime_ms();
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

		(void)ph_platform_backtrace(warm, 4);
	}
	/*
	 * A stack overflow must still be able to write its record: the
	 * starting thread (the main one, as a rule) gets an alternate stack,
	 * unless the app gave it one.  Other threads of the app's get none
	 * (docs/agent.md); the agent's own threads make theirs.
	 */
	if (!has_altstack())
		sigaltstack(&ss, NULL);
	n_modules = 0;
	dl_iterate_phdr(list_module, NULL);
	for (size_t i = 0; i < PH_ARRAY_SIZE(fatal_signals); i++) {
		struct sigaction sa = { .sa_sigaction = on_fatal,
					.sa_flags = SA_SIGINFO | SA_ONSTACK };

		sigemptyset(&sa.sa_mask);
		sigaction(fatal_signals[i], &sa, &previous[i]);
	}
	ph_platform_on_exit(on_exit_cb);
	installed = true;
	return 0;
}

void ph_exits_stop(void)
{
	/* A stopped agent says nothing more; the marker's end is on_exit's.
	 */
	pthread_mutex_lock(&state_mu);
	if (state_path[0])
		unlink(state_path);
	state_path[0] = '\0';
	unresponsive_since = -1;
	ph_buf_release(&unresponsive_stack);
	pthread_mutex_unlock(&state_mu);
}
