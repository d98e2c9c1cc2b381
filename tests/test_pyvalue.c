/* Unit and fuzz tests of pyvalue on objects built in a fake memory with
 * 3.12's layout: repr() of floats, ints, str and bytes escapes,
 * containers cut at their limits, user classes, classes, methods, built-in
 * functions, modules; then the same objects
 * corrupted at random (bad type pointers, cycles, lengths of 2^62): no
 * crash, no hang, reads within the budget. */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakemem.h"
#include "python/pylayout.h"
#include "python/pyvalue.h"
#include "mem/remote.h"
#include "tap.h"

#define HEAP 0x100000ull
#define HEAP_SIZE (1u << 20)

static struct fakemem mem;
static uint8_t *heap;
static uint64_t next_free;
static struct py_layout lay;

static uint64_t
alloc(size_t n)
{
	uint64_t at = next_free;
	next_free += (n + 15) & ~(size_t)15;
	if (next_free > HEAP + HEAP_SIZE)
		abort();
	return at;
}

static void
w64(uint64_t addr, uint64_t v)
{
	memcpy(heap + (addr - HEAP), &v, 8);
}

static void
w32(uint64_t addr, uint32_t v)
{
	memcpy(heap + (addr - HEAP), &v, 4);
}

static void
wbytes(uint64_t addr, const void *p, size_t n)
{
	memcpy(heap + (addr - HEAP), p, n);
}

static uint64_t
cstring(const char *s)
{
	uint64_t at = alloc(strlen(s) + 1);
	wbytes(at, s, strlen(s) + 1);
	return at;
}

static uint64_t
mk_type(const char *name, bool heap_type)
{
	uint64_t t = alloc(900);
	w64(t + lay.tp_name, cstring(name));
	w64(t + lay.type_flags, heap_type ? PY_TPFLAGS_HEAPTYPE : 0);
	return t;
}

static uint64_t T_INT, T_FLOAT, T_STR, T_BYTES, T_TUPLE, T_LIST, T_DICT, T_NONE, T_BOOL, T_USER,
	T_TYPE, T_FUNCTION, T_METHOD, T_CFUNCTION, T_MODULE;

static uint64_t
obj(uint64_t type, size_t size)
{
	uint64_t o = alloc(size);
	w64(o + lay.ob_type, type);
	return o;
}

static uint64_t
mk_float(double x)
{
	uint64_t o = obj(T_FLOAT, 24);
	wbytes(o + lay.float_value, &x, 8);
	return o;
}

/* |v| < 2^60, sign apart */
static uint64_t
mk_int(int64_t v)
{
	uint64_t o = obj(T_INT, 40);
	uint64_t m = v < 0 ? (uint64_t)-v : (uint64_t)v;
	uint32_t d[3] = {(uint32_t)(m & 0x3fffffff), (uint32_t)((m >> 30) & 0x3fffffff), 0};
	uint64_t n = m == 0 ? 0 : (m >> 30) ? 2 : 1;
	w64(o + lay.long_size, n << 3 | (m == 0 ? 1 : v < 0 ? 2 : 0));
	wbytes(o + lay.long_digits, d, 8);
	return o;
}

static uint64_t
mk_str(const char *ascii)
{
	size_t n = strlen(ascii);
	uint64_t o = obj(T_STR, lay.str_ascii_size + n + 1);
	w64(o + lay.str_length, n);
	w32(o + lay.str_state, 1u << 2 | 1u << 5 | 1u << 6);   /* kind 1, compact, ascii */
	wbytes(o + lay.str_ascii_size, ascii, n);
	return o;
}

static uint64_t
mk_bytes(const void *p, size_t n)
{
	uint64_t o = obj(T_BYTES, lay.bytes_sval + n + 1);
	w64(o + lay.bytes_size, n);
	wbytes(o + lay.bytes_sval, p, n);
	return o;
}

static uint64_t
mk_tuple(size_t n, const uint64_t *items)
{
	uint64_t o = obj(T_TUPLE, lay.tuple_item + 8 * n);
	w64(o + lay.tuple_size, n);
	for (size_t i = 0; i < n; i++)
		w64(o + lay.tuple_item + 8 * i, items[i]);
	return o;
}

static uint64_t
mk_list(size_t n, const uint64_t *items)
{
	uint64_t o = obj(T_LIST, 40), a = alloc(8 * (n ? n : 1));
	w64(o + lay.list_size, n);
	w64(o + lay.list_item, a);
	for (size_t i = 0; i < n; i++)
		w64(a + 8 * i, items[i]);
	return o;
}

