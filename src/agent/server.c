/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.c: the writer thread.  It drains the emit queue, numbers, completes
 * and encodes every event once, keeps it in the ring, and fans the line out
 * to every connected client; between batches it accepts clients, reads
 * their requests and writes what they can take.  See server.h.
 *
 * Slow clients: each has a send buffer.  Past its share of
 * PH_CLIENT_BUDGET (server.h) the client stops getting events (it is
 * "lagging"); the events it misses are counted, and once its buffer drains it
 * gets a `dropped` frame with scope "client" before the next event.  So one
 * stalled reader never slows the others or the app, and for every client
 * emitted = delivered + dropped.
 */
#include "ph_common.h"
#include "server.h"
#include "collectors/collectors.h"
#include "ph_log.h"
#include "platform.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* How long the writer sleeps when the queue is empty. */
/*
 * How long the writer sleeps when it found no event.  Event calls make no
 * system call, so nothing wakes the writer: it looks.  2 ms after an
 * event, so a stream is taken in small batches; then, while nothing
 * comes, twice as long each time up to a cap, because an idle app should
 * not pay 500 wake-ups a second for its agent (about 17 ms of CPU a
 * second on the 2-core VM, measured).  The cap is what the queue holds
 * at 1 M one-cell events a second, halved (16 ms for the default 32768
 * cells), so a stream that starts while the writer sleeps fits.
 */
#define IDLE_WAIT_MS	 2
#define IDLE_WAIT_MAX_MS 16

static int idle_wait_cap(const struct ph_queue *q)
{
	uint64_t ms = (q->mask + 1) / 2000;

	return ms < IDLE_WAIT_MS     ? IDLE_WAIT_MS :
	       ms > IDLE_WAIT_MAX_MS ? IDLE_WAIT_MAX_MS :
				       (int)ms;
}

/*
 * Thread names by tid, the newest 64 threads seen (comm), read again when
 * an entry is a second old: a thread may name itself after its first
 * event, and a tid is reused once the kernel's pid_max wraps (32768 on
 * Android), so a name cached for ever would end up on the wrong thread.
 * The tids apart from the names, so finding one, which the writer does for
 * every event, reads four lines at most.
 */
#define NAME_FRESH_MS 1000

static int name_tids[64];
static int64_t name_read_at[64];
static char names[64][PH_NAME_MAX];
static unsigned names_next;

/* "main" for the registered main thread, else its comm as of about now. */
static const char *thread_name(int tid, bool main, int64_t now)
{
	char fresh[PH_NAME_MAX];
	unsigned i;
	bool known;

	if (main)
		return "main";
	for (i = 0; i < PH_ARRAY_SIZE(name_tids); i++)
		if (name_tids[i] == tid)
			break;
	known = i < PH_ARRAY_SIZE(name_tids);
	if (known && now >= name_read_at[i] &&
	    now - name_read_at[i] < NAME_FRESH_MS)
		return names[i];
	if (!known) {
		i = names_next;
		names_next = (names_next + 1) % PH_ARRAY_SIZE(name_tids);
		name_tids[i] = tid;
	}
	/* a thread that has ended since keeps the name it had */
	if (ph_platform_thread_name(tid, fresh, sizeof(fresh)) || !known)
		snprintf(names[i], sizeof(names[i]), "%s", fresh);
	name_read_at[i] = now;
	return names[i];
}

static void close_client(struct ph_server *s, struct ph_client *c,
			 const char *why)
{
	if (c->fd < 0)
		return;
	if (why)
		ph_debug("client %" PRIu64 " closed: %s", c->id, why);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	{
		/* -1 first: a fork in between closes nothing in its child */
		int fd = c->fd;

		c->fd = -1;
		close(fd);
	}
	s->nclients--;
	ph_buf_release(&c->in);
	ph_buf_release(&c->out);
}

