/* SPDX-License-Identifier: Apache-2.0 */
/*
 * platform_linux.c: the Linux side of platform.h.
 */
#include "ph_common.h"
#include "platform.h"
#include "ph_buf.h"
#include "ph_error.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unwind.h>
#if !defined(__GLIBC__) && !defined(__BIONIC__)
#include <link.h>
#endif
#if defined(__GLIBC__) || defined(__BIONIC__)
#include <malloc.h>
#endif
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int ph_platform_listen_abstract(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	socklen_t len;
	int fd;

	if (n + 1 > sizeof(sa.sun_path))
		return PH_EINVAL;
	/* sun_path[0] = 0 selects the abstract namespace; no trailing NUL. */
	memcpy(sa.sun_path + 1, name, n);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return PH_EIO;
	if (bind(fd, (struct sockaddr *)&sa, len) || listen(fd, 64)) {
		int e = errno;

		close(fd);
		errno = e;
		return e == EADDRINUSE ? PH_EAGAIN : PH_EIO;
	}
	return fd;
}

int ph_platform_listen_tcp_loopback(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd, one = 1;

	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* never any other */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return PH_EIO;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
		int e = errno;

		close(fd);
		errno = e;
		return e == EADDRINUSE ? PH_EAGAIN : PH_EIO;
	}
	return fd;
}

bool ph_platform_thread_name(int tid, char *buf, size_t size)
{
	char path[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, size - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(buf, size, "tid-%d", tid);
		return false;
	}
	if (buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return true;
}

void ph_platform_name_self(const char *name)
{
	(void)pthread_setname_np(pthread_self(), name);
}

int64_t ph_platform_process_start_ms(void)
{
	struct ph_buf b = PH_BUF_INIT(4096);
	const char *p;
	unsigned long long start_ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec boot, mono;
	int field = 2;

	if (ph_buf_read_file(&b, "/proc/self/stat") || hz <= 0) {
		ph_buf_release(&b);
		return -1;
	}
	/* comm may hold spaces and parens: fields count from the last ')'. */
	p = strrchr(b.buf, ')');
	for (; p && *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (p)
		start_ticks = strtoull(p, NULL, 10);
	ph_buf_release(&b);
	if (!p || !start_ticks)
		return -1;
	/* starttime is since boot (CLOCK_BOOTTIME); convert to monotonic. */
	clock_gettime(CLOCK_BOOTTIME, &boot);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return (int64_t)(start_ticks * 1000 / (unsigned long long)hz) -
	       ((int64_t)boot.tv_sec * 1000 + boot.tv_nsec / 1000000) +
	       ((int64_t)mono.tv_sec * 1000 + mono.tv_nsec / 1000000);
}

void ph_platform_program_name(char *buf, size_t size)
{
#if defined(__BIONIC__)
	snprintf(buf, size, "%s", getprogname());
#else
	extern char *program_invocation_short_name;

	snprintf(buf, size, "%s", program_invocation_short_name);
#endif
}

struct unwind_walk {
	void **pcs;
	int n, max;
	bool skipped; /* our own frame, which backtrace() leaves out */
};

static _Unwind_Reason_Code unwind_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct unwind_walk *w = arg;
	uintptr_t pc = _Unwind_GetIP(ctx);

	if (!w->skipped) {
		w->skipped = true;
		return _URC_NO_REASON;
	}
	if (!pc || w->n >= w->max)
		return _URC_END_OF_STACK;
	w->pcs[w->n++] = (void *)pc;
	return _URC_NO_REASON;
}

/* Not inlined: its own frame is the one skipped above. */
__attribute__((noinline)) int ph_platform_unwind(void **pcs, int max)
{
	struct unwind_walk w = { pcs, 0, max, false };

	if (max <= 0)
		return 0;
	_Unwind_Backtrace(unwind_frame, &w);
	return w.n;
}

int ph_platform_fp_walk(uintptr_t fp, uintptr_t lo, uintptr_t hi,
			uintptr_t *pcs, int max)
{
	int n = 0;

	while (n < max && fp && !(fp & 7) && fp >= lo && fp < hi &&
	       hi - fp >= 16) {
		const uintptr_t *rec = (const uintptr_t *)fp;

		if (!rec[1])
			break;
		pcs[n++] = rec[1];
		if (rec[0] <= fp)
			break; /* records go up the stack, or it is garbage */
		fp = rec[0];
	}
	return n;
}

bool ph_platform_thread_stack(uintptr_t *lo, uintptr_t *hi)
{
	pthread_attr_t attr;
	void *at = NULL;
	size_t size = 0;
	bool ok;

	if (pthread_getattr_np(pthread_self(), &attr))
		return false;
	ok = !pthread_attr_getstack(&attr, &at, &size) && at && size;
	pthread_attr_destroy(&attr);
	*lo = ok ? (uintptr_t)at : 0;
	*hi = ok ? (uintptr_t)at + size : 0;
	return ok;
}

#if !defined(__GLIBC__) && !defined(__BIONIC__) && \
	(defined(__x86_64__) || defined(__aarch64__))
/*
 * musl-gcc links the unwinder of the compiler it wraps: Debian's gcc 12,
 * whose libgcc_eh finds a pc's unwind tables with glibc's
 * _dl_find_object() (glibc 2.35) and has no fallback.  musl lacks it, so
 * the agent answers it with dl_iterate_phdr(), which musl has; a gcc
 * built for musl never calls it.  The struct is glibc's on x86-64 and
 * arm64 (no dlfo_eh_dbase or dlfo_eh_count there).
 */
struct dl_find_object {
	unsigned long long dlfo_flags;
	void *dlfo_map_start, *dlfo_map_end;
	void *dlfo_link_map;
	void *dlfo_eh_frame; /* the object's PT_GNU_EH_FRAME, or NULL */
	unsigned long long dlfo_reserved[7];
};

int _dl_find_object(void *pc, struct dl_find_object *out);

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct dl_find_object *o = arg;
	uintptr_t pc = (uintptr_t)o->dlfo_map_start, lo = UINTPTR_MAX, hi = 0;
	void *eh = NULL;
	bool inside = false;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t at = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_GNU_EH_FRAME)
			eh = (void *)at;
		if (ph->p_type != PT_LOAD)
			continue;
		lo = at < lo ? at : lo;
		hi = at + ph->p_memsz > hi ? at + ph->p_memsz : hi;
		inside = inside || (pc >= at && pc < at + ph->p_memsz);
	}
	if (!inside)
		return 0;
	o->dlfo_map_start = (void *)lo;
	o->dlfo_map_end = (void *)hi;
	o->dlfo_eh_frame = eh;
	return 1;
}