/* A combined dict of general entries (hash, key, value). */
static uint64_t
mk_dict(size_t n, const uint64_t *keys, const uint64_t *values)
{
	uint64_t d = obj(T_DICT, 48), k = alloc(PY_DICTKEYS_INDICES + 8 + 24 * n);
	w64(d + lay.dict_used, n);
	w64(d + lay.dict_keys, k);
	w64(d + lay.dict_values, 0);
	heap[k - HEAP + PY_DICTKEYS_LOG2_SIZE] = 3;
	heap[k - HEAP + PY_DICTKEYS_LOG2_INDEX_BYTES] = 3;
	heap[k - HEAP + PY_DICTKEYS_KIND] = 0;
	w64(k + PY_DICTKEYS_NENTRIES, n);
	uint64_t e = k + PY_DICTKEYS_INDICES + 8;
	for (size_t i = 0; i < n; i++) {
		w64(e + 24 * i + 8, keys[i]);
		w64(e + 24 * i + 16, values[i]);
	}
	return d;
}

static struct pyvalue v;

static void
expect_repr(uint64_t o, const char *want, const char *what)
{
	char text[PYVALUE_TEXT_MAX], type[160];
	pyvalue_repr(&v, o, text, type, sizeof type);
	tap_ok(strcmp(text, want) == 0, "%s: %s (want %s)", what, text, want);
}