/* A held client's requests wait: its socket is not read meanwhile. */
static void want_write(struct ph_server *s, struct ph_client *c, bool on)
{
	struct epoll_event ev = { .events = (c->held ? 0 : EPOLLIN) |
					    (on ? EPOLLOUT : 0),
				  .data.ptr = c };

	epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Writes what the socket takes now; never blocks. */
static void flush_client(struct ph_server *s, struct ph_client *c)
{
	while (c->fd >= 0 && c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.buf + c->out_off,
				 c->out.len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			want_write(s, c, true);
			return;
		}
		if (n <= 0) {
			close_client(s, c, "write failed");
			return;
		}
		c->out_off += (size_t)n;
	}
	if (c->fd >= 0) {
		ph_buf_reset(&c->out);
		c->out_off = 0;
		want_write(s, c, false);
	}
}

/* Room left before the soft cap, counting only unsent bytes. */
static size_t pending(const struct ph_client *c)
{
	return c->out.len - c->out_off;
}

/* Keeps the unsent tail only, so the buffer does not grow forever. */
void ph_server_compact(struct ph_client *c)
{
	if (c->out_off > (1 << 16) && c->out_off * 2 > c->out.len) {
		ph_buf_consume(&c->out, c->out_off);
		c->out_off = 0;
	}
}

bool ph_server_client_full(const struct ph_server *s, const struct ph_client *c)
{
	return pending(c) >= ph_server_client_share(s);
}

void ph_server_reply(struct ph_client *c, const char *line, size_t len)
{
	ph_server_compact(c);
	if (len && ph_buf_add(&c->out, line, len))
		ph_debug("client %" PRIu64 ": answer dropped, send buffer full",
			 c->id);
}

static void resume_held(struct ph_server *s);

/*
 * Sends the inspector's answer, if one is ready, to the client that asked
 * (gone by now: nobody).
 */
static void deliver_db_answer(struct ph_server *s)
{
	uint64_t conn;

	if (!ph_inspector_take(&s->resp, &conn))
		return;
	for (int i = 0; i < PH_MAX_CLIENTS; i++) {
		struct ph_client *c = &s->clients[i];

		if (c->fd >= 0 && c->id == conn) {
			c->db_waiting = false;
			ph_server_reply(c, s->resp.buf, s->resp.len);
			flush_client(s, c);
		}
	}
	ph_buf_reset(&s->resp);
	resume_held(s);
}

/* A `dropped` frame carries the t and seq of the event it precedes. */
static int dropped_frame(struct ph_buf *out, uint64_t count, uint64_t first,
			 uint64_t last, const char *scope, int64_t t,
			 uint64_t seq)
{
	return ph_buf_addf(out,
			   "{\"event\":\"dropped\",\"t\":%" PRId64
			   ",\"seq\":%" PRIu64 ",\"data\":{\"count\":%" PRIu64
			   ",\"firstSeq\":%" PRIu64 ",\"lastSeq\":%" PRIu64
			   ",\"scope\":\"%s\"}}\n",
			   t, seq, count, first, last, scope);
}

size_t ph_server_client_share(const struct ph_server *s)
{
	size_t share =
		PH_CLIENT_BUDGET / (size_t)(s->nclients ? s->nclients : 1);

	return share < PH_CLIENT_SHARE_MIN ? PH_CLIENT_SHARE_MIN :
	       share > PH_CLIENT_SHARE_MAX ? PH_CLIENT_SHARE_MAX :
					     share;
}

/*
 * The queue lost events just before this one: c lost them too.  A client
 * that is lagging is told when it catches up, beside what it lost itself.
 */
static void note_client_queue_loss(const struct ph_server *s,
				   struct ph_client *c)
{
	if (!c->queue_pending)
		c->queue_first = s->queue_drop_first;
	c->queue_pending += s->queue_drop_pending;
	c->queue_last = s->queue_drop_last;
	c->queue_lost += s->queue_drop_pending;
}

