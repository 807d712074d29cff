/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampler.c: one thread that looks at the process and the machine once a
 * second: memory (a `memory` event each second, and a `memory` event at
 * once on a sharp rise), memory pressure (PSI and the cgroup's events, as
 * `device` trimMemory / lowMemory), thermal zones, power and network (each
 * a `device` event when it changes), and whether a system trace is
 * recording (for trace markers).  At start it sends the device `profile`
 * and `clocks`.
 *
 * All of it reads /proc and /sys; the Android port reads the same files
 * (PSI, thermal zones and power_supply exist there too).
 */
#include "ph_common.h"
#include "collectors.h"
#include "ph_buf.h"
#include "ph_clock.h"

#include <dirent.h>
#include "../platform.h"
#include <sys/utsname.h>
#include <unistd.h>

static pthread_t thread;
static _Atomic bool stop;
static bool started;
/*
 * Where sysfs is: /sys, or $PORTHOLE_SYSFS for thermal zones and power
 * supplies (a machine without them, like a VM, can still be tested
 * against a tree of their files; they are plain text).
 */
static char sys_root[200] = "/sys";

static bool read_small(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n > 0;
}

static int64_t field_kb(const char *text, const char *name)
{
	const char *p = strstr(text, name);

	return p ? strtoll(p + strlen(name), NULL, 10) : -1;
}

static void str_field(struct ph_rec *r, enum ph_key key, const char *v)
{
	ph_rec_str(r, key, v, 64);
}

static void num_field(struct ph_rec *r, enum ph_key key, int64_t v)
{
	ph_rec_qint(r, key, v); /* device values are strings on the wire */
}

static void send_profile(const struct ph_agent *a)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_DEVICE, &pos);
	struct utsname u;
	char text[4096], hz[16];
	const char *lang = getenv("LANG");
	int64_t ram = -1;

	if (!r)
		return;
	r->sub = PH_DEV_PROFILE;
	if (read_small("/proc/meminfo", text, sizeof(text)))
		ram = field_kb(text, "MemTotal:") / 1024;
	uname(&u);
	str_field(r, PH_KEY_MODEL, u.nodename);
	num_field(r, PH_KEY_SDK_INT, 0);
	str_field(r, PH_KEY_ABI, u.machine);
	num_field(r, PH_KEY_CORES, sysconf(_SC_NPROCESSORS_ONLN));
	num_field(r, PH_KEY_DEVICE_RAM_MB, ram);
	str_field(r, PH_KEY_LOW_RAM_DEVICE,
		  ram >= 0 && ram < 1024 ? "true" : "false");
	/* The app's declared rate sets every host's frame budget. */
	snprintf(hz, sizeof(hz), "%g", a->refresh_hz);
	str_field(r, PH_KEY_REFRESH_HZ, hz);
	str_field(r, PH_KEY_LOCALE, lang && *lang ? lang : "C");
	str_field(r, PH_KEY_OS, "linux");
	str_field(r, PH_KEY_KERNEL, u.release);
	ph_emit_commit(pos);
}

static void send_clocks(void)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_DEVICE, &pos);
	struct timespec boot;
	int64_t up = ph_clock_uptime_ms(), boot_ms;

	if (!r)
		return;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	boot_ms = (int64_t)boot.tv_sec * 1000 + boot.tv_nsec / 1000000;
	r->sub = PH_DEV_CLOCKS;
	num_field(r, PH_KEY_UPTIME_MS, up);
	num_field(r, PH_KEY_BOOT_MS, boot_ms);
	num_field(r, PH_KEY_WALL_MS, ph_clock_epoch_ms());
	num_field(r, PH_KEY_SLEEP_MS, boot_ms - up);
	ph_emit_commit(pos);
}

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int64_t last_rss_mb = -1;
static unsigned memory_samples;

/*
 * The process's proportional share of the RAM it maps (totalRamMb) and of
 * that its anonymous pages (nativeRamMb: malloc's heap, stacks), from
 * smaps_rollup.  Every 5th sample, as the Kotlin runtime reads PSS: the
 * kernel walks every mapping to sum it.
 */
