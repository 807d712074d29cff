/* SPDX-License-Identifier: Apache-2.0 */
/* session.c: sessions on disk (see session.h). */
#include "ph_common.h"
#include "session.h"
#include "ph_clock.h"
#include "ph_error.h"
#include "ph_log.h"
#include "env.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Lines held for the disk before new ones are dropped (a stuck disk): a
 * few seconds of the busiest stream (~200 MB/s at 1 M events/s).
 */
#define PENDING_CAP   ((size_t)512 << 20)
#define META_EVERY_MS 2000
/* What a host that is not the writer keeps for a takeover. */
#define READER_KEEP ((size_t)32 << 20)
/*
 * The most bytes of other processes' lines read back per flush: host-made
 * events are a few KiB each (a dump's leaks); more is not ours to hold.
 */
#define FOREIGN_CAP ((size_t)16 << 20)

const char *ph_session_name(const struct ph_ident *id, char *buf, size_t size)
{
	snprintf(buf, size, "%s_%s_%" PRId64,
		 id->package[0] ? id->package : "unknown",
		 id->device_id[0] ? id->device_id : "unknown", id->started_at);
	/* A name from the wire must not walk out of the sessions dir. */
	for (char *p = buf; *p; p++)
		if (*p == '/' || *p == '\\' || (unsigned char)*p < 32 ||
		    (p == buf && *p == '.'))
			*p = '_';
	return buf;
}

static int mkdirs(const char *path)
{
	char tmp[4096];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

/*
 * An OFD lock on one byte of the lock file: 0 writer, 1 watermark, 2
 * appends to events.ndjson (see session.h).
 */
static int lock_byte(int fd, off_t byte, bool wait)
{
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = byte,
			    .l_len = 1 };

	return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
}

