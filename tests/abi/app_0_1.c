/* SPDX-License-Identifier: Apache-2.0 */
/*
 * app_0_1.c: an app built against 0.1's header (tests/abi/porthole-0.1.h)
 * and run with a newer libporthole.so.  Its config sits against a page it
 * may not read, so a library reading past 0.1's struct crashes it.  Starts
 * the agent, then marks "abi-0.1" and pings its loop every 50 ms until
 * STOP_FILE exists (or 5 minutes pass, so a test that died never leaves
 * it running).
 *
 * usage: app_0_1 APP_ID STOP_FILE
 */
#define _DEFAULT_SOURCE	     /* MAP_ANONYMOUS, nanosleep under -std=c11 */
#define PORTHOLE_DEBUG_BUILD 1
#include "porthole-0.1.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *room;
	struct porthole_config *cfg;
	enum porthole_status st;

	if (argc != 3) {
		fprintf(stderr, "usage: app_0_1 APP_ID STOP_FILE\n");
		return 2;
	}
	room = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (room == MAP_FAILED || mprotect(room + page, page, PROT_NONE))
		return 1;
	cfg = (struct porthole_config *)(room + page - sizeof(*cfg));
	memset(cfg, 0, sizeof(*cfg));
	cfg->app_id = argv[1];
	cfg->version_name = "abi-0.1";
	st = porthole_start(cfg);
	if (st != PORTHOLE_OK) {
		fprintf(stderr, "app_0_1: %s\n", porthole_strerror(st));
		return 1;
	}
	porthole_main_loop_register();
	for (int i = 0; i < 5 * 60 * 20 && access(argv[2], F_OK); i++) {
		struct timespec t = { 0, 50 * 1000000L };

		porthole_main_loop_ping();
		porthole_mark("abi-0.1", "built against 0.1's header");
		nanosleep(&t, NULL);
	}
	porthole_stop();
	return 0;
}
