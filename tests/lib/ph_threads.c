/* SPDX-License-Identifier: Apache-2.0 */
#include "ph_common.h"
#include "ph_threads.h"

#include <dirent.h>

/* The contents of /proc/self/task/TID/FILE into buf, or false. */
static bool read_task(int tid, const char *file, char *buf, size_t size)
{
	char path[96];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, file);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n > 0;
}

int ph_thread_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int tid = 0;

	while (d && !tid && (e = readdir(d))) {
		char comm[64];

		if (e->d_name[0] == '.' ||
		    !read_task(atoi(e->d_name), "comm", comm, sizeof(comm)))
			continue;
		comm[strcspn(comm, "\n")] = '\0';
		if (!strcmp(comm, name))
			tid = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return tid;
}

int64_t ph_thread_schedstat(int tid, int field)
{
	char buf[256], *p = buf;

	if (!read_task(tid, "schedstat", buf, sizeof(buf)))
		return -1;
	for (int i = 0; i < field && p; i++) {
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	return p ? strtoll(p, NULL, 10) : -1;
}

int64_t ph_thread_status(int tid, const char *field)
{
	char buf[4096];
	size_t n = strlen(field);

	if (!read_task(tid, "status", buf, sizeof(buf)))
		return -1;
	/* at the start of a line: "voluntary_..." is inside "nonvoluntary_..."
	 */
	for (const char *line = buf; line;) {
		if (!strncmp(line, field, n))
			return strtoll(line + n, NULL, 10);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -1;
}
