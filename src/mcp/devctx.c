/* SPDX-License-Identifier: Apache-2.0 */
/*
 * devctx.c: the device's context, read from what `adb shell` printed
 * (system_context on a device; mcp.h).
 *
 * Each reader takes one command's output as it came (stdout and stderr
 * together, any bytes, not NUL-terminated) and keeps the lines it
 * understands; a line it does not understand is skipped, so an error
 * message or a vendor's extra section costs nothing.  Each returns how
 * many items it kept: 0 means the reading said nothing usable, and the
 * tool then shows that output instead of a value.
 *
 * The formats, as Android prints them:
 *   dumpsys thermalservice   "Thermal Status: N", then sections whose
 *       header is unindented and whose lines are indented;
 *       "Current temperatures from HAL:" (else "Cached temperatures:")
 *       holds "Temperature{mValue=52.6, mType=0, mName=BIG, mStatus=0}".
 *   grep -H . /sys/devices/system/cpu/cpu[0-9]* /cpufreq/FILE...
 *       "/sys/devices/system/cpu/cpu3/cpufreq/scaling_cur_freq:1803000";
 *       an offline CPU has no cpufreq directory, so no line.
 *   top -b -n 1 -m 6 (toybox)   a few summary lines, then the column
 *       header ("  PID USER ... S[%CPU] %MEM TIME+ ARGS": brackets mark
 *       the sort column and split nothing in the rows), then one row per
 *       process; the command is the last column.
 *   cat /proc/loadavg /proc/meminfo /proc/pressure/memory
 *       "2.31 2.05 1.87 3/2146 9812", "MemTotal: 7628268 kB", ...,
 *       "some avg10=0.84 avg60=1.02 avg300=0.77 total=152349786".
 */
#include "ph_common.h"
#include "mcp.h"

/* The next line of s[0..n) from *at, without its '\n'; false at the end. */
static bool next_line(const char *s, size_t n, size_t *at, const char **l,
		      size_t *ln)
{
	const char *nl;

	if (*at >= n)
		return false;
	*l = s + *at;
	nl = memchr(*l, '\n', n - *at);
	*ln = nl ? (size_t)(nl - *l) : n - *at;
	*at += *ln + (nl ? 1 : 0);
	while (*ln && ((*l)[*ln - 1] == '\r'))
		(*ln)--;
	return true;
}

/* A copy of line l as a C string (cut at size - 1; NULs become spaces). */
static void cstr(char *dst, size_t size, const char *l, size_t ln)
{
	size_t k = ln < size - 1 ? ln : size - 1;

	for (size_t i = 0; i < k; i++)
		dst[i] = l[i] ? l[i] : ' ';
	dst[k] = '\0';
}

/* --- dumpsys thermalservice ----------------------------------------------
 */

/* The value of "key=" in a Temperature{...} line, up to ',' or '}'. */
static bool field(const char *line, const char *key, char *out, size_t size)
{
	const char *p = strstr(line, key);
	size_t k;

	if (!p)
		return false;
	p += strlen(key);
	k = strcspn(p, ",}");
	snprintf(out, size, "%.*s", (int)(k < size ? k : size - 1), p);
	return true;
}

static size_t thermal_section(struct ph_devctx *d, const char *s, size_t n,
			      const char *section)
{
	size_t at = 0, ln;
	const char *l;
	bool in = false;
	char line[512], v[64];

	d->nthermal = 0;
	while (next_line(s, n, &at, &l, &ln)) {
		cstr(line, sizeof(line), l, ln);
		if (ln && l[0] != ' ' && l[0] != '\t') {
			in = !strcmp(line, section);
			continue;
		}
		if (!in || !strstr(line, "Temperature{") ||
		    d->nthermal == PH_ARRAY_SIZE(d->thermal))
			continue;
		{
			struct ph_devctx_zone *z = &d->thermal[d->nthermal];
			char *end;

			if (!field(line, "mValue=", v, sizeof(v)))
				continue;
			z->celsius = strtod(v, &end);
			if (end == v || z->celsius != z->celsius)
				continue; /* not a number, or NaN */
			if (!field(line, "mName=", z->zone, sizeof(z->zone)))
				snprintf(z->zone, sizeof(z->zone), "?");
			z->status = -1;
			if (field(line, "mStatus=", v, sizeof(v)))
				z->status = atoi(v);
			d->nthermal++;
		}
	}
	return d->nthermal;
}

