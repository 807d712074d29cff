/* SPDX-License-Identifier: Apache-2.0 */
/*
 * signal_chain: an app with signal handlers of its own, installed before
 * porthole_start, which the agent must leave working.  For
 * tests/e2e/agent_exits.sh:
 *
 *	signal-chain crash DATA_DIR SOCKET_NAME
 *		its own SIGSEGV handler (a crash reporter) prints
 *		"app handler: si_addr=0x10", then it writes through address
 *		0x10; the agent's record is written, the app's handler runs
 *		with the fault's own siginfo, and the process dies of SIGSEGV.
 *	signal-chain rt DATA_DIR SOCKET_NAME
 *		its own handler on SIGRTMIN+7 (the watchdog's first choice);
 *		its main thread stalls past the watchdog's threshold, then it
 *		raises SIGRTMIN+7 itself and prints "app rt handler ran=N":
 *		1 when the agent sampled with another signal.
 *	signal-chain rt-all DATA_DIR SOCKET_NAME
 *		its own handlers on every real-time signal; the agent must
 *		start anyway, signal none of them, and say it samples no
 *		stacks.  Prints "app rt handlers ran=N" (N: 0).
 */
#define _GNU_SOURCE 1
#include "porthole.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t rt_runs, segv_runs;

static void put_hex(char *p, unsigned long v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % 16];
		v /= 16;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	*p = '\0';
}

static void on_segv(int sig, siginfo_t *info, void *uctx)
{
	char line[64] = "app handler: si_addr=0x";

	(void)sig;
	(void)uctx;
	/* Called twice: the fault came back to it instead of ending the
	 * process; end it here rather than loop. */
	if (++segv_runs > 1)
		_exit(4);
	put_hex(line + strlen(line), (unsigned long)info->si_addr);
	strcat(line, "\n");
	if (write(1, line, strlen(line)) < 0)
		return;
}

static void on_rt(int sig)
{
	(void)sig;
	rt_runs++;
}

/* The main thread busy past the watchdog's threshold (200 ms). */
static void stall(void)
{
	porthole_main_loop_ping();
	usleep(700 * 1000);
	porthole_main_loop_ping();
	usleep(100 * 1000);
}

int main(int argc, char **argv)
{
	struct porthole_config cfg = {
		.app_id = "e2e.signal-chain",
		.flags = PORTHOLE_NO_INTEGRATION_CHECK,
	};
	struct sigaction sa = { .sa_sigaction = on_segv,
				.sa_flags = SA_SIGINFO };
	const char *mode = argc == 4 ? argv[1] : "";

	if (argc != 4)
		return 2;
	cfg.data_dir = argv[2];
	cfg.socket_name = argv[3];
	sigemptyset(&sa.sa_mask);
	if (!strcmp(mode, "crash")) {
		sigaction(SIGSEGV, &sa, NULL);
		if (porthole_start(&cfg) != PORTHOLE_OK)
			return 1;
		{
			/* volatile: the compiler cannot prove it null */
			volatile int *volatile field = (volatile int *)0x10;

			*field = 1;
		}
		return 3; /* not reached */
	}
	sa.sa_handler = on_rt;
	sa.sa_flags = 0;
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		if (!strcmp(mode, "rt-all") || sig == SIGRTMIN + 7)
			sigaction(sig, &sa, NULL);
	if (porthole_start(&cfg) != PORTHOLE_OK)
		return 1;
	stall();
	if (!strcmp(mode, "rt")) {
		raise(SIGRTMIN + 7);
		printf("app rt handler ran=%d\n", (int)rt_runs);
	} else {
		printf("app rt handlers ran=%d\n", (int)rt_runs);
	}
	porthole_stop();
	return 0;
}
