/* SPDX-License-Identifier: Apache-2.0 */
/*
 * collector.c: `porthole iotrace record`, the live collector.
 *
 * One thread.  Signals are blocked except inside ppoll(), so a SIGTERM
 * can only land while the collector waits, and is seen right after: there
 * is no window where it is missed and no handler that does more than set
 * a flag.  Every way out goes through the same tail, which drains the
 * pipe, reads ftrace's loss counters and restores tracefs before anything
 * else (writing files can fail; the kernel's state must not depend on it).
 *
 * trace_pipe is read without blocking and, after each drain, the
 * collector sleeps a little (BATCH_NS) so that events arrive in batches:
 * at 10,000 requests a second that is ten wake-ups a second instead of
 * twenty thousand.  The ring buffer (buffer_size_kb per CPU) holds far
 * more than one batch.
 */
#include "ph_common.h"
#include "ph_clock.h"
#include "ph_error.h"
#include "ph_log.h"
#include "iotrace/iotrace.h"
#include "iotrace/rawpipe.h"
#include "iotrace/schema.h"
#include "iotrace/text_reader.h"
#include "iotrace/snapshot.h"
#include "iotrace/tracefs.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#define BATCH_NS ((int64_t)100 * 1000000)
/* A drain that read more than this share of the ring buffer skips the
 * batch wait: events are arriving fast enough to fill it. */
#define BUSY_SHARE 16
/* Binary events younger than this wait for the next drain (see rawpipe.h). */
#define HORIZON_NS ((int64_t)20 * 1000000)
#define MAX_CPUS   1024

static const char *const required[] = {
	"block/block_rq_issue",
	"block/block_rq_complete",
};
static const char optional_insert[] = "block/block_rq_insert";
/* a requeued request is issued again: without this event its second issue
 * would look like a request of its own */
static const char optional_requeue[] = "block/block_rq_requeue";

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* A decoded binary event and when it arrived. */
struct pend {
	struct ph_iot_rec rec;
	uint64_t seq;
};

/* The collector's state, so that one tail can undo all of it. */
struct rec {
	const struct ph_iot_record_opts *o;
	struct ph_iot_tracefs tfs;
	int pipe_fd;
	bool tracing;	       /* events flow into the pipe */
	char reason[2560];     /* why snapshot-only, or "" */
	const char *events[4]; /* enabled */
	size_t n_events;
	struct ph_iot_cpu_loss loss[MAX_CPUS];
	size_t n_loss;
	bool restored;
	struct ph_iot_text_reader reader;
	struct ph_iot_clock clock;
	struct ph_iot_csv ds, proc;
	bool have_ds, have_proc;
	struct ph_iot_ds_sink sink;
	struct ph_iot_task_cache *tasks;
	/* the binary reader */
	bool raw_mode;
	struct ph_iot_raw raw;
	int cpu_fd[MAX_CPUS];
	size_t ncpu;
	struct pend *pend; /* decoded, waiting to be paired in order */
	size_t npend, cappend;
	size_t runs[MAX_CPUS + 2]; /* where pend's sorted runs start */
	size_t nruns;
	uint64_t seq; /* arrivals, to sort stably */
	struct ph_iot_sampler sampler;
	sigset_t orig_mask;
};

static int set_or_say(struct rec *r, const char *rel, const char *v)
{
	if (!ph_iot_tracefs_set(&r->tfs, rel, v))
		return 0;
	snprintf(r->reason, sizeof(r->reason), "cannot write '%s' to %s/%s: %s",
		 v, r->tfs.dir, rel, strerror(errno));
	return PH_EIO;
}

