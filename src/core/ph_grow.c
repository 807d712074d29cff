/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_grow.c: the one grow-by-doubling step (ph_common.h), so no caller
 * multiplies a count or a byte size without checking it.
 */
#include "ph_common.h"
#include "ph_error.h"

int ph_grow(void **p, size_t *alloc, size_t need, size_t size, size_t min)
{
	size_t n = *alloc ? *alloc : (min ? min : 1);
	void *q;

	if (need <= *alloc)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return PH_ENOMEM;
		n *= 2;
	}
	if (size && n > SIZE_MAX / size)
		return PH_ENOMEM;
	q = realloc(*p, n * size);
	if (!q)
		return PH_ENOMEM;
	*p = q;
	*alloc = n;
	return 0;
}
