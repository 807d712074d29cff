/* SPDX-License-Identifier: Apache-2.0 */
/*
 * system_context: the machine the app runs on, now: thermal zones, CPU
 * governor and frequencies, the busiest processes, memory and its
 * pressure.  From this machine's /proc and /sys when the app is local,
 * from the device over adb otherwise.
 */
#include "ph_common.h"
#include "mcp/mcp.h"

#include <dirent.h>
#include <unistd.h>

static bool read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	bool ok;

	buf[0] = '\0';
	if (!f)
		return false;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

struct proc {
	int pid;
	char name[64];
	uint64_t t0, t1;
};

static uint64_t proc_ticks(int pid, char *name, size_t nsize)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (!read_line(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	if (name) {
		char *o = strchr(buf, '(');

		snprintf(name, nsize, "%.*s", o ? (int)(p - o - 1) : 0,
			 o ? o + 1 : "");
	}
	/* after ") ": state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime */
	if (sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
		   &st) != 2)
		return 0;
	return ut + st;
}

static void local_context(struct ph_mcp_call *c)
{
	char buf[512], path[300], gov[64] = "", la[128] = "";
	struct proc *ps = NULL;
	size_t np = 0, ap = 0;
	DIR *d;
	struct dirent *de;
	int64_t hot = INT64_MIN, mem_total = 0, mem_avail = 0;
	char hot_zone[64] = "";
	double psi = -1;
	long hz = sysconf(_SC_CLK_TCK);

	ph_jw_kv_str(&c->jw, "source", "this machine (/proc, /sys)");
	/* thermal */
	ph_jw_key(&c->jw, "thermal");
	ph_jw_arr_begin(&c->jw);
	for (int i = 0; i < 64; i++) {
		char type[64];
		int64_t t;

		snprintf(path, sizeof(path),
			 "/sys/class/thermal/thermal_zone%d/temp", i);
		if (!read_line(path, buf, sizeof(buf)))
			break;
		t = strtoll(buf, NULL, 10);
		snprintf(path, sizeof(path),
			 "/sys/class/thermal/thermal_zone%d/type", i);
		read_line(path, type, sizeof(type));
		ph_jw_obj_begin(&c->jw);
		ph_jw_kv_str(&c->jw, "zone", type);
		ph_jw_kv_double(&c->jw, "celsius", (double)t / 1000.0);
		ph_jw_obj_end(&c->jw);
		if (t > hot) {
			hot = t;
			snprintf(hot_zone, sizeof(hot_zone), "%s", type);
		}
	}
	ph_jw_arr_end(&c->jw);
	/* cpu */
	ph_jw_key(&c->jw, "cpus");
	ph_jw_arr_begin(&c->jw);
	for (int i = 0; i < 1024; i++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/online", i);
		if (access(path, R_OK) && i > 0) {
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%d", i);
			if (access(path, F_OK))
				break;
		}
		ph_jw_obj_begin(&c->jw);
		ph_jw_kv_int(&c->jw, "cpu", i);
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cpufreq/"
			 "scaling_governor",
			 i);
		if (read_line(path, buf, sizeof(buf))) {
			ph_jw_kv_str(&c->jw, "governor", buf);
			snprintf(gov, sizeof(gov), "%.60s", buf);
		}
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cpufreq/"
			 "scaling_cur_freq",
			 i);
		if (read_line(path, buf, sizeof(buf)))
			ph_jw_kv_int(&c->jw, "curKHz", strtoll(buf, NULL, 10));
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cpufreq/"
			 "cpuinfo_max_freq",
			 i);
		if (read_line(path, buf, sizeof(buf)))
			ph_jw_kv_int(&c->jw, "maxKHz", strtoll(buf, NULL, 10));
		ph_jw_obj_end(&c->jw);
	}
	ph_jw_arr_end(&c->jw);
	read_line("/proc/loadavg", la, sizeof(la));
	ph_jw_kv_str(&c->jw, "loadavg", la);
	/* busiest processes: CPU ticks over 200 ms */
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		int pid = atoi(de->d_name);

		if (pid <= 0)
			continue;
		if (np == ap && PH_GROW(ps, ap, np + 1, 256))
			break;
		ps[np].pid = pid;
		ps[np].t0 = proc_ticks(pid, ps[np].name, sizeof(ps[np].name));
		np++;
	}
	if (d)
		closedir(d);
	usleep(200000);
	for (size_t i = 0; i < np; i++) {
		uint64_t t1 = proc_ticks(ps[i].pid, NULL, 0);

		ps[i].t1 = t1 > ps[i].t0 ? t1 - ps[i].t0 : 0;
	}
	ph_jw_key(&c->jw, "busiest");
	ph_jw_arr_begin(&c->jw);
	for (int k = 0; k < 5; k++) {
		size_t best = np;

		for (size_t i = 0; i < np; i++)
			if (ps[i].t1 && (best == np || ps[i].t1 > ps[best].t1))
				best = i;
		if (best == np)
			break;
		ph_jw_obj_begin(&c->jw);
		ph_jw_kv_int(&c->jw, "pid", ps[best].pid);
		ph_jw_kv_str(&c->jw, "name", ps[best].name);
		ph_jw_kv_double(&c->jw, "cpuPercent",
				(double)ps[best].t1 * 100.0 / (double)hz / 0.2);
		ph_jw_obj_end(&c->jw);
		if (!k)
			ph_mcp_more(c, "; busiest %s %.0f%%", ps[best].name,
				    (double)ps[best].t1 * 100.0 / (double)hz /
					    0.2);
		ps[best].t1 = 0;
	}
	ph_jw_arr_end(&c->jw);
	free(ps);
	/* memory */
	{
		FILE *f = fopen("/proc/meminfo", "r");

		while (f && fgets(buf, sizeof(buf), f)) {
			long long v;

			if (sscanf(buf, "MemTotal: %lld", &v) == 1)
				mem_total = v;
			else if (sscanf(buf, "MemAvailable: %lld", &v) == 1)
				mem_avail = v;
		}
		if (f)
			fclose(f);
		if (read_line("/proc/pressure/memory", buf, sizeof(buf)))
			sscanf(buf, "some avg10=%lf", &psi);
	}
	ph_jw_key(&c->jw, "memory");
	ph_jw_obj_begin(&c->jw);
	ph_jw_kv_int(&c->jw, "totalMb", mem_total / 1024);
	ph_jw_kv_int(&c->jw, "availableMb", mem_avail / 1024);
	if (psi >= 0)
		ph_jw_kv_double(&c->jw, "pressureSomeAvg10", psi);
	ph_jw_obj_end(&c->jw);
	{
		char head[400];

		snprintf(head, sizeof(head),
			 "this machine: load %s; governor %s; hottest zone %s",
			 la[0] ? la : "?", gov[0] ? gov : "n/a (no cpufreq)",
			 hot != INT64_MIN ? hot_zone :
					    "n/a (no thermal zones)");
		if (hot != INT64_MIN)
			snprintf(head + strlen(head),
				 sizeof(head) - strlen(head), " %.1f C",
				 (double)hot / 1000.0);
		snprintf(head + strlen(head), sizeof(head) - strlen(head),
			 "; memory %" PRId64 " of %" PRId64 " MB available",
			 mem_avail / 1024, mem_total / 1024);
		if (psi >= 0)
			snprintf(head + strlen(head),
				 sizeof(head) - strlen(head),
				 ", pressure %.2f%%", psi);
		/* busiest was appended already: put the head first */
		{
			struct ph_buf t = PH_BUF_INIT(1 << 16);

			if (!ph_buf_addstr(&t, head) &&
			    !ph_buf_add(&t, c->line.buf, c->line.len))
				ph_mcp_line(c, "%s", t.buf);
			ph_buf_release(&t);
		}
	}
}