static void unlock_byte(int fd, off_t byte)
{
	struct flock fl = { .l_type = F_UNLCK,
			    .l_whence = SEEK_SET,
			    .l_start = byte,
			    .l_len = 1 };

	fcntl(fd, F_OFD_SETLK, &fl);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Writes path atomically: a temp file, then rename. */
static int write_file(const char *path, const char *data, size_t n)
{
	char tmp[4300];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (write_all(fd, data, n) || close(fd) || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The highest event seq in the last 1 MiB of events.ndjson, or -1. */
static int64_t file_max_seq(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END), start;
	char *buf;
	ssize_t n;
	int64_t max = -1;

	if (end <= 0)
		return -1;
	start = end > (1 << 20) ? end - (1 << 20) : 0;
	buf = malloc((size_t)(end - start) + 1);
	if (!buf)
		return -1;
	n = pread(fd, buf, (size_t)(end - start), start);
	if (n > 0) {
		buf[n] = '\0';
		for (char *p = buf; (p = strstr(p, "\"seq\":")); p += 6) {
			int64_t v = strtoll(p + 6, NULL, 10);

			if (v > max)
				max = v;
		}
	}
	free(buf);
	return max;
}

/* The seq of an event line, -1 for anything else. */
static int64_t line_seq(const char *p, size_t n)
{
	const char *s;

	if (n < 10 || memcmp(p, "{\"event\"", 8))
		return -1;
	s = memmem(p, n < 200 ? n : 200, "\"seq\":", 6);
	return s ? strtoll(s + 6, NULL, 10) : -1;
}

static void write_meta(struct ph_session_writer *w)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	struct ph_jw jw;
	char path[4200];
	struct ph_ingest *in;

	if (!w->store || !w->writer || !w->meta_ready)
		return;
	ph_jw_init(&jw, &b);
	pthread_mutex_lock(&w->store->lock);
	in = &w->store->in;
	ph_jw_obj_begin(&jw);
	ph_jw_kv_str(&jw, "id", w->id);
	ph_jw_kv_str(&jw, "packageName", in->ident.package);
	ph_jw_kv_str(&jw, "deviceId", in->ident.device_id);
	ph_jw_kv_int(&jw, "startedAt", in->ident.started_at);
	ph_jw_kv_str(&jw, "device", in->ident.device);
	ph_jw_key(&jw, "profile");
	ph_jw_obj_begin(&jw);
	if (in->profile.refresh_hz > 0)
		ph_jw_kv_double(&jw, "refreshHz", in->profile.refresh_hz);
	if (in->profile.cores)
		ph_jw_kv_int(&jw, "cores", in->profile.cores);
	if (in->profile.model[0])
		ph_jw_kv_str(&jw, "model", in->profile.model);
	if (in->profile.os[0])
		ph_jw_kv_str(&jw, "os", in->profile.os);
	ph_jw_obj_end(&jw);
	ph_jw_kv_int(&jw, "firstT", in->first_t);
	ph_jw_kv_int(&jw, "lastT", in->last_t);
	ph_jw_kv_int(&jw, "events", (int64_t)in->events);
	ph_jw_key(&jw, "counts");
	ph_jw_obj_begin(&jw);
	for (int k = 1; k < PH_KIND_COUNT; k++)
		if (in->counts[k])
			ph_jw_kv_int(&jw, ph_wire_kind_name(k),
				     (int64_t)in->counts[k]);
	ph_jw_obj_end(&jw);
	ph_jw_kv_int(&jw, "malformed", (int64_t)in->malformed);
	if (in->repaired)
		ph_jw_kv_int(&jw, "repaired", (int64_t)in->repaired);
	if (in->nissues)
		ph_ingest_write_issues(in->issues, in->nissues, &jw);
	ph_jw_kv_int(&jw, "dropped", (int64_t)in->dropped);
	pthread_mutex_unlock(&w->store->lock);
	ph_jw_kv_int(&jw, "bytes", (int64_t)w->bytes);
	ph_jw_kv_int(&jw, "writerPid", (int64_t)getpid());
	ph_jw_obj_end(&jw);
	if (!ph_jw_finish(&jw) && !ph_buf_addch(&b, '\n')) {
		snprintf(path, sizeof(path), "%s/meta.json", w->dir);
		write_file(path, b.buf, b.len);
	}
	ph_buf_release(&b);
	w->meta_at_ms = ph_clock_uptime_ms();
}

/*
 * Takes byte 2 (appends to events.ndjson) for the writer, trying `tries`
 * times a millisecond apart: an appender holds it for one write(2), and
 * one that stopped while holding it must not stop the writer for good.
 * 1 taken; 0 busy; -1 locks do not work here (write without, as O_APPEND
 * writes of whole lines still do not interleave on a local file system).
 */
static int lock_appends(struct ph_session_writer *w, int tries)
{
	for (int i = 0; i < tries; i++) {
		if (!lock_byte(w->lock_fd, 2, false))
			return 1;
		if (errno != EAGAIN && errno != EACCES)
			return -1;
		usleep(1000);
	}
	return 0;
}

/*
 * The size of events.ndjson, for a writer holding byte 2, after ending a
 * torn last line (a host killed mid-write) so that it cannot swallow the
 * next line written.
 */
static uint64_t file_end(int fd)
{
	struct stat st;
	char last = '\n';

	if (fstat(fd, &st) || st.st_size <= 0)
		return 0;
	if (pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n' &&
	    !write_all(fd, "\n", 1))
		return (uint64_t)st.st_size + 1;
	return (uint64_t)st.st_size;
}

/*
 * For a writer holding byte 2: the bytes other processes appended after
 * this writer's last write, [w->bytes, end of file), into b, up to
 * FOREIGN_CAP; w->bytes then counts them.
 */
static void read_foreign(struct ph_session_writer *w, struct ph_buf *b)
{
	uint64_t end = file_end(w->fd), n;

	if (end <= w->bytes) {
		w->bytes = end; /* shrunk: someone truncated it; follow */
		return;
	}
	n = end - w->bytes;
	if (n > FOREIGN_CAP || ph_buf_grow(b, (size_t)n)) {
		ph_warn("session %s: %" PRIu64 " bytes another process "
			"appended at byte %" PRIu64 " were not read back "
			"(live answers lack them)",
			w->id, n, w->bytes);
		w->bytes = end;
		return;
	}
	while (b->len < n) {
		ssize_t r = pread(w->fd, b->buf + b->len, (size_t)n - b->len,
				  (off_t)(w->bytes + b->len));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		ph_buf_setlen(b, b->len + (size_t)r);
	}
	w->bytes = end;
}

/*
 * Hands the lines another process appended to the store: host-made
 * events (seq -1 or none, docs/heap.md's leaks) are stored like the
 * runtime's; anything else (a device seq, which the runtime owns, or not
 * an event) is counted as malformed, not stored.  Returns how many events
 * were stored.
 */
static size_t take_foreign(struct ph_session_writer *w, const struct ph_buf *b)
{
	size_t at = 0, taken = 0;

	while (w->store && at < b->len) {
		const char *p = b->buf + at, *nl = memchr(p, '\n', b->len - at);
		size_t n = nl ? (size_t)(nl - p) : b->len - at;

		at += n + 1;
		if (!n)
			continue;
		if (n >= 10 && !memcmp(p, "{\"event\"", 8) &&
		    line_seq(p, n) < 0) {
			if (!ph_store_add_line(w->store, p, n))
				taken++;
			continue;
		}
		pthread_mutex_lock(&w->store->lock);
		ph_ingest_malformed(&w->store->in,
				    "a line another process appended is not "
				    "a host-made event");
		pthread_mutex_unlock(&w->store->lock);
	}
	return taken;
}

/* Becomes the writer if the lock is free; on takeover skips what is there. */
static void try_take_over(struct ph_session_writer *w)
{
	char path[4200];
	int64_t have;
	size_t start = 0, keep = 0;
	struct ph_buf kept = PH_BUF_INIT(PENDING_CAP);

	if (w->writer || w->lock_fd < 0 || lock_byte(w->lock_fd, 0, false))
		return;
	snprintf(path, sizeof(path), "%s/events.ndjson", w->dir);
	/* Read too: lines other processes append are read back (flush). */
	w->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		unlock_byte(w->lock_fd, 0);
		return;
	}
	pthread_mutex_lock(&w->mu);
	w->writer = true;
	pthread_mutex_unlock(&w->mu);
	{
		/* What is there now is not ours to read back: from here on
		 * every byte is either this host's or another's, counted. */
		int locked = lock_appends(w, 50);

		w->bytes = file_end(w->fd);
		if (locked > 0)
			unlock_byte(w->lock_fd, 2);
	}
	{
		int rfd = open(path, O_RDONLY | O_CLOEXEC);

		have = rfd >= 0 ? file_max_seq(rfd) : -1;
		if (rfd >= 0)
			close(rfd);
	}
	if (have < 0)
		return;
	/* The previous writer wrote up to seq `have`: keep only newer lines. */
	pthread_mutex_lock(&w->mu);
	while (start < w->pending.len) {
		char *nl = memchr(w->pending.buf + start, '\n',
				  w->pending.len - start);
		size_t len = nl ? (size_t)(nl - (w->pending.buf + start)) + 1 :
				  w->pending.len - start;

		if (line_seq(w->pending.buf + start, len) > have &&
		    !ph_buf_add(&kept, w->pending.buf + start, len))
			keep++;
		start += len;
	}
	ph_buf_reset(&w->pending);
	if (ph_buf_add(&w->pending, kept.buf, kept.len))
		w->lost += kept.len;
	pthread_mutex_unlock(&w->mu);
	ph_buf_release(&kept);
	ph_info("session %s: took over writing (%zu lines after seq %" PRId64
		")",
		w->id, keep, have);
}