static void pss_fields(struct ph_rec *r)
{
	char rollup[2048];
	int64_t pss, anon;

	if (!read_small("/proc/self/smaps_rollup", rollup, sizeof(rollup)))
		return;
	pss = field_kb(rollup, "\nPss:");
	anon = field_kb(rollup, "\nPss_Anon:");
	ph_exits_note_memory(-1, pss);
	if (pss >= 0)
		ph_rec_int(r, PH_KEY_TOTAL_RAM_MB, pss / 1024);
	if (anon >= 0)
		ph_rec_int(r, PH_KEY_NATIVE_RAM_MB, anon / 1024);
}

/* force: the once-a-second sample; else sent only on a sharp rise. */
static void sample_memory(bool force)
{
	char status[4096], stat[1024];
	int64_t heap_used, heap_held;
	int64_t rss_kb = -1, threads = -1, used_mb, max_mb;
	long long minflt = -1, majflt = -1;
	uint64_t pos;
	struct ph_rec *r;

	if (read_small("/proc/self/status", status, sizeof(status))) {
		rss_kb = field_kb(status, "VmRSS:");
		threads = field_kb(status, "Threads:");
	}
	if (read_small("/proc/self/stat", stat, sizeof(stat))) {
		/* fields 10 and 12, counted after the last ')' */
		const char *p = strrchr(stat, ')');
		int field = 2;

		for (; p && *p; p++) {
			if (*p != ' ')
				continue;
			field++;
			if (field == 10)
				minflt = strtoll(p + 1, NULL, 10);
			if (field == 12) {
				majflt = strtoll(p + 1, NULL, 10);
				break;
			}
		}
	}
	ph_exits_note_memory(rss_kb, -1);
	/* A sharp rise (a quarter more, and 8 MB) is sent at once. */
	if (!force && !(last_rss_mb >= 0 && rss_kb / 1024 > last_rss_mb + 8 &&
			rss_kb / 1024 > last_rss_mb * 5 / 4))
		return;
	last_rss_mb = rss_kb / 1024;
	/* -1 where the C library cannot say (platform.h) */
	if (ph_platform_heap(&heap_used, &heap_held)) {
		used_mb = heap_used >> 20;
		max_mb = heap_held >> 20;
	} else {
		used_mb = max_mb = -1;
	}
	r = ph_emit_begin(PH_KIND_MEMORY, &pos);
	if (!r)
		return;
	ph_rec_int(r, PH_KEY_HEAP_USED_MB, used_mb);
	ph_rec_int(r, PH_KEY_HEAP_MAX_MB, max_mb);
	ph_rec_int(r, PH_KEY_HEAP_PERCENT,
		   max_mb > 0  ? used_mb * 100 / max_mb :
		   max_mb == 0 ? 0 :
				 -1);
	ph_rec_int(r, PH_KEY_NATIVE_MB, used_mb);
	ph_rec_int(r, PH_KEY_THREADS, threads);
	ph_rec_int(r, PH_KEY_RSS_MB, rss_kb >= 0 ? rss_kb / 1024 : -1);
	ph_rec_int(r, PH_KEY_FDS, count_dir("/proc/self/fd"));
	ph_rec_int(r, PH_KEY_MINOR_FAULTS, minflt);
	ph_rec_int(r, PH_KEY_MAJOR_FAULTS, majflt);
	ph_rec_str(r, PH_KEY_TRIGGER, force ? "interval" : "rise", 16);
	if (force && memory_samples++ % 5 == 0)
		pss_fields(r);
	ph_emit_commit(pos);
}

static void device_kv(enum ph_device_kind kind, enum ph_key k1, const char *v1,
		      enum ph_key k2, const char *v2)
{
	uint64_t pos;
	struct ph_rec *r = ph_emit_begin(PH_KIND_DEVICE, &pos);

