/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net.c: the network thread.  Every call goes through libcurl with
 * Porthole's helper attached to the handle, against the app's own API on
 * 127.0.0.1.  Requests carry the secrets a real app would (a bearer token,
 * a token in the query string) so the redaction can be checked end to end.
 */
#include "sample.h"
#include "porthole.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_t thread;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static const char *pending[32];
static int n_pending;
static bool stopping;

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return size * n;
}

/* A streaming upload: 64 KB in 4 KB pieces, length unknown up front. */
static size_t upload_piece(char *buf, size_t size, size_t n, void *ctx)
{
	int *left = ctx;
	size_t want = size * n < 4096 ? size * n : 4096;

	if (*left <= 0)
		return 0;
	memset(buf, 'u', want);
	*left -= (int)want;
	return want;
}

static void call(CURL *c, const char *what)
{
	char url[256];
	struct curl_slist *h = NULL;
	int upload_left = 64 * 1024;
	int port = api_server_port();

	curl_easy_reset(c);
	/* reset drops the debug callback: attach again (cheap) */
	porthole_curl_attach(c, true);
	h = curl_slist_append(h, "Authorization: Bearer do-not-log");
	h = curl_slist_append(h, "Accept: application/json");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	if (!strcmp(what, "cart")) {
		snprintf(url, sizeof(url),
			 "http://127.0.0.1:%d/v1/cart/99001?token=do-not-log",
			 port);
	} else if (!strcmp(what, "checkout")) {
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/checkout",
			 port);
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS,
				 "{\"cartId\":99001,\"card\":\"visa-4242\"}");
	} else if (!strcmp(what, "recommendations")) {
		snprintf(url, sizeof(url),
			 "http://127.0.0.1:%d/v1/recommendations?cart=99001",
			 port);
	} else if (!strcmp(what, "upload")) {
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/upload",
			 port);
		h = curl_slist_append(h, "Content-Type: text/plain");
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "POST");
		curl_easy_setopt(c, CURLOPT_READFUNCTION, upload_piece);
		curl_easy_setopt(c, CURLOPT_READDATA, &upload_left);
	} else if (!strcmp(what, "image")) {
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/image.bin",
			 port);
	} else {
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/session",
			 port);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_perform(c);
	curl_slist_free_all(h);
}

static void *net_main(void *arg)
{
	CURL *c = curl_easy_init();

	(void)arg;
	/* Attached when made, as the agent's integrations check asks; each
	 * call attaches again after its reset. */
	porthole_curl_attach(c, true);
	for (;;) {
		const char *what;

		pthread_mutex_lock(&mu);
		while (!n_pending && !stopping)
			pthread_cond_wait(&cv, &mu);
		if (!n_pending && stopping) {
			pthread_mutex_unlock(&mu);
			break;
		}
		what = pending[0];
		memmove(pending, pending + 1,
			(size_t)--n_pending * sizeof(*pending));
		pthread_mutex_unlock(&mu);
		call(c, what);
	}
	curl_easy_cleanup(c);
	return NULL;
}

void net_start(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	pthread_create(&thread, NULL, net_main, NULL);
}

void net_request(const char *what)
{
	pthread_mutex_lock(&mu);
	if (n_pending < 32)
		pending[n_pending++] = what;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
}

void net_stop(void)
{
	pthread_mutex_lock(&mu);
	stopping = true;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(thread, NULL);
}
