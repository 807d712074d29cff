/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobs.c: a background job that fails on its first attempt and succeeds
 * on the retry, as a job scheduler would run it.
 */
#include "sample.h"
#include "porthole.h"

#include <pthread.h>
#include <unistd.h>

static pthread_t thread;
static bool started;

static void *job_main(void *arg)
{
	(void)arg;
	for (int attempt = 1; attempt <= 2; attempt++) {
		porthole_work_start("sync-cart", "SyncCartJob", attempt,
				    "sync, cart");
		usleep(250 * 1000);
		db_record_event("sync");
		if (attempt == 1) {
			porthole_log(PORTHOLE_WARN, "SyncCartJob",
				     "attempt %d failed: server busy", attempt);
			porthole_work_end("sync-cart", attempt,
					  PORTHOLE_WORK_RETRY, "server busy");
			usleep(400 * 1000); /* backoff */
		} else {
			porthole_work_end("sync-cart", attempt,
					  PORTHOLE_WORK_SUCCEEDED, NULL);
		}
	}
	return NULL;
}

void jobs_start(void)
{
	if (!started)
		started = !pthread_create(&thread, NULL, job_main, NULL);
}

void jobs_stop(void)
{
	if (started)
		pthread_join(thread, NULL);
	started = false;
}
