/* SPDX-License-Identifier: Apache-2.0 */
/*
 * explicit_calls: an HTTP call and a query made with the explicit calls
 * (porthole_http_start / _end, porthole_db_start / _end), as an app whose
 * client the helpers do not cover makes them.  The HTTP call ends on
 * another thread than it began on, as a callback-based client's does.
 * For tests/e2e/agent_markers.sh, run while a system trace records: each
 * call must be an async slice of the app, its end on the begin's name.
 *
 *	explicit-calls DATA_DIR [APP_ID]
 *
 * APP_ID (default e2e.explicit) names the agent's socket, so that runs of
 * other suites on the same machine do not meet.
 */
#define _DEFAULT_SOURCE 1 /* usleep */
#include "porthole.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *end_call(void *arg)
{
	porthole_http_end(*(uint64_t *)arg, 200, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	struct porthole_config cfg = {
		.app_id = argc > 2 ? argv[2] : "e2e.explicit",
		.data_dir = argc > 1 ? argv[1] : NULL,
		.flags = PORTHOLE_NO_INTEGRATION_CHECK,
	};
	uint64_t call, query;
	pthread_t t;

	if (porthole_start(&cfg) != PORTHOLE_OK)
		return 1;
	/* The agent looks for a recording once a second. */
	usleep(1500 * 1000);
	call = porthole_http_start(
		"POST", "http://127.0.0.1:9/v1/explicit?token=secret");
	usleep(40 * 1000);
	if (pthread_create(&t, NULL, end_call, &call))
		return 1;
	pthread_join(t, NULL);
	query = porthole_db_start("SELECT count(*) FROM explicit", NULL, false);
	usleep(20 * 1000);
	porthole_db_end(query, 1, NULL);
	porthole_stop();
	printf("pid %d\n", (int)getpid());
	return 0;
}
