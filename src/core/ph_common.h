/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_common.h: the first include of every .c file in the project.
 *
 * It pulls in the system headers nearly every file needs, then banned.h, so
 * that no later include can re-declare a banned function.  It also holds the
 * few compiler attributes the project uses; keep it small.
 */
#ifndef PH_COMMON_H
#define PH_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

/* A status that must be looked at: buffer appends, reads, parses. */
#define PH_WUR __attribute__((warn_unused_result))
/* Marks printf-like functions so -Wformat=2 checks every call. */
#define PH_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define PH_NORETURN	     __attribute__((noreturn))
#define PH_LIKELY(x)	     __builtin_expect(!!(x), 1)
#define PH_UNLIKELY(x)	     __builtin_expect(!!(x), 0)
#define PH_ARRAY_SIZE(a)     (sizeof(a) / sizeof((a)[0]))
/* Internal symbols of the agent stay out of the app's dynamic symbol table. */
#define PH_HIDDEN __attribute__((visibility("hidden")))
/*
 * For a function that reads a few bytes past the end of an object on
 * purpose, never past its page (a 16-byte load of a short string): the
 * sanitizers would take that for an overflow or a race.
 */
#define PH_NO_SANITIZE_OVERREAD \
	__attribute__((no_sanitize("address", "thread")))

/*
 * Grows the array *p, of *alloc elements of size bytes each, to hold at
 * least need: from min (when empty), doubling, with realloc.  The new
 * elements are not initialised.  Returns 0, or PH_ENOMEM (ph_error.h) when the
 * size overflows size_t or realloc fails, leaving *p and *alloc as they
 * were.  PH_GROW takes the array and its count by name:
 * `if (PH_GROW(v, alloc, n + 1, 64)) return PH_ENOMEM;`.
 */
int ph_grow(void **p, size_t *alloc, size_t need, size_t size,
	    size_t min) PH_WUR;
#define PH_GROW(arr, alloc, need, min) \
	ph_grow((void **)&(arr), &(alloc), (need), sizeof(*(arr)), (min))

#include "banned.h"

#endif
