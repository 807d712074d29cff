/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snapshot.c: process snapshots with CPU over intervals, the system spec,
 * and the ppid cache; see snapshot.h.
 */
#include "ph_common.h"
#include "ph_buf.h"
#include "ph_clock.h"
#include "ph_error.h"
#include "ph_json.h"
#include "iotrace/schema.h"
#include "iotrace/snapshot.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* The longest /proc/PID/cmdline kept in a row. */
#define CMDLINE_MAX 4096
/* How long readings are kept: the longest window and one sample more. */
#define KEEP_NS ((int64_t)3600 * 1000000000 + PH_IOT_CPU_SAMPLE_NS)

/* One process in one reading. */
struct sample {
	int32_t pid;
	uint64_t start; /* starttime, clock ticks since boot */
	uint64_t ticks; /* utime + stime */
};

/* All processes at one time, sorted by pid. */
struct ph_iot_frame {
	int64_t mono_ns;
	int64_t boot_ns;
	struct sample *s;
	size_t n;
};

static int64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ph_iot_sampler_init(struct ph_iot_sampler *s)
{
	struct timespec rt;

	memset(s, 0, sizeof(*s));
	s->hz = sysconf(_SC_CLK_TCK);
	if (s->hz <= 0)
		s->hz = 100;
	s->page_kb = sysconf(_SC_PAGESIZE) / 1024;
	if (s->page_kb <= 0)
		s->page_kb = 4;
	clock_gettime(CLOCK_REALTIME, &rt);
	s->boot_to_real =
		(int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec - boot_ns();
}

void ph_iot_sampler_release(struct ph_iot_sampler *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->frames[(s->head + i) % s->cap].s);
	free(s->frames);
	memset(s, 0, sizeof(*s));
}

static struct ph_iot_frame *frame_at(struct ph_iot_sampler *s, size_t i)
{
	return &s->frames[(s->head + i) % s->cap];
}

/* What /proc/PID/stat says that a snapshot uses. */
struct stat_line {
	char comm[64];
	size_t comm_len;
	char state;
	int32_t ppid;
	uint64_t ticks, start, vsize, rss;
};

static int read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

/* Fields are counted from 1 as proc(5) does; 3 (state) follows the comm. */
static bool parse_stat(const char *buf, struct stat_line *st)
{
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	const char *p;
	uint64_t f[53] = { 0 };
	int field = 3;

	if (!open || !close || close < open || close[1] != ' ')
		return false;
	st->comm_len = (size_t)(close - open - 1);
	if (st->comm_len >= sizeof(st->comm))
		st->comm_len = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, st->comm_len);
	p = close + 2;
	st->state = *p;
	for (p += 1; *p && field < 52;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		field++;
		bool neg = *p == '-';

		p += neg;
		while (*p >= '0' && *p <= '9')
			f[field] = f[field] * 10 + (uint64_t)(*p++ - '0');
		if (neg)
			f[field] = 0;
		while (*p && *p != ' ')
			p++;
	}
	if (field < 24)
		return false;
	st->ppid = (int32_t)f[4];
	st->ticks = f[14] + f[15];
	st->start = f[22];
	st->vsize = f[23];
	st->rss = f[24];
	return true;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static const struct sample *find(const struct ph_iot_frame *f, int32_t pid)
{
	struct sample key = { .pid = pid };

	return f->n ? bsearch(&key, f->s, f->n, sizeof(key), cmp_sample) : NULL;
}

/*
 * CPU percent of one CPU over the window, or -1 when nothing was seen:
 * the reading nearest `window` ago (or the oldest one), compared with now.
 */
static double cpu_pct(struct ph_iot_sampler *s, const struct ph_iot_frame *now,
		      const struct sample *p, int64_t window)
{
	const struct ph_iot_frame *base = NULL;
	const struct sample *b;
	double secs, used;

	for (size_t i = s->n; i-- > 0;) {
		const struct ph_iot_frame *f = frame_at(s, i);

		if (f->mono_ns <= now->mono_ns - window) {
			base = f;
			break;
		}
	}
	if (!base && s->n)
		base = frame_at(s, 0);
	if (!base)
		return -1;
	b = find(base, p->pid);
	if (b && b->start == p->start) {
		secs = (double)(now->mono_ns - base->mono_ns) / 1e9;
		used = (double)(p->ticks - b->ticks) / (double)s->hz;
	} else {
		/* younger than the reading: since its start */
		double start = (double)p->start / (double)s->hz;

		if (start * 1e9 < (double)base->boot_ns)
			return -1; /* missed by that reading: unknown */
		secs = (double)now->boot_ns / 1e9 - start;
		used = (double)p->ticks / (double)s->hz;
	}
	if (secs < 0.01)
		return -1;
	return used / secs * 100;
}

