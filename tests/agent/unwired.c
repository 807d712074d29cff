/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwired: an app that has SQLite loaded but never calls
 * porthole_sqlite_attach.  The agent's integrations check, a few seconds
 * after start, must say so on stderr, once, naming the call to add, so
 * an empty database lane never passes for an app that ran no query.  It
 * captures its stdio, and writes a line of its own to stderr: that line
 * becomes a log event, the agent's warning must not (the agent's own
 * output never loops back into capture), and a stack trace whose lines are
 * glued only when close in time and on the same stream.  Run by
 * tests/e2e/agent_api.sh:
 * `unwired SOCKET_NAME DATA_DIR`.  It prints "setup-thread=1" when the
 * check ran on its own named thread.
 */
#include "ph_threads.h"
#include "porthole.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct porthole_config cfg = { .app_id = "e2e.unwired",
				       .flags = PORTHOLE_CAPTURE_STDIO };
	sqlite3 *db = NULL;
	int named;

	if (argc != 3)
		return 2;
	cfg.socket_name = argv[1];
	cfg.data_dir = argv[2];
	/* SQLite in use, the way an app uses it, but never attached */
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_exec(db, "SELECT 1", NULL, NULL, NULL) != SQLITE_OK)
		return 1;
	if (porthole_start(&cfg) != PORTHOLE_OK)
		return 1;
	sleep(1);
	fprintf(stderr, "unwired: a line of the app's own\n");
	/*
	 * A trace: its next line is glued to it; one 300 ms later is not
	 * (past the 150 ms), nor is one on the other stream.
	 */
	fprintf(stderr, "Error: a trace\n    at glued (t.c:1)\n");
	usleep(300 * 1000);
	fprintf(stderr, "    at late (t.c:2)\n");
	fflush(stderr);
	printf("    at other_stream (t.c:3)\n");
	fflush(stdout);
	named = ph_thread_named("porthole-setup") != 0;
	sleep(4); /* past the check, which waits about 3 s */
	porthole_stop();
	sqlite3_close(db);
	printf("setup-thread=%d\n", named);
	return 0;
}