static void
test_floats(void)
{
	static const struct { double x; const char *want; } cases[] = {
		{0.1, "0.1"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"}, {1.5e-7, "1.5e-07"},
		{-0.0, "-0.0"}, {0.0001, "0.0001"}, {0.00001, "1e-05"}, {123.456, "123.456"},
		{5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
		{2.0, "2.0"}, {-1.25, "-1.25"}, {1.0 / 3, "0.3333333333333333"},
		{123456789012345678.0, "1.2345678901234568e+17"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_repr(mk_float(cases[i].x), cases[i].want, "float");
	expect_repr(mk_float(NAN), "nan", "float nan");
	expect_repr(mk_float(-INFINITY), "-inf", "float -inf");
}

static void
test_scalars(void)
{
	expect_repr(mk_int(0), "0", "int 0");
	expect_repr(mk_int(-5), "-5", "int -5");
	expect_repr(mk_int(1073741824), "1073741824", "int 2^30 (two digits)");
	expect_repr(mk_int(-1152921504606846975), "-1152921504606846975", "int -(2^60-1)");
	uint64_t none = obj(T_NONE, 16), yes = obj(T_BOOL, 32);
	w64(yes + lay.long_size, 1u << 3);
	w32(yes + lay.long_digits, 1);
	expect_repr(none, "None", "None");
	expect_repr(yes, "True", "True");
	expect_repr(mk_str("it's"), "\"it's\"", "str with a quote");
	expect_repr(mk_str("a\tb\x1b\x7f'\""), "'a\\tb\\x1b\\x7f\\'\"'", "str escapes");
	expect_repr(mk_bytes("a\0\xff'", 4), "b\"a\\x00\\xff'\"", "bytes escapes");
	uint64_t user = obj(T_USER, 16);
	char want[64];
	snprintf(want, sizeof want, "<Thing object at 0x%llx>", (unsigned long long)user);
	expect_repr(user, want, "a user object (no __module__ here)");
}

static void
test_containers(void)
{
	uint64_t one = mk_int(1);
	expect_repr(mk_tuple(1, &one), "(1,)", "tuple of one");
	uint64_t items[20];
	for (int i = 0; i < 20; i++)
		items[i] = mk_int(i);
	expect_repr(mk_list(20, items), "[0, 1, 2, 3, 4, 5, 6, 7, ... (20 items)]", "list cut");
	uint64_t k[2] = {mk_str("k"), mk_int(4)}, val[2] = {mk_list(1, &one), obj(T_NONE, 16)};
	expect_repr(mk_dict(2, k, val), "{'k': [1], 4: None}", "dict");
	/* a list holding itself: cut at the depth limit, not followed forever */
	uint64_t self = mk_list(1, &one);
	w64(next_free - 16, self);   /* its item array, allocated last */
	char text[PYVALUE_TEXT_MAX], type[160];
	pyvalue_repr(&v, self, text, type, sizeof type);
	tap_ok(strcmp(text, "[[[[... (1 item)]]]]") == 0, "a list in itself: %s", text);
	/* a length of 2^62 costs what a small one does */
	uint64_t huge = mk_list(3, items);
	w64(huge + lay.list_size, 1ull << 62);
	uint64_t before = mem.reads;
	pyvalue_repr(&v, huge, text, type, sizeof type);
	tap_ok(strstr(text, "... (4611686018427387904 items)]") && mem.reads - before < 64,
	       "a list of 2^62: %s in %llu reads", text, (unsigned long long)(mem.reads - before));
}

/* A function of qualified name qual. */
static uint64_t
mk_function(const char *qual)
{
	uint64_t f = obj(T_FUNCTION, 160);
	w64(f + lay.func_qualname, mk_str(qual));
	return f;
}

static uint64_t
mk_method(uint64_t func, uint64_t self)
{
	uint64_t m = obj(T_METHOD, 48);
	w64(m + lay.method_func, func);
	w64(m + lay.method_self, self);
	return m;
}

static uint64_t
mk_cfunction(const char *name, uint64_t self)
{
	uint64_t def = alloc(32), f = obj(T_CFUNCTION, 56);
	w64(def + PY_METHODDEF_NAME, cstring(name));
	w64(f + lay.cfunc_ml, def);
	w64(f + lay.cfunc_self, self);
	return f;
}

/* A module whose dict holds n str keys and their values. */
static uint64_t
mk_module(size_t n, const char *const *keys, const uint64_t *values)
{
	uint64_t k[4];
	for (size_t i = 0; i < n; i++)
		k[i] = mk_str(keys[i]);
	uint64_t m = obj(T_MODULE, 48);
	w64(m + lay.module_dict, mk_dict(n, k, values));
	return m;
}

/* importlib's class `name`: a heap type of module _frozen_importlib. */
static uint64_t
mk_importer(const char *name)
{
	uint64_t t = mk_type(name, true), key = mk_str("__module__"), mod = mk_str("_frozen_importlib");
	w64(t + lay.ob_type, T_TYPE);
	w64(t + lay.heap_qualname, mk_str(name));
	w64(t + lay.type_dict, mk_dict(1, &key, &mod));
	return t;
}

static void
test_callables(void)
{
	char want[160];
	expect_repr(T_INT, "<class 'int'>", "a built-in class");
	expect_repr(T_USER, "<class 'Thing'>", "a class (no __module__ here)");
	uint64_t user = obj(T_USER, 16);
	snprintf(want, sizeof want, "<bound method Thing.run of <Thing object at 0x%llx>>",
		 (unsigned long long)user);
	expect_repr(mk_method(mk_function("Thing.run"), user), want, "a bound method");
	uint64_t one = mk_int(1), list = mk_list(1, &one);
	expect_repr(mk_method(mk_function("f"), list), "<bound method f of [1]>",
		    "a method bound to a list: the list's repr");
	expect_repr(mk_cfunction("len", 0), "<built-in function len>", "a built-in function");
	snprintf(want, sizeof want, "<built-in method append of list object at 0x%llx>",
		 (unsigned long long)list);
	expect_repr(mk_cfunction("append", list), want, "a built-in method");
	uint64_t sys_values[2] = {mk_str("sys"), mk_importer("BuiltinImporter")};
	uint64_t sys = mk_module(2, (const char *const[]){"__name__", "__loader__"}, sys_values);
	expect_repr(sys, "<module 'sys' (built-in)>", "a built-in module");
	expect_repr(mk_cfunction("exit", sys), "<built-in function exit>",
		    "a module's built-in function");
	uint64_t zi_values[3] = {mk_str("zipimport"), mk_importer("FrozenImporter"),
				 mk_str("/usr/lib/python3.12/zipimport.py")};
	expect_repr(mk_module(3, (const char *const[]){"__name__", "__loader__", "__file__"},
			      zi_values),
		    "<module 'zipimport' (frozen)>", "a frozen module, though it has a __file__");
	uint64_t app_values[2] = {mk_str("app"), mk_str("/srv/it's.py")};
	expect_repr(mk_module(2, (const char *const[]){"__name__", "__file__"}, app_values),
		    "<module 'app' from \"/srv/it's.py\">", "a module from its file");
	/* a method bound to itself: cut, not followed until the budget ends */
	uint64_t loop = mk_method(mk_function("g"), 0);
	w64(loop + lay.method_self, loop);
	char text[PYVALUE_TEXT_MAX], type[160];
	uint64_t before = mem.reads;
	pyvalue_repr(&v, loop, text, type, sizeof type);
	tap_ok(strstr(text, "<bound method g of <bound method g of ") == text &&
	       mem.reads - before < 256, "a method bound to itself: %s in %llu reads", text,
	       (unsigned long long)(mem.reads - before));
}

/* Random corruption of the heap, then every object rendered again. */
static void
fuzz(uint64_t *roots, size_t nroots)
{
	struct fakemem clean = {0};
	fakemem_copy(&clean, &mem);
	uint64_t state = 88172645463325252ull;
	uint64_t most = 0;
	int cases = 3000;
	for (int c = 0; c < cases; c++) {
		fakemem_restore(&mem, &clean);
		int changes = 1 + (int)(state % 8);
		for (int i = 0; i < changes; i++) {
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			size_t at = (size_t)(state % (next_free - HEAP)) & ~(size_t)7;
			uint64_t word;
			switch ((state >> 40) % 4) {
			case 0: word = state; break;                         /* noise */
			case 1: word = 1ull << (state >> 58); break;         /* a huge length */
			case 2: word = roots[(state >> 20) % nroots]; break; /* a cycle */
			default: word = HEAP + (state >> 12) % HEAP_SIZE; break;
			}
			memcpy(heap + at, &word, 8);
		}
		for (size_t r = 0; r < nroots; r++) {
			char text[PYVALUE_TEXT_MAX], type[160];
			uint64_t before = mem.reads;
			pyvalue_repr(&v, roots[r], text, type, sizeof type);
			if (mem.reads - before > most)
				most = mem.reads - before;
			if (strlen(text) >= PYVALUE_TEXT_MAX)
				abort();
		}
	}
	fakemem_restore(&mem, &clean);
	fakemem_free(&clean);
	tap_ok(most <= 65536 / 8 + 64, "%d corrupted heaps: no crash, at most %llu reads a value",
	       cases, (unsigned long long)most);
}

int
main(void)
{
	struct tt_error err;
	if (pylayout_compiled_in(0x030c01f0, 0, &lay, &err) != TT_OK) {
		tap_ok(0, "3.12's layout: %s", err.msg);
		return tap_done();
	}
	heap = fakemem_add(&mem, HEAP, HEAP_SIZE);
	next_free = HEAP + 16;
	T_INT = mk_type("int", false);
	T_FLOAT = mk_type("float", false);
	T_STR = mk_type("str", false);
	T_BYTES = mk_type("bytes", false);
	T_TUPLE = mk_type("tuple", false);
	T_LIST = mk_type("list", false);
	T_DICT = mk_type("dict", false);
	T_NONE = mk_type("NoneType", false);
	T_BOOL = mk_type("bool", false);
	T_USER = mk_type("Thing", true);
	T_TYPE = mk_type("type", false);
	T_FUNCTION = mk_type("function", false);
	T_METHOD = mk_type("method", false);
	T_CFUNCTION = mk_type("builtin_function_or_method", false);
	T_MODULE = mk_type("module", false);
	/* classes are objects of type `type` */
	uint64_t types[] = {T_INT, T_FLOAT, T_STR, T_BYTES, T_TUPLE, T_LIST, T_DICT, T_NONE,
			    T_BOOL, T_USER, T_TYPE, T_FUNCTION, T_METHOD, T_CFUNCTION, T_MODULE};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		w64(types[i] + lay.ob_type, T_TYPE);
	struct remote r;
	remote_open_backend(&r, fakemem_backend(&mem));
	struct pyvalue_limits lim = PYVALUE_LIMITS_DEFAULT;
	pyvalue_init(&v, &r, &lay, &lim);
	test_floats();
	test_scalars();
	test_containers();
	test_callables();
	uint64_t one = mk_int(7), items[3] = {mk_str("a"), mk_float(2.5), one};
	uint64_t inner = mk_list(3, items);
	uint64_t k[2] = {mk_str("key"), one}, val[2] = {inner, mk_tuple(3, items)};
	uint64_t mod_values[2] = {mk_str("m"), mk_importer("BuiltinImporter")};
	uint64_t roots[] = {inner, mk_dict(2, k, val), mk_tuple(3, items), mk_str("hello"),
			    mk_int(-99), mk_bytes("xyz", 3), mk_method(mk_function("f"), inner),
			    mk_cfunction("append", inner), T_USER,
			    mk_module(2, (const char *const[]){"__name__", "__loader__"}, mod_values)};
	fuzz(roots, sizeof roots / sizeof roots[0]);
	pyvalue_free(&v);
	fakemem_free(&mem);
	return tap_done();
}
