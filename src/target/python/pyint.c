/* Python ints' encoding (pyint.h). */
#include "config.h"

#include "python/pyint.h"

bool
pyint_shape(const struct py_layout *l, uint64_t size, struct pyint_shape *out)
{
	if (l->long_signed_size) {
		int64_t s = (int64_t)size;
		out->negative = s < 0;
		out->ndigits = out->negative ? 0 - (uint64_t)s : (uint64_t)s;
		return true;
	}
	unsigned sign = size & 3;
	out->negative = sign == 2;
	out->ndigits = size >> 3;
	return sign != 3 && (sign == 1) == (out->ndigits == 0);
}

bool
pyint_digits_valid(const uint32_t *d, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (d[i] >> PYINT_DIGIT_BITS || (i + 1 == n && d[i] == 0))
			return false;
	return true;
}

bool
pyint_magnitude(const uint32_t *d, uint64_t n, uint64_t *out)
{
	if (!pyint_digits_valid(d, n) || n > 3 || (n == 3 && d[2] >> 4))
		return false;
	uint64_t v = 0;
	for (uint64_t i = n; i-- > 0;)
		v = v << PYINT_DIGIT_BITS | d[i];
	*out = v;
	return true;
}
