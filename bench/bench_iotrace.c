/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_iotrace: the block I/O engine, offline and live.
 *
 *  iotrace_parse_mbps, iotrace_parse_lines_per_s
 *	ftrace text -> paired requests on one core (this thread's CPU
 *	time; wall_mbps beside it is the wall clock's): the fixture
 *	ftrace-block/linux-6.18-virtio-dd-fio.txt copied 64 times into
 *	memory (275 MB), each copy read by its own text reader (one reader over
 *	all copies would carry each copy's last in-flight request into the
 *	next, 64 stale entries of one key, which no real trace has).  Rows
 *	go to a sink that only adds up their latencies.  Best of 3.  "isa"
 *	says which reader ran: "avx2" where the CPU has AVX2 and BMI2 (the
 *	parser chooses it at run time), else "sse2".
 *  iotrace_parse_mbps_sse2
 *	the same with the reader the parser falls back to without AVX2
 *	(x86-64's baseline, SSE2), chosen for the run; only where the CPU
 *	has AVX2 (elsewhere iotrace_parse_mbps is that figure).
 *  iotrace_sscanf_mbps, iotrace_parse_ratio_sscanf
 *	the alternative a user would write: a straightforward line reader
 *	that copies each line out, sscanf()s the ftrace header and the
 *	block_rq_issue / block_rq_complete fields, and pairs them by device
 *	and sector in a hash table, the same rows to the same kind of sum;
 *	8 of the 64 copies, each its own table, CPU time, best of 3.  The
 *	ratio is iotrace_parse_mbps over it (same bytes per copy).
 *  iotrace_csv_gz_lines_per_s, iotrace_csv_zst_lines_per_s
 *	the fixture's 20,000 rows formatted and written as gzip (or zstd)
 *	CSV 50 times over, to files in the bench's directory; CPU time.
 *	Best of 3.
 *  iotrace_cpu_pct_10k_iops
 *	the live collector (`porthole iotrace record`, defaults: snapshots
 *	on) for 10 s while four threads write 4 KiB with O_DIRECT to a file
 *	beside this binary at 10,000 writes/s in all; its user+system CPU
 *	time over the wall time, from wait4().  Needs root and tracefs; says
 *	why and fails when it cannot run.
 *  iotrace_lost_at_100k_events
 *	events the live collector lost while the kernel logged more than
 *	100,000 block events a second: sixteen threads read 4 KiB with
 *	O_DIRECT, as fast as they can for 10 s, from a loop device over a
 *	file in /dev/shm (no disk here does 50,000 requests a second; loop
 *	is a request-based device, so each read is a block_rq_issue and a
 *	block_rq_complete).  The value is ftrace_loss.total_lost; beside it
 *	the kernel's count of events handed to the reader, the collector's
 *	count of events it decoded, and the rows on the loop device against
 *	the reads the threads made.  Fails when the rate stays under 100k.
 *
 * The live figures record with tracefs, machine-wide: each holds
 * /tmp/porthole-tracefs.lock while it runs.
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "ph_clock.h"
#include "ph_arena.h"
#include "ph_json.h"
#include "iotrace/block_parse.h"
#include "iotrace/csv_out.h"
#include "iotrace/ds_read.h"
#include "iotrace/iotrace.h"
#include "iotrace/schema.h"
#include "iotrace/text_reader.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define COPIES	64
#define FIXTURE "ftrace-block/linux-6.18-virtio-dd-fio.txt"

static double now_s(void)
{
	return (double)ph_clock_mono_ns() / 1e9;
}

/* This thread's CPU time: "on one core", whatever else the machine runs
 * (a neighbour's preemption is not counted; its cache traffic still is). */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct sum {
	uint64_t rows, latency;
	struct ph_iot_row *keep; /* the first copy's rows, for the CSV part */
	size_t nkeep, capkeep;
};

static int sink(void *ctx, struct ph_iot_row *row)
{
	struct sum *s = ctx;

	s->rows++;
	s->latency += (uint64_t)row->latency_ns;
	if (s->keep && s->nkeep < s->capkeep)
		s->keep[s->nkeep++] = *row;
	return 0;
}

/* The 1-minute load average: how busy the machine was around a figure. */
static double load1(void)
{
	struct ph_buf b = PH_BUF_INIT(4096);
	double v = ph_buf_read_file(&b, "/proc/loadavg") ? -1 :
							   strtod(b.buf, NULL);

	ph_buf_release(&b);
	return v;
}

static const char *isa_name(enum ph_iot_isa isa)
{
	return isa == PH_IOT_ISA_AVX2 ? "avx2" :
	       isa == PH_IOT_ISA_BASE ? "sse2" :
					"portable";
}

/* The best of three passes over `all` (COPIES copies of fx): CPU and wall
 * seconds, lines read. */
static int parse_passes(const struct ph_buf *fx, const struct ph_buf *all,
			struct sum *s, double *best, double *best_wall,
			uint64_t *lines)
{
	*best = *best_wall = 1e9;
	for (int pass = 0; pass < 3; pass++) {
		double t0 = cpu_s(), w0 = now_s(), t;

		*lines = 0;
		for (int i = 0; i < COPIES; i++) {
			struct ph_iot_text_reader reader;

			ph_iot_text_reader_init(&reader, sink, s);
			if (ph_iot_text_reader_feed(
				    &reader, all->buf + fx->len * i, fx->len) ||
			    ph_iot_text_reader_end_input(&reader)) {
				fprintf(stderr,
					"bench_iotrace: parse failed\n");
				return 1;
			}
			*lines += reader.st.lines;
			ph_iot_text_reader_release(&reader);
			s->keep = NULL; /* keep the first copy's rows only */
		}
		t = cpu_s() - t0;
		*best = t < *best ? t : *best;
		t = now_s() - w0;
		*best_wall = t < *best_wall ? t : *best_wall;
	}
	return 0;
}

/* --- the sscanf reader: the alternative, side by side ------------------ */

#define SS_SLOTS 4096 /* in flight at once: far more than the fixture has */

struct ss_slot {
	uint64_t key; /* dev << 40 ^ sector, + 1; 0: empty */
	double issued;
};

/* One copy's rows by sscanf: issue paired with complete on (dev, sector). */
static uint64_t sscanf_copy(const char *p, size_t n, uint64_t *latency_us)
{
	static struct ss_slot slot[SS_SLOTS];
	const char *end = p + n;
	uint64_t rows = 0;

	memset(slot, 0, sizeof(slot));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		char line[512], event[32], rwbs[16];
		unsigned maj, min, nsec;
		unsigned long long sector;
		double ts;
		const char *paren;

		if (len < sizeof(line) && *p != '#') {
			memcpy(line, p, len);
			line[len] = '\0';
			paren = strstr(line, ") ");
			if (paren &&
			    sscanf(line,
				   "%*s [%*d] %*s %lf: %31[^:]: %u,%u %15s",
				   &ts, event, &maj, &min, rwbs) == 5 &&
			    sscanf(paren + 2, "%llu + %u", &sector, &nsec) ==
				    2) {
				uint64_t key =
					((uint64_t)(maj << 8 | min) << 40 ^
					 sector) +
					1;
				size_t h =
					(size_t)(key * 0x9e3779b97f4a7c15ull >>
						 52);
				bool issue = !strcmp(event, "block_rq_issue");

				while (slot[h].key && slot[h].key != key)
					h = (h + 1) % SS_SLOTS;
				if (issue) {
					slot[h] = (struct ss_slot){ key, ts };
				} else if (slot[h].key == key &&
					   !strcmp(event,
						   "block_rq_complete")) {
					*latency_us +=
						(uint64_t)((ts -
							    slot[h].issued) *
							   1e6);
					rows++;
					/* a tombstone-free delete: reinsert the
					 * run */
					slot[h].key = 0;
					for (size_t j = (h + 1) % SS_SLOTS;
					     slot[j].key;
					     j = (j + 1) % SS_SLOTS) {
						struct ss_slot m = slot[j];
						size_t k =
							(size_t)(m.key * 0x9e3779b97f4a7c15ull >>
								 52);

						slot[j].key = 0;
						while (slot[k].key)
							k = (k + 1) % SS_SLOTS;
						slot[k] = m;
					}
				}
			}
		}
		p += len + 1;
	}
	return rows;
}

/* The sscanf reader's rate on 8 copies, beside ours (ours_mbps, CPU). */
static int bench_sscanf(const struct ph_buf *fx, double ours_mbps,
			uint64_t ours_rows)
{
	double best = 1e9;
	uint64_t rows = 0, latency = 0;

	for (int pass = 0; pass < 3; pass++) {
		double t0 = cpu_s(), t;

		rows = 0;
		for (int i = 0; i < 8; i++)
			rows += sscanf_copy(fx->buf, fx->len, &latency);
		t = cpu_s() - t0;
		best = t < best ? t : best;
	}
	if (!rows) {
		fprintf(stderr, "bench_iotrace: the sscanf reader paired no "
				"rows\n");
		return 1;
	}
	printf("{\"name\":\"iotrace_sscanf_mbps\",\"value\":%.1f,\"unit\":"
	       "\"MB/s\",\"rows_per_copy\":%" PRIu64
	       ",\"ours_rows_per_copy\":%" PRIu64 ",\"latency_sum_us\":%" PRIu64
	       "}\n",
	       (double)fx->len * 8 / best / 1e6, rows / 8, ours_rows, latency);
	printf("{\"name\":\"iotrace_parse_ratio_sscanf\",\"value\":%.1f,"
	       "\"unit\":\"x\",\"note\":\"iotrace_parse_mbps / "
	       "iotrace_sscanf_mbps\"}\n",
	       ours_mbps / ((double)fx->len * 8 / best / 1e6));
	return 0;
}

static int bench_parse(const struct ph_buf *fx, struct sum *s,
		       double *ours_mbps)
{
	struct ph_buf all = PH_BUF_INIT(PH_BUF_NO_CAP);
	enum ph_iot_isa isa = ph_iot_parse_isa();
	double best, best_wall;
	uint64_t lines = 0;

	for (int i = 0; i < COPIES; i++)
		if (ph_buf_add(&all, fx->buf, fx->len)) {
			fprintf(stderr, "bench_iotrace: out of memory\n");
			return 1;
		}
	if (parse_passes(fx, &all, s, &best, &best_wall, &lines))
		return 1;
	printf("{\"name\":\"iotrace_parse_mbps\",\"value\":%.1f,\"unit\":"
	       "\"MB/s\",\"wall_mbps\":%.1f,\"bytes\":%zu,\"rows\":%" PRIu64
	       ",\"isa\":\"%s\",\"load1\":%.2f}\n",
	       (double)all.len / best / 1e6, (double)all.len / best_wall / 1e6,
	       all.len, s->rows / 3, isa_name(isa), load1());
	*ours_mbps = (double)all.len / best / 1e6;
	printf("{\"name\":\"iotrace_parse_lines_per_s\",\"value\":%.0f,"
	       "\"unit\":\"lines/s\",\"lines\":%" PRIu64 "}\n",
	       (double)lines / best, lines);
	if (isa == PH_IOT_ISA_AVX2 && ph_iot_parse_set_isa(PH_IOT_ISA_BASE)) {
		int rc = parse_passes(fx, &all, s, &best, &best_wall, &lines);

		ph_iot_parse_set_isa(isa);
		if (rc)
			return 1;
		printf("{\"name\":\"iotrace_parse_mbps_sse2\",\"value\":%.1f,"
		       "\"unit\":\"MB/s\",\"wall_mbps\":%.1f,\"isa\":\"sse2\","
		       "\"load1\":%.2f}\n",
		       (double)all.len / best / 1e6,
		       (double)all.len / best_wall / 1e6, load1());
	}
	ph_buf_release(&all);
	return 0;
}

static int bench_csv(const struct sum *s, const char *dir,
		     enum ph_iot_compression comp, const char *name)
{
	double best = 1e9;
	uint64_t rows = 0, bytes_in = 0, bytes_out = 0;
	char path[PATH_MAX];
	int rc = 0;

	snprintf(path, sizeof(path), "%s/bench-iotrace-csv.tmp", dir);
	for (int pass = 0; pass < 3 && !rc; pass++) {
		struct ph_iot_csv csv;
		struct ph_iot_clock clock;
		char row[PH_IOT_DS_ROW_MAX];
		double t0, t;

		ph_iot_clock_init(&clock, 1700000000000000000);
		t0 = cpu_s(); /* the writes' system time is this thread's too */
		rc = ph_iot_csv_init(&csv, path, "ds", ph_iot_ds_header, &clock,
				     comp, 0);
		for (int rep = 0; rep < 50 && !rc; rep++)
			for (size_t i = 0; i < s->nkeep && !rc; i++)
				rc = ph_iot_csv_add(
					&csv, row,
					ph_iot_ds_row(&clock, &s->keep[i], row),
					s->keep[i].mono_ns);
		rc = rc ? rc : ph_iot_csv_close_file(&csv);
		t = cpu_s() - t0;
		best = t < best ? t : best;
		rows = csv.rows;
		bytes_in = csv.bytes_in;
		bytes_out = csv.bytes_out;
		ph_iot_csv_release(&csv);
	}
	if (rc) {
		fprintf(stderr, "bench_iotrace: writing CSV failed\n");
		return 1;
	}
	printf("{\"name\":\"%s\",\"value\":%.0f,\"unit\":\"lines/s\","
	       "\"rows\":%" PRIu64 ",\"csv_mb_per_s\":%.1f,\"ratio\":%.2f}\n",
	       name, (double)rows / best, rows, (double)bytes_in / best / 1e6,
	       bytes_out ? (double)bytes_in / (double)bytes_out : 0);
	/* leave nothing behind */
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd) ? 1 : 0;
}

