/* Unit tests for jsonw: separators, keys, styles, escaping, numbers, depth. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "tap.h"

static char *buf;
static size_t len;

static struct jsonw *
start(struct jsonw *w)
{
	free(buf);
	buf = NULL;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	jsonw_init(w, f);
	return w;
}

static void
expect(struct jsonw *w, const char *want, const char *what)
{
	fclose(w->f);
	tap_ok(strcmp(buf, want) == 0, "%s", what);
	if (strcmp(buf, want) != 0)
		tap_diag("got  %s\n# want %s", buf, want);
}

int
main(void)
{
	struct jsonw w;

	start(&w);
	jsonw_object(&w, NULL);
	jsonw_string(&w, "a", "x");
	jsonw_u64(&w, "b", 18446744073709551615ull);
	jsonw_i64(&w, "c", -5);
	jsonw_bool(&w, "d", true);
	jsonw_null(&w, "e");
	jsonw_array(&w, "f");
	jsonw_end(&w);
	jsonw_object(&w, "g");
	jsonw_end(&w);
	jsonw_end(&w);
	expect(&w, "{\"a\": \"x\", \"b\": 18446744073709551615, \"c\": -5, \"d\": true, "
		   "\"e\": null, \"f\": [], \"g\": {}}", "members separated by \", \", empty containers");

	start(&w);
	jsonw_array(&w, NULL);
	jsonw_style(&w, true, "\n  ");
	for (int i = 0; i < 3; i++) {
		jsonw_array(&w, NULL);
		jsonw_style(&w, true, NULL);
		jsonw_u64(&w, NULL, (uint64_t)i);
		jsonw_u64(&w, NULL, (uint64_t)i + 1);
		jsonw_end(&w);
	}
	jsonw_end(&w);
	expect(&w, "[\n  [0,1],\n  [1,2],\n  [2,3]]", "compact items, each after its prefix");

	start(&w);
	jsonw_object(&w, NULL);
	jsonw_u64(&w, "a", 1);
	jsonw_break(&w, "\n ");
	jsonw_u64(&w, "b", 2);
	jsonw_u64(&w, "c", 3);
	jsonw_end(&w);
	expect(&w, "{\"a\": 1,\n \"b\": 2, \"c\": 3}", "a break replaces one separator's space");

	start(&w);
	jsonw_string(&w, NULL, "q\"\\\n\x1b\xc2\x85\xff");
	expect(&w, "\"q\\\"\\\\\\n\\u001b\\u0085\\ufffd\"", "strings escaped as json_put_string does");

	start(&w);
	jsonw_object(&w, NULL);
	jsonw_string(&w, "k\"", "v");
	jsonw_end(&w);
	expect(&w, "{\"k\\\"\": \"v\"}", "keys escaped too");

	start(&w);
	jsonw_array(&w, NULL);
	jsonw_double(&w, NULL, 3, 2.0 / 3);
	jsonw_double(&w, NULL, 1, NAN);
	jsonw_double(&w, NULL, 1, -INFINITY);
	jsonw_double(&w, NULL, 0, 12.5);
	jsonw_end(&w);
	expect(&w, "[0.667, null, null, 12]", "numbers with their decimals; NaN and infinity null");

	start(&w);
	jsonw_tight(&w);
	jsonw_object(&w, NULL);
	jsonw_array(&w, "a");
	jsonw_u64(&w, NULL, 1);
	jsonw_u64(&w, NULL, 2);
	jsonw_end(&w);
	jsonw_string(&w, "b", "c");
	jsonw_end(&w);
	expect(&w, "{\"a\":[1,2],\"b\":\"c\"}", "tight: no spaces");

	start(&w);
	jsonw_array(&w, NULL);
	for (int i = 0; i < JSONW_MAX_DEPTH + 5; i++)
		jsonw_array(&w, NULL);
	jsonw_u64(&w, NULL, 7);
	for (int i = 0; i < JSONW_MAX_DEPTH + 5; i++)
		jsonw_end(&w);
	jsonw_u64(&w, NULL, 8);
	jsonw_end(&w);
	char want[256] = "";
	for (int i = 0; i < JSONW_MAX_DEPTH; i++)
		strcat(want, "[");
	strcat(want, "null");
	for (int i = 0; i < JSONW_MAX_DEPTH - 1; i++)
		strcat(want, "]");
	strcat(want, ", 8]");
	expect(&w, want, "nested past the deepest: null there, the document well-formed");

	free(buf);
	return tap_done();
}
