/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracefs.c: finding, mounting, borrowing and giving back tracefs; see
 * tracefs.h for the rule.
 */
#include "ph_common.h"
#include "ph_error.h"
#include "ph_log.h"
#include "iotrace/tracefs.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOUNT_POINT "/sys/kernel/tracing"

static const char *const roots[] = {
	MOUNT_POINT,
	"/sys/kernel/debug/tracing",
};

const char *ph_iot_tracefs_path(const struct ph_iot_tracefs *t, const char *rel,
				char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", t->dir, rel);
	return buf;
}

bool ph_iot_tracefs_has(const struct ph_iot_tracefs *t, const char *rel)
{
	char p[2048];

	return !access(ph_iot_tracefs_path(t, rel, p, sizeof(p)), F_OK);
}

static int read_path(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return PH_EIO;
	while (n + 1 < size) {
		ssize_t k = read(fd, buf + n, size - 1 - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

int ph_iot_tracefs_read(const struct ph_iot_tracefs *t, const char *rel,
			char *buf, size_t size)
{
	char p[2048];

	return read_path(ph_iot_tracefs_path(t, rel, p, sizeof(p)), buf, size);
}

static int write_path(const char *path, const char *value, int flags)
{
	size_t n = strlen(value);
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	ssize_t k;
	int e;

	if (fd < 0)
		return PH_EIO;
	do
		k = write(fd, value, n);
	while (k < 0 && errno == EINTR);
	e = errno;
	close(fd);
	errno = e;
	return k == (ssize_t)n ? 0 : PH_EIO;
}

/*
 * What to write back to restore a file, from what reading it gave:
 * "[local] global counter" -> "local"; "7 (expanded: 1408)" -> "1408";
 * "0*" (soft-disabled event) -> "0"; otherwise the first line.
 */
static char *restorable(const char *rel, const char *text)
{
	const char *p = text, *e;
	size_t rl = strlen(rel);

	if (rl >= 11 && !strcmp(rel + rl - 11, "trace_clock") &&
	    (p = strchr(text, '['))) {
		p++;
		e = strchr(p, ']');
		return e ? strndup(p, (size_t)(e - p)) : NULL;
	}
	if ((p = strstr(text, "(expanded: "))) {
		p += 11;
		e = p + strspn(p, "0123456789");
		return strndup(p, (size_t)(e - p));
	}
	p = text;
	e = p + strcspn(p, "\n");
	while (e > p && (e[-1] == ' ' || e[-1] == '*'))
		e--;
	return strndup(p, (size_t)(e - p));
}

int ph_iot_tracefs_set(struct ph_iot_tracefs *t, const char *rel,
		       const char *value)
{
	char p[2048], old[4096];
	size_t i;

	ph_iot_tracefs_path(t, rel, p, sizeof(p));
	for (i = 0; i < t->n_saved; i++)
		if (!strcmp(t->saved[i].rel, rel))
			break;
	if (i == t->n_saved) {
		if (i == PH_IOT_SAVED_MAX ||
		    strlen(rel) >= sizeof(t->saved[0].rel))
			return ph_error(PH_EINVAL, "tracefs: too many files");
		if (read_path(p, old, sizeof(old)))
			return PH_EIO;
		t->saved[i].value = restorable(rel, old);
		if (!t->saved[i].value)
			return PH_ENOMEM;
		snprintf(t->saved[i].rel, sizeof(t->saved[i].rel), "%s", rel);
		t->n_saved++;
	}
	return write_path(p, value, O_TRUNC);
}

int ph_iot_tracefs_clear(struct ph_iot_tracefs *t)
{
	char p[2048];

	return write_path(ph_iot_tracefs_path(t, "trace", p, sizeof(p)), "",
			  O_TRUNC);
}

/* Instances named porthole-PID whose PID is gone: a killed run's. */
static void remove_stale(const char *root)
{
	char dir[1100], p[1400];
	struct dirent *d;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/instances", root);
	dp = opendir(dir);
	if (!dp)
		return;
	while ((d = readdir(dp))) {
		char *end;
		long pid;

		if (strncmp(d->d_name, "porthole-", 9))
			continue;
		pid = strtol(d->d_name + 9, &end, 10);
		if (*end || pid <= 0 || pid == getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, d->d_name);
		if (!rmdir(p))
			ph_info("removed tracefs instance %s left by a "
				"killed run",
				d->d_name);
	}
	closedir(dp);
}

static int fail(char *why, size_t size, int code, const char *fmt, ...)
	PH_PRINTF(4, 5);

static int fail(char *why, size_t size, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return code;
}

/* At the top level, set_event as found, to compare with at the end. */
static int save_set_event(struct ph_iot_tracefs *t)
{
	char buf[65536];

	if (ph_iot_tracefs_read(t, "set_event", buf, sizeof(buf)))
		return 0; /* no set_event: nothing to restore */
	t->set_event = strdup(buf);
	return t->set_event ? 0 : PH_ENOMEM;
}

int ph_iot_tracefs_open(struct ph_iot_tracefs *t, const char *path,
			bool top_level, char *why, size_t why_size)
{
	char p[2048];

	memset(t, 0, sizeof(*t));
	if (path) {
		snprintf(p, sizeof(p), "%s/trace_pipe", path);
		if (access(p, R_OK))
			return fail(why, why_size, PH_EUNSUPP,
				    "%s is not a usable tracefs (%s: %s)", path,
				    p, strerror(errno));
		snprintf(t->root, sizeof(t->root), "%s", path);
	} else {
		for (size_t i = 0; i < PH_ARRAY_SIZE(roots) && !t->root[0];
		     i++) {
			snprintf(p, sizeof(p), "%s/trace_pipe", roots[i]);
			if (!access(p, R_OK))
				snprintf(t->root, sizeof(t->root), "%s",
					 roots[i]);
		}
		if (!t->root[0]) {
			if (mount("nodev", MOUNT_POINT, "tracefs", 0, NULL))
				return fail(why, why_size, PH_EUNSUPP,
					    "tracefs is not mounted and "
					    "mounting it at %s failed: %s",
					    MOUNT_POINT, strerror(errno));
			t->mounted = true;
			snprintf(t->root, sizeof(t->root), "%s", MOUNT_POINT);
			snprintf(p, sizeof(p), "%s/trace_pipe", MOUNT_POINT);
			if (access(p, R_OK)) {
				int e = errno;

				umount(MOUNT_POINT);
				t->mounted = false;
				return fail(why, why_size, PH_EUNSUPP,
					    "mounted tracefs at %s but cannot "
					    "read trace_pipe: %s",
					    MOUNT_POINT, strerror(e));
			}
		}
	}
	t->open = true;
	snprintf(t->dir, sizeof(t->dir), "%s", t->root);
	if (top_level)
		return save_set_event(t);
	remove_stale(t->root);
	snprintf(t->instance, sizeof(t->instance), "porthole-%d",
		 (int)getpid());
	snprintf(p, sizeof(p), "%s/instances/%s", t->root, t->instance);
	if (mkdir(p, 0755)) {
		ph_warn("cannot make a tracefs instance (%s: %s); using the "
			"top-level buffer, which is restored at the end",
			p, strerror(errno));
		t->instance[0] = '\0';
		return save_set_event(t);
	}
	t->created = true;
	snprintf(t->dir, sizeof(t->dir), "%s/instances/%s", t->root,
		 t->instance);
	return 0;
}

static int restore_set_event(struct ph_iot_tracefs *t)
{
	char p[2048], now[65536];
	const char *s, *e;
	int rc = 0;

	/* the kernel lists enabled events in a stable order */
	if (!t->set_event ||
	    ph_iot_tracefs_read(t, "set_event", now, sizeof(now)) ||
	    !strcmp(now, t->set_event))
		return 0;
	ph_iot_tracefs_path(t, "set_event", p, sizeof(p));
	if (write_path(p, "", O_TRUNC))
		rc = PH_EIO;
	for (s = t->set_event; *s; s = *e ? e + 1 : e) {
		char ev[512];

		e = s + strcspn(s, "\n");
		if (e == s || (size_t)(e - s) >= sizeof(ev) - 1)
			continue;
		snprintf(ev, sizeof(ev), "%.*s\n", (int)(e - s), s);
		if (write_path(p, ev, O_APPEND))
			rc = PH_EIO;
	}
	if (rc)
		ph_log(PH_LOG_ERROR, "tracefs: could not restore %s: %s", p,
		       strerror(errno));
	return rc;
}

int ph_iot_tracefs_restore(struct ph_iot_tracefs *t)
{
	char p[2048];
	int rc = 0;

	if (!t->open)
		return 0;
	for (size_t i = t->n_saved; i-- > 0;) {
		ph_iot_tracefs_path(t, t->saved[i].rel, p, sizeof(p));
		if (write_path(p, t->saved[i].value, O_TRUNC)) {
			ph_log(PH_LOG_ERROR,
			       "tracefs: could not restore %s to '%s': %s", p,
			       t->saved[i].value, strerror(errno));
			rc = PH_EIO;
		}
		free(t->saved[i].value);
		t->saved[i].value = NULL;
	}
	t->n_saved = 0;
	if (restore_set_event(t))
		rc = PH_EIO;
	free(t->set_event);
	t->set_event = NULL;
	if (t->created) {
		int tries = 0;

		/* a reader closing trace_pipe may still hold it a moment */
		while (rmdir(t->dir) && errno == EBUSY && tries++ < 50)
			usleep(10000);
		if (tries > 50 || (access(t->dir, F_OK) == 0)) {
			ph_log(PH_LOG_ERROR,
			       "tracefs: could not remove instance %s: %s",
			       t->dir, strerror(errno));
			rc = PH_EIO;
		}
		t->created = false;
	}
	if (t->mounted) {
		if (umount(t->root)) {
			ph_log(PH_LOG_ERROR,
			       "tracefs: could not unmount %s (porthole "
			       "mounted it): %s",
			       t->root, strerror(errno));
			rc = PH_EIO;
		}
		t->mounted = false;
	}
	t->open = false;
	return rc;
}
