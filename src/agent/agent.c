/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent.c: porthole_start() and porthole_stop(), and the agent's globals.
 */
#include "ph_common.h"
#include "agent.h"
#include "collectors/collectors.h"
#include "ph_clock.h"
#include "ph_error.h"
#include "ph_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct ph_agent ph_agent = { .wake_fd = -1 };

static pthread_mutex_t lifecycle = PTHREAD_MUTEX_INITIALIZER;
_Thread_local struct ph_emitter ph_emitter_tls;

/*
 * A fork's child is another process, and the agent does not serve it: it
 * has none of the agent's threads (a writer, a watchdog), so its event
 * calls do nothing, it closes its copies of the sockets (ph_server_forked)
 * and porthole_start() refuses it.  Its exits are not the app's either
 * (exits.c checks the pid).
 */
/* In a process forked (at any depth) from one the agent served: its pid. */
static pid_t forked_from;

static void on_fork_child(void)
{
	struct ph_agent *a = &ph_agent;

	/* Another thread of the parent may have held it at the fork. */
	pthread_mutex_init(&lifecycle, NULL);
	/* By the server, not `running`: a fork while the agent starts or
	 * stops holds its sockets too. */
	if (!a->server)
		return;
	atomic_store(&a->running, 0);
	if (!forked_from)
		forked_from = a->pid;
	ph_server_forked(a);
}

static void watch_forks(void)
{
	if (pthread_atfork(NULL, NULL, on_fork_child))
		ph_warn("a forked child will hold the app's socket: "
			"pthread_atfork failed");
}

/*
 * Gives a thread's lane back when it ends.  Events it emits after this
 * (another key's destructor may still emit) go to the shared queue.
 */
static pthread_key_t lane_key;
static bool have_lane_key;

static void lane_key_done(void *p)
{
	struct ph_emitter *e = p;
	struct ph_lane *lane = e->lane;

	e->cells = NULL;
	e->lane = NULL;
	/* a signal handler's event goes to the shared queue from here on */
	atomic_signal_fence(memory_order_seq_cst);
	ph_lane_end(lane, e->enq);
}

static void make_lane_key(void)
{
	have_lane_key = !pthread_key_create(&lane_key, lane_key_done);
}

/*
 * A lane's cells: PH_LANE_CELLS, or fewer with a shared queue smaller than
 * the lanes together (a test's, to see it fill).
 */
static size_t lane_cells(size_t shared)
{
	return shared / PH_LANES < PH_LANE_CELLS ? shared / PH_LANES :
						   PH_LANE_CELLS;
}

struct ph_emitter *ph_emitter_first(void)
{
	struct ph_emitter *e = &ph_emitter_tls;
	struct ph_lane *lane;

	/* One system call per thread, on its first event; cached after. */
	if (!e->tid)
		e->tid = (int)syscall(SYS_gettid);
	e->ready = true;
	lane = have_lane_key ? ph_lane_take(&ph_agent.lanes, e->tid) : NULL;
	if (!lane)
		return e; /* every lane taken: the shared queue */
	if (pthread_setspecific(lane_key, e)) {
		ph_lane_end(lane, atomic_load(&lane->q.enq)); /* untouched */
		return e;
	}
	e->lane = lane;
	e->mask = lane->q.mask;
	/* where its last thread left it, all taken by the writer */
	e->enq = atomic_load_explicit(&lane->q.enq, memory_order_relaxed);
	e->limit = e->enq + e->mask + 1;
	e->cells = lane->q.cells;
	return e;
}

int ph_tid(void)
{
	if (PH_UNLIKELY(!ph_emitter_tls.tid))
		ph_emitter_tls.tid = (int)syscall(SYS_gettid);
	return ph_emitter_tls.tid;
}

/*
 * An event that does not go into the thread's lane: the thread has none
 * (all taken, or given back), or its lane is full, or it overflowed and
 * the writer has not yet taken what it put in the shared queue (so none of
 * its events can pass another), or it comes from a signal handler.  What
 * the shared queue cannot take is dropped and counted there.
 */