/* --- the live figure ----------------------------------------------------- */

#define LOAD_THREADS 4
#define LOAD_IOPS    10000
#define LOAD_FILE_MB 64

struct load {
	int fd;
	int64_t until;
	uint64_t done;
	unsigned seed;
};

static void *writer(void *arg)
{
	struct load *l = arg;
	int64_t start = ph_clock_mono_ns();
	const int64_t every = (int64_t)1000000000 * LOAD_THREADS / LOAD_IOPS;
	void *buf;

	if (posix_memalign(&buf, 4096, 4096))
		return NULL;
	memset(buf, 0xa5, 4096);
	for (uint64_t i = 0;; i++) {
		int64_t due = start + (int64_t)i * every;
		struct timespec ts = { due / 1000000000, due % 1000000000 };
		off_t off;

		if (due >= l->until)
			break;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		l->seed = l->seed * 1103515245 + 12345;
		off = (off_t)(l->seed % (LOAD_FILE_MB * 256)) * 4096;
		if (pwrite(l->fd, buf, 4096, off) == 4096)
			l->done++;
	}
	free(buf);
	return NULL;
}

/* Held until the process exits: tracefs is machine-wide. */
static int tracefs_lock(void)
{
	static int fd = -1;

	if (fd >= 0)
		return fd;
	fd = open("/tmp/porthole-tracefs.lock", O_RDWR | O_CREAT | O_CLOEXEC,
		  0666);
	if (fd >= 0 && flock(fd, LOCK_EX)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int fail_live(const char *why)
{
	printf("{\"name\":\"iotrace_cpu_pct_10k_iops\",\"value\":null,"
	       "\"unit\":\"%%\",\"error\":\"%s\"}\n",
	       why);
	return 1;
}

static int bench_live(const char *bindir)
{
	char porthole[1100], file[1100], out[1100], cmd[1200];
	struct load l[LOAD_THREADS];
	pthread_t th[LOAD_THREADS];
	struct rusage ru;
	int64_t t0, t1;
	uint64_t done = 0;
	double cpu;
	int fd, status;
	pid_t pid;
	char *zero;

	if (geteuid() != 0)
		return fail_live("needs root (tracefs)");
	if (tracefs_lock() < 0)
		return fail_live("cannot take /tmp/porthole-tracefs.lock");
	snprintf(porthole, sizeof(porthole), "%s/porthole", bindir);
	snprintf(file, sizeof(file), "%s/bench-iotrace-load.tmp", bindir);
	snprintf(out, sizeof(out), "%s/bench-iotrace-rec.tmp", bindir);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	zero = calloc(1, 1 << 20);
	if (fd < 0 || !zero)
		return fail_live("cannot create the load file");
	/* written once through the page cache, so O_DIRECT overwrites it */
	for (int i = 0; i < LOAD_FILE_MB; i++)
		if (write(fd, zero, 1 << 20) != 1 << 20)
			return fail_live("cannot fill the load file");
	fsync(fd);
	close(fd);
	free(zero);
	fd = open(file, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		return fail_live("the load file's filesystem refuses O_DIRECT");

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out);
	if (system(cmd)) /* a killed run's, which record would refuse */
		return fail_live("cannot remove an old recording");
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, 1); /* its report is not a figure */
		setenv("PORTHOLE_LOG", "warn", 1);
		execl(porthole, porthole, "iotrace", "record", "--seconds",
		      "10", "--out", out, (char *)NULL);
		_exit(127);
	}
	usleep(500000); /* let it set tracefs up */
	t0 = ph_clock_mono_ns();
	for (int i = 0; i < LOAD_THREADS; i++) {
		l[i] = (struct load){ fd, t0 + (int64_t)9 * 1000000000, 0,
				      (unsigned)i * 7919 + 1 };
		pthread_create(&th[i], NULL, writer, &l[i]);
	}
	for (int i = 0; i < LOAD_THREADS; i++) {
		pthread_join(th[i], NULL);
		done += l[i].done;
	}
	t1 = ph_clock_mono_ns();
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return fail_live("porthole iotrace record failed");
	close(fd);
	unlink(file);
	cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	printf("{\"name\":\"iotrace_cpu_pct_10k_iops\",\"value\":%.2f,"
	       "\"unit\":\"%%\",\"iops\":%.0f,\"user_s\":%.3f,\"sys_s\":%.3f,"
	       "\"wall_s\":10}\n",
	       cpu / 10 * 100, (double)done / ((double)(t1 - t0) / 1e9),
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out);
	return system(cmd) ? 1 : 0;
}

