/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fds: an app that is hard on its file descriptors while libporthole
 * serves it, for tests/e2e/agent_exits.sh:
 *
 *	fds leak DATA_DIR APP_ID GO_FILE
 *		lowers its RLIMIT_NOFILE to 64 and opens /dev/null until none
 *		is left, then takes back every descriptor that comes free,
 *		every 10 ms, as a leak does.  It spends two stretches so,
 *		printing its CPU time per second of each: "quiet MS_PER_S"
 *		over 2 s (nobody connects), then "hosted MS_PER_S" from
 *		printing "connect now" until GO_FILE exists (the test
 *		connects a host meanwhile; 30 s at most).  A host waiting on
 *		a socket the app cannot accept must not make the agent spin.
 *	fds close-all DATA_DIR APP_ID
 *		prints "quiet MS_PER_S" over 1 s, closes every descriptor
 *		from 3 up (the agent's among them, as an app that closes what
 *		it did not open does), prints "closed MS_PER_S" over the 2 s
 *		after, makes an event call, stops the agent, prints "threads
 *		N" (the process's, after the stop) and exits 0.  The agent
 *		must neither spin on its lost descriptors nor touch their
 *		numbers again, and its stop must still end its threads.
 */
#define _GNU_SOURCE 1
#include "porthole.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/*
 * Takes back every descriptor that comes free, every 10 ms, for `ticks`
 * ticks or until `go` exists; its CPU ms per second of wall time.
 */
static double leak_for(int ticks, const char *go)
{
	double cpu = cpu_ms(), wall = wall_ms();

	for (int i = 0; i < ticks && !(go && !access(go, F_OK)); i++) {
		while (open("/dev/null", O_RDONLY) >= 0)
			;
		usleep(10 * 1000);
	}
	return (cpu_ms() - cpu) * 1e3 / (wall_ms() - wall);
}

/* CPU ms per second over `ms` of sleep. */
static double idle_for(int ms)
{
	double start = cpu_ms();

	usleep((useconds_t)ms * 1000);
	return (cpu_ms() - start) * 1e3 / ms;
}

/* This process's threads now (/proc/self/status), or -1. */
static int threads(void)
{
	char line[128];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	struct porthole_config cfg = {
		.flags = PORTHOLE_NO_INTEGRATION_CHECK,
	};
	struct rlimit rl = { 64, 64 };

	if (argc != 4 && !(argc == 5 && !strcmp(argv[1], "leak")))
		return 2;
	cfg.data_dir = argv[2];
	cfg.app_id = argv[3];
	if (porthole_start(&cfg) != PORTHOLE_OK)
		return 1;
	if (!strcmp(argv[1], "close-all")) {
		printf("quiet %.0f\n", idle_for(1000));
		fflush(stdout);
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
		printf("closed %.0f\n", idle_for(2000));
		porthole_log(PORTHOLE_INFO, "fds", "an event call after");
		porthole_stop();
		printf("threads %d\n", threads());
		return 0;
	}
	if (argc != 5 || setrlimit(RLIMIT_NOFILE, &rl))
		return 1;
	printf("quiet %.0f\n", leak_for(200, NULL));
	printf("connect now\n");
	fflush(stdout);
	printf("hosted %.0f\n", leak_for(3000, argv[4]));
	fflush(stdout);
	porthole_stop();
	return 0;
}
