/* Growing an array to hold at least `need` elements: capacity grows by
 * half (from 64), new room is zeroed, and on failure the array is left as
 * it was. By half, not double: an array indexed by a count that creeps up
 * all day (thread slots under churn) then steps by half its size, not all
 * of it, when the count crosses its capacity. */
#ifndef TT_GROW_H
#define TT_GROW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline bool
grow_array(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	uint64_t n = *cap ? *cap : 64;
	while (n < need)
		n += n > 1 ? n / 2 : 1;   /* a capacity of 1 grows too */
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	void *p = realloc(*arr, (size_t)n * elem);
	if (!p)
		return false;
	memset((char *)p + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
	*arr = p;
	*cap = (uint32_t)n;
	return true;
}

/* Resizing an array to exactly n elements, larger or smaller, new room not
 * zeroed: for an array sized to follow its count, whose untouched tail then
 * costs no resident memory. On failure the array is left as it was. */
static inline bool
resize_array(void **arr, uint32_t *cap, uint32_t n, size_t elem)
{
	void *p = realloc(*arr, (size_t)(n ? n : 1) * elem);
	if (!p)
		return false;
	*arr = p;
	*cap = n;
	return true;
}

#endif