	if (!r)
		return;
	r->sub = kind;
	if (v1)
		str_field(r, k1, v1);
	if (v2)
		str_field(r, k2, v2);
	ph_emit_commit(pos);
}

/* PSI "some avg10" crossing 10 / 25 / 50 % (docs/protocol.md, device). */
static int psi_level = 0;

static void sample_pressure(void)
{
	static const char *const levels[] = { "", "running moderate",
					      "running low",
					      "running critical" };
	static const char *const raws[] = { "", "5", "10", "15" };
	char text[512];
	double avg10;
	const char *p;
	int level;

	if (!read_small("/proc/pressure/memory", text, sizeof(text)) ||
	    !(p = strstr(text, "avg10=")))
		return;
	avg10 = strtod(p + 6, NULL);
	level = avg10 >= 50 ? 3 : avg10 >= 25 ? 2 : avg10 >= 10 ? 1 : 0;
	if (level > psi_level)
		device_kv(PH_DEV_TRIM_MEMORY, PH_KEY_LEVEL, levels[level],
			  PH_KEY_RAW, raws[level]);
	psi_level = level;
}

/*
 * The app's own memory cgroup: how often it hit its limit, an increment
 * being lowMemory.  cgroup v2: memory.events "high", "max" and "oom" (the
 * hierarchy mounted at /sys/fs/cgroup, or at /sys/fs/cgroup/unified beside
 * v1 controllers); v1: memory.failcnt (the limit hit) and oom_control's
 * oom_kill.  The files are found once, at start, from /proc/self/cgroup.
 */
static char cg_events[320], cg_failcnt[320], cg_oom[320];
static int64_t last_hits = -1;

static void find_cgroup(void)
{
	char text[2048], *line, *next;
	static const char *const v2_roots[] = { "/sys/fs/cgroup",
						"/sys/fs/cgroup/unified" };

	cg_events[0] = cg_failcnt[0] = cg_oom[0] = '\0';
	if (!read_small("/proc/self/cgroup", text, sizeof(text)))
		return;
	for (line = text; line && *line; line = next) {
		char *path;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		path = strchr(line, ':');
		path = path ? strchr(path + 1, ':') : NULL;
		if (!path)
			continue;
		path++;
		if (!strncmp(line, "0::", 3)) {
			for (size_t i = 0; i < PH_ARRAY_SIZE(v2_roots); i++) {
				snprintf(cg_events, sizeof(cg_events),
					 "%s%s/memory.events", v2_roots[i],
					 path);
				if (!access(cg_events, R_OK))
					break;
				cg_events[0] = '\0';
			}
		} else if (strstr(line, ":memory:")) {
			snprintf(cg_failcnt, sizeof(cg_failcnt),
				 "/sys/fs/cgroup/memory%s/memory.failcnt",
				 path);
			snprintf(cg_oom, sizeof(cg_oom),
				 "/sys/fs/cgroup/memory%s/memory.oom_control",
				 path);
		}
	}
}

static void sample_cgroup(void)
{
	char text[1024];
	int64_t hits = -1;

	if (cg_events[0] && read_small(cg_events, text, sizeof(text))) {
		static const char *const keys[] = { "\nhigh ", "\nmax ",
						    "\noom " };

		hits = 0;
		for (size_t i = 0; i < PH_ARRAY_SIZE(keys); i++) {
			int64_t n = field_kb(text, keys[i]);

			hits += n > 0 ? n : 0;
		}
	} else if (cg_failcnt[0] &&
		   read_small(cg_failcnt, text, sizeof(text))) {
		hits = strtoll(text, NULL, 10);
		if (read_small(cg_oom, text, sizeof(text)))
			hits += field_kb(text, "oom_kill ");
	}
	if (hits < 0)
		return;
	if (last_hits >= 0 && hits > last_hits)
		device_kv(PH_DEV_LOW_MEMORY, PH_KEY_LEVEL, NULL, PH_KEY_RAW,
			  NULL);
	last_hits = hits;
}

/* Thermal: each zone's status from its trip points; changes only. */
static char thermal_state[16][12];