static void fan_out(struct ph_server *s, const struct ph_rec *r, uint64_t seq)
{
	size_t share = ph_server_client_share(s);

	for (int i = 0; i < PH_MAX_CLIENTS; i++) {
		struct ph_client *c = &s->clients[i];

		if (c->fd < 0)
			continue;
		if (!c->delivered && !c->lagged)
			c->first_seq = seq; /* a loss before it is not its own
					     */
		else if (s->queue_drop_pending)
			note_client_queue_loss(s, c);
		if (c->lagging && pending(c) < share / 4)
			c->lagging = false;
		if (c->lagging || pending(c) + s->line.len > share) {
			if (!c->lag_pending)
				c->lag_first = seq;
			c->lag_last = seq;
			c->lag_pending++;
			c->lagged++;
			c->lagging = true;
			continue;
		}
		ph_server_compact(c);
		if (c->lag_pending) {
			if (dropped_frame(&c->out, c->lag_pending, c->lag_first,
					  c->lag_last, "client", ph_rec_t(r),
					  seq)) {
				close_client(s, c, "out of memory");
				continue;
			}
			c->lag_pending = 0;
		}
		if (c->queue_pending) {
			if (dropped_frame(&c->out, c->queue_pending,
					  c->queue_first, c->queue_last,
					  "queue", ph_rec_t(r), seq)) {
				close_client(s, c, "out of memory");
				continue;
			}
			c->queue_pending = 0;
		}
		if (ph_buf_add(&c->out, s->line.buf, s->line.len)) {
			close_client(s, c, "out of memory");
			continue;
		}
		c->delivered++;
	}
	s->queue_drop_pending = 0;
}

static void note_queue_drops(struct ph_server *s, uint64_t n)
{
	if (!n)
		return;
	if (!s->queue_drop_pending)
		s->queue_drop_first = s->next_seq;
	s->queue_drop_pending += n;
	s->next_seq += n;
	s->queue_drop_last = s->next_seq - 1;
	s->dropped += n;
}

static void handle_record(struct ph_server *s, struct ph_rec *r)
{
	uint64_t seq = s->next_seq++;
	const char *thread =
		thread_name(r->tid, (r->flags & PH_REC_MAIN) != 0, ph_rec_t(r));

	ph_state_apply(&s->state, r, seq, thread);
	ph_buf_reset(&s->line);
	if (ph_encode_event(r, seq, &s->line)) {
		/* Cannot happen with valid records; keep the seq honest. */
		ph_warn("could not encode a %s event",
			ph_wire_kind_name((enum ph_kind)r->kind));
		s->dropped++;
		return;
	}
	s->emitted++;
	ph_ring_add(&s->ring, seq, ph_rec_t(r), r->kind, s->line.buf,
		    s->line.len - 1);
	if (r->kind == PH_KIND_BLOCKED) {
		const char *top = strstr(s->line.buf, "\"top\":\"");

		if (top) {
			const char *end = strchr(top + 7, '"');

			ph_state_stall_top(&s->state, top + 7,
					   end ? (size_t)(end - top - 7) : 0);
		}
	}
	fan_out(s, r, seq);
}

size_t ph_server_drain(struct ph_server *s, size_t max)
{
	size_t n = 0;
	uint64_t late = 0;
	struct ph_rec *r = NULL;

	while (n < max && (r = ph_merge_next(&s->merge, &late))) {
		/*
		 * Work on a copy: the state adds fields to the record (thread
		 * names, passes) that its cells have no room for, and the cells
		 * go back to the emitters at once.
		 */
		uint64_t after;

		note_queue_drops(s, late);
		memcpy(&s->rec, r, PH_REC_HEAD + r->used);
		after = ph_merge_done(&s->merge);
		handle_record(s, &s->rec);
		note_queue_drops(s, after);
		n++;
	}
	if (!r)
		note_queue_drops(s, late);
	return n;
}

static void read_client(struct ph_server *s, struct ph_client *c);

/*
 * Frees the slots of clients that hung up but whose hang-up this loop has
 * not read yet (a burst of short connections can fill every slot): reads
 * what each client sent, which closes those at end of file.
 */
static bool reap_closed(struct ph_server *s)
{
	bool freed = false;

	for (int i = 0; i < PH_MAX_CLIENTS; i++) {
		struct ph_client *c = &s->clients[i];

		if (c->fd < 0)
			continue;
		read_client(s, c);
		freed |= c->fd < 0;
	}
	return freed;
}