void ph_emit_shared(struct ph_emitter *e, struct ph_rec *r, bool nested)
{
	struct ph_queue *shared = &ph_agent.queue;

	if (nested || !e->lane) {
		(void)ph_queue_push(shared, r);
		return;
	}
	if (!e->cells && (int64_t)(atomic_load_explicit(&shared->released,
							memory_order_acquire) -
				   e->back_at) >= 0) {
		e->cells = e->lane->q.cells; /* all it overflowed is taken */
		if (ph_lane_put(e, r))
			return;
	}
	if (!ph_queue_push(shared, r))
		return; /* dropped: if on its lane, nothing of it is shared */
	e->cells = NULL;
	e->back_at = atomic_load_explicit(&shared->enq, memory_order_relaxed);
}

PORTHOLE_API const char *porthole_strerror(enum porthole_status status)
{
	switch (status) {
	case PORTHOLE_OK: return "ok";
	case PORTHOLE_ERR_NOT_DEBUG:
		return "not a debug build (define PORTHOLE_DEBUG_BUILD, or set "
		       "PORTHOLE_ENABLE=1)";
	case PORTHOLE_ERR_ALREADY_STARTED: return "already started";
	case PORTHOLE_ERR_SOCKET: return "could not listen on the socket";
	case PORTHOLE_ERR_NOMEM: return "out of memory";
	case PORTHOLE_ERR_INVALID: return "invalid argument";
	case PORTHOLE_ERR_THREAD: return "could not start a thread";
	}
	return "unknown status";
}

/* The build or the environment must say this process may be watched. */
static bool allowed(int debug_build)
{
	const char *env = getenv("PORTHOLE_ENABLE");

	if (env && !strcmp(env, "0"))
		return false;
	return debug_build || (env && !strcmp(env, "1"));
}

/* Data dir: config, else $XDG_STATE_HOME or ~/.local/state, else /tmp. */
static void pick_data_dir(struct ph_agent *a)
{
	const char *base = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	char parent[200];

	if (a->cfg.data_dir) {
		snprintf(a->data_dir, sizeof(a->data_dir), "%.399s",
			 a->cfg.data_dir);
	} else {
		if (base && *base)
			snprintf(parent, sizeof(parent), "%s/porthole", base);
		else if (home && *home)
			snprintf(parent, sizeof(parent),
				 "%s/.local/state/porthole", home);
		else
			snprintf(parent, sizeof(parent), "/tmp/porthole-%d",
				 (int)getuid());
		snprintf(a->data_dir, sizeof(a->data_dir), "%s/%s", parent,
			 a->app_id);
	}
	/* mkdir -p, quietly: exits are recorded only if this works. */
	for (char *p = a->data_dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(a->data_dir, 0700);
		*p = '/';
	}
	mkdir(a->data_dir, 0700);
}

/* Tells `porthole capture` which socket to connect to. */
static void announce(const struct ph_agent *a)
{
	const char *path = getenv("PORTHOLE_ANNOUNCE");
	char tmp[4200];
	int fd;

	if (!path || !*path)
		return;
	/* Write then rename, so a reader never sees half a name. */
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, a->pid);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, a->socket_name, strlen(a->socket_name)) < 0 ||
	    write(fd, "\n", 1) < 0 || close(fd) || rename(tmp, path)) {
		ph_warn("PORTHOLE_ANNOUNCE=%s: %s", path, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
	}
}

PORTHOLE_API const char *porthole_version(void)
{
	return PORTHOLE_VERSION;
}

/*
 * The end of struct porthole_config's first layout (0.1's): what an app
 * built against 0.1's header filled in, all that porthole_start_build()
 * may read, and the least porthole_start_sized() accepts.
 */
#define PH_CONFIG_FIRST_END \
	(offsetof(struct porthole_config, stall_ms) + sizeof(unsigned))