/* Turns block tracing on in r->tfs; on failure r->reason says why. */
static int start_tracing(struct rec *r)
{
	char rel[128], buf[1024], kb[32];

	for (size_t i = 0; i < PH_ARRAY_SIZE(required); i++) {
		snprintf(rel, sizeof(rel), "events/%s/enable", required[i]);
		if (!ph_iot_tracefs_has(&r->tfs, rel)) {
			snprintf(r->reason, sizeof(r->reason),
				 "the block tracepoints are not available "
				 "(%s/events/%s is missing)",
				 r->tfs.dir, required[i]);
			return PH_EUNSUPP;
		}
	}
	if (ph_iot_tracefs_read(&r->tfs, "trace_clock", buf, sizeof(buf)) ||
	    !strstr(buf, "mono")) {
		snprintf(r->reason, sizeof(r->reason),
			 "trace_clock offers no 'mono' clock (%s)", buf);
		return PH_EUNSUPP;
	}
	if (set_or_say(r, "tracing_on", "0") ||
	    set_or_say(r, "trace_clock", "mono"))
		return PH_EIO;
	snprintf(kb, sizeof(kb), "%" PRId64, r->o->buffer_kb);
	if (ph_iot_tracefs_set(&r->tfs, "buffer_size_kb", kb))
		ph_warn("could not set buffer_size_kb to %s (%s); keeping "
			"the default",
			kb, strerror(errno));
	if (!r->o->text) {
		char why[256];

		if (ph_iot_raw_init(&r->raw, &r->tfs, why, sizeof(why)))
			ph_warn("reading trace_pipe text: %s", why);
		else
			r->raw_mode = true;
	}
	/* text: pid = tgid, tid = task in the rows; best effort */
	if (!r->raw_mode &&
	    ph_iot_tracefs_has(&r->tfs, "options/record-tgid") &&
	    ph_iot_tracefs_set(&r->tfs, "options/record-tgid", "1"))
		ph_warn("could not turn on options/record-tgid (%s); pid will "
			"be the issuing task",
			strerror(errno));
	for (size_t i = 0; i < PH_ARRAY_SIZE(required); i++) {
		snprintf(rel, sizeof(rel), "events/%s/enable", required[i]);
		if (set_or_say(r, rel, "1"))
			return PH_EIO;
		r->events[r->n_events++] = required[i];
	}
	snprintf(rel, sizeof(rel), "events/%s/enable", optional_insert);
	if (ph_iot_tracefs_has(&r->tfs, rel) &&
	    !ph_iot_tracefs_set(&r->tfs, rel, "1"))
		r->events[r->n_events++] = optional_insert;
	snprintf(rel, sizeof(rel), "events/%s/enable", optional_requeue);
	if (ph_iot_tracefs_has(&r->tfs, rel) &&
	    !ph_iot_tracefs_set(&r->tfs, rel, "1"))
		r->events[r->n_events++] = optional_requeue;
	if (ph_iot_tracefs_clear(&r->tfs)) {
		snprintf(r->reason, sizeof(r->reason),
			 "cannot clear %s/trace: %s", r->tfs.dir,
			 strerror(errno));
		return PH_EIO;
	}
	if (r->raw_mode) {
		for (size_t cpu = 0; cpu < MAX_CPUS; cpu++) {
			int fd;

			snprintf(rel, sizeof(rel),
				 "per_cpu/cpu%zu/trace_pipe_raw", cpu);
			if (!ph_iot_tracefs_has(&r->tfs, rel))
				break;
			fd = open(ph_iot_tracefs_path(&r->tfs, rel, buf,
						      sizeof(buf)),
				  O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			if (fd < 0) {
				snprintf(r->reason, sizeof(r->reason),
					 "cannot open %s: %s", buf,
					 strerror(errno));
				return PH_EIO;
			}
			r->cpu_fd[r->ncpu++] = fd;
		}
	} else {
		r->pipe_fd = open(ph_iot_tracefs_path(&r->tfs, "trace_pipe",
						      buf, sizeof(buf)),
				  O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (r->pipe_fd < 0) {
			snprintf(r->reason, sizeof(r->reason),
				 "cannot open %s: %s", buf, strerror(errno));
			return PH_EIO;
		}
	}
	if (set_or_say(r, "tracing_on", "1"))
		return PH_EIO;
	r->tracing = true;
	return 0;
}

/* Reads what trace_pipe holds now; 0 when it is empty. */
static int drain_text(struct rec *r, uint64_t *got)
{
	static char buf[64 * 1024];

	for (;;) {
		ssize_t n = read(r->pipe_fd, buf, sizeof(buf));

		if (n > 0) {
			int rc = ph_iot_text_reader_feed(&r->reader, buf,
							 (size_t)n);

			*got += (uint64_t)n;
			if (rc)
				return rc;
			continue;
		}
		if (n == 0 || errno == EAGAIN)
			return 0;
		if (errno == EINTR)
			continue;
		return ph_error(PH_EIO, "read trace_pipe: %s", strerror(errno));
	}
}

static int keep_rec(void *ctx, const struct ph_iot_rec *rec)
{
	struct rec *r = ctx;

	if (r->npend == r->cappend &&
	    PH_GROW(r->pend, r->cappend, r->npend + 1, 4096))
		return PH_ENOMEM;
	r->pend[r->npend].rec = *rec;
	r->pend[r->npend].seq = r->seq++;
	r->npend++;
	return 0;
}

/* Time order; within one nanosecond, the order they were read. */
static bool before(const struct pend *x, const struct pend *y)
{
	return x->rec.ts_ns < y->rec.ts_ns ||
	       (x->rec.ts_ns == y->rec.ts_ns && x->seq < y->seq);
}

/*
 * Puts r->pend in time order.  It is a few sorted runs (what the last
 * drain held back, then each CPU's events), so merging them pairwise is
 * linear per level, where a general sort would compare n log n times.
 */
static int merge_runs(struct rec *r)
{
	struct pend *tmp;
	size_t n = r->npend, nruns = r->nruns;

	if (nruns <= 1)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return PH_ENOMEM;
	r->runs[nruns] = n;
	while (nruns > 1) {
		size_t out = 0, k = 0;

		for (size_t i = 0; i < nruns; i += 2) {
			size_t a = r->runs[i], ae = r->runs[i + 1];
			size_t b = ae,
			       be = i + 2 <= nruns ? r->runs[i + 2] : ae;

			r->runs[k++] = out;
			while (a < ae && b < be)
				tmp[out++] = before(&r->pend[b], &r->pend[a]) ?
						     r->pend[b++] :
						     r->pend[a++];
			while (a < ae)
				tmp[out++] = r->pend[a++];
			while (b < be)
				tmp[out++] = r->pend[b++];
		}
		memcpy(r->pend, tmp, n * sizeof(*tmp));
		nruns = k;
		r->runs[nruns] = n;
	}
	free(tmp);
	r->nruns = 1;
	return 0;
}

/*
 * Reads every CPU's pages now, then pairs, in time order, the events
 * older than the horizon (all of them when final).
 */
static int drain_raw(struct rec *r, uint64_t *got, bool final)
{
	static uint8_t page[1 << 20];
	int64_t horizon = ph_clock_mono_ns() - HORIZON_NS;
	size_t done = 0;
	int rc = 0;

	/* what the last drain held back is one sorted run, each CPU's
	 * events another (perhaps empty) */
	r->nruns = 0;
	if (r->npend)
		r->runs[r->nruns++] = 0;
	for (size_t cpu = 0; cpu < r->ncpu; cpu++) {
		r->runs[r->nruns++] = r->npend;
		for (;;) {
			ssize_t n = read(r->cpu_fd[cpu], page, r->raw.subbuf);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			*got += (uint64_t)n;
			r->reader.st.bytes += (uint64_t)n;
			rc = ph_iot_raw_page(&r->raw, page, (size_t)n,
					     (uint32_t)cpu, keep_rec, r);
			if (rc)
				return rc;
		}
	}
	if (!r->npend)
		return 0;
	if ((rc = merge_runs(r)))
		return rc;
	for (; done < r->npend && !rc; done++) {
		struct ph_iot_rec *e = &r->pend[done].rec;
		int32_t tgid, ppid;

		if (!final && e->ts_ns > horizon)
			break;
		if (e->event == PH_IOT_EV_ISSUE) {
			ph_iot_task_of(r->tasks, e->pid, e->ts_ns, &tgid,
				       &ppid);
			e->tgid = tgid;
		}
		rc = ph_iot_text_reader_record(&r->reader, e);
	}
	memmove(r->pend, r->pend + done, (r->npend - done) * sizeof(*r->pend));
	r->npend -= done;
	return rc;
}

static int drain(struct rec *r, uint64_t *got, bool final)
{
	return r->raw_mode ? drain_raw(r, got, final) : drain_text(r, got);
}

/* "overrun: 12" in a per_cpu stats file. */
static uint64_t stat_value(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static void read_loss(struct rec *r)
{
	char rel[64], buf[1024];

	for (size_t cpu = 0; cpu < MAX_CPUS; cpu++) {
		snprintf(rel, sizeof(rel), "per_cpu/cpu%zu/stats", cpu);
		if (ph_iot_tracefs_read(&r->tfs, rel, buf, sizeof(buf)))
			break;
		r->loss[cpu].overrun = stat_value(buf, "\noverrun:");
		if (!strncmp(buf, "overrun:", 8))
			r->loss[cpu].overrun = stat_value(buf, "overrun:");
		r->loss[cpu].commit_overrun =
			stat_value(buf, "commit overrun:");
		r->loss[cpu].dropped = stat_value(buf, "dropped events:");
		r->loss[cpu].entries = stat_value(buf, "entries:");
		r->loss[cpu].read = stat_value(buf, "read events:");
		r->loss[cpu].have_read = strstr(buf, "read events:") != NULL;
		r->n_loss = cpu + 1;
	}
}

/* Stops tracing, reads the rest and the loss, gives tracefs back. */
static int stop_tracing(struct rec *r)
{
	uint64_t got = 0;
	int rc = 0;

	if (r->tracing) {
		ph_iot_tracefs_set(&r->tfs, "tracing_on", "0");
		rc = drain(r, &got, true);
		read_loss(r);
		r->tracing = false;
	}
	if (r->pipe_fd >= 0) {
		close(r->pipe_fd);
		r->pipe_fd = -1;
	}
	for (size_t cpu = 0; cpu < r->ncpu; cpu++)
		close(r->cpu_fd[cpu]);
	r->ncpu = 0;
	r->restored = !ph_iot_tracefs_restore(&r->tfs);
	return rc;
}

static void install_signals(struct rec *r, struct sigaction old[3])
{
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	sigset_t block;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: ppoll returns */
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (int i = 0; i < 3; i++) {
		sigaction(sigs[i], &sa, &old[i]);
		sigaddset(&block, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &block, &r->orig_mask);
}

static void restore_signals(struct rec *r, struct sigaction old[3])
{
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };

	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	sigprocmask(SIG_SETMASK, &r->orig_mask, NULL);
}

/* Waits up to ns for the pipe (fd >= 0) or a signal. */
static void wait_for(struct rec *r, int fd, int64_t ns)
{
	struct pollfd p = { fd, POLLIN, 0 };
	struct timespec ts;

	if (ns < 0)
		ns = 0;
	ts.tv_sec = (time_t)(ns / 1000000000);
	ts.tv_nsec = (long)(ns % 1000000000);
	ppoll(fd >= 0 ? &p : NULL, fd >= 0 ? 1 : 0, &ts, &r->orig_mask);
}

/*
 * Raises the collector's priority to nice (root may; others keep theirs).
 * A workload that keeps every CPU busy would otherwise starve the one
 * reader of the ring buffer, which then overwrites events: at 130,000
 * events a second on two CPUs saturated by sixteen I/O threads, nice 0
 * lost a third of them and nice -10 none, for about 5 % of a core.
 */
static void raise_priority(int nice)
{
	int now;

	errno = 0;
	now = getpriority(PRIO_PROCESS, 0);
	if (errno || now <= nice)
		return;
	if (setpriority(PRIO_PROCESS, 0, nice))
		ph_info("kept nice %d (could not set %d: %s)", now, nice,
			strerror(errno));
}

static int snapshot(struct rec *r, int64_t now, bool write)
{
	if (!r->have_proc)
		return 0;
	return ph_iot_sampler_take(&r->sampler, now, write ? &r->proc : NULL,
				   &r->clock);
}

static int64_t cpu_time_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
	       ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

static void report(FILE *f, struct rec *r, double secs,
		   const struct ph_iot_manifest *m)
{
	const struct ph_iot_pair_stats *p = &r->reader.pair.st;
	char a[32], b[32], c[32], d[32];
	uint64_t lost = ph_iot_total_lost(m);

	if (r->reason[0])
		fprintf(f, "mode       snapshots only: %s\n", r->reason);
	else
		fprintf(f,
			"recorded   %.1f s: %s requests (%s paired, %s with "
			"no issue), %s events lost\n",
			secs, ph_iot_num(r->ds.rows, a),
			ph_iot_num(p->paired, b), ph_iot_num(p->unmatched, c),
			ph_iot_num(lost, d));
	fprintf(f, "wrote      %s: ", r->o->out_dir);
	if (r->have_ds)
		fprintf(f, "%s ds rows in %s files, ",
			ph_iot_num(r->ds.rows, a), ph_iot_num(r->ds.files, b));
	if (r->have_proc)
		fprintf(f, "%s process snapshots, system_spec/, ",
			ph_iot_num(r->sampler.snapshots, a));
	fprintf(f, "manifest.json\n");
	if (m->tracefs_root)
		fprintf(f, "tracefs    %s (%s%s%s)\n",
			r->restored ?
				"left as it was found" :
				"NOT fully restored: see the errors above",
			m->tracefs_instance ? "used instance " :
					      "used the top level",
			m->tracefs_instance ? m->tracefs_instance : "",
			m->tracefs_mounted ? ", mounted and unmounted" : "");
}

int ph_iot_record(const struct ph_iot_record_opts *o)
{
	struct rec *r = calloc(1, sizeof(*r));
	struct ph_iot_manifest m = { 0 };
	struct sigaction old[3];
	char dir[PATH_MAX + 16], machine[17];
	struct utsname u;
	int64_t start = ph_clock_mono_ns(), now, deadline, next_sample,
		next_snap;
	int64_t cpu0 = cpu_time_ns();
	uint64_t busy;
	bool mounted = false;
	const char *instance = NULL;
	char root[sizeof(r->tfs.root)] = "";
	int rc = 0, rc2;

	if (!r)
		return PH_ENOMEM;
	r->o = o;
	r->pipe_fd = -1;
	stop_signal = 0;
	install_signals(r, old);
	if (o->set_nice)
		raise_priority(o->nice);
	errno = 0;
	m.nice = getpriority(PRIO_PROCESS, 0);
	m.have_nice = errno == 0;
	if ((rc = ph_iot_new_recording_dir(o->out_dir)))
		goto done;
	ph_iot_clock_init(&r->clock, ph_clock_mono_to_real_offset_ns());
	ph_iot_text_reader_init(&r->reader, ph_iot_ds_emit, &r->sink);
	ph_iot_sampler_init(&r->sampler);
	r->tasks = calloc(1, sizeof(*r->tasks));
	if (!r->tasks) {
		rc = PH_ENOMEM;
		goto done;
	}
	r->sink = (struct ph_iot_ds_sink){ &r->clock, &r->ds, ph_iot_ppid_of,
					   r->tasks };

	/* tracefs, or why not */
	if (ph_iot_tracefs_open(&r->tfs, o->tracefs, o->top_level, r->reason,
				sizeof(r->reason)) == 0 &&
	    start_tracing(r)) {
		stop_tracing(r);
		r->n_events = 0;
	}
	snprintf(root, sizeof(root), "%s", r->tfs.root);
	mounted = r->tfs.mounted;
	if (r->tfs.instance[0])
		instance = r->tfs.instance;
	if (r->reason[0])
		ph_warn("block tracing unavailable, recording snapshots only: "
			"%s",
			r->reason);
	else /* also the line that says tracing has begun */
		ph_info("recording block I/O (%s, %s) into %s until %s",
			instance ? instance : "top level",
			r->raw_mode ? "binary" : "text", o->out_dir,
			o->seconds > 0 ? "the time is up or a signal" :
					 "SIGINT or SIGTERM");

	snprintf(dir, sizeof(dir), "%s/ds", o->out_dir);
	if ((rc = ph_iot_mkdirs(dir))) /* there, even when empty */
		goto done;
	if (r->tracing) {
		if ((rc = ph_iot_csv_init(&r->ds, dir, "ds", ph_iot_ds_header,
					  &r->clock, o->compression,
					  o->rotate_bytes)))
			goto done;
		r->have_ds = true;
	}
	if (o->snapshots) {
		snprintf(dir, sizeof(dir), "%s/process", o->out_dir);
		if ((rc = ph_iot_csv_init(&r->proc, dir, "process",
					  ph_iot_process_header, &r->clock,
					  o->compression, 0)))
			goto done;
		r->have_proc = true;
		if ((rc = ph_iot_system_spec(o->out_dir)) ||
		    (rc = snapshot(r, ph_clock_mono_ns(), true)))
			goto done;
	}

	deadline = o->seconds > 0 ? start + (int64_t)(o->seconds * 1e9) :
				    INT64_MAX;
	busy = (uint64_t)(r->ncpu ? r->ncpu : 1) * (uint64_t)o->buffer_kb *
	       1024 / BUSY_SHARE;
	next_sample = start + PH_IOT_CPU_SAMPLE_NS;
	next_snap = start + (int64_t)(o->snapshot_interval * 1e9);
	while (!stop_signal && (now = ph_clock_mono_ns()) < deadline) {
		int64_t until = deadline < next_sample ? deadline : next_sample;

		if (r->tracing) {
			uint64_t got = 0;

			/* the text pipe can be polled; the raw ones wake
			 * only when a whole page is full: just wait */
			if (r->raw_mode)
				wait_for(r, -1,
					 until - now < BATCH_NS ? until - now :
								  BATCH_NS);
			else
				wait_for(r, r->pipe_fd, until - now);
			if ((rc = drain(r, &got, false)))
				goto done;
			/* let the next batch gather, unless the ring
			 * is filling fast */
			now = ph_clock_mono_ns();
			if (got && got < busy && !stop_signal)
				wait_for(r, -1,
					 until - now < BATCH_NS ? until - now :
								  BATCH_NS);
		} else {
			wait_for(r, -1, until - now);
		}
		now = ph_clock_mono_ns();
		if (now >= next_sample && now < deadline) {
			bool write = now >= next_snap;

			if ((rc = snapshot(r, now, write)))
				goto done;
			next_sample = now + PH_IOT_CPU_SAMPLE_NS;
			if (write)
				next_snap =
					now +
					(int64_t)(o->snapshot_interval * 1e9);
		}
	}
	if (stop_signal)
		ph_info("signal %d: stopping", (int)stop_signal);

done:
	/* the kernel first: whatever happened above */
	rc2 = stop_tracing(r);
	rc = rc ? rc : rc2;
	now = ph_clock_mono_ns();
	if (!rc)
		rc = ph_iot_text_reader_end_input(&r->reader);
	if (!rc && r->have_proc)
		rc = snapshot(r, now, true);
	if (r->have_ds && (rc2 = ph_iot_csv_close_file(&r->ds)) && !rc)
		rc = rc2;
	if (!rc) {
		uname(&u);
		ph_iot_machine_id(machine);
		m.mode = r->reason[0] ? "snapshot-only" : "ftrace";
		m.collector = "porthole iotrace record (tracefs)";
		m.reader =
			r->reason[0] ? NULL :
			r->raw_mode  ? "per_cpu/cpuN/trace_pipe_raw (binary)" :
				       "trace_pipe (text)";
		m.raw = r->raw_mode ? &r->raw : NULL;
		m.reason = r->reason[0] ? r->reason : NULL;
		m.machine_id = machine;
		m.kernel_release = u.release;
		m.offset_ns = r->clock.offset_ns;
		m.offset_source = "measured at the start of the recording";
		m.start_mono_ns = start;
		m.end_mono_ns = now;
		m.compression = o->compression;
		m.ds = r->have_ds ? &r->ds : NULL;
		m.process = r->have_proc ? &r->proc : NULL;
		m.text_reader = r->reason[0] ? NULL : &r->reader;
		m.events = r->events;
		m.n_events = r->n_events;
		m.tracefs_root = root[0] ? root : NULL;
		m.tracefs_instance = instance;
		m.tracefs_mounted = mounted;
		m.buffer_size_kb = o->buffer_kb;
		m.restored = r->restored;
		m.loss = r->n_loss ? r->loss : NULL;
		m.n_loss = r->n_loss;
		m.snapshots = r->sampler.snapshots;
		m.self_cpu_ns = cpu0 >= 0 ? cpu_time_ns() - cpu0 : -1;
		rc = ph_iot_manifest_write(o->out_dir, &m);
	}
	if (!rc && o->report)
		report(o->report, r, (double)(now - start) / 1e9, &m);
	if (r->have_ds && (rc2 = ph_iot_csv_release(&r->ds)) && !rc)
		rc = rc2;
	if (r->have_proc && (rc2 = ph_iot_csv_release(&r->proc)) && !rc)
		rc = rc2;
	if (!r->restored && root[0] && !rc)
		rc = PH_EIO;
	ph_iot_text_reader_release(&r->reader);
	ph_iot_sampler_release(&r->sampler);
	free(r->tasks);
	free(r->pend);
	restore_signals(r, old);
	free(r);
	return rc;
}