/* 0 and the object holding pc, or -1 when no loaded object holds it. */
int _dl_find_object(void *pc, struct dl_find_object *out)
{
	memset(out, 0, sizeof(*out));
	out->dlfo_map_start = pc; /* the callback's question */
	if (dl_iterate_phdr(find_object, out) == 1)
		return 0;
	memset(out, 0, sizeof(*out));
	return -1;
}
#endif

static void (*exit_fn)(int status);

#if defined(__GLIBC__)
static void exit_with_status(int status, void *arg)
{
	(void)arg;
	exit_fn(status);
}
#else
static void exit_without_status(void)
{
	exit_fn(PH_EXIT_STATUS_UNKNOWN);
}
#endif

int ph_platform_on_exit(void (*fn)(int status))
{
	exit_fn = fn;
#if defined(__GLIBC__)
	return on_exit(exit_with_status, NULL) ? -1 : 0;
#else
	return atexit(exit_without_status) ? -1 : 0;
#endif
}

bool ph_platform_heap(int64_t *used, int64_t *held)
{
#if defined(__GLIBC__) || defined(__BIONIC__)
#if defined(__GLIBC__)
	struct mallinfo2 mi = mallinfo2();
#else
	struct mallinfo mi = mallinfo();
#endif

	*used = (int64_t)mi.uordblks;
	*held = (int64_t)(mi.arena + mi.hblkhd);
	return true;
#else
	*used = *held = -1;
	return false;
#endif
}