/* --- zero loss at 100k events/s ------------------------------------------ */

#define RATE_THREADS 16
#define RATE_SECONDS 10
#define RATE_FILE_MB 256

struct reader {
	int fd;
	int64_t until;
	uint64_t done;
	unsigned seed;
};

static void *rate_reader(void *arg)
{
	struct reader *r = arg;
	void *buf;

	if (posix_memalign(&buf, 4096, 4096))
		return NULL;
	while (ph_clock_mono_ns() < r->until) {
		off_t off;

		r->seed = r->seed * 1103515245 + 12345;
		off = (off_t)(r->seed % (RATE_FILE_MB * 256)) * 4096;
		if (pread(r->fd, buf, 4096, off) == 4096)
			r->done++;
	}
	free(buf);
	return NULL;
}

static int fail_rate(const char *why)
{
	printf("{\"name\":\"iotrace_lost_at_100k_events\",\"value\":null,"
	       "\"unit\":\"events\",\"error\":\"%s\"}\n",
	       why);
	return 1;
}

struct loop_rows {
	const char *dev; /* "7:N" */
	uint64_t rows, with_latency;
};

static int count_loop_rows(void *ctx, const struct ph_iot_ds_rec *r)
{
	struct loop_rows *l = ctx;

	if (r->dev_n == strlen(l->dev) && !memcmp(r->dev, l->dev, r->dev_n)) {
		l->rows++;
		l->with_latency += r->latency_ns >= 0;
	}
	return 0;
}

