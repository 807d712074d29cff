/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out_of_fds: an app that leaks file descriptors up to its limit while
 * libporthole serves it, for tests/e2e/agent_exits.sh:
 *
 *	out-of-fds DATA_DIR APP_ID
 *
 * It starts the agent, lowers its RLIMIT_NOFILE to 64 and opens
 * /dev/null until none is left, then takes back every descriptor that
 * comes free, every 10 ms, as a leak does.  It spends two 2 s stretches
 * so, printing its CPU time over each: "quiet CPU_MS" (nobody connects),
 * then "hosted CPU_MS" after printing "connect now" (the test connects a
 * host then).  A host waiting on a socket the app cannot accept must not
 * make the agent spin.
 */
#define _GNU_SOURCE 1
#include "porthole.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* 2 s of taking back every descriptor that comes free; its CPU ms. */
static double leak_for_2s(void)
{
	double start = cpu_ms();

	for (int i = 0; i < 200; i++) {
		while (open("/dev/null", O_RDONLY) >= 0)
			;
		usleep(10 * 1000);
	}
	return cpu_ms() - start;
}

int main(int argc, char **argv)
{
	struct porthole_config cfg = {
		.flags = PORTHOLE_NO_INTEGRATION_CHECK,
	};
	struct rlimit rl = { 64, 64 };

	if (argc != 3)
		return 2;
	cfg.data_dir = argv[1];
	cfg.app_id = argv[2];
	if (porthole_start(&cfg) != PORTHOLE_OK ||
	    setrlimit(RLIMIT_NOFILE, &rl))
		return 1;
	printf("quiet %.0f\n", leak_for_2s());
	printf("connect now\n");
	fflush(stdout);
	printf("hosted %.0f\n", leak_for_2s());
	fflush(stdout);
	porthole_stop();
	return 0;
}
