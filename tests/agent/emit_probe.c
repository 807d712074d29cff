/* SPDX-License-Identifier: Apache-2.0 */
/*
 * emit_probe: proves what an event call does NOT do on the calling thread:
 * no malloc (an interposed allocator counts calls made while the probe's
 * flag is set on this thread) and no system call (a seccomp filter, which
 * applies to this thread only, traps every system call into a SIGSYS
 * handler that counts it).  Every event call of porthole.h is made many
 * times, with the queue draining and with it full (drops).
 *
 * It also counts the page faults the thread takes (getrusage, let through
 * the filter before and after): a fault is a trip into the kernel too,
 * and the queue's pages must all be in place before the first event.
 *
 * Built without sanitizers (they bring their own allocator); run by
 * tests/e2e/agent_emit.sh.  Prints "mallocs=N syscalls=N faults=N
 * calls=N" and exits 0 only when all three counts are zero.  With
 * PROBE_SELF_TEST set it makes one malloc, one system call and one page
 * fault of its own in the watched stretch, so the test can show the probe
 * would see them.
 */
#define _GNU_SOURCE 1
#include "porthole.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static __thread int counting;
static volatile long mallocs;
static volatile sig_atomic_t syscalls;
static long faults;

void *malloc(size_t n)
{
	if (counting)
		mallocs++;
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	if (counting)
		mallocs++;
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	if (counting)
		mallocs++;
	return __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}

void *aligned_alloc(size_t al, size_t n)
{
	if (counting)
		mallocs++;
	return __libc_memalign(al, n);
}

int posix_memalign(void **out, size_t al, size_t n)
{
	if (counting)
		mallocs++;
	*out = __libc_memalign(al, n);
	return *out ? 0 : 12;
}

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	syscalls++;
}

/* Trap every system call but the few the test itself needs to finish. */
static int lock_down(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrusage, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]),
				   .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static long calls;
static const char *self_test;

static void every_call(int i)
{
	static const char *const trig[] = { "Cart.total" };

	porthole_mark("probe", "detail");
	porthole_span_end(porthole_span_begin("span"));
	porthole_log_str(PORTHOLE_INFO, "Probe", "a log line");
	porthole_log(PORTHOLE_WARN, "Probe", "formatted %d", i);
	porthole_recompose("Row#1", "Row", "Cart", trig, 1);
	porthole_recompose("Row#2", "Row", "Cart", NULL, 0);
	porthole_state_write("Cart.total");
	porthole_state_write(NULL);
	porthole_nav(PORTHOLE_NAV_PUSH, "cart", "Cart", "id=1", NULL, 2);
	porthole_work_start("w", "Job", 1, "a, b");
	porthole_work_end("w", 1, PORTHOLE_WORK_SUCCEEDED, NULL);
	porthole_input(PORTHOLE_INPUT_DOWN, 1, 2, 1000 + i, "t");
	porthole_input(PORTHOLE_INPUT_UP, 1, 2, 1001 + i, "t");
	porthole_frame_begin();
	porthole_frame_phase(PORTHOLE_PHASE_LAYOUT);
	porthole_frame_end();
	porthole_db_end(porthole_db_start("SELECT 1", "1", false), 1, NULL);
	porthole_http_end(porthole_http_start("GET", "http://x/?q=1"), 200,
			  NULL);
	porthole_device_rotation(90);
	porthole_device_theme(true);
	porthole_device_font_scale(1.15);
	porthole_main_loop_ping();
	calls += 24;
}

/* Page faults this thread has taken so far, minor and major. */
static long thread_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static void *probe(void *arg)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys,
				.sa_flags = SA_SIGINFO };
	/* a page nobody has touched, for the self-test's fault */
	char *fresh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;
	sigaction(SIGSYS, &sa, NULL);
	porthole_main_loop_register(); /* this thread is "main" */
	every_call(0);		       /* warm: tid cached, code paged in */
	free(malloc(16));	       /* and this thread's malloc arena made */
	if (lock_down()) {
		perror("emit_probe: seccomp");
		syscall(SYS_exit, 2);
	}
	faults = thread_faults();
	counting = 1;
	/* 200k calls: far more than the 1024-slot queue, so drops too. */
	for (int i = 0; i < 200000 / 24; i++)
		every_call(i);
	/* The probe's own check that it can see what it looks for. */
	if (self_test) {
		void *volatile p = malloc(16);

		free(p);
		syscall(SYS_getppid);
		*(volatile char *)fresh = 1;
	}
	counting = 0;
	faults = thread_faults() - faults;
	syscall(SYS_exit, 0); /* pthread's exit path makes system calls */
	return NULL;
}

int main(void)
{
	struct porthole_config cfg = {
		.app_id = "probe",
		.queue_size = 1024,
		.flags = PORTHOLE_NO_WATCHDOG | PORTHOLE_NO_MEMORY |
			 PORTHOLE_NO_DEVICE | PORTHOLE_NO_INTEGRATION_CHECK |
			 PORTHOLE_NO_TRACE_MARKERS,
	};
	char name[64], dir[64];
	pthread_t t;

	snprintf(name, sizeof(name), "porthole.probe-%d", (int)getpid());
	snprintf(dir, sizeof(dir), "/tmp/porthole-probe-%d", (int)getpid());
	cfg.socket_name = name;
	cfg.data_dir = dir;
	if (porthole_start(&cfg) != PORTHOLE_OK)
		return 2;
	self_test = getenv("PROBE_SELF_TEST");
	pthread_create(&t, NULL, probe, NULL);
	pthread_join(t, NULL);
	porthole_stop();
	printf("mallocs=%ld syscalls=%d faults=%ld calls=%ld\n", mallocs,
	       (int)syscalls, faults, calls);
	return mallocs || syscalls || faults ? 1 : 0;
}