static int64_t manifest_int(const struct ph_json *m, const char *a,
			    const char *b)
{
	int64_t v = -1;

	if (!ph_json_as_int(ph_json_get(b ? ph_json_get(m, a) : m, b ? b : a),
			    &v))
		return -1;
	return v;
}

static int bench_rate(const char *bindir)
{
	char porthole[1100], back[] = "/dev/shm/porthole-bench-rate-XXXXXX";
	char out[1100], cmd[1300], loop[64] = "", devno[32];
	struct reader rd[RATE_THREADS];
	pthread_t th[RATE_THREADS];
	struct loop_rows lr = { devno, 0, 0 };
	struct ph_iot_ds_stats st = { 0 };
	struct ph_buf mb = PH_BUF_INIT(64 << 20);
	struct ph_arena ar;
	struct ph_json *m = NULL;
	struct stat sb;
	uint64_t reads = 0;
	int64_t t0, t1, lost, kread, decoded, issues, completes;
	double secs, rate, cpu_ms;
	int fd, status, rc = 1;
	FILE *p;
	pid_t pid;

	if (geteuid() != 0)
		return fail_rate("needs root (tracefs, loop devices)");
	if (tracefs_lock() < 0)
		return fail_rate("cannot take /tmp/porthole-tracefs.lock");
	fd = mkstemp(back);
	if (fd < 0 || ftruncate(fd, (off_t)RATE_FILE_MB << 20)) {
		if (fd >= 0)
			unlink(back);
		return fail_rate("cannot make a file in /dev/shm");
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "losetup -f --show '%s' 2>/dev/null", back);
	p = popen(cmd, "r");
	if (!p || !fgets(loop, sizeof(loop), p)) {
		if (p)
			pclose(p);
		unlink(back);
		return fail_rate("cannot set up a loop device (losetup)");
	}
	pclose(p);
	loop[strcspn(loop, "\n")] = '\0';
	ph_arena_init(&ar, PH_ARENA_DEFAULT_BLOCK, 64 << 20);
	fd = open(loop, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb)) {
		fail_rate("cannot open the loop device with O_DIRECT");
		goto out;
	}
	snprintf(devno, sizeof(devno), "%u:%u", major(sb.st_rdev),
		 minor(sb.st_rdev));
	snprintf(porthole, sizeof(porthole), "%s/porthole", bindir);
	snprintf(out, sizeof(out), "%s/bench-iotrace-rate.tmp", bindir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out);
	if (system(cmd)) {
		fail_rate("cannot remove an old recording");
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, 1);
		setenv("PORTHOLE_LOG", "warn", 1);
		execl(porthole, porthole, "iotrace", "record", "--seconds",
		      "12", "--no-snapshots", "--out", out, (char *)NULL);
		_exit(127);
	}
	usleep(1000000); /* let it set tracefs up */
	t0 = ph_clock_mono_ns();
	for (int i = 0; i < RATE_THREADS; i++) {
		rd[i] = (struct reader){ fd,
					 t0 + (int64_t)RATE_SECONDS *
							 1000000000,
					 0, (unsigned)i * 7919 + 1 };
		pthread_create(&th[i], NULL, rate_reader, &rd[i]);
	}
	for (int i = 0; i < RATE_THREADS; i++) {
		pthread_join(th[i], NULL);
		reads += rd[i].done;
	}
	t1 = ph_clock_mono_ns();
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fail_rate("porthole iotrace record failed");
		goto out;
	}
	snprintf(cmd, sizeof(cmd), "%s/manifest.json", out);
	if (ph_buf_read_file(&mb, cmd) ||
	    ph_json_parse(&ar, mb.buf, mb.len, &m, NULL) ||
	    ph_iot_ds_read(out, count_loop_rows, &lr, &st)) {
		fail_rate("cannot read the recording back");
		goto out;
	}
	lost = manifest_int(m, "ftrace_loss", "total_lost");
	kread = manifest_int(m, "ftrace_loss", "kernel_read_events");
	decoded = manifest_int(m, "ftrace_loss", "events_decoded");
	issues = manifest_int(ph_json_get(m, "parse"), "block_events",
			      "block_rq_issue");
	completes = manifest_int(ph_json_get(m, "parse"), "block_events",
				 "block_rq_complete");
	cpu_ms = 0;
	ph_json_as_double(ph_json_get(m, "collector_cpu_ms"), &cpu_ms);
	secs = (double)(t1 - t0) / 1e9;
	/* the loop device's requests alone: an issue and a completion each */
	rate = (double)lr.rows * 2 / secs;
	if (rate < 100000) {
		char why[160];

		snprintf(why, sizeof(why),
			 "only %.0f block events/s on this machine (%" PRIu64
			 " reads in %.1f s)",
			 rate, reads, secs);
		fail_rate(why);
		goto out;
	}
	printf("{\"name\":\"iotrace_lost_at_100k_events\",\"value\":%" PRId64
	       ",\"unit\":\"events\",\"events_per_s\":%.0f,"
	       "\"reads\":%" PRIu64 ",\"rows_on_loop\":%" PRIu64
	       ",\"rows_with_latency\":%" PRIu64 ",\"block_rq_issue\":%" PRId64
	       ",\"block_rq_complete\":%" PRId64
	       ",\"kernel_read_events\":%" PRId64 ",\"events_decoded\":%" PRId64
	       ",\"collector_cpu_pct\":%.2f,\"seconds\":%.2f}\n",
	       lost, rate, reads, lr.rows, lr.with_latency, issues, completes,
	       kread, decoded, cpu_ms / 12000 * 100, secs);
	rc = lost == 0 && kread == decoded && lr.rows == reads ? 0 : 1;
