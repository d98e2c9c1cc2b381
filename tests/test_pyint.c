/* Unit tests for pyint: an int's size field (3.11's ob_size, 3.12's
 * lv_tag), its digits' validity, and its magnitude up to 2^64 - 1. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>

#include "python/pyint.h"
#include "tap.h"

static bool
shape(const struct py_layout *l, uint64_t size, uint64_t ndigits, bool negative)
{
	struct pyint_shape sh;
	return pyint_shape(l, size, &sh) && sh.ndigits == ndigits && sh.negative == negative;
}

static bool
rejected(const struct py_layout *l, uint64_t size)
{
	struct pyint_shape sh;
	return !pyint_shape(l, size, &sh);
}

int
main(void)
{
	struct py_layout tag = {.long_signed_size = false}, signed_size = {.long_signed_size = true};

	tap_ok(shape(&tag, 1, 0, false) && shape(&tag, 1 << 3, 1, false) &&
	       shape(&tag, 3 << 3 | 2, 3, true),
	       "lv_tag: 0 (sign 1, no digits), 1 digit positive, 3 digits negative");
	tap_ok(rejected(&tag, 0) && rejected(&tag, 1 << 3 | 1) && rejected(&tag, 2 << 3 | 3),
	       "lv_tag: a zero sign with digits, digits without one that says zero, sign 3: not an int");
	tap_ok(shape(&signed_size, 0, 0, false) && shape(&signed_size, 2, 2, false) &&
	       shape(&signed_size, (uint64_t)-3, 3, true),
	       "ob_size (3.11): the signed count of digits");

	uint32_t max[3] = {0x3fffffff, 0x3fffffff, 0xf};  /* 2^64 - 1 */
	uint64_t v = 0;
	tap_ok(pyint_magnitude(max, 3, &v) && v == UINT64_MAX, "2^64 - 1 from three digits");
	uint32_t over[3] = {0, 0, 0x10};                   /* 2^64 */
	tap_ok(!pyint_magnitude(over, 3, &v), "2^64: past 64 bits");
	uint32_t four[4] = {1, 0, 0, 1};
	tap_ok(!pyint_magnitude(four, 4, &v), "four digits: past 64 bits");
	uint32_t two[2] = {5, 1};
	tap_ok(pyint_magnitude(two, 2, &v) && v == (1ull << 30 | 5), "two digits: 2^30 + 5");
	tap_ok(pyint_magnitude(two, 0, &v) && v == 0, "no digits: 0");

	uint32_t wide[2] = {0x40000000, 1}, top0[2] = {7, 0};
	tap_ok(!pyint_digits_valid(wide, 2) && !pyint_magnitude(wide, 2, &v),
	       "a digit of 31 bits: not an int's");
	tap_ok(!pyint_digits_valid(top0, 2) && pyint_digits_valid(top0, 1),
	       "a top digit of 0: not a kept int's (the one below it alone is)");
	return tap_done();
}