/*
 * One `adb shell` per reading, so a reading the device refuses (a file
 * SELinux hides, a kernel without PSI) costs only itself.  devctx.c
 * reads their output; docs/mcp.md lists the commands.
 */
static const struct {
	const char *key, *cmd;
	size_t (*read)(struct ph_devctx *d, const char *s, size_t n);
} readings[] = {
	{ "thermal", "dumpsys thermalservice", ph_devctx_thermal },
	{ "cpus",
	  "grep -H . /sys/devices/system/cpu/cpu[0-9]*/cpufreq/"
	  "scaling_governor /sys/devices/system/cpu/cpu[0-9]*/cpufreq/"
	  "scaling_cur_freq /sys/devices/system/cpu/cpu[0-9]*/cpufreq/"
	  "cpuinfo_max_freq",
	  ph_devctx_cpus },
	{ "busiest", "top -b -n 1 -m 6", ph_devctx_top },
	{ "memory", "cat /proc/loadavg /proc/meminfo /proc/pressure/memory",
	  ph_devctx_proc },
};

static void device_json(struct ph_mcp_call *c, const struct ph_devctx *d)
{
	struct ph_jw *jw = &c->jw;

	if (d->thermal_status >= 0)
		ph_jw_kv_int(jw, "thermalStatus", d->thermal_status);
	ph_jw_key(jw, "thermal");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < d->nthermal; i++) {
		ph_jw_obj_begin(jw);
		ph_jw_kv_str(jw, "zone", d->thermal[i].zone);
		ph_jw_kv_double(jw, "celsius", d->thermal[i].celsius);
		if (d->thermal[i].status >= 0)
			ph_jw_kv_int(jw, "status", d->thermal[i].status);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
	ph_jw_key(jw, "cpus");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < d->ncpus; i++) {
		ph_jw_obj_begin(jw);
		ph_jw_kv_int(jw, "cpu", d->cpus[i].cpu);
		if (d->cpus[i].governor[0])
			ph_jw_kv_str(jw, "governor", d->cpus[i].governor);
		if (d->cpus[i].cur_khz)
			ph_jw_kv_int(jw, "curKHz", d->cpus[i].cur_khz);
		if (d->cpus[i].max_khz)
			ph_jw_kv_int(jw, "maxKHz", d->cpus[i].max_khz);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
	if (d->loadavg[0])
		ph_jw_kv_str(jw, "loadavg", d->loadavg);
	ph_jw_key(jw, "busiest");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < d->nbusiest; i++) {
		ph_jw_obj_begin(jw);
		ph_jw_kv_int(jw, "pid", d->busiest[i].pid);
		ph_jw_kv_str(jw, "name", d->busiest[i].name);
		ph_jw_kv_double(jw, "cpuPercent", d->busiest[i].cpu);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
	ph_jw_key(jw, "memory");
	ph_jw_obj_begin(jw);
	if (d->mem_total_kb >= 0)
		ph_jw_kv_int(jw, "totalMb", d->mem_total_kb / 1024);
	if (d->mem_avail_kb >= 0)
		ph_jw_kv_int(jw, "availableMb", d->mem_avail_kb / 1024);
	if (d->psi_some10 >= 0)
		ph_jw_kv_double(jw, "pressureSomeAvg10", d->psi_some10);
	ph_jw_obj_end(jw);
}