static void sample_thermal(void)
{
	for (int z = 0; z < 16; z++) {
		char path[320], text[64], type[64], status[12] = "none";
		int64_t temp;

		snprintf(path, sizeof(path),
			 "%s/class/thermal/thermal_zone%d/temp", sys_root, z);
		if (!read_small(path, text, sizeof(text)))
			break;
		temp = strtoll(text, NULL, 10);
		for (int t = 0; t < 8; t++) {
			int64_t trip;

			snprintf(path, sizeof(path),
				 "%s/class/thermal/thermal_zone%d/"
				 "trip_point_%d_temp",
				 sys_root, z, t);
			if (!read_small(path, text, sizeof(text)))
				break;
			trip = strtoll(text, NULL, 10);
			snprintf(path, sizeof(path),
				 "%s/class/thermal/thermal_zone%d/"
				 "trip_point_%d_type",
				 sys_root, z, t);
			if (!read_small(path, type, sizeof(type)) ||
			    temp < trip)
				continue;
			if (!strncmp(type, "critical", 8))
				snprintf(status, sizeof(status), "critical");
			else if (!strncmp(type, "hot", 3) &&
				 strcmp(status, "critical"))
				snprintf(status, sizeof(status), "severe");
			else if (!strcmp(status, "none"))
				snprintf(status, sizeof(status), "moderate");
		}
		if (strcmp(status, thermal_state[z])) {
			char zone[16], deg[16];
			uint64_t pos;
			struct ph_rec *r;

			snprintf(thermal_state[z], sizeof(thermal_state[z]),
				 "%s", status);
			snprintf(zone, sizeof(zone), "%d", z);
			snprintf(deg, sizeof(deg), "%.1f", (double)temp / 1000);
			r = ph_emit_begin(PH_KIND_DEVICE, &pos);
			if (!r)
				continue;
			r->sub = PH_DEV_THERMAL;
			str_field(r, PH_KEY_STATUS, status);
			/* Android's THERMAL_STATUS_* for the same names */
			str_field(r, PH_KEY_STATUS_CODE,
				  !strcmp(status, "critical") ? "4" :
				  !strcmp(status, "severe")   ? "3" :
				  !strcmp(status, "moderate") ? "2" :
								"0");
			str_field(r, PH_KEY_ZONE, zone);
			str_field(r, PH_KEY_TEMPERATURE_C, deg);
			ph_emit_commit(pos);
		}
	}
}

/*
 * Power: the first battery's capacity and charging state, as the
 * broadcasts Android sends: connected / disconnected when charging starts
 * or stops, BATTERY_LOW when the level falls to 15 % and BATTERY_OKAY
 * when it is back over 20 % (Android's defaults), and "initial" once.  A
 * level that moves by a point is no event.
 */
#define BATTERY_LOW_PCT	 15
#define BATTERY_OKAY_PCT 20
static char power_status[32];
static bool power_seen, battery_low;

static void sample_power(void)
{
	char dir[300], pct[16] = "-1", status[32] = "";
	const char *change = NULL;
	bool charging, was_charging;
	long level;
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s/class/power_supply", sys_root);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		char path[600];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/capacity", dir, e->d_name);
		if (read_small(path, pct, sizeof(pct))) {
			pct[strcspn(pct, "\n")] = '\0';
			snprintf(path, sizeof(path), "%s/%s/status", dir,
				 e->d_name);
			if (read_small(path, status, sizeof(status)))
				status[strcspn(status, "\n")] = '\0';
			break;
		}
	}
	if (d)
		closedir(d);
	level = strtol(pct, NULL, 10);
	charging = !strcmp(status, "Charging") || !strcmp(status, "Full");
	was_charging = !strcmp(power_status, "Charging") ||
		       !strcmp(power_status, "Full");
	if (!power_seen)
		change = "initial";
	else if (charging && !was_charging)
		change = "ACTION_POWER_CONNECTED";
	else if (!charging && was_charging)
		change = "ACTION_POWER_DISCONNECTED";
	else if (level >= 0 && !battery_low && level <= BATTERY_LOW_PCT)
		change = "BATTERY_LOW";
	else if (battery_low && level > BATTERY_OKAY_PCT)
		change = "BATTERY_OKAY";
	if (level >= 0 && level <= BATTERY_LOW_PCT)
		battery_low = true;
	else if (level > BATTERY_OKAY_PCT)
		battery_low = false;
	power_seen = true;
	snprintf(power_status, sizeof(power_status), "%s", status);
	if (change)
		device_kv(PH_DEV_POWER, PH_KEY_CHANGE, change,
			  PH_KEY_BATTERY_PERCENT, pct);
}