static const char *status_name(char state)
{
	switch (state) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk-sleep";
	case 'Z': return "zombie";
	case 'T': return "stopped";
	case 't': return "tracing-stop";
	case 'X':
	case 'x': return "dead";
	case 'I': return "idle";
	case 'K': return "wake-kill";
	case 'W': return "waking";
	case 'P': return "parked";
	default: return "unknown";
	}
}

static int row(struct ph_iot_sampler *s, const struct ph_iot_frame *now,
	       const struct sample *p, const struct stat_line *st,
	       struct ph_iot_csv *csv, struct ph_iot_clock *clock,
	       struct ph_buf *b)
{
	static const int64_t windows[3] = { (int64_t)5 * 1000000000,
					    (int64_t)120 * 1000000000,
					    (int64_t)3600 * 1000000000 };
	char path[64], cmd[CMDLINE_MAX + 1], ts[32];
	char field[CMDLINE_MAX * 3 + 8]; /* quoted, U+FFFD for bad bytes */
	struct ph_iot_clock epoch;
	int n, rc;

	ph_buf_reset(b);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p->pid);
	n = read_small(path, cmd, sizeof(cmd));
	while (n > 0 && (cmd[n - 1] == '\0' || cmd[n - 1] == ' '))
		n--;
	for (int i = 0; i < n; i++)
		if (cmd[i] == '\0' || cmd[i] == '\n')
			cmd[i] = ' ';
	ph_iot_clock_init(&epoch, 0);
	rc = ph_buf_add(b, ts, ph_iot_clock_format(clock, now->mono_ns, ts));
	rc = rc ? rc : ph_buf_addf(b, ",%d,", (int)p->pid);
	rc = rc ? rc :
		  ph_buf_add(b, field,
			     ph_iot_csv_field(field, st->comm, st->comm_len));
	rc = rc ? rc : ph_buf_addch(b, ',');
	if (n > 0)
		rc = rc ? rc :
			  ph_buf_add(b, field,
				     ph_iot_csv_field(field, cmd, (size_t)n));
	else
		rc = rc ? rc :
			  ph_buf_add(b, field,
				     ph_iot_csv_field(field, st->comm,
						      st->comm_len));
	rc = rc ? rc :
		  ph_buf_addf(b, ",%.1f,%.1f,", (double)st->vsize / 1024,
			      (double)(st->rss * (uint64_t)s->page_kb));
	rc = rc ? rc :
		  ph_buf_add(b, ts,
			     ph_iot_clock_format(
				     &epoch,
				     s->boot_to_real +
					     (int64_t)(p->start * 1000000000 /
						       (uint64_t)s->hz),
				     ts));
	for (int i = 0; i < 3 && !rc; i++) {
		double pct = cpu_pct(s, now, p, windows[i]);

		rc = pct < 0 ? ph_buf_addch(b, ',') :
			       ph_buf_addf(b, ",%.1f", pct);
	}
	rc = rc ? rc :
		  ph_buf_addf(b, ",%s,%" PRId64 "\n", status_name(st->state),
			      now->mono_ns);
	if (rc)
		return rc;
	return ph_iot_csv_add(csv, b->buf, b->len, now->mono_ns);
}

/* Drops readings no window reaches any more. */
static void trim(struct ph_iot_sampler *s, int64_t now)
{
	while (s->n > 1 && frame_at(s, 1)->mono_ns <= now - KEEP_NS) {
		free(frame_at(s, 0)->s);
		s->head = (s->head + 1) % s->cap;
		s->n--;
	}
}

static int push(struct ph_iot_sampler *s, struct ph_iot_frame *f)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct ph_iot_frame *nf = malloc(cap * sizeof(*nf));

		if (!nf)
			return PH_ENOMEM;
		for (size_t i = 0; i < s->n; i++)
			nf[i] = *frame_at(s, i);
		free(s->frames);
		s->frames = nf;
		s->cap = cap;
		s->head = 0;
	}
	*frame_at(s, s->n++) = *f;
	return 0;
}

/* One process as read now: its sample and what a row needs. */
struct proc {
	struct sample s;
	struct stat_line st;
};

static int cmp_proc(const void *a, const void *b)
{
	return cmp_sample(&((const struct proc *)a)->s,
			  &((const struct proc *)b)->s);
}