static enum porthole_status start(const struct porthole_config *config,
				  int debug_build);

PORTHOLE_API enum porthole_status
porthole_start_sized(const struct porthole_config *config, size_t config_size,
		     int debug_build)
{
	struct porthole_config known = { 0 };
	const unsigned char *bytes = (const unsigned char *)config;

	if (!config)
		return start(NULL, debug_build);
	if (config_size < PH_CONFIG_FIRST_END) {
		ph_log(PH_LOG_ERROR,
		       "not started: config_size %zu is smaller than "
		       "any struct porthole_config (%zu bytes)",
		       config_size, (size_t)PH_CONFIG_FIRST_END);
		return PORTHOLE_ERR_INVALID;
	}
	/* A newer header's fields this library cannot honour: refuse rather
	 * than run without what the app asked for. */
	for (size_t i = sizeof(known); i < config_size; i++) {
		if (bytes[i]) {
			ph_log(PH_LOG_ERROR,
			       "not started: the app sets a porthole_config "
			       "field (byte %zu) that libporthole %s does not "
			       "know; link the libporthole its header is from",
			       i, PORTHOLE_VERSION);
			return PORTHOLE_ERR_INVALID;
		}
	}
	/* An older header's shorter struct: the rest keep their defaults. */
	memcpy(&known, config,
	       config_size < sizeof(known) ? config_size : sizeof(known));
	return start(&known, debug_build);
}

PORTHOLE_API enum porthole_status
porthole_start_build(const struct porthole_config *config, int debug_build)
{
	return porthole_start_sized(config, PH_CONFIG_FIRST_END, debug_build);
}