/*
 * Who may use the socket (Stetho's rule): the app's own uid, root, and on
 * Android the shell (adb's uid, 2000).  Any other local user could
 * otherwise read the app's private database through db_query, or take
 * every slot.  The abstract socket has no file mode to do this, so the
 * peer's credentials are checked on accept.  A TCP peer (the legacy port,
 * loopback only) carries none: its uid is that of its socket in
 * /proc/net/tcp, and a peer not found there is refused.
 */
#define ANDROID_SHELL_UID 2000

/*
 * The uid owning the other end of the loopback TCP connection fd.  A line
 * of /proc/net/tcp (net/ipv4/tcp_ipv4.c, get_tcp4_sock):
 *	sl local rem st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
 * with an address as its 32-bit word in hex, as stored, and the port in
 * hex: the peer's socket is the line whose local end is our remote one.
 */
static bool tcp_peer_uid(int fd, uid_t *uid)
{
	struct sockaddr_in peer, self;
	socklen_t plen = sizeof(peer), slen = sizeof(self);
	char want_local[32], want_rem[32], line[512], local[64], rem[64];
	unsigned u;
	bool found = false;
	FILE *f;

	if (getpeername(fd, (struct sockaddr *)&peer, &plen) ||
	    getsockname(fd, (struct sockaddr *)&self, &slen) ||
	    peer.sin_family != AF_INET)
		return false;
	snprintf(want_local, sizeof(want_local), "%08X:%04X",
		 (unsigned)peer.sin_addr.s_addr, ntohs(peer.sin_port));
	snprintf(want_rem, sizeof(want_rem), "%08X:%04X",
		 (unsigned)self.sin_addr.s_addr, ntohs(self.sin_port));
	f = fopen("/proc/net/tcp", "re");
	while (!found && f && fgets(line, sizeof(line), f))
		if (sscanf(line, " %*d: %63s %63s %*x %*s %*s %*s %u", local,
			   rem, &u) == 3 &&
		    !strcmp(local, want_local) && !strcmp(rem, want_rem)) {
			*uid = (uid_t)u;
			found = true;
		}
	if (f)
		fclose(f);
	return found;
}

static bool peer_allowed(int fd, bool tcp, uid_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	*uid = (uid_t)-1;
	if (tcp) {
		if (!tcp_peer_uid(fd, uid))
			return false;
	} else {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
		    len != sizeof(cred))
			return false;
		*uid = cred.uid;
	}
#ifdef __ANDROID__
	if (*uid == ANDROID_SHELL_UID)
		return true;
#endif
	return *uid == 0 || *uid == getuid();
}

/* Tells a client why it gets no slot, in one error frame, and closes it. */
static void refuse_client(int fd, const char *why)
{
	char frame[300], drain[4096];
	int n = snprintf(frame, sizeof(frame),
			 "{\"id\":-1,\"ok\":false,\"error\":\"%s\"}\n", why);

	if (n <= 0 || (size_t)n >= sizeof(frame) ||
	    send(fd, frame, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		ph_debug("could not tell a client why it was refused");
	/*
	 * What it sent already is read and dropped: closing a TCP socket
	 * with unread input resets it, and a reset can lose the frame.
	 */
	for (int i = 0; i < 16; i++) /* a bounded look: it may go on */
		if (recv(fd, drain, sizeof(drain), MSG_DONTWAIT) <= 0)
			break;
	close(fd);
}

/* Listening on or off, both sockets: off while the app has no fd left. */
static void listen_events(struct ph_server *s, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0 };

	ev.data.ptr = &s->listen_fd;
	epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->listen_fd, &ev);
	if (s->tcp_fd >= 0) {
		ev.data.ptr = &s->tcp_fd;
		epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->tcp_fd, &ev);
	}
}

/*
 * A host is waiting and the app has no file descriptor left (EMFILE: its
 * own limit; ENFILE: the system's).  The waiting connection keeps the
 * listening socket readable, so epoll would report it at once, for ever,
 * and the writer would spin.  The spare descriptor is let go for as long
 * as it takes to accept the host and tell it why it cannot be served;
 * without one (the app took it meanwhile), listening pauses a second.
 */
