/* SPDX-License-Identifier: Apache-2.0 */
/*
 * forked: an app that forks a child (no exec) while libporthole serves
 * it, for tests/e2e/agent_exits.sh:
 *
 *	forked DATA_DIR APP_ID GO_FILE
 *
 * The parent starts the agent, forks, prints "parent PID" and
 * "child PID", and exits 0.  The child tries porthole_start() and prints
 * "child start=N" (what it returned), then waits until GO_FILE exists (60
 * s at most) and aborts: a crash of the child, after the app's exit.  A
 * child that kept the app's socket would keep its name taken with no one
 * to answer, and one whose crash handler wrote the app's exit record
 * would turn the app's clean exit into a crash.
 */
#define _GNU_SOURCE 1
#include "porthole.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct porthole_config cfg = {
		.flags = PORTHOLE_NO_INTEGRATION_CHECK,
	};
	pid_t child;

	if (argc != 4)
		return 2;
	cfg.data_dir = argv[1];
	cfg.app_id = argv[2];
	if (porthole_start(&cfg) != PORTHOLE_OK)
		return 1;
	printf("parent %d\n", (int)getpid());
	fflush(stdout);
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		printf("child start=%d\n", (int)porthole_start(&cfg));
		fflush(stdout);
		porthole_log(PORTHOLE_INFO, "forked", "the child's call");
		for (int i = 0; i < 600 && access(argv[3], F_OK); i++)
			usleep(100 * 1000);
		abort();
	}
	printf("child %d\n", (int)child);
	fflush(stdout);
	return 0;
}