out:
	if (fd >= 0)
		close(fd);
	snprintf(cmd, sizeof(cmd), "losetup -d '%s'; rm -rf '%s'", loop, out);
	if (system(cmd))
		rc = 1;
	unlink(back);
	ph_arena_release(&ar);
	ph_buf_release(&mb);
	return rc;
}

int main(int argc, char **argv)
{
	struct ph_buf fx = PH_BUF_INIT(PH_BUF_NO_CAP);
	const char *root = getenv("PORTHOLE_FIXTURES");
	char path[PATH_MAX], bindir[1024];
	struct sum s = { 0 };
	double ours_mbps = 0;
	ssize_t n = readlink("/proc/self/exe", bindir, sizeof(bindir) - 1);
	int rc = 0;

	(void)argc;
	(void)argv;
	if (n <= 0)
		return 1;
	bindir[n] = '\0';
	*strrchr(bindir, '/') = '\0';
	snprintf(path, sizeof(path), "%s/%s",
		 root ? root : "../shared/fixtures", FIXTURE);
	if (ph_buf_read_file(&fx, path)) {
		fprintf(stderr, "bench_iotrace: cannot read %s\n", path);
		return 1;
	}
	s.capkeep = 20000;
	s.keep = calloc(s.capkeep, sizeof(*s.keep));
	struct ph_iot_row *rows = s.keep;

	rc |= bench_parse(&fx, &s, &ours_mbps);
	s.keep = rows;
	if (!rc)
		rc |= bench_sscanf(&fx, ours_mbps, (uint64_t)s.nkeep);
	rc |= bench_csv(&s, bindir, PH_IOT_GZIP, "iotrace_csv_gz_lines_per_s");
	rc |= bench_csv(&s, bindir, PH_IOT_ZSTD, "iotrace_csv_zst_lines_per_s");
	rc |= bench_live(bindir);
	rc |= bench_rate(bindir);
	free(rows);
	ph_buf_release(&fx);
	return rc;
}