static enum porthole_status start(const struct porthole_config *config,
				  int debug_build)
{
	struct ph_agent *a = &ph_agent;
	struct porthole_config defaults = { 0 };
	enum porthole_status st = PORTHOLE_OK;
	int rc;

	pthread_mutex_lock(&lifecycle);
	/* A writer that stopped on lost descriptors waits for a stop. */
	if (atomic_load(&a->running) || a->server) {
		st = PORTHOLE_ERR_ALREADY_STARTED;
		goto out;
	}
	if (forked_from) {
		ph_log(PH_LOG_ERROR,
		       "not started: this process was forked from pid %d, "
		       "where libporthole runs; a forked child has none of "
		       "its threads and is not served",
		       (int)forked_from);
		st = PORTHOLE_ERR_ALREADY_STARTED;
		goto out;
	}
	if (!allowed(debug_build)) {
		ph_log(PH_LOG_WARN,
		       "not started: this is not a debug build (build with "
		       "-DPORTHOLE_DEBUG_BUILD, or run with PORTHOLE_ENABLE=1)");
		st = PORTHOLE_ERR_NOT_DEBUG;
		goto out;
	}
	a->cfg = config ? *config : defaults;
	if (a->cfg.queue_size & (a->cfg.queue_size - 1)) {
		ph_log(PH_LOG_ERROR,
		       "not started: queue_size %u is not a "
		       "power of two",
		       a->cfg.queue_size);
		st = PORTHOLE_ERR_INVALID;
		goto out;
	}
	a->pid = (int)getpid();
	if (a->cfg.app_id && *a->cfg.app_id)
		snprintf(a->app_id, sizeof(a->app_id), "%s", a->cfg.app_id);
	else
		ph_platform_program_name(a->app_id, sizeof(a->app_id));
	if (a->cfg.socket_name && *a->cfg.socket_name)
		snprintf(a->socket_name, sizeof(a->socket_name), "%s",
			 a->cfg.socket_name);
	else
		snprintf(a->socket_name, sizeof(a->socket_name),
			 "porthole.%.97s", a->app_id);
	snprintf(a->version_name, sizeof(a->version_name), "%s",
		 a->cfg.version_name ? a->cfg.version_name : "");
	/* Strings the caller owns are copied; never keep their pointers. */
	a->cfg.app_id = a->app_id;
	a->cfg.socket_name = a->socket_name;
	a->cfg.version_name = a->version_name;
	a->cfg.data_dir = NULL;
	if (config && config->data_dir)
		a->cfg.data_dir = config->data_dir;
	pick_data_dir(a);
	a->cfg.data_dir = a->data_dir;
	a->refresh_hz = a->cfg.refresh_hz > 0 ? a->cfg.refresh_hz : 60.0;
	a->budget_us = (int64_t)(1e6 / a->refresh_hz);
	a->started_at = ph_clock_uptime_ms();
	atomic_store(&a->next_id, 1);
	/*
	 * The queue is allocated once and kept: an emitter racing with stop
	 * may still be writing into it.  A restart with another size reuses
	 * the first one.
	 */
	if (!a->queue.cells &&
	    ph_queue_init(&a->queue,
			  a->cfg.queue_size ? a->cfg.queue_size : 32768)) {
		st = PORTHOLE_ERR_NOMEM;
		goto out;
	}
	if (!a->lanes.lane) {
		static pthread_once_t once = PTHREAD_ONCE_INIT;

		pthread_once(&once, make_lane_key);
		/* Lanes are a speed-up: without them, events go shared. */
		if (ph_lanes_init(&a->lanes, &a->queue,
				  lane_cells(a->queue.mask + 1)))
			ph_warn("no lanes: every thread uses the shared queue");
	}
	ph_tclock_init(&a->clock, &a->tuner);
	ph_tclock_tune(&a->clock, &a->tuner); /* its first reading */
	ph_startup_init(a);
	{
		static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

		pthread_once(&fork_once, watch_forks);
	}
	/* Descriptors lost under a run that has been stopped are gone;
	 * this run's are new. */
	atomic_store(&a->fds_lost, false);
	rc = ph_server_start(a);
	if (rc) {
		st = rc == PH_ENOMEM ? PORTHOLE_ERR_NOMEM :
		     rc == PH_EAGAIN ? PORTHOLE_ERR_SOCKET :
				       PORTHOLE_ERR_THREAD;
		goto out;
	}
	atomic_store(&a->running, 1);
	if (ph_collectors_start(a)) {
		atomic_store(&a->running, 0);
		ph_server_stop(a);
		st = PORTHOLE_ERR_THREAD;
		goto out;
	}
	announce(a);
	ph_debug("serving @%s", a->socket_name);
out:
	pthread_mutex_unlock(&lifecycle);
	return st;
}

PORTHOLE_API void porthole_stop(void)
{
	struct ph_agent *a = &ph_agent;

	/* Called on the main thread, this is a turn-over: a stall that ran
	 * up to here (the app's teardown after its loop) is closed, with its
	 * length, rather than left ongoing. */
	if (ph_tid() == atomic_load(&a->main_tid))
		ph_watchdog_answer();
	pthread_mutex_lock(&lifecycle);
	/* A writer that stopped on lost descriptors left the collectors
	 * running: `running` is off, the server still there. */
	if (atomic_load(&a->running) || a->server) {
		ph_collectors_stop(a);
		atomic_store(&a->running, 0);
		ph_server_stop(a);
	}
	pthread_mutex_unlock(&lifecycle);
}

PORTHOLE_API const char *porthole_socket_name(void)
{
	return ph_agent_live() ? ph_agent.socket_name : NULL;
}

PORTHOLE_API void porthole_main_loop_register(void)
{
	atomic_store(&ph_agent.main_tid, ph_tid());
	ph_watchdog_main_thread();
	/* The stall clock starts here: a slow start before the loop's first
	 * ping is a stall too. */
	ph_watchdog_answer();
	ph_startup_main_loop_registered();
}

PORTHOLE_API void porthole_main_loop_ping(void)
{
	ph_watchdog_answer();
	ph_startup_on_ping();
}
