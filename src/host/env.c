/* SPDX-License-Identifier: Apache-2.0 */
/* env.c: the host's environment (see env.h). */
#include "ph_common.h"
#include "env.h"

#include <unistd.h>

static const char *nonempty(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

const char *ph_env_app_id(void)
{
	return nonempty("PORTHOLE_APPLICATION_ID");
}

const char *ph_env_host(void)
{
	return nonempty("PORTHOLE_HOST");
}

int ph_env_port(void)
{
	const char *v = nonempty("PORTHOLE_PORT");
	long p = v ? strtol(v, NULL, 10) : 0;

	return p > 0 && p < 65536 ? (int)p : PH_DEFAULT_PORT;
}

const char *ph_env_project_root(void)
{
	return nonempty("PORTHOLE_PROJECT_ROOT");
}

const char *ph_env_sessions_dir(char *buf, size_t size)
{
	const char *root = ph_env_project_root();
	char cwd[4096];

	if (!root)
		root = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
	snprintf(buf, size, "%s/.porthole/sessions", root);
	return buf;
}

bool ph_env_sessions_enabled(void)
{
	const char *v = nonempty("PORTHOLE_SESSIONS");

	return !v || strcmp(v, "0");
}

uint64_t ph_env_sessions_max_bytes(void)
{
	const char *v = nonempty("PORTHOLE_SESSIONS_MAX_BYTES");
	unsigned long long n = v ? strtoull(v, NULL, 10) : 0;

	return n ? n : (uint64_t)500 << 20;
}

int64_t ph_env_sessions_max_age_ms(void)
{
	const char *v = nonempty("PORTHOLE_SESSIONS_MAX_AGE_DAYS");
	double d = v ? strtod(v, NULL) : 0;

	return (int64_t)((d > 0 ? d : 7) * 86400000.0);
}

int64_t ph_parse_duration_ms(const char *s)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	v = strtod(s, &end);
	if (end == s || v < 0)
		return -1;
	if (!*end || !strcmp(end, "ms"))
		return (int64_t)v;
	if (!strcmp(end, "s"))
		return (int64_t)(v * 1000);
	if (!strcmp(end, "m"))
		return (int64_t)(v * 60000);
	if (!strcmp(end, "h"))
		return (int64_t)(v * 3600000);
	if (!strcmp(end, "d"))
		return (int64_t)(v * 86400000);
	return -1;
}
