/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ends.c: two planted ways for the sample to die that leave no crash
 * behind, for its next start to explain (the agent's exits collector):
 *
 *   - wait_for_settings_sync(): the main thread waits for a background
 *     settings sync to say it is done, but the sync was never started
 *     (the bug), so the app hangs until somebody kills it.  Killed, it
 *     is reported as an ANR, with this function on the stack.
 *   - cache_decoded_images(): an image cache that never evicts, grown by
 *     CACHE_STEP_MB each frame until the kernel's out-of-memory killer
 *     ends the process (in a memory-limited cgroup; the tests make one).
 *     It stops growing at CACHE_CAP_MB so that a run with no limit does
 *     not take the machine with it.
 */
#include "sample.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_STEP_MB 4
#define CACHE_CAP_MB  1024

static pthread_mutex_t sync_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sync_done = PTHREAD_COND_INITIALIZER;
static bool synced;

__attribute__((noinline)) void wait_for_settings_sync(void)
{
	pthread_mutex_lock(&sync_mu);
	while (!synced) /* nothing ever sets it: the planted hang */
		pthread_cond_wait(&sync_done, &sync_mu);
	pthread_mutex_unlock(&sync_mu);
}

static void **cache;
static size_t cached;

__attribute__((noinline)) void cache_decoded_images(void)
{
	void **grown;
	char *pixels;

	if (cached * CACHE_STEP_MB >= CACHE_CAP_MB)
		return;
	grown = realloc(cache, (cached + 1) * sizeof(*cache));
	pixels = malloc((size_t)CACHE_STEP_MB << 20);
	if (!grown || !pixels) {
		free(pixels);
		if (grown)
			cache = grown;
		return;
	}
	/* Decoded: every page written, so it is resident. */
	memset(pixels, 0x5a, (size_t)CACHE_STEP_MB << 20);
	cache = grown;
	cache[cached++] = pixels;
}