static void out_of_fds(struct ph_server *s, int lfd, int err)
{
	struct rlimit rl;
	char why[200];
	int fd = -1;

	if (s->spare_fd >= 0) {
		int spare = s->spare_fd;

		s->spare_fd = -1; /* before: a fork in between closes nothing */
		close(spare);
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	}
	if (fd >= 0) {
		if (err == EMFILE && !getrlimit(RLIMIT_NOFILE, &rl))
			snprintf(why, sizeof(why),
				 "EMFILE: the app has no file descriptor "
				 "left (all %llu of its limit are open); it "
				 "serves no host until it closes some",
				 (unsigned long long)rl.rlim_cur);
		else
			snprintf(why, sizeof(why),
				 "%s: the app cannot open a file descriptor "
				 "(%s); it serves no host until it can",
				 err == EMFILE ? "EMFILE" : "ENFILE",
				 strerror(err));
		ph_debug("refused a host: %s", why);
		refuse_client(fd, why);
	}
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || s->spare_fd < 0) {
		listen_events(s, false);
		s->listen_resume_ns = ph_mono_ns_fast() + 1000000000LL;
	}
}

static void accept_clients(struct ph_server *s, int lfd)
{
	while (!s->listen_resume_ns) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ph_client *c = NULL;
		struct epoll_event ev = { .events = EPOLLIN };

		char why[160];
		uid_t uid;

		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			out_of_fds(s, lfd, errno);
			continue;
		}
		if (fd < 0)
			return;
		if (!peer_allowed(fd, lfd == s->tcp_fd, &uid)) {
			snprintf(
				why, sizeof(why),
				"EACCES: uid %d may not use this app's socket; "
				"only the app's uid (%d)%s may",
				(int)uid, (int)getuid(),
#ifdef __ANDROID__
				", root and the shell (2000)"
#else
				" and root"
#endif
			);
			ph_debug("refused a client of uid %d", (int)uid);
			refuse_client(fd, why);
			continue;
		}
		for (int pass = 0; pass < 2 && !c; pass++) {
			for (int i = 0; i < PH_MAX_CLIENTS && !c; i++)
				if (s->clients[i].fd < 0)
					c = &s->clients[i];
			if (!c && (pass || !reap_closed(s)))
				break;
		}
		if (!c) {
			snprintf(why, sizeof(why),
				 "too many clients: all %d slots are in use",
				 PH_MAX_CLIENTS);
			refuse_client(fd, why);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		s->nclients++;
		c->id = ++s->connections;
		ph_buf_init(&c->in, PH_REQUEST_CAP);
		ph_buf_init(&c->out, PH_CLIENT_HARD_CAP);
		ev.data.ptr = c;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev))
			close_client(s, c, "epoll");
	}
}

/*
 * Answers the whole lines in c->in, in order, up to one that must wait
 * for the database inspector: that one and those after it stay in c->in,
 * and the client is held until resume_held.
 */
static void handle_lines(struct ph_server *s, struct ph_client *c)
{
	char *nl;

	while (c->fd >= 0 && !c->held &&
	       (nl = memchr(c->in.buf, '\n', c->in.len))) {
		size_t len = (size_t)(nl - c->in.buf);

		if (c->skipping) {
			c->skipping = false;
		} else if (len && ph_methods_handle(s, c, c->in.buf, len) ==
					  PH_EAGAIN) {
			c->held = true;
			want_write(s, c, pending(c) > 0);
			return;
		}
		ph_buf_consume(&c->in, len + 1);
		if (c->refused > PH_CLIENT_REFUSALS_MAX) {
			close_client(s, c, "does not read its answers");
			return;
		}
	}
}

/* The inspector is free: held clients go on with their requests. */
static void resume_held(struct ph_server *s)
{
	for (int i = 0; i < PH_MAX_CLIENTS; i++) {
		struct ph_client *c = &s->clients[i];

		if (c->fd < 0 || !c->held || c->db_waiting)
			continue;
		c->held = false;
		want_write(s, c, pending(c) > 0);
		handle_lines(s, c);
	}
}

