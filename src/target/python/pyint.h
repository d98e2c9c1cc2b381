/* Python ints as the target keeps them: a size field and 30-bit digits,
 * least significant first. 3.11's size field is ob_size, the signed count
 * of digits; 3.12's is lv_tag, the count << 3 | the sign (0 positive,
 * 1 zero, 2 negative). Every reader of an int decodes it here. */
#ifndef TT_PYINT_H
#define TT_PYINT_H

#include <stdbool.h>
#include <stdint.h>

#include "python/pylayout.h"

#define PYINT_DIGIT_BITS 30

struct pyint_shape {
	uint64_t ndigits;
	bool negative;
};

/* What an int's size field says: false when it cannot be one (memory
 * being freed or reused: a sign of 3, a zero with digits). */
bool pyint_shape(const struct py_layout *l, uint64_t size, struct pyint_shape *out);

/* The digits of a kept int are each under 2^30 and the top one is not 0:
 * false when n of them at d are not. */
bool pyint_digits_valid(const uint32_t *d, uint64_t n);

/* The magnitude of n valid digits, false when it is 2^64 or more. */
bool pyint_magnitude(const uint32_t *d, uint64_t n, uint64_t *out);

#endif
