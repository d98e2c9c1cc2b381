/* Version checks of the _Py_DebugOffsets decoder and the compiled-in
 * 3.11/3.12 layouts: supported finals pass, everything else is refused with
 * a message naming the version. */
#include "config.h"

#include <string.h>

#include "python/pylayout.h"
#include "tap.h"

/* A table for version `hex`, its offsets made plausible (field i at 64+8i,
 * struct sizes 4096, a few fixed object headers) so only the version
 * decides. */
static size_t
make_table(uint8_t *buf, uint64_t hex, uint64_t free_threaded)
{
	memset(buf, 0, PY_DEBUG_MAX_SIZE);
	memcpy(buf, PY_DEBUG_COOKIE, 8);
	memcpy(buf + 8, &hex, 8);
	memcpy(buf + 16, &free_threaded, 8);
	size_t n;
	const char *const *names = pylayout_field_names((unsigned)((hex >> 16) & 0xff), &n);
	if (!names)
		names = pylayout_field_names(15, &n);
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 64 + 8 * i;
		const char *dot = strchr(names[i], '.');
		if (strcmp(dot, ".size") == 0)
			v = strncmp(names[i], "runtime_state", 13) == 0 ? 8192 : 4096;
		else if (strncmp(names[i], "runtime_state.", 14) == 0)
			v = 2048 + 8 * i;
		else if (strcmp(names[i], "pyobject.ob_type") == 0)
			v = 8;
		else if (strcmp(names[i], "unicode_object.asciiobject_size") == 0)
			v = 40;
		else if (strcmp(names[i], "unicode_object.length") == 0)
			v = 16;
		else if (strcmp(names[i], "unicode_object.state") == 0)
			v = 32;
		else if (strcmp(names[i], "unicode_object.compactunicodeobject_size") == 0)
			v = 56;
		else if (strcmp(names[i], "bytes_object.ob_sval") == 0)
			v = 32;
		memcpy(buf + PY_DEBUG_HEADER_SIZE + 8 * i, &v, 8);
	}
	return PY_DEBUG_HEADER_SIZE + 8 * n;
}

static void
expect_refused(uint64_t hex, uint64_t ft, tt_status want, const char *needle, const char *what)
{
	uint8_t buf[PY_DEBUG_MAX_SIZE];
	size_t len = make_table(buf, hex, ft);
	struct py_layout l;
	struct tt_error err = {0};
	tt_status st = pylayout_from_table(buf, len, &l, &err);
	tap_ok(st == want && strstr(err.msg, needle) != NULL, "%s refused: %s", what, err.msg);
}