int ph_iot_sampler_take(struct ph_iot_sampler *s, int64_t mono_ns,
			struct ph_iot_csv *csv, struct ph_iot_clock *clock)
{
	struct ph_iot_frame f = { mono_ns, boot_ns(), NULL, 0 };
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct proc *procs = NULL;
	size_t n = 0, cap = 0;
	struct dirent *d;
	DIR *dp = opendir("/proc");
	int rc = 0;

	if (!dp)
		return ph_error(PH_EIO, "opendir /proc: %s", strerror(errno));
	while ((d = readdir(dp))) {
		char path[64], buf[1024];
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (n == cap && PH_GROW(procs, cap, n + 1, 256)) {
			rc = PH_ENOMEM;
			break;
		}
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (read_small(path, buf, sizeof(buf)) <= 0 ||
		    !parse_stat(buf, &procs[n].st))
			continue; /* gone meanwhile */
		procs[n].s.pid = (int32_t)pid;
		procs[n].s.start = procs[n].st.start;
		procs[n].s.ticks = procs[n].st.ticks;
		n++;
	}
	closedir(dp);
	if (!rc && n) {
		qsort(procs, n, sizeof(*procs), cmp_proc);
		f.s = malloc(n * sizeof(*f.s));
		if (!f.s)
			rc = PH_ENOMEM;
		for (size_t i = 0; !rc && i < n; i++)
			f.s[i] = procs[i].s;
		f.n = f.s ? n : 0;
	}
	for (size_t i = 0; csv && !rc && i < n; i++)
		rc = row(s, &f, &procs[i].s, &procs[i].st, csv, clock, &b);
	if (csv && !rc) {
		rc = ph_iot_csv_close_file(csv); /* one snapshot, one file */
		s->snapshots++;
	}
	free(procs);
	ph_buf_release(&b);
	if (rc || (rc = push(s, &f))) {
		free(f.s);
		return rc;
	}
	trim(s, mono_ns);
	return 0;
}

/* "Tgid:\t1977" in a status file; -1 if absent. */
static int32_t status_field(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	long v;

	if (!p)
		return -1;
	v = strtol(p + strlen(key), NULL, 10);
	return v >= 0 && v <= INT32_MAX ? (int32_t)v : -1;
}

void ph_iot_task_of(struct ph_iot_task_cache *c, int32_t tid, int64_t now,
		    int32_t *tgid, int32_t *ppid)
{
	size_t i = (uint32_t)tid % PH_ARRAY_SIZE(c->slot);
	char path[64], buf[4096];

	if (!c->slot[i].at || c->slot[i].tid != tid ||
	    now - c->slot[i].at >= PH_IOT_TASK_TTL_NS || now < c->slot[i].at) {
		snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
		c->slot[i].tid = tid;
		c->slot[i].at = now ? now : 1;
		if (tid > 0 && read_small(path, buf, sizeof(buf)) > 0) {
			c->slot[i].tgid = status_field(buf, "\nTgid:");
			c->slot[i].ppid = status_field(buf, "\nPPid:");
		} else {
			c->slot[i].tgid = c->slot[i].ppid = -1;
		}
	}
	*tgid = c->slot[i].tgid;
	*ppid = c->slot[i].ppid;
}

int32_t ph_iot_ppid_of(void *cache, int32_t pid, int64_t now)
{
	int32_t tgid, ppid;

	ph_iot_task_of(cache, pid, now, &tgid, &ppid);
	return ppid;
}

/* --- system spec ---------------------------------------------------------- */

/* The value after "key" and ':' on a line of buf, trimmed, in out. */
static bool kv(const char *buf, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key);

	for (const char *l = buf; l && *l;
	     l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *p = l, *e;

		if (strncmp(p, key, kl))
			continue;
		p += kl;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ':')
			continue;
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		e = p + strcspn(p, "\n");
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		snprintf(out, size, "%.*s", (int)(e - p), p);
		return true;
	}
	return false;
}

static int64_t kb(const char *buf, const char *key)
{
	char v[64];

	return kv(buf, key, v, sizeof(v)) ? strtoll(v, NULL, 10) : -1;
}

static int write_json(const char *dir, const char *name, struct ph_buf *b)
{
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	char path[PATH_MAX + 64];
	int rc = ph_iot_json_pretty(b, &out);

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!rc)
		rc = ph_iot_write_file(path, out.buf, out.len);
	ph_buf_release(&out);
	ph_buf_reset(b);
	return rc;
}