/* The headline, as the local one reads: load, governor, heat, memory. */
static void device_line(struct ph_mcp_call *c, const struct ph_devctx *d)
{
	const struct ph_devctx_zone *hot = NULL;
	const char *gov = NULL;

	for (size_t i = 0; i < d->nthermal; i++)
		if (!hot || d->thermal[i].celsius > hot->celsius)
			hot = &d->thermal[i];
	for (size_t i = 0; i < d->ncpus && !gov; i++)
		if (d->cpus[i].governor[0])
			gov = d->cpus[i].governor;
	ph_mcp_line(c, "device over adb: load %s; governor %s",
		    d->loadavg[0] ? d->loadavg : "?", gov ? gov : "?");
	if (d->ncpus)
		ph_mcp_more(c, " (%zu CPUs online)", d->ncpus);
	if (hot)
		ph_mcp_more(c, "; hottest zone %s %.1f C", hot->zone,
			    hot->celsius);
	if (d->thermal_status >= 0)
		ph_mcp_more(c, ", thermal status %d%s", d->thermal_status,
			    d->thermal_status ? " (throttling)" : "");
	if (d->mem_total_kb >= 0 && d->mem_avail_kb >= 0)
		ph_mcp_more(c,
			    "; memory %" PRId64 " of %" PRId64 " MB available",
			    d->mem_avail_kb / 1024, d->mem_total_kb / 1024);
	if (d->psi_some10 >= 0)
		ph_mcp_more(c, ", pressure %.2f%%", d->psi_some10);
	if (d->nbusiest)
		ph_mcp_more(c, "; busiest %s %.0f%%", d->busiest[0].name,
			    d->busiest[0].cpu);
}