size_t ph_devctx_thermal(struct ph_devctx *d, const char *s, size_t n)
{
	size_t at = 0, ln;
	const char *l;
	char line[128];

	d->thermal_status = -1;
	while (next_line(s, n, &at, &l, &ln)) {
		cstr(line, sizeof(line), l, ln);
		if (!strncmp(line, "Thermal Status: ", 16))
			d->thermal_status = atoi(line + 16);
	}
	/* The HAL's current values; the cached ones only without them. */
	if (!thermal_section(d, s, n, "Current temperatures from HAL:"))
		thermal_section(d, s, n, "Cached temperatures:");
	return d->nthermal + (d->thermal_status >= 0);
}

/* --- grep -H . cpufreq files ---------------------------------------------
 */

static struct ph_devctx_cpu *cpu_slot(struct ph_devctx *d, int cpu)
{
	for (size_t i = 0; i < d->ncpus; i++)
		if (d->cpus[i].cpu == cpu)
			return &d->cpus[i];
	if (d->ncpus == PH_ARRAY_SIZE(d->cpus))
		return NULL;
	memset(&d->cpus[d->ncpus], 0, sizeof(d->cpus[0]));
	d->cpus[d->ncpus].cpu = cpu;
	return &d->cpus[d->ncpus++];
}

size_t ph_devctx_cpus(struct ph_devctx *d, const char *s, size_t n)
{
	size_t at = 0, ln;
	const char *l;
	char line[512];

	d->ncpus = 0;
	while (next_line(s, n, &at, &l, &ln)) {
		char *p, *colon, *file, *end, *val;
		struct ph_devctx_cpu *c;
		long cpu;

		cstr(line, sizeof(line), l, ln);
		p = strstr(line, "/cpu/cpu");
		colon = strchr(line, ':');
		if (!p || !colon || colon < p)
			continue;
		cpu = strtol(p + 8, &end, 10);
		if (end == p + 8 || cpu < 0 || cpu > 4095 || *end != '/')
			continue;
		*colon = '\0';
		file = strrchr(line, '/') + 1;
		val = colon + 1;
		if (!strcmp(file, "scaling_governor")) {
			if (!*val || strchr(val, ' ') ||
			    !(c = cpu_slot(d, (int)cpu)))
				continue;
			snprintf(c->governor, sizeof(c->governor), "%s", val);
		} else if (!strcmp(file, "scaling_cur_freq") ||
			   !strcmp(file, "cpuinfo_max_freq")) {
			long long khz = strtoll(val, &end, 10);

			if (end == val || *end || khz <= 0 ||
			    !(c = cpu_slot(d, (int)cpu)))
				continue;
			if (file[0] == 's')
				c->cur_khz = khz;
			else
				c->max_khz = khz;
		}
	}
	/* Ordered by CPU number, whatever order the glob gave. */
	for (size_t i = 1; i < d->ncpus; i++)
		for (size_t j = i; j && d->cpus[j - 1].cpu > d->cpus[j].cpu;
		     j--) {
			struct ph_devctx_cpu t = d->cpus[j];

			d->cpus[j] = d->cpus[j - 1];
			d->cpus[j - 1] = t;
		}
	return d->ncpus;
}

/* --- top -b -n 1 (toybox) ------------------------------------------------
 */

/*
 * Splits line into at most max words, in place.  Brackets are spaces (the
 * header's sort mark) and terminal escapes ("\033[7m") are dropped.
 */
static int words(char *line, char **w, int max)
{
	int k = 0;
	char *p = line, *o = line;

	while (*p) {
		if (*p == '\033') {
			for (p++; *p && !((*p >= 'a' && *p <= 'z') ||
					  (*p >= 'A' && *p <= 'Z'));
			     p++)
				;
			if (*p)
				p++;
			*o++ = ' ';
			continue;
		}
		*o++ = (*p == '[' || *p == ']' || *p == '\t') ? ' ' : *p;
		p++;
	}
	*o = '\0';
	for (p = line; *p && k < max;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		w[k++] = p;
		while (*p && *p != ' ')
			p++;
		if (*p)
			*p++ = '\0';
	}
	return k;
}

