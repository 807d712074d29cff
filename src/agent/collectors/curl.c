/* SPDX-License-Identifier: Apache-2.0 */
/*
 * curl.c: porthole_curl_attach() instruments a libcurl easy handle.
 *
 * libcurl has no "transfer done" callback, so the agent observes
 * curl_easy_perform() itself: libporthole exports its own
 * curl_easy_perform (and curl_easy_cleanup, to forget a handle as it is
 * freed), which the dynamic linker resolves ahead of libcurl's when the
 * app links -lporthole before -lcurl (or links libporthole.a); it calls
 * the real one through dlsym(RTLD_NEXT).  For a handle that was not
 * attached it does nothing else.  For an attached one:
 *
 *  - a debug callback (CURLOPT_DEBUGFUNCTION, with CURLOPT_VERBOSE) sees
 *    the request go out: http_start is emitted then, stamped with the time
 *    perform was called, with the method and the redacted URL;
 *  - the same callback sees the content types (no other header is read,
 *    so none can leak) and, when asked, the start of text bodies, kept
 *    for the 512-char snippet; every query-string value is replaced by
 *    "*" here, in the process, before anything is queued (docs/protocol.md
 *    section 7);
 *  - when perform returns, http_end carries the status, the elapsed time,
 *    each phase's own duration from libcurl's timers, reuse, protocol,
 *    byte counts (absent, never 0, when there was no body) and the error.
 *
 * The multi interface is not observed: docs/agent.md says so.
 */
#include "ph_common.h"
#include "collectors.h"
#include "../state.h"

#include "../bodies.h"

#include <curl/curl.h>
#include <ctype.h>
#include <dlfcn.h>

#define MAX_HANDLES 64
#define CAP_URL	    512
#define CAP_SNIPPET 512
#define CAP_HEADERS 384 /* each way: "Name: value\n" lines, whole ones */
#define CAP_HEADER  128 /* one value */

struct handle {
	CURL *curl;
	bool bodies;
	/* per transfer */
	bool started;
	char id[24];
	int64_t t0;
	char method[16];
	char url[CAP_URL + 1];
	char req_type[64], resp_type[64];
	/* the first 4 KiB (for inflight), and one byte past them, so a
	 * longer body shows as cut */
	char req_body[PH_BODY_MAX + 2], resp_body[PH_BODY_MAX + 2];
	size_t req_len, resp_len;
	size_t req_seen, resp_seen;
	/* headers, redacted as they are read: "Name: value\n" lines */
	char req_h[CAP_HEADERS], resp_h[CAP_HEADERS];
	size_t req_h_len, resp_h_len;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct handle handles[MAX_HANDLES];
static unsigned next_slot;

static struct {
	CURLcode (*perform)(CURL *);
	void (*cleanup)(CURL *);
	CURLcode (*setopt)(CURL *, CURLoption, ...);
	CURLcode (*getinfo)(CURL *, CURLINFO, ...);
	const char *(*strerror)(CURLcode);
	bool ok;
} fn;

static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load_once(void)
{
	*(void **)&fn.perform = dlsym(RTLD_NEXT, "curl_easy_perform");
	*(void **)&fn.cleanup = dlsym(RTLD_NEXT, "curl_easy_cleanup");
	*(void **)&fn.setopt = dlsym(RTLD_DEFAULT, "curl_easy_setopt");
	*(void **)&fn.getinfo = dlsym(RTLD_DEFAULT, "curl_easy_getinfo");
	*(void **)&fn.strerror = dlsym(RTLD_DEFAULT, "curl_easy_strerror");
	fn.ok = fn.perform && fn.cleanup && fn.setopt && fn.getinfo &&
		fn.strerror;
}

/* The library's entry points, looked up once, from any thread. */
static bool load(void)
{
	pthread_once(&loaded, load_once);
	return fn.ok;
}

static struct handle *find(CURL *curl)
{
	struct handle *h = NULL;

	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAX_HANDLES && !h; i++)
		if (handles[i].curl == curl)
			h = &handles[i];
	pthread_mutex_unlock(&mu);
	return h;
}