/*
 * Writes what is pending and reads back what other processes appended
 * since (ph_session_add_events), both under byte 2, so that w->bytes is
 * exactly where this writer's knowledge of the file ends: a byte past it
 * is another's, never this host's own line read twice.  `last`: the close
 * of the session, which waits longer for byte 2 and then writes anyway.
 */
static void flush(struct ph_session_writer *w, bool last)
{
	struct ph_buf tmp, foreign = PH_BUF_INIT(FOREIGN_CAP);
	uint64_t lost;
	bool warn = false;
	size_t taken;
	int locked;

	try_take_over(w);
	if (!w->writer || w->failed)
		return;
	locked = lock_appends(w, last ? 1000 : 20);
	if (!locked && !last)
		return; /* an appender holds it: the lines wait for the next */
	read_foreign(w, &foreign);
	pthread_mutex_lock(&w->mu);
	/* Swap: the reader keeps appending while the disk is written; both
	 * buffers keep their memory, so a busy stream faults no new pages. */
	tmp = w->out;
	w->out = w->pending;
	w->pending = tmp;
	ph_buf_reset(&w->pending);
	lost = w->lost;
	if (lost && !w->lost_warned)
		warn = w->lost_warned = true;
	pthread_mutex_unlock(&w->mu);
	if (warn)
		ph_warn("session %s: the disk fell behind; %" PRIu64
			" bytes of events were not written to the session "
			"file (live answers have them)",
			w->id, lost);
	if (w->out.len && write_all(w->fd, w->out.buf, w->out.len)) {
		/* A full disk stops the session file, never the answers. */
		ph_warn("session %s: writing stopped: %s (live answers "
			"continue)",
			w->id, strerror(errno));
		pthread_mutex_lock(&w->mu);
		w->failed = true;
		ph_buf_release(&w->pending);
		pthread_mutex_unlock(&w->mu);
	} else {
		w->bytes += w->out.len;
	}
	if (locked > 0)
		unlock_byte(w->lock_fd, 2);
	if (w->out.alloc > 2 * PH_SESSION_FLUSH_BYTES * 8) {
		/* A burst grew it: give the memory back. */
		ph_buf_release(&w->out);
		ph_buf_init(&w->out, PENDING_CAP);
	}
	ph_buf_reset(&w->out);
	taken = take_foreign(w, &foreign);
	ph_buf_release(&foreign);
	if (taken) {
		w->foreign += taken;
		ph_info("session %s: %zu host-made event(s) another process "
			"appended are in the live store",
			w->id, taken);
	}
	if (taken || ph_clock_uptime_ms() - w->meta_at_ms >= META_EVERY_MS)
		write_meta(w); /* now, when they change what it counts */
}