size_t ph_devctx_top(struct ph_devctx *d, const char *s, size_t n)
{
	size_t at = 0, ln;
	const char *l;
	char line[1024], *w[32];
	int ipid = -1, icpu = -1, icmd = -1;

	d->nbusiest = 0;
	while (next_line(s, n, &at, &l, &ln)) {
		int k;

		cstr(line, sizeof(line), l, ln);
		k = words(line, w, (int)PH_ARRAY_SIZE(w));
		if (icmd < 0) {
			for (int i = 0; i < k; i++) {
				if (!strcmp(w[i], "PID"))
					ipid = i;
				else if (!strcmp(w[i], "%CPU"))
					icpu = i;
				else if (!strcmp(w[i], "ARGS") ||
					 !strcmp(w[i], "CMDLINE") ||
					 !strcmp(w[i], "NAME") ||
					 !strcmp(w[i], "COMMAND"))
					icmd = i;
			}
			if (ipid < 0 || icpu < 0 || icmd < 0)
				ipid = icpu = icmd = -1;
			continue;
		}
		if (k <= icmd || k <= ipid || k <= icpu)
			continue;
		{
			char *end, *name = strrchr(w[icmd], '/');
			long pid = strtol(w[ipid], &end, 10);
			double cpu;
			size_t i, last;

			if (*end || pid <= 0)
				continue;
			cpu = strtod(w[icpu], &end);
			if (*end || cpu != cpu || cpu < 0)
				continue;
			name = name && name[1] ? name + 1 : w[icmd];
			/* top itself, the probe that measured: not news */
			if (!strcmp(name, "top"))
				continue;
			/* keep the busiest, highest first */
			for (i = d->nbusiest;
			     i > 0 && d->busiest[i - 1].cpu < cpu; i--)
				;
			if (i >= PH_ARRAY_SIZE(d->busiest))
				continue;
			last = d->nbusiest < PH_ARRAY_SIZE(d->busiest) ?
				       d->nbusiest :
				       PH_ARRAY_SIZE(d->busiest) - 1;
			memmove(&d->busiest[i + 1], &d->busiest[i],
				(last - i) * sizeof(d->busiest[0]));
			d->busiest[i].pid = (int)pid;
			d->busiest[i].cpu = cpu;
			snprintf(d->busiest[i].name, sizeof(d->busiest[i].name),
				 "%s", name);
			if (d->nbusiest < PH_ARRAY_SIZE(d->busiest))
				d->nbusiest++;
		}
	}
	return d->nbusiest;
}

/* --- /proc/loadavg, /proc/meminfo, /proc/pressure/memory -----------------
 */

size_t ph_devctx_proc(struct ph_devctx *d, const char *s, size_t n)
{
	size_t at = 0, ln, kept = 0;
	const char *l;
	char line[256];

	d->loadavg[0] = '\0';
	d->mem_total_kb = d->mem_avail_kb = -1;
	d->psi_some10 = -1;
	while (next_line(s, n, &at, &l, &ln)) {
		double a, b, c, v;
		long long kb;
		int run, all, used = 0;

		cstr(line, sizeof(line), l, ln);
		if (!d->loadavg[0] &&
		    sscanf(line, "%lf %lf %lf %d/%d%n", &a, &b, &c, &run, &all,
			   &used) == 5 &&
		    used > 0) {
			snprintf(d->loadavg, sizeof(d->loadavg),
				 "%.2f %.2f %.2f", a, b, c);
			kept++;
		} else if (sscanf(line, "MemTotal: %lld", &kb) == 1 && kb > 0) {
			d->mem_total_kb = kb;
			kept++;
		} else if (sscanf(line, "MemAvailable: %lld", &kb) == 1 &&
			   kb >= 0) {
			d->mem_avail_kb = kb;
			kept++;
		} else if (sscanf(line, "some avg10=%lf", &v) == 1 && v >= 0 &&
			   v <= 100) {
			d->psi_some10 = v;
			kept++;
		}
	}
	return kept;
}
