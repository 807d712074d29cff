/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness.h: the in-tree unit test harness.
 *
 * A test is any function `void test_<module>__<case>(void)` in tests/unit/;
 * the build collects them (scripts/collect-tests.sh), so there is no list to
 * keep.  CHECK* macros record a failure with file and line and return from
 * the test.  The runner prints one line per failure and, last, the count.
 */
#ifndef PH_HARNESS_H
#define PH_HARNESS_H

#include "ph_common.h"

/*
 * 1 where the tests may use the libraries Debian builds for glibc only
 * (zlib, SQLite, jansson, libdw, execinfo.h); a musl build (make musl)
 * sets 0, and the cases that need one are left out of its table.
 */
#ifndef PH_TEST_GLIBC_LIBS
#define PH_TEST_GLIBC_LIBS 1
#endif

void ph_test_fail(const char *file, int line, const char *fmt, ...)
	PH_PRINTF(3, 4);
extern int ph_test_failed; /* set by ph_test_fail for the running test */

#define CHECK(cond)                                                    \
	do {                                                           \
		if (!(cond)) {                                         \
			ph_test_fail(__FILE__, __LINE__, "%s", #cond); \
			return;                                        \
		}                                                      \
	} while (0)

#define CHECK_INT(a, b)                                                    \
	do {                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);        \
		if (a_ != b_) {                                            \
			ph_test_fail(__FILE__, __LINE__,                   \
				     "%s == %s: %lld != %lld", #a, #b, a_, \
				     b_);                                  \
			return;                                            \
		}                                                          \
	} while (0)

#define CHECK_STR(a, b)                                                       \
	do {                                                                  \
		const char *a_ = (a), *b_ = (b);                              \
		if (!a_ || !b_ || strcmp(a_, b_)) {                           \
			ph_test_fail(__FILE__, __LINE__,                      \
				     "%s == %s: \"%s\" != \"%s\"", #a, #b,    \
				     a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			return;                                               \
		}                                                             \
	} while (0)

/*
 * The path of a file under ../shared/fixtures (or $PORTHOLE_FIXTURES), in a
 * static buffer.  A missing fixture fails the test: it never skips.
 */
const char *ph_test_fixture(const char *rel);
#define FIXTURE(rel)                                               \
	({                                                         \
		const char *f_ = ph_test_fixture(rel);             \
		if (!f_) {                                         \
			ph_test_fail(__FILE__, __LINE__,           \
				     "fixture %s not found", rel); \
			return;                                    \
		}                                                  \
		f_;                                                \
	})

/* A fresh directory under $TMPDIR for this test, removed at exit. */
const char *ph_test_tmpdir(void);

#endif