static void cpu_info(struct ph_jw *w, const struct utsname *u)
{
	struct ph_buf b = PH_BUF_INIT(16 << 20);
	char v[256];
	int64_t logical = 0;
	uint64_t cores[512];
	size_t ncores = 0;

	if (ph_buf_read_file(&b, "/proc/cpuinfo"))
		ph_buf_reset(&b);
	ph_jw_obj_begin(w);
	ph_jw_key(w, "brand");
	if (kv(b.buf, "model name", v, sizeof(v)) ||
	    kv(b.buf, "Hardware", v, sizeof(v)))
		ph_jw_str(w, v);
	else
		ph_jw_null(w);
	/* count processors, and distinct (physical id, core id) pairs */
	for (const char *l = strstr(b.buf, "processor"); l;
	     l = strstr(l + 1, "\nprocessor")) {
		const char *next = strstr(l + 1, "\nprocessor");
		int64_t phys = -1, core = -1;
		char block[4096];

		logical++;
		snprintf(block, sizeof(block), "%.*s",
			 (int)(next ? next - l : (ptrdiff_t)strlen(l)), l);
		if (kv(block, "physical id", v, sizeof(v)))
			phys = strtoll(v, NULL, 10);
		if (kv(block, "core id", v, sizeof(v)))
			core = strtoll(v, NULL, 10);
		if (phys >= 0 && core >= 0) {
			uint64_t k = (uint64_t)phys << 32 | (uint64_t)core;
			size_t i;

			for (i = 0; i < ncores && cores[i] != k; i++)
				;
			if (i == ncores && ncores < PH_ARRAY_SIZE(cores))
				cores[ncores++] = k;
		}
	}
	ph_jw_kv_int(w, "cores_logical",
		     logical ? logical : sysconf(_SC_NPROCESSORS_CONF));
	ph_jw_key(w, "cores_physical");
	if (ncores)
		ph_jw_int(w, (int64_t)ncores);
	else
		ph_jw_null(w);
	ph_jw_kv_str(w, "machine", u->machine);
	ph_jw_key(w, "mhz");
	if (kv(b.buf, "cpu MHz", v, sizeof(v)))
		ph_jw_double(w, strtod(v, NULL));
	else
		ph_jw_null(w);
	ph_jw_obj_end(w);
	ph_buf_release(&b);
}

static void memory_info(struct ph_jw *w)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	int64_t total, avail;

	if (ph_buf_read_file(&b, "/proc/meminfo"))
		ph_buf_reset(&b);
	total = kb(b.buf, "MemTotal");
	avail = kb(b.buf, "MemAvailable");
	ph_jw_obj_begin(w);
	ph_jw_kv_int(w, "total_bytes", total * 1024);
	ph_jw_kv_int(w, "available_bytes", avail * 1024);
	ph_jw_kv_double(w, "total_gb",
			(double)(int64_t)((double)total / 1048576 * 100 + 0.5) /
				100);
	ph_jw_kv_double(w, "available_gb",
			(double)(int64_t)((double)avail / 1048576 * 100 + 0.5) /
				100);
	ph_jw_kv_int(w, "swap_total_bytes", kb(b.buf, "SwapTotal") * 1024);
	ph_jw_kv_int(w, "swap_free_bytes", kb(b.buf, "SwapFree") * 1024);
	ph_jw_obj_end(w);
	ph_buf_release(&b);
}