int
main(void)
{
	uint8_t buf[PY_DEBUG_MAX_SIZE];
	struct py_layout l;
	struct tt_error err = {0};
	static const uint64_t finals[] = {0x030d12f0, 0x030e0af0, 0x030f02f0, 0x030d00f0};
	for (size_t i = 0; i < sizeof finals / sizeof finals[0]; i++) {
		size_t len = make_table(buf, finals[i], 0);
		tt_status st = pylayout_from_table(buf, len, &l, &err);
		tap_ok(st == TT_OK, "final 0x%llx accepted as %s (%s)", (unsigned long long)finals[i],
		       l.version_str, err.msg);
	}
	size_t len = make_table(buf, 0x030f02f0, 0);
	pylayout_from_table(buf, len, &l, &err);
	tap_ok(strcmp(l.version_str, "3.15.2") == 0, "version string 3.15.2 (%s)", l.version_str);
	tap_ok(l.has_base_frame && l.has_tstate_gil && l.owner_interpreter == 3 && l.owner_cstack == -1,
	       "3.15 semantics: base frame, per-thread GIL, owner values");
	len = make_table(buf, 0x030d12f0, 0);
	pylayout_from_table(buf, len, &l, &err);
	tap_ok(!l.has_threads_main && !l.has_code_generation && l.owner_cstack == 3 &&
		       l.owner_interpreter == -1,
	       "3.13 semantics: no threads_main, no code generation, CSTACK owner 3");

	expect_refused(0x030f00b3, 0, TT_EVERSION, "3.15.0b3", "3.15.0b3 pre-release");
	expect_refused(0x030e00c1, 0, TT_EVERSION, "3.14.0rc1", "3.14.0rc1 release candidate");
	expect_refused(0x031000a1, 0, TT_EVERSION, "3.16.0a1", "unknown 3.16.0a1");
	expect_refused(0x031000f0, 0, TT_EVERSION, "3.16.0", "unknown minor 3.16.0");
	expect_refused(0x030c05f0, 0, TT_EVERSION, "3.12.5", "3.12.5 (before the table existed)");
	expect_refused(0x030e0af0, 1, TT_EVERSION, "free-threaded", "free-threaded 3.14.10");

	len = make_table(buf, 0x030f02f0, 0);
	memcpy(buf, "xdebugpz", 8);
	tap_ok(pylayout_from_table(buf, len, &l, &err) == TT_ENOTPY, "bad cookie refused: %s", err.msg);
	len = make_table(buf, 0x030f02f0, 0);
	tap_ok(pylayout_from_table(buf, len - 8, &l, &err) == TT_EBADMEM, "short table refused: %s",
	       err.msg);
	/* An offset outside its struct is garbage, not a layout. */
	len = make_table(buf, 0x030f02f0, 0);
	size_t n;
	const char *const *names = pylayout_field_names(15, &n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(names[i], "thread_state.current_frame") == 0) {
			uint64_t bad = 1u << 20;
			memcpy(buf + PY_DEBUG_HEADER_SIZE + 8 * i, &bad, 8);
		}
	}
	tap_ok(pylayout_from_table(buf, len, &l, &err) == TT_EBADMEM && strstr(err.msg, "thread_state"),
	       "offset outside its struct refused: %s", err.msg);
	/* A str's state is read from its header only: inside the struct but
	 * past the header is refused too (it would index past the buffer). */
	len = make_table(buf, 0x030f02f0, 0);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(names[i], "unicode_object.state") == 0) {
			uint64_t past = 2048;
			memcpy(buf + PY_DEBUG_HEADER_SIZE + 8 * i, &past, 8);
		}
	}
	tap_ok(pylayout_from_table(buf, len, &l, &err) == TT_EBADMEM &&
		       strstr(err.msg, "unicode_object"),
	       "str state past the str header refused: %s", err.msg);
	/* Compiled-in layouts (3.11, 3.12): no table, the version decides. */
	tap_ok(pylayout_compiled_in(0x030b02f0, 0, &l, &err) == TT_OK && l.compiled_in &&
		       l.has_cframe && l.gil_place == PY_GIL_IN_RUNTIME && l.instr_is_prev &&
		       l.owner_cstack == -1 && l.str_ascii_size == 48 && !l.has_tstate_gil &&
		       !l.has_code_generation && strcmp(l.version_str, "3.11.2") == 0,
	       "3.11.2 compiled in: cframe hop, GIL in the runtime, no C-stack owner, 48-byte str");
	tap_ok(pylayout_compiled_in(0x030b02f0, PY_BUILD_DEBUG, &l, &err) == TT_OK && l.debug_build,
	       "3.11 debug build accepted with the same layout");
	tap_ok(pylayout_compiled_in(0x030c01f0, 0, &l, &err) == TT_OK &&
		       l.gil_place == PY_GIL_BEHIND_POINTER && l.owner_cstack == 3 &&
		       l.str_ascii_size == 40 && l.fr_executable == 0 && l.cf_current_frame == 0,
	       "3.12.1 compiled in: GIL behind interp->ceval.gil, C-stack owner 3, 40-byte str");
	tap_ok(l.ts_read_size >= l.ts_root_cframe + l.cf_current_frame + 8 &&
		       l.is_block_size <= 4096,
	       "3.12 thread state read covers root_cframe; hot block %llu bytes",
	       (unsigned long long)l.is_block_size);
	tap_ok(pylayout_compiled_in(0x030c01f0, PY_BUILD_TRACE_REFS, &l, &err) == TT_EVERSION &&
		       strstr(err.msg, "Py_TRACE_REFS"),
	       "Py_TRACE_REFS build refused: %s", err.msg);
	tap_ok(pylayout_compiled_in(0x030c00b1, 0, &l, &err) == TT_EVERSION &&
		       strstr(err.msg, "pre-release 3.12.0b1"),
	       "3.12 pre-release refused: %s", err.msg);
	tap_ok(pylayout_compiled_in(0x030a0df0, 0, &l, &err) == TT_EVERSION &&
		       strstr(err.msg, "3.10.13") && strstr(err.msg, "3.11 to 3.15"),
	       "3.10 refused naming the supported range: %s", err.msg);
	char v[32];
	pylayout_version_string(0x030f00c2, v, sizeof v);
	tap_ok(strcmp(v, "3.15.0rc2") == 0, "version string for rc: %s", v);
	return tap_done();
}