static void read_client(struct ph_server *s, struct ph_client *c)
{
	if (c->held)
		return; /* its requests wait; its hang-up is seen as EPOLLHUP */
	for (;;) {
		ssize_t n = ph_buf_read_once(&c->in, c->fd, 65536);

		if (n == PH_EAGAIN)
			break;
		if (n == PH_ETOOBIG) {
			/* An over-long line: answer once, skip to its end. */
			ph_buf_reset(&s->resp);
			if (ph_buf_addstr(&s->resp,
					  "{\"id\":-1,\"ok\":false,\"error\":"
					  "\"malformed request: line longer "
					  "than 1 MiB\"}\n") == 0 &&
			    ph_buf_add(&c->out, s->resp.buf, s->resp.len))
				close_client(s, c, "out of memory");
			ph_buf_reset(&c->in);
			c->skipping = true;
			continue;
		}
		if (n <= 0) {
			close_client(s, c, n == 0 ? "closed by peer" : "read");
			return;
		}
		handle_lines(s, c);
		if (c->fd < 0 || c->held)
			return;
		if (c->skipping)
			ph_buf_reset(&c->in);
	}
}

/*
 * With no events coming, gives back send buffers that grew (a client
 * lagged, or a burst of large events went out) and are empty now.  Only
 * when idle: a busy writer refills them at once, and freeing then would
 * cost a fresh mapping and its page faults every batch.
 */
static void trim_idle_buffers(struct ph_server *s)
{
	for (int i = 0; i < PH_MAX_CLIENTS; i++) {
		struct ph_client *c = &s->clients[i];

		if (c->fd >= 0 && c->out_off >= c->out.len &&
		    c->out.alloc > PH_CLIENT_SHARE_MIN) {
			ph_buf_release(&c->out);
			c->out_off = 0;
		}
	}
}

/* Reads the eventfd back to zero, so epoll stops reporting it. */
static void clear_wake(int fd)
{
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		ph_debug("could not read the wake fd");
}

/*
 * epoll_wait failed for good: the app closed the agent's descriptors
 * (an app that closes every descriptor it did not open itself, after
 * porthole_start()).  Each wait would fail at once, and the writer would
 * spin; it stops instead, loudly, and event calls stop with it.  Nothing
 * is closed or written: a number the agent held may be the app's file
 * now.
 */
static void fds_lost(struct ph_server *s, int err)
{
	ph_log(PH_LOG_ERROR,
	       "the app closed libporthole's descriptors (epoll_wait: %s); "
	       "it serves no host from here on.  Close inherited "
	       "descriptors before porthole_start(), or spare the agent's",
	       strerror(err));
	atomic_store(&s->agent->fds_lost, true);
	atomic_store(&s->agent->running, 0);
}

