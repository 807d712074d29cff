/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snapshot.h: what /proc and /sys say around a recording.
 *
 * Process snapshots (the `process` stream): every process with its
 * memory, state, start time and CPU use.  CPU use needs two readings, so
 * the sampler reads every process's CPU time every PH_IOT_CPU_SAMPLE_NS
 * and keeps an hour of readings; a snapshot's cpu_5s, cpu_2m and cpu_1h
 * are real percentages (of one CPU) over the last 5 s, 2 min and hour,
 * or over as much of that as the sampler has seen (from the first reading,
 * or from the process's start when it is younger).  The first snapshot of
 * a recording has seen no interval and leaves them empty.
 *
 * System snapshot (system_spec/): cpu_info.json, memory_info.json,
 * disk_info.json, os_info.json, once.  No host name, no machine-id: the
 * manifest's machine_id is the only identity, and it is a hash.
 */
#ifndef PH_IOTRACE_SNAPSHOT_H
#define PH_IOTRACE_SNAPSHOT_H

#include "ph_common.h"
#include "iotrace/csv_out.h"

#define PH_IOT_CPU_SAMPLE_NS ((int64_t)5 * 1000000000)

struct ph_iot_frame;

struct ph_iot_sampler {
	struct ph_iot_frame *frames; /* ring of readings, oldest first */
	size_t n, cap, head;
	long hz;	      /* clock ticks per second */
	long page_kb;	      /* page size in KiB */
	int64_t boot_to_real; /* realtime - boottime, for start times */
	uint64_t snapshots;   /* snapshots written */
};

void ph_iot_sampler_init(struct ph_iot_sampler *s);
void ph_iot_sampler_release(struct ph_iot_sampler *s);

/*
 * Reads every process's CPU time now (mono_ns), and when csv is not NULL
 * also writes one snapshot row per process to it.  Processes that vanish
 * while being read are skipped.  0, or the csv's error.
 */
int ph_iot_sampler_take(struct ph_iot_sampler *s, int64_t mono_ns,
			struct ph_iot_csv *csv,
			struct ph_iot_clock *clock) PH_WUR;

/* Writes DIR/system_spec/{cpu,memory,disk,os}_info.json. */
int ph_iot_system_spec(const char *dir) PH_WUR;

/*
 * What /proc/TID/status says of a task, cached for PH_IOT_TASK_TTL_NS:
 * its process (Tgid) and that process's parent (PPid).  The binary reader
 * needs the tgid (the ring buffer records only the task), and every row
 * of the live collector gets its ppid.
 */
#define PH_IOT_TASK_TTL_NS ((int64_t)10 * 1000000000)

struct ph_iot_task_cache {
	struct {
		int32_t tid, tgid, ppid; /* -1: unknown (the task is gone) */
		int64_t at;		 /* when it was read; 0: empty */
	} slot[1024];
};

/*
 * Fills *tgid and *ppid for tid (-1 each when it cannot be read).  now is
 * CLOCK_MONOTONIC ns; an event's own time serves, and saves a clock read
 * per request.
 */
void ph_iot_task_of(struct ph_iot_task_cache *c, int32_t tid, int64_t now,
		    int32_t *tgid, int32_t *ppid);

/* ph_iot_task_of()'s ppid, in the shape struct ph_iot_ds_sink wants. */
int32_t ph_iot_ppid_of(void *cache, int32_t pid, int64_t now);

#endif