static void device_context(struct ph_mcp_call *c)
{
	struct ph_buf out = PH_BUF_INIT(1 << 18);
	struct ph_devctx *d = calloc(1, sizeof(*d));
	const char *unread[PH_ARRAY_SIZE(readings)] = { 0 };
	size_t nunread = 0;

	if (!d) {
		ph_mcp_fail(c, "out of memory");
		return;
	}
	d->thermal_status = -1;
	d->mem_total_kb = d->mem_avail_kb = -1;
	d->psi_some10 = -1;
	ph_jw_kv_str(&c->jw, "source", "the device, over adb");
	ph_jw_key(&c->jw, "unread");
	ph_jw_arr_begin(&c->jw);
	for (size_t i = 0; i < PH_ARRAY_SIZE(readings); i++) {
		char *argv[] = { "adb", "shell", (char *)readings[i].cmd,
				 NULL };
		int rc;

		ph_buf_reset(&out);
		rc = ph_mcp_run(argv, &out, 10000);
		/* What it printed counts, not its status: `cat` of three
		 * files fails when one (PSI) is missing. */
		if (rc >= 0 && readings[i].read(d, out.buf, out.len))
			continue;
		unread[nunread++] = readings[i].key;
		ph_jw_obj_begin(&c->jw);
		ph_jw_kv_str(&c->jw, "reading", readings[i].key);
		ph_jw_kv_str(&c->jw, "command", readings[i].cmd);
		ph_jw_kv_int(&c->jw, "exit", rc);
		ph_jw_key(&c->jw, "output");
		ph_jw_strn(&c->jw, out.buf, out.len > 300 ? 300 : out.len);
		ph_jw_obj_end(&c->jw);
	}
	ph_jw_arr_end(&c->jw);
	if (nunread == PH_ARRAY_SIZE(readings)) {
		char first[200];
		size_t k = strcspn(out.buf, "\n");

		snprintf(first, sizeof(first), "%.*s", (int)(k > 150 ? 150 : k),
			 out.buf);
		ph_mcp_fail(c,
			    "cannot read the device's context over adb: no "
			    "reading answered (last: '%s'); is the device "
			    "still attached? (porthole_status)",
			    first);
	} else {
		device_json(c, d);
		device_line(c, d);
		if (nunread) {
			ph_mcp_more(c, "; not readable:");
			for (size_t i = 0; i < nunread; i++)
				ph_mcp_more(c, " %s", unread[i]);
			ph_mcp_more(c, " (see unread at detail normal)");
		}
	}
	free(d);
	ph_buf_release(&out);
}

static int system_context_call(struct ph_mcp_call *c)
{
	if (ph_mcp_local(c->m))
		local_context(c);
	else
		device_context(c);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_system_context = {
	.name = "system_context",
	.title = "The machine the app runs on",
	.description = "Now, on the machine running the app: thermal zones, "
		       "CPU governor and frequencies, the busiest processes "
		       "(CPU over 200 ms), memory and memory pressure. From "
		       "this machine's /proc and /sys when the app is local, "
		       "from the device over adb otherwise.",
	.flags = PH_TOOL_READONLY | PH_TOOL_OPENWORLD,
	.call = system_context_call,
};