static void *writer_main(void *arg)
{
	struct ph_server *s = arg;
	struct epoll_event evs[PH_MAX_CLIENTS + 3];
	int wait = IDLE_WAIT_MS, cap = idle_wait_cap(&s->agent->queue);

	ph_exits_thread_altstack(); /* a crash here writes its record */
	ph_platform_name_self("porthole-writer");
	ph_collectors_writer_started();
	while (!atomic_load(&s->quit)) {
		size_t took = ph_server_drain(s, 4096);
		int n;

		/* keeps the event clock true: a reading a second */
		ph_tclock_tune(&s->agent->clock, &s->agent->tuner);

		if (!took)
			trim_idle_buffers(s);
		deliver_db_answer(s);

		for (int i = 0; i < PH_MAX_CLIENTS; i++)
			if (s->clients[i].fd >= 0 &&
			    s->clients[i].out.len > s->clients[i].out_off)
				flush_client(s, &s->clients[i]);
		if (took)
			wait = IDLE_WAIT_MS;
		if (s->listen_resume_ns &&
		    ph_mono_ns_fast() >= s->listen_resume_ns) {
			if (s->spare_fd < 0)
				s->spare_fd =
					open("/dev/null", O_RDONLY | O_CLOEXEC);
			s->listen_resume_ns = 0;
			listen_events(s, true);
		}
		n = epoll_wait(s->epfd, evs, (int)PH_ARRAY_SIZE(evs),
			       took ? 0 : wait);
		if (n < 0 && errno != EINTR) {
			fds_lost(s, errno);
			return NULL;
		}
		if (!took && n == 0)
			wait = wait * 2 < cap ? wait * 2 : cap;
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &s->listen_fd)
				accept_clients(s, s->listen_fd);
			else if (p == &s->tcp_fd)
				accept_clients(s, s->tcp_fd);
			else if (p == &s->agent->wake_fd)
				clear_wake(s->agent->wake_fd);
			else if (((struct ph_client *)p)->held &&
				 (evs[i].events & (EPOLLHUP | EPOLLERR)))
				close_client(s, p, "closed by peer");
			else if (evs[i].events &
				 (EPOLLIN | EPOLLHUP | EPOLLERR))
				read_client(s, p);
			else if (evs[i].events & EPOLLOUT)
				flush_client(s, p);
		}
	}
	/* Last events, then tell each client everything it was sent. */
	ph_server_drain(s, SIZE_MAX);
	for (int i = 0; i < PH_MAX_CLIENTS; i++) {
		struct ph_client *c = &s->clients[i];

		if (c->fd < 0)
			continue;
		flush_client(s, c);
		close_client(s, c, NULL);
	}
	return NULL;
}

static int add_fd(struct ph_server *s, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/*
 * Two copies of one app under two captures at once (parallel CI jobs)
 * would both want @porthole.APP: the one that finds it taken, and whose
 * capture learns the name from PORTHOLE_ANNOUNCE, serves @NAME.PID.
 */
static bool take_own_name(struct ph_agent *a)
{
	const char *announce = getenv("PORTHOLE_ANNOUNCE");
	char own[sizeof(a->socket_name)];

	if (!announce || !*announce)
		return false;
	snprintf(own, sizeof(own), "%.90s.%d", a->socket_name, a->pid);
	ph_log(PH_LOG_INFO,
	       "socket @%s is held by another process of this app; "
	       "serving @%s, which the capture that started this one reads",
	       a->socket_name, own);
	memcpy(a->socket_name, own, sizeof(own));
	return true;
}

int ph_server_init(struct ph_server *s, struct ph_agent *a)
{
	size_t ring = a->cfg.ring_size ? a->cfg.ring_size : 4096;

	memset(s, 0, sizeof(*s));
	s->agent = a;
	ph_merge_init(&s->merge, &a->lanes);
	s->epfd = -1;
	s->listen_fd = -1;
	s->tcp_fd = -1;
	s->spare_fd = -1;
	for (int i = 0; i < PH_MAX_CLIENTS; i++)
		s->clients[i].fd = -1;
	ph_buf_init(&s->line, 1 << 20);
	ph_buf_init(&s->resp, PH_CLIENT_HARD_CAP);
	ph_json_reader_init(&s->reader);
	ph_arena_init(&s->arena, 0, 4 << 20);
	ph_state_init(&s->state);
	s->state.recomp_since = a->started_at;
	/* ~512 bytes per event on average keeps the text in step. */
	if (ph_ring_init(&s->ring, ring, ring * 512)) {
		ph_server_release(s);
		return PH_ENOMEM;
	}
	return 0;
}

void ph_server_release(struct ph_server *s)
{
	ph_ring_release(&s->ring);
	ph_buf_release(&s->line);
	ph_buf_release(&s->resp);
	ph_arena_release(&s->arena);
	ph_json_reader_release(&s->reader);
	ph_state_release(&s->state);
}

/*
 * The server's own descriptors, not its clients', and the wake eventfd;
 * close() only.  Each may be unset (-1) on ph_server_start's failure path.
 */
static void close_server_fds(struct ph_server *s, struct ph_agent *a)
{
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->tcp_fd >= 0)
		close(s->tcp_fd);
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	if (s->epfd >= 0)
		close(s->epfd);
	if (a->wake_fd >= 0)
		close(a->wake_fd);
}