static void *flusher(void *arg)
{
	struct ph_session_writer *w = arg;

	while (!w->stop) {
		struct timespec until;

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += PH_SESSION_FLUSH_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_nsec -= 1000000000L;
			until.tv_sec++;
		}
		pthread_mutex_lock(&w->mu);
		while (!w->stop && w->pending.len < PH_SESSION_FLUSH_BYTES &&
		       pthread_cond_timedwait(&w->wake, &w->mu, &until) == 0)
			;
		pthread_mutex_unlock(&w->mu);
		flush(w, false);
	}
	return NULL;
}

int ph_session_open(struct ph_session_writer *w, const char *sessions_dir,
		    const struct ph_ident *id, struct ph_store *store)
{
	char path[4200];

	/* A file size limit (RLIMIT_FSIZE) is a full disk too: EFBIG from
	 * write, one warning, not a process killed by SIGXFSZ. */
	signal(SIGXFSZ, SIG_IGN);
	memset(w, 0, sizeof(*w));
	w->lock_fd = w->fd = -1;
	w->store = store;
	pthread_mutex_init(&w->mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&w->wake, &ca);
		pthread_condattr_destroy(&ca);
	}
	ph_buf_init(&w->pending, PENDING_CAP);
	ph_buf_init(&w->out, PENDING_CAP);
	ph_session_name(id, w->id, sizeof(w->id));
	snprintf(w->dir, sizeof(w->dir), "%s/%s", sessions_dir, w->id);
	if (mkdirs(w->dir))
		return ph_error(PH_EIO, "%s: %s", w->dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/lock", w->dir);
	w->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (w->lock_fd < 0)
		return ph_error(PH_EIO, "%s: %s", path, strerror(errno));
	try_take_over(w);
	if (!w->writer)
		ph_info("session %s: another host is writing it; reading live",
			w->id);
	/* What is on disk now was recorded before this host came: a writer
	 * knows exactly where its own bytes start; a reader takes the size. */
	if (w->writer) {
		w->preload_bytes = w->bytes;
	} else {
		struct stat st;

		snprintf(path, sizeof(path), "%s/events.ndjson", w->dir);
		if (!stat(path, &st) && st.st_size > 0)
			w->preload_bytes = (uint64_t)st.st_size;
	}
	w->meta_ready = !w->preload_bytes;
	ph_sessions_prune(sessions_dir, ph_env_sessions_max_bytes(),
			  ph_env_sessions_max_age_ms(), w->id);
	if (pthread_create(&w->thread, NULL, flusher, w) == 0)
		w->running = true;
	return 0;
}

void ph_session_store_complete(struct ph_session_writer *w)
{
	w->meta_ready = true;
}