/*
 * The URL with every query value "*", userinfo "*@", no fragment
 * (docs/protocol.md section 7).  A parameter without "=" stays a name.
 */
void ph_redact_url(const char *url, char *out, size_t cap)
{
	const char *scheme = strstr(url, "://");
	const char *host = scheme ? scheme + 3 : url;
	const char *at = NULL, *q;
	size_t n = 0;

#define PUT(c)                          \
	do {                            \
		if (n + 1 < cap)        \
			out[n++] = (c); \
	} while (0)
	for (const char *p = host; *p && *p != '/' && *p != '?' && *p != '#';
	     p++)
		if (*p == '@')
			at = p;
	for (const char *p = url; p < host; p++)
		PUT(*p);
	if (at) {
		PUT('*');
		PUT('@');
		host = at + 1;
	}
	for (q = host; *q && *q != '?' && *q != '#'; q++)
		PUT(*q);
	if (*q == '?') {
		bool first = true;

		for (const char *p = q + 1; *p && *p != '#';) {
			const char *end = p + strcspn(p, "&#");
			const char *eq = memchr(p, '=', (size_t)(end - p));

			if (end > p) {
				PUT(first ? '?' : '&');
				first = false;
				for (const char *c = p; c < (eq ? eq : end);
				     c++)
					PUT(*c);
				if (eq) {
					PUT('=');
					PUT('*');
				}
			}
			p = *end == '&' ? end + 1 : end;
		}
	}
	out[n] = '\0';
#undef PUT
}

static bool textual(const char *type)
{
	static const char *const ok[] = {
		"application/json",
		"application/xml",
		"application/x-www-form-urlencoded",
		"application/graphql",
		"text/",
	};

	if (!strncmp(type, "text/event-stream", 17))
		return false;
	for (size_t i = 0; i < PH_ARRAY_SIZE(ok); i++)
		if (!strncasecmp(type, ok[i], strlen(ok[i])))
			return true;
	return false;
}

static void header_value(const char *line, size_t n, const char *name,
			 char *out, size_t cap)
{
	size_t k = strlen(name);

	if (n > k + 1 && !strncasecmp(line, name, k) && line[k] == ':') {
		const char *v = line + k + 1;
		size_t len = n - k - 1;

		while (len && (*v == ' ' || *v == '\t')) {
			v++;
			len--;
		}
		while (len && (v[len - 1] == '\r' || v[len - 1] == '\n'))
			len--;
		snprintf(out, cap, "%.*s", (int)len, v);
	}
}

/*
 * Whether a header's value is a secret (docs/protocol.md section 7): the
 * published set, ours, and any name with one of the words in it.
 */
