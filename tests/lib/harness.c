/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness.c: runs the collected tests; see harness.h.
 *
 * Usage: unit-tests [SUBSTRING...]   runs the tests whose names contain any
 * SUBSTRING (all when none).  PH_TEST_SUITE names the suite in the summary.
 * Prints "ok <name>" / "FAIL <name>: <file>:<line>: <why>" per test and
 * ends with "[<suite>] N passed, N failed", which tests/run-suites.sh adds
 * up into the one closing line of `make test`.
 */
#include "ph_common.h"
#include "harness.h"

#include <unistd.h>
#include <sys/stat.h>

struct ph_test {
	const char *name;
	void (*fn)(void);
};
extern const struct ph_test ph_tests[]; /* generated */
extern const size_t ph_tests_count;

int ph_test_failed;
static char tmp_root[256];

void ph_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "  %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	ph_test_failed = 1;
}

const char *ph_test_fixture(const char *rel)
{
	static char path[4096];
	const char *root = getenv("PORTHOLE_FIXTURES");

	snprintf(path, sizeof(path), "%s/%s",
		 root ? root : "../shared/fixtures", rel);
	return access(path, R_OK) ? NULL : path;
}

static void remove_tmp(void)
{
	char cmd[300];

	if (tmp_root[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", tmp_root);
	}
}

const char *ph_test_tmpdir(void)
{
	static char dir[300];
	static int n;
	const char *t = getenv("TMPDIR");

	if (!tmp_root[0]) {
		snprintf(tmp_root, sizeof(tmp_root), "%s/ph-test-XXXXXX",
			 t ? t : "/tmp");
		if (!mkdtemp(tmp_root))
			return NULL;
		atexit(remove_tmp);
	}
	snprintf(dir, sizeof(dir), "%s/%d", tmp_root, n++);
	return mkdir(dir, 0700) ? NULL : dir;
}

static int selected(const char *name, int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strstr(name, argv[i]))
			return 1;
	return argc < 2;
}

int main(int argc, char **argv)
{
	const char *suite = getenv("PH_TEST_SUITE");
	int passed = 0, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < ph_tests_count; i++) {
		if (!selected(ph_tests[i].name, argc, argv))
			continue;
		ph_test_failed = 0;
		ph_tests[i].fn();
		printf("%s %s\n", ph_test_failed ? "FAIL" : "ok",
		       ph_tests[i].name);
		*(ph_test_failed ? &failed : &passed) += 1;
	}
	printf("[%s] %d passed, %d failed\n", suite ? suite : "unit", passed,
	       failed);
	return failed ? 1 : 0;
}