void ph_session_append(struct ph_session_writer *w, const char *line,
		       size_t len)
{
	pthread_mutex_lock(&w->mu);
	if (w->failed) {
		pthread_mutex_unlock(&w->mu);
		return; /* the file stopped; the store has the line */
	}
	if (!w->writer && w->pending.len > READER_KEEP) {
		/* Not the writer: only the newest lines can matter at a
		 * takeover (the writer flushed up to a moment ago). */
		const char *cut = memchr(w->pending.buf + READER_KEEP / 2, '\n',
					 w->pending.len - READER_KEEP / 2);

		ph_buf_consume(&w->pending,
			       cut ? (size_t)(cut - w->pending.buf) + 1 :
				     w->pending.len);
	}
	if (ph_buf_add(&w->pending, line, len) ||
	    ph_buf_addch(&w->pending, '\n'))
		w->lost += len + 1;
	else if (w->pending.len >= PH_SESSION_FLUSH_BYTES &&
		 w->pending.len - len - 1 < PH_SESSION_FLUSH_BYTES)
		pthread_cond_signal(&w->wake); /* once, as it passes */
	pthread_mutex_unlock(&w->mu);
}

void ph_session_close(struct ph_session_writer *w)
{
	if (w->running) {
		pthread_mutex_lock(&w->mu);
		w->stop = 1;
		pthread_cond_signal(&w->wake);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		w->running = false;
	}
	flush(w, true);
	write_meta(w);
	if (w->fd >= 0)
		close(w->fd);
	if (w->lock_fd >= 0)
		close(w->lock_fd); /* drops the OFD locks */
	w->fd = w->lock_fd = -1;
	w->writer = false;
	ph_buf_release(&w->pending);
	ph_buf_release(&w->out);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->mu);
}

/* --- host-made events --------------------------------------------------- */

int ph_session_add_events(const char *dir, const char *lines, size_t len)
{
	char path[4200], last = '\n';
	int lfd, fd, rc = 0;
	struct stat st;

	if (!len || lines[len - 1] != '\n')
		return PH_EINVAL;
	snprintf(path, sizeof(path), "%s/events.ndjson", dir);
	fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? PH_ENOENT :
					 ph_error(PH_EIO, "%s: %s", path,
						  strerror(errno));
	snprintf(path, sizeof(path), "%s/lock", dir);
	lfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0 || lock_byte(lfd, 2, true)) {
		rc = ph_error(PH_EIO, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!fstat(fd, &st) && st.st_size > 0 &&
	    pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n' &&
	    write_all(fd, "\n", 1))
		rc = ph_error(PH_EIO, "%s/events.ndjson: %s", dir,
			      strerror(errno));
	else if (write_all(fd, lines, len))
		rc = ph_error(PH_EIO, "%s/events.ndjson: %s", dir,
			      strerror(errno));
	unlock_byte(lfd, 2);
out:
	if (lfd >= 0)
		close(lfd);
	close(fd);
	return rc;
}

struct clocks_scan {
	int64_t wall_ms;
	int64_t best_gap; /* |wallMs - wall_ms| of the nearest, -1: none */
	int64_t uptime;
};

static int on_clocks(void *ctx, const struct ph_event *ev)
{
	struct clocks_scan *c = ctx;
	int64_t wall, up, gap;

	if (ev->kind != PH_KIND_DEVICE || !ph_ev_streq(ev, "kind", "clocks") ||
	    !ph_ev_int(ev, "wallMs", &wall) || !ph_ev_int(ev, "uptimeMs", &up))
		return 0;
	/* hostile values must not overflow the arithmetic below */
	if (wall < 0 || wall > ((int64_t)1 << 52) || up < 0 ||
	    up > ((int64_t)1 << 52))
		return 0;
	gap = wall > c->wall_ms ? wall - c->wall_ms : c->wall_ms - wall;
	if (c->best_gap < 0 || gap <= c->best_gap) {
		c->best_gap = gap;
		c->uptime = up + (c->wall_ms - wall);
	}
	return 0;
}

bool ph_session_uptime_at(const char *dir, int64_t wall_ms, int64_t *uptime)
{
	struct clocks_scan c = { .wall_ms = wall_ms, .best_gap = -1 };
	struct ph_ingest in;
	char path[4200];
	bool ok;

	if (wall_ms < 0 || wall_ms > ((int64_t)1 << 52))
		return false;
	snprintf(path, sizeof(path), "%s/events.ndjson", dir);
	ph_ingest_init(&in, on_clocks, &c);
	ok = !ph_ingest_file(&in, path) && c.best_gap >= 0 &&
	     (!in.ident.have || c.uptime >= in.ident.started_at);
	ph_ingest_release(&in);
	if (ok)
		*uptime = c.uptime;
	return ok;
}