int ph_server_start(struct ph_agent *a)
{
	struct ph_server *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return PH_ENOMEM;
	rc = ph_server_init(s, a);
	if (rc) {
		free(s);
		return rc;
	}
	rc = PH_EIO;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	a->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (s->epfd < 0 || a->wake_fd < 0)
		goto fail;
	/*
	 * Another process of this app may hold the name: retry a few times,
	 * as the published runtime does, then say who and how to fix it.
	 * Started by `porthole capture`, which reads the name from the
	 * announcement, the app takes a name of its own at once instead.
	 */
	for (int i = 0; i < 5; i++) {
		s->listen_fd = ph_platform_listen_abstract(a->socket_name);
		if (s->listen_fd != PH_EAGAIN)
			break;
		if (i == 0 && take_own_name(a))
			continue;
		usleep(100 * 1000);
	}
	if (s->listen_fd < 0) {
		if (s->listen_fd == PH_EAGAIN)
			ph_log(PH_LOG_ERROR,
			       "pid %d (%s): socket @%s is held by another "
			       "process of this app; stop it, or set "
			       "porthole_config.socket_name to run both",
			       a->pid, a->app_id, a->socket_name);
		else
			ph_log(PH_LOG_ERROR, "cannot listen on @%s: %s",
			       a->socket_name, strerror(errno));
		rc = PH_EAGAIN;
		goto fail;
	}
	if (a->cfg.legacy_tcp_port > 0) {
		s->tcp_fd =
			ph_platform_listen_tcp_loopback(a->cfg.legacy_tcp_port);
		if (s->tcp_fd < 0)
			ph_warn("cannot listen on 127.0.0.1:%d: %s",
				a->cfg.legacy_tcp_port, strerror(errno));
	}
	if (add_fd(s, s->listen_fd, &s->listen_fd) ||
	    (s->tcp_fd >= 0 && add_fd(s, s->tcp_fd, &s->tcp_fd)) ||
	    add_fd(s, a->wake_fd, &a->wake_fd))
		goto fail;
	a->server = s;
	if (pthread_create(&a->writer, NULL, writer_main, s)) {
		a->server = NULL;
		rc = PH_EIO;
		goto fail;
	}
	return 0;
fail:
	close_server_fds(s, a);
	a->wake_fd = -1;
	ph_server_release(s);
	free(s);
	return rc;
}

/*
 * The child has none of the writer's threads; its copies of the sockets
 * would keep the app's name taken after the app exits, and connections
 * to it would wait for an answer that never comes.  close() only: it is
 * async-signal-safe, and nothing here is freed; the child forgets the
 * server, so a fork of the child closes nothing again.  Descriptors the
 * app closed under the agent (fds_lost) are not the agent's to close,
 * and a client slot being filled at the fork may read 0: 0 to 2 are the
 * child's stdio.
 */
void ph_server_forked(struct ph_agent *a)
{
	struct ph_server *s = a->server;

	if (!s)
		return;
	if (!atomic_load(&a->fds_lost)) {
		for (int i = 0; i < PH_MAX_CLIENTS; i++)
			if (s->clients[i].fd > 2)
				close(s->clients[i].fd);
		close_server_fds(s, a);
	}
	/* Also so that a stop in the child joins none of the parent's
	 * threads, which it does not have. */
	a->server = NULL;
}

void ph_server_stop(struct ph_agent *a)
{
	struct ph_server *s = a->server;
	uint64_t one = 1;

	if (!s)
		return;
	atomic_store(&s->quit, true);
	if (!atomic_load(&a->fds_lost) &&
	    write(a->wake_fd, &one, sizeof(one)) < 0)
		ph_debug("could not wake the writer");
	pthread_join(a->writer, NULL);
	/* a running query ends at its next progress check */
	ph_inspector_stop();
	/* After fds_lost, its numbers may be the app's files: memory only. */
	if (!atomic_load(&a->fds_lost))
		close_server_fds(s, a);
	ph_server_release(s);
	free(s);
	a->server = NULL;
}