/* Network: the default route's interface, as a transport. */
static char net_last[32];

static void sample_network(void)
{
	char text[4096], iface[32] = "", path[96], transport[16] = "none";
	FILE *f = fopen("/proc/net/route", "re");

	while (f && fgets(text, sizeof(text), f)) {
		char name[32];
		unsigned long dest;

		if (sscanf(text, "%31s %lx", name, &dest) == 2 && dest == 0) {
			snprintf(iface, sizeof(iface), "%s", name);
			break;
		}
	}
	if (f)
		fclose(f);
	if (iface[0]) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/wireless",
			 iface);
		if (!access(path, F_OK))
			snprintf(transport, sizeof(transport), "wifi");
		else if (!strncmp(iface, "tun", 3) || !strncmp(iface, "wg", 2))
			snprintf(transport, sizeof(transport), "vpn");
		else if (!strncmp(iface, "eth", 3) || !strncmp(iface, "en", 2))
			snprintf(transport, sizeof(transport), "ethernet");
		else
			snprintf(transport, sizeof(transport), "other");
	}
	if (!strcmp(transport, net_last))
		return;
	snprintf(net_last, sizeof(net_last), "%s", transport);
	device_kv(PH_DEV_NETWORK, PH_KEY_TRANSPORT, transport, PH_KEY_METERED,
		  strcmp(transport, "none") ? "false" : NULL);
}

static void *sampler_main(void *arg)
{
	const struct ph_agent *a = arg;
	bool device = !(a->cfg.flags & PORTHOLE_NO_DEVICE);
	bool memory = !(a->cfg.flags & PORTHOLE_NO_MEMORY);

	ph_exits_thread_altstack(); /* a crash here writes its record */
	ph_platform_name_self("porthole-memdev");

	if (device) {
		send_profile(a);
		send_clocks();
	}
	while (!atomic_load(&stop)) {
		ph_trace_marker_poll();
		if (memory) {
			sample_memory(true);
			sample_pressure();
			sample_cgroup();
		}
		if (device) {
			sample_thermal();
			sample_power();
			sample_network();
		}
		/* What a kill would leave unsaid: written down each second. */
		ph_exits_note_alive();
		/* Sleep a second in short steps: stop should not wait. */
		for (int i = 0; i < 10 && !atomic_load(&stop); i++) {
			usleep(100 * 1000);
			if (memory && i % 2)
				sample_memory(false);
		}
	}
	return NULL;
}

int ph_sampler_start(struct ph_agent *a)
{
	atomic_store(&stop, false);
	last_rss_mb = -1;
	memory_samples = 0;
	psi_level = 0;
	last_hits = -1;
	find_cgroup();
	snprintf(sys_root, sizeof(sys_root), "%s",
		 getenv("PORTHOLE_SYSFS") ? getenv("PORTHOLE_SYSFS") : "/sys");
	memset(thermal_state, 0, sizeof(thermal_state));
	power_status[0] = net_last[0] = '\0';
	power_seen = battery_low = false;
	if (pthread_create(&thread, NULL, sampler_main, a))
		return PH_EIO;
	started = true;
	return 0;
}

void ph_sampler_stop(void)
{
	if (!started)
		return;
	atomic_store(&stop, true);
	pthread_join(thread, NULL);
	started = false;
}