static bool secret_header(const char *name, size_t n)
{
	static const char *const exact[] = {
		"authorization",	"proxy-authorization", "cookie",
		"set-cookie",		"x-api-key",	       "x-auth-token",
		"x-access-token",	"x-csrf-token",	       "x-xsrf-token",
		"x-amz-security-token", "x-goog-api-key",
	};
	static const char *const words[] = { "token",  "secret",  "password",
					     "passwd", "api-key", "apikey",
					     "session" };
	char low[64];

	if (n >= sizeof(low))
		return true; /* a name this long is not worth the risk */
	for (size_t i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[n] = '\0';
	for (size_t i = 0; i < PH_ARRAY_SIZE(exact); i++)
		if (!strcmp(low, exact[i]))
			return true;
	for (size_t i = 0; i < PH_ARRAY_SIZE(words); i++)
		if (strstr(low, words[i]))
			return true;
	return false;
}

/*
 * One "Name: value" header line (CR/LF and all) into the handle's lines,
 * its value "*" when it is a secret, so a secret never leaves this
 * function; a name already there gets ", value" (repeated headers are
 * joined).  What does not fit is left out whole.
 */
static void keep_header(char *buf, size_t *len, const char *line, size_t n)
{
	const char *colon = memchr(line, ':', n), *v;
	size_t name_n, v_n;
	char add[CAP_HEADER + 72];
	int k;

	while (n && (line[n - 1] == '\r' || line[n - 1] == '\n'))
		n--;
	if (!colon || colon == line || colon >= line + n ||
	    (n >= 5 && !strncmp(line, "HTTP/", 5)))
		return; /* a status line, or the blank line that ends them */
	name_n = (size_t)(colon - line);
	for (v = colon + 1; v < line + n && (*v == ' ' || *v == '\t'); v++)
		;
	v_n = (size_t)(line + n - v);
	if (secret_header(line, name_n)) {
		v = "*";
		v_n = 1;
	}
	v_n = ph_utf8_cut(v, v_n, CAP_HEADER);
	for (char *p = buf; p < buf + *len;) {
		char *nl = memchr(p, '\n', (size_t)(buf + *len - p));

		if (!nl)
			break;
		if ((size_t)(nl - p) > name_n && p[name_n] == ':' &&
		    !strncasecmp(p, line, name_n)) {
			/* joined: ", value" before this line's newline */
			if (*len + 2 + v_n > CAP_HEADERS)
				return;
			memmove(nl + 2 + v_n, nl, (size_t)(buf + *len - nl));
			memcpy(nl, ", ", 2);
			memcpy(nl + 2, v, v_n);
			*len += 2 + v_n;
			return;
		}
		p = nl + 1;
	}
	if (name_n > 64)
		return;
	k = snprintf(add, sizeof(add), "%.*s: %.*s\n", (int)name_n, line,
		     (int)v_n, v);
	if (k > 0 && *len + (size_t)k <= CAP_HEADERS) {
		memcpy(buf + *len, add, (size_t)k);
		*len += (size_t)k;
	}
}

static void emit_start(struct handle *h, CURL *curl)
{
	char *eff = NULL;
	uint64_t pos;
	struct ph_rec *r;

	if (h->started)
		return;
	h->started = true;
	if (fn.getinfo(curl, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff)
		ph_redact_url(eff, h->url, sizeof(h->url));
	r = ph_emit_begin(PH_KIND_HTTP_START, &pos);
	if (!r)
		return;
	ph_rec_set_t(r, h->t0);
	ph_rec_str(r, PH_KEY_ID, h->id, sizeof(h->id));
	ph_rec_str(r, PH_KEY_METHOD, h->method[0] ? h->method : "GET", 16);
	ph_rec_str(r, PH_KEY_URL, h->url, CAP_URL);
	ph_rec_strn(r, PH_KEY_REQUEST_HEADERS, PH_F_HEADERS, h->req_h,
		    h->req_h_len, CAP_HEADERS);
	ph_emit_commit(pos);
	ph_trace_marker_begin(h->url);
}

static void keep_body(char *dst, size_t *len, size_t *seen, const char *src,
		      size_t n)
{
	*seen += n;
	if (*len < PH_BODY_MAX + 1) {
		size_t want = PH_BODY_MAX + 1 - *len;
		size_t take = n < want ? n : want;

		memcpy(dst + *len, src, take);
		*len += take;
		dst[*len] = '\0';
	}
}

static int on_debug(CURL *curl, curl_infotype type, char *data, size_t n,
		    void *ctx)
{
	struct handle *h = ctx;

	switch (type) {
	case CURLINFO_HEADER_OUT:
		/* "POST /v1/checkout HTTP/1.1\r\n...": the method */
		if (!h->started) {
			size_t m = strcspn(data, " ");

			if (m < sizeof(h->method) && m < n)
				snprintf(h->method, sizeof(h->method), "%.*s",
					 (int)m, data);
			for (const char *p = data; p < data + n;) {
				const char *e =
					memchr(p, '\n', (size_t)(data + n - p));
				size_t len = e ? (size_t)(e - p) :
						 (size_t)(data + n - p);

				header_value(p, len, "content-type",
					     h->req_type, sizeof(h->req_type));
				if (p != data) /* not the request line */
					keep_header(h->req_h, &h->req_h_len, p,
						    len);
				p += len + 1;
			}
			emit_start(h, curl);
		}
		break;
	case CURLINFO_HEADER_IN:
		/* a new response (after a 100 or a redirect) starts afresh */
		if (n > 5 && !strncmp(data, "HTTP/", 5))
			h->resp_h_len = 0;
		header_value(data, n, "content-type", h->resp_type,
			     sizeof(h->resp_type));
		keep_header(h->resp_h, &h->resp_h_len, data, n);
		break;
	case CURLINFO_DATA_OUT:
		keep_body(h->req_body, &h->req_len, &h->req_seen, data, n);
		break;
	case CURLINFO_DATA_IN:
		keep_body(h->resp_body, &h->resp_len, &h->resp_seen, data, n);
		break;
	default: break;
	}
	return 0;
}

/*
 * A body as the v1 snippet: text, or "<reason, N bytes>", at most cap
 * bytes.  A text longer than the snippet (text holds one byte more when it
 * was) is cut at a character and marked "..." by ph_rec_strn.
 */
static void body_field(struct ph_rec *r, enum ph_key key, bool capture,
		       const char *type, const char *text, size_t len,
		       int64_t bytes, size_t cap)
{
	char why[96];

	if (bytes <= 0)
		return; /* no body: absent */
	if (capture && textual(type)) {
		/* one byte past the snippet, so ph_rec_strn marks the cut */
		ph_rec_strn(r, key, PH_F_STR, text,
			    len < CAP_SNIPPET + 1 ? len : CAP_SNIPPET + 1, cap);
		return;
	}
	snprintf(why, sizeof(why), "<%s, %" PRId64 " bytes>",
		 capture ? "content type not captured" : "bodies not captured",
		 bytes);
	ph_rec_strn(r, key, PH_F_STR, why, strlen(why), cap);
}

/* One way's body as inflight shows it (bodies.h). */
static void body_of(struct ph_body *b, bool capture, const char *type,
		    const char *text, size_t len, int64_t bytes)
{
	snprintf(b->type, sizeof(b->type), "%s", type);
	b->bytes = bytes > 0 ? bytes : 0;
	b->why = !capture	? "bodies not captured" :
		 !textual(type) ? "content type not captured" :
				  NULL;
	b->text = text;
	b->len = len;
}

/* The first 4 KiB of a finished call's bodies, for inflight. */
static void keep_bodies(const struct handle *h, int64_t req_bytes,
			int64_t resp_bytes)
{
	struct ph_body req, resp;

	if (req_bytes <= 0 && resp_bytes <= 0)
		return;
	body_of(&req, h->bodies, h->req_type, h->req_body, h->req_len,
		req_bytes);
	body_of(&resp, h->bodies, h->resp_type, h->resp_body, h->resp_len,
		resp_bytes);
	ph_bodies_put(h->id, &req, &resp);
}

/* Bytes a string field of the record being filled may still take. */
static size_t room(const struct ph_rec *r)
{
	size_t used = (size_t)r->used + PH_STATE_THREAD_ROOM + 4;

	return used < PH_REC_DATA ? PH_REC_DATA - used : 0;
}

/*
 * http_end.phases: each phase's own duration from libcurl's cumulative
 * timers, at[] = queue, namelookup, connect, appconnect, pretransfer,
 * starttransfer, total (microseconds from the start; 0 for a timer the
 * transfer never reached), phase i ending at at[i].  A phase runs from the
 * last timer reached before it, so a phase that did not happen (connect on
 * a reused connection) is left out without its time counted twice.  A
 * transfer that failed part way stopped its timers there: the phase under
 * way ran until the end and no later one began, so a timeout while
 * waiting is waiting, never a response body that did not come.  Ends are
 * rounded to ms before subtracting, so the phases add up to the total.
 * queued is 0 before libcurl 8.6, secureConnect without TLS.
 */
static void phases_field(struct ph_rec *r, const curl_off_t at[7], bool tls)
{
	static const char *const name[7] = {
		"queued",   "dns",     "connect",      "secureConnect",
		"dispatch", "waiting", "responseBody",
	};
	curl_off_t from = 0;

	for (int i = 0; i < 7; i++) {
		curl_off_t to = at[i];
		bool later = false, stopped = false;

		if (to <= 0) {
			if (i == 0 || (i == 3 && !tls))
				continue;
			for (int j = i + 1; j < 6; j++)
				later |= at[j] > 0;
			if (later)
				continue; /* did not happen */
			to = at[6]; /* under way when the transfer ended */
			stopped = true;
		}
		if (to > from)
			ph_rec_obj_int(r, PH_KEY_PHASES, name[i],
				       (to + 500) / 1000 - (from + 500) / 1000);
		if (stopped)
			break;
		if (to > from)
			from = to;
	}
}

static void emit_end(struct handle *h, CURL *curl, CURLcode res)
{
	curl_off_t q = 0, dns = 0, con = 0, app = 0, pre = 0, start = 0,
		   total = 0, up = 0, down = 0;
	long status = 0, connects = 0, version = 0;
	int64_t elapsed, req_bytes, resp_bytes;
	const char *proto;
	uint64_t pos;
	struct ph_rec *r;
	size_t cap;

#if LIBCURL_VERSION_NUM >= 0x080600
	/* libcurl 8.6 added the queue timer; older ones have no queue phase */
	fn.getinfo(curl, CURLINFO_QUEUE_TIME_T, &q);
#endif
	fn.getinfo(curl, CURLINFO_NAMELOOKUP_TIME_T, &dns);
	fn.getinfo(curl, CURLINFO_CONNECT_TIME_T, &con);
	fn.getinfo(curl, CURLINFO_APPCONNECT_TIME_T, &app);
	fn.getinfo(curl, CURLINFO_PRETRANSFER_TIME_T, &pre);
	fn.getinfo(curl, CURLINFO_STARTTRANSFER_TIME_T, &start);
	fn.getinfo(curl, CURLINFO_TOTAL_TIME_T, &total);
	fn.getinfo(curl, CURLINFO_SIZE_UPLOAD_T, &up);
	fn.getinfo(curl, CURLINFO_SIZE_DOWNLOAD_T, &down);
	fn.getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	fn.getinfo(curl, CURLINFO_NUM_CONNECTS, &connects);
	fn.getinfo(curl, CURLINFO_HTTP_VERSION, &version);
	ph_trace_marker_end();
	elapsed = ph_uptime_ms_fast() - h->t0;
	req_bytes = up ? up : (int64_t)h->req_seen;
	resp_bytes = down ? down : (int64_t)h->resp_seen;
	/* 0 when no HTTP response came: then the field is absent */
	proto = version == CURL_HTTP_VERSION_1_0 ? "http/1.0" :
		version == CURL_HTTP_VERSION_1_1 ? "http/1.1" :
		version == CURL_HTTP_VERSION_2_0 ? "h2" :
		version == CURL_HTTP_VERSION_3	 ? "h3" :
						   NULL;
	r = ph_emit_begin(PH_KIND_HTTP_END, &pos);
	if (!r)
		return;
	ph_rec_str(r, PH_KEY_ID, h->id, sizeof(h->id));
	ph_rec_str(r, PH_KEY_METHOD, h->method[0] ? h->method : "GET", 16);
	ph_rec_str(r, PH_KEY_URL, h->url, CAP_URL);
	ph_rec_str(r, PH_KEY_PHASE, res == CURLE_OK ? "done" : "failed", 8);
	ph_rec_qint(r, PH_KEY_ELAPSED_MS, elapsed);
	if (status > 0)
		ph_rec_qint(r, PH_KEY_STATUS, status);
	if (res != CURLE_OK) {
		char detail[256];

		snprintf(detail, sizeof(detail), "CURLE %d: %s", (int)res,
			 fn.strerror(res));
		ph_rec_str(r, PH_KEY_DETAIL, detail, sizeof(detail));
	}
	if (status > 0 && connects == 0)
		ph_rec_str(r, PH_KEY_REUSED, "true", 8);
	if (proto)
		ph_rec_str(r, PH_KEY_PROTOCOL, proto, 16);
	/* Absent when there was no body: never a false zero. */
	if (req_bytes > 0)
		ph_rec_qint(r, PH_KEY_REQUEST_BYTES, req_bytes);
	if (resp_bytes > 0)
		ph_rec_qint(r, PH_KEY_RESPONSE_BYTES, resp_bytes);
	phases_field(
		r, (const curl_off_t[7]){ q, dns, con, app, pre, start, total },
		app > 0 || !strncasecmp(h->url, "https:", 6));
	/*
	 * The snippets go last, cut to what the record has left: with a long
	 * URL both would not fit, and a field that does not fit is dropped
	 * whole, so no count, phase or the writer's thread may come after
	 * them (docs/protocol.md section 8).  The request's takes at most
	 * half of what is left when the response has one too.
	 */
	if (h->resp_h_len)
		ph_rec_strn(r, PH_KEY_RESPONSE_HEADERS, PH_F_HEADERS, h->resp_h,
			    h->resp_h_len, CAP_HEADERS);
	cap = room(r);
	if (resp_bytes > 0)
		cap /= 2;
	body_field(r, PH_KEY_REQUEST_BODY, h->bodies, h->req_type, h->req_body,
		   h->req_len, req_bytes,
		   cap < CAP_SNIPPET ? cap : CAP_SNIPPET);
	cap = room(r);
	body_field(r, PH_KEY_RESPONSE_BODY, h->bodies, h->resp_type,
		   h->resp_body, h->resp_len, resp_bytes,
		   cap < CAP_SNIPPET ? cap : CAP_SNIPPET);
	ph_emit_commit(pos);
	keep_bodies(h, req_bytes, resp_bytes);
}

PORTHOLE_API CURLcode curl_easy_perform(CURL *curl)
{
	struct handle *h;
	CURLcode res;

	if (!load())
		return CURLE_FAILED_INIT; /* libcurl is not loaded at all */
	h = ph_agent_live() ? find(curl) : NULL;
	if (!h)
		return fn.perform(curl);
	h->started = false;
	h->method[0] = h->url[0] = '\0';
	h->req_type[0] = h->resp_type[0] = '\0';
	h->req_len = h->resp_len = h->req_seen = h->resp_seen = 0;
	h->req_h_len = h->resp_h_len = 0;
	h->req_body[0] = h->resp_body[0] = '\0';
	snprintf(h->id, sizeof(h->id), "http-%" PRIu64,
		 atomic_fetch_add(&ph_agent.next_id, 1));
	h->t0 = ph_uptime_ms_fast();
	res = fn.perform(curl);
	emit_start(h, curl); /* failed before the request went out */
	emit_end(h, curl, res);
	return res;
}

/*
 * libporthole's curl_easy_cleanup, for the same reason as its perform: an
 * attached handle is forgotten as the app frees it, so a handle libcurl
 * later allocates at the same address is not taken for attached (and
 * recorded), and the table holds only handles that exist.
 */
PORTHOLE_API void curl_easy_cleanup(CURL *curl)
{
	if (!load())
		return; /* libcurl is not loaded: there is no handle to free */
	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAX_HANDLES; i++)
		if (curl && handles[i].curl == curl)
			memset(&handles[i], 0, sizeof(handles[i]));
	pthread_mutex_unlock(&mu);
	fn.cleanup(curl);
}

PORTHOLE_API enum porthole_status porthole_curl_attach(void *curl,
						       bool capture_bodies)
{
	struct handle *h = NULL;

	if (!curl)
		return PORTHOLE_ERR_INVALID;
	if (!ph_agent_live())
		return PORTHOLE_ERR_NOT_DEBUG;
	if (!load())
		return PORTHOLE_ERR_INVALID;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAX_HANDLES && !h; i++)
		if (handles[i].curl == curl || !handles[i].curl)
			h = &handles[i];
	/*
	 * Full: the app has cleaned up handles we were never told about;
	 * reuse the slots in turn.
	 */
	if (!h)
		h = &handles[next_slot++ % MAX_HANDLES];
	if (h) {
		memset(h, 0, sizeof(*h));
		h->curl = curl;
		h->bodies = capture_bodies &&
			    (ph_agent.cfg.flags & PORTHOLE_CAPTURE_BODIES);
	}
	pthread_mutex_unlock(&mu);
	if (!h)
		return PORTHOLE_ERR_NOMEM;
	fn.setopt(curl, CURLOPT_DEBUGFUNCTION, on_debug);
	fn.setopt(curl, CURLOPT_DEBUGDATA, h);
	fn.setopt(curl, CURLOPT_VERBOSE, 1L);
	ph_integration_wired("curl");
	return PORTHOLE_OK;
}
