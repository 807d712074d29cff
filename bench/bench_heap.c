/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_heap: the heap engine on a real JVM dump of >= 100 MB.
 *
 * bench/heap/make-dump.sh builds bench/heap/LeakBench.java (millions of
 * linked objects and one planted leak: a destroyed activity kept by a
 * static listener list), runs it and takes the dump with
 * `jcmd <pid> GC.heap_dump` into build/bench-heap/leak.hprof (reused
 * while LeakBench.java is older than it).
 *
 * Figures (group heap):
 *   heap_parse_gbps          open + index (one pass, mmap), dump bytes/s,
 *                            best of 5 with the file in the page cache;
 *                            cpu_gbps is the same over the process's CPU
 *                            time, which a loaded machine disturbs less
 *   heap_leaks_100mb_s       end-to-end `porthole heap leaks DUMP` (open,
 *                            graph, dominators, paths, traces, text),
 *                            run in a child process, best of 3
 *   heap_rss_ratio           that child's peak RSS / dump size
 *   heap_index_bytes_per_object  the anonymous memory (resident, from
 *                            /proc/self/smaps_rollup) that one open + index
 *                            added, per object: the dump itself is a file
 *                            mapping and does not count, everything the
 *                            index allocated does (keys, offsets, strings,
 *                            classes), measured, not computed
 */
#include "ph_common.h"
#include "ph_clock.h"
#include "heap/heap.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char dump[] = "build/bench-heap/leak.hprof";

static double now_s(void)
{
	return (double)ph_clock_mono_ns() / 1e9;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int ensure_dump(void)
{
	struct stat d, j;

	if (!stat(dump, &d) && !stat("bench/heap/LeakBench.java", &j) &&
	    d.st_mtime >= j.st_mtime && d.st_size >= 100000000)
		return 0;
	if (system("mkdir -p build/bench-heap && "
		   "sh bench/heap/make-dump.sh build/bench-heap/leak.hprof"))
		return -1;
	return stat(dump, &d) || d.st_size < 100000000 ? -1 : 0;
}

/* Resident anonymous memory of this process in kB, or -1. */
static long anon_kb(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Anonymous:", 10))
			kb = strtol(line + 10, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

int main(void)
{
	double best_parse = 1e9, best_parse_cpu = 1e9, best_leaks = 1e9;
	long maxrss_kb = 0;
	uint64_t nobj = 0;
	long index_kb = -1;
	struct stat st;

	if (ensure_dump() || stat(dump, &st)) {
		fprintf(stderr,
			"bench_heap: could not make %s (needs javac, "
			"java and jcmd)\n",
			dump);
		return 1;
	}
	/* leaks first, while this process is small: a fork shares our RSS */
	for (int i = 0; i < 3; i++) {
		struct rusage ru;
		int status;
		double t0 = now_s();
		pid_t pid = fork();

		if (pid == 0) {
			struct ph_heap_cmd_opts o = { .dump = dump };
			FILE *null = fopen("/dev/null", "w");
			int rc = ph_heap_cmd_leaks(&o, null ? null : stdout);

			_exit(rc == 1 ? 0 : 3);
		}
		if (pid < 0 || wait4(pid, &status, 0, &ru) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "bench_heap: leaks run failed\n");
			return 1;
		}
		double t = now_s() - t0;
		if (t < best_leaks)
			best_leaks = t;
		if (ru.ru_maxrss > maxrss_kb)
			maxrss_kb = ru.ru_maxrss;
	}
	for (int i = 0; i < 5; i++) {
		struct ph_heap h;
		long a0 = anon_kb(), a1;
		double t0 = now_s(), c0 = cpu_s(), t, c;

		ph_heap_init(&h);
		if (ph_heap_open(&h, dump)) {
			fprintf(stderr, "bench_heap: cannot open %s\n", dump);
			return 1;
		}
		t = now_s() - t0;
		c = cpu_s() - c0;
		if (t < best_parse)
			best_parse = t;
		if (c < best_parse_cpu)
			best_parse_cpu = c;
		nobj = h.nobj;
		/* the first open's growth: later ones reuse pages that
		 * malloc kept from the previous release, and grow less */
		a1 = anon_kb();
		if (i == 0 && a0 >= 0 && a1 >= a0)
			index_kb = a1 - a0;
		ph_heap_release(&h);
	}
	printf("{\"name\":\"heap_parse_gbps\",\"value\":%.2f,\"unit\":\"GB/s\","
	       "\"cpu_gbps\":%.2f,\"bytes\":%lld,\"objects\":%" PRIu64 "}\n",
	       (double)st.st_size / best_parse / 1e9,
	       (double)st.st_size / best_parse_cpu / 1e9, (long long)st.st_size,
	       nobj);
	printf("{\"name\":\"heap_leaks_100mb_s\",\"value\":%.3f,\"unit\":\"s\","
	       "\"bytes\":%lld}\n",
	       best_leaks, (long long)st.st_size);
	printf("{\"name\":\"heap_rss_ratio\",\"value\":%.2f,\"unit\":\"x\","
	       "\"peak_rss_bytes\":%lld}\n",
	       (double)maxrss_kb * 1024 / (double)st.st_size,
	       (long long)maxrss_kb * 1024);
	if (index_kb < 0 || !nobj) {
		fprintf(stderr, "bench_heap: cannot read the index's memory "
				"from /proc/self/smaps_rollup\n");
		return 1;
	}
	printf("{\"name\":\"heap_index_bytes_per_object\",\"value\":%.1f,"
	       "\"unit\":\"B\",\"anon_bytes\":%lld,\"objects\":%" PRIu64 "}\n",
	       (double)index_kb * 1024 / (double)nobj,
	       (long long)index_kb * 1024, nobj);
	return 0;
}
