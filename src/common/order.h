/* Sorting: orderings, and the one way arrays are sorted. */
#ifndef TT_ORDER_H
#define TT_ORDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* qsort for an array that may be empty: an empty one may have no storage
 * yet, and qsort may not be given NULL even for no elements. */
static inline void
order_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* Ascending uint64_t. */
static inline int
order_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

#endif
