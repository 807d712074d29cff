/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_log.c: the diagnostics logger: one write(2) a line to stderr or the
 * fd it was given, never stdout; PORTHOLE_LOG sets the level (ph_log.h).
 */
#include "ph_common.h"
#include "ph_log.h"

#include <stdatomic.h>
#include <unistd.h>

static atomic_int log_fd = 2;
static atomic_int log_level = -1; /* -1: not read from the environment yet */
static const char *log_name = "porthole";

static const char *const level_names[] = { "debug", "info", "warning",
					   "error" };

static int threshold(void)
{
	int level = atomic_load_explicit(&log_level, memory_order_relaxed);
	const char *env;

	if (level >= 0)
		return level;
	level = PH_LOG_INFO;
	env = getenv("PORTHOLE_LOG");
	if (env) {
		for (int i = 0; i < (int)PH_ARRAY_SIZE(level_names); i++)
			if (!strcmp(env, level_names[i]) ||
			    (i == PH_LOG_WARN && !strcmp(env, "warn")))
				level = i;
	}
	atomic_store_explicit(&log_level, level, memory_order_relaxed);
	return level;
}

void ph_log_set_fd(int fd)
{
	atomic_store(&log_fd, fd);
}

int ph_log_fd(void)
{
	return atomic_load(&log_fd);
}

void ph_log_set_level(enum ph_log_level level)
{
	atomic_store(&log_level, (int)level);
}

void ph_log_set_name(const char *name)
{
	log_name = name;
}

void ph_logv(enum ph_log_level level, const char *fmt, va_list ap)
{
	char line[1024];
	int n, m;

	if ((int)level < threshold())
		return;
	n = snprintf(line, sizeof(line), "%s: %s: ", log_name,
		     level_names[level]);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n >= sizeof(line) - 1)
		n = sizeof(line) - 2; /* truncated: keep the newline */
	line[n++] = '\n';
	/* One write per line; a failed diagnostic has nowhere to go. */
	if (write(atomic_load(&log_fd), line, (size_t)n) < 0)
		return;
}

void ph_log(enum ph_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ph_logv(level, fmt, ap);
	va_end(ap);
}