/* /proc/mounts escapes ' ', '\t', '\n' and '\\' as \ooo. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] &&
		    s[3]) {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static void trimmed(const char *path, char *buf, size_t size)
{
	int n = read_small(path, buf, size);

	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (n < 0)
		buf[0] = '\0';
}

static void disk_info(struct ph_jw *w)
{
	FILE *f = fopen("/proc/mounts", "re");
	char line[4096];
	DIR *dp;
	struct dirent *d;

	ph_jw_obj_begin(w);
	ph_jw_key(w, "partitions");
	ph_jw_arr_begin(w);
	while (f && fgets(line, sizeof(line), f)) {
		char *dev = line, *mnt, *fs, *e;
		struct statvfs sv;

		/* DEVICE MOUNTPOINT FSTYPE OPTIONS ... */
		if (!(mnt = strchr(dev, ' ')) || !(fs = strchr(mnt + 1, ' ')))
			continue;
		*mnt++ = '\0';
		*fs++ = '\0';
		if ((e = strchr(fs, ' ')))
			*e = '\0';
		if (strncmp(dev, "/dev/", 5))
			continue;
		unescape(dev);
		unescape(mnt);
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "device", dev);
		ph_jw_kv_str(w, "mountpoint", mnt);
		ph_jw_kv_str(w, "fstype", fs);
		if (!statvfs(mnt, &sv)) {
			ph_jw_kv_int(w, "total_bytes",
				     (int64_t)(sv.f_blocks * sv.f_frsize));
			ph_jw_kv_int(w, "free_bytes",
				     (int64_t)(sv.f_bavail * sv.f_frsize));
		}
		ph_jw_obj_end(w);
	}
	if (f)
		fclose(f);
	ph_jw_arr_end(w);
	ph_jw_key(w, "block_devices");
	ph_jw_arr_begin(w);
	dp = opendir("/sys/block");
	while (dp && (d = readdir(dp))) {
		char p[600], v[256], *l, *r;

		if (d->d_name[0] == '.')
			continue;
		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "name", d->d_name);
		snprintf(p, sizeof(p), "/sys/block/%s/dev", d->d_name);
		trimmed(p, v, sizeof(v));
		ph_jw_kv_str(w, "device", v);
		snprintf(p, sizeof(p), "/sys/block/%s/size", d->d_name);
		trimmed(p, v, sizeof(v));
		ph_jw_kv_int(w, "size_bytes", strtoll(v, NULL, 10) * 512);
		snprintf(p, sizeof(p), "/sys/block/%s/queue/rotational",
			 d->d_name);
		trimmed(p, v, sizeof(v));
		ph_jw_kv_bool(w, "rotational", v[0] == '1');
		snprintf(p, sizeof(p), "/sys/block/%s/queue/scheduler",
			 d->d_name);
		trimmed(p, v, sizeof(v));
		l = strchr(v, '[');
		r = l ? strchr(l, ']') : NULL;
		ph_jw_key(w, "scheduler");
		if (l && r)
			ph_jw_strn(w, l + 1, (size_t)(r - l - 1));
		else if (v[0])
			ph_jw_str(w, v);
		else
			ph_jw_null(w);
		snprintf(p, sizeof(p), "/sys/block/%s/device/model", d->d_name);
		trimmed(p, v, sizeof(v));
		if (v[0])
			ph_jw_kv_str(w, "model", v);
		ph_jw_obj_end(w);
	}
	if (dp)
		closedir(dp);
	ph_jw_arr_end(w);
	ph_jw_obj_end(w);
}

static void os_info(struct ph_jw *w, const struct utsname *u)
{
	struct ph_buf b = PH_BUF_INIT(1 << 20);
	const char *p;
	char v[256];

	ph_jw_obj_begin(w);
	ph_jw_kv_str(w, "system", u->sysname);
	ph_jw_kv_str(w, "kernel_release", u->release);
	ph_jw_kv_str(w, "kernel_version", u->version);
	ph_jw_kv_str(w, "machine", u->machine);
	ph_jw_key(w, "distribution");
	if (!ph_buf_read_file(&b, "/etc/os-release") &&
	    (p = strstr(b.buf, "PRETTY_NAME="))) {
		/* PRETTY_NAME="Debian GNU/Linux 12 (bookworm)" */
		p += 12;
		p += *p == '"';
		snprintf(v, sizeof(v), "%.*s", (int)strcspn(p, "\"\n"), p);
		ph_jw_str(w, v);
	} else {
		ph_jw_null(w);
	}
	ph_jw_obj_end(w);
	ph_buf_release(&b);
}

int ph_iot_system_spec(const char *dir)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	char sd[PATH_MAX];
	struct utsname u;
	struct ph_jw w;
	int rc;

	snprintf(sd, sizeof(sd), "%s/system_spec", dir);
	if ((rc = ph_iot_mkdirs(sd)))
		return rc;
	uname(&u);
	ph_jw_init(&w, &b);
	cpu_info(&w, &u);
	rc = ph_jw_finish(&w) ? PH_ENOMEM : write_json(sd, "cpu_info.json", &b);
	ph_jw_init(&w, &b);
	memory_info(&w);
	rc = rc		      ? rc :
	     ph_jw_finish(&w) ? PH_ENOMEM :
				write_json(sd, "memory_info.json", &b);
	ph_jw_init(&w, &b);
	disk_info(&w);
	rc = rc		      ? rc :
	     ph_jw_finish(&w) ? PH_ENOMEM :
				write_json(sd, "disk_info.json", &b);
	ph_jw_init(&w, &b);
	os_info(&w, &u);
	rc = rc		      ? rc :
	     ph_jw_finish(&w) ? PH_ENOMEM :
				write_json(sd, "os_info.json", &b);
	ph_buf_release(&b);
	return rc;
}
