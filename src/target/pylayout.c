#include "config.h"

#include <stdio.h>
#include <string.h>

#include "pylayout.h"

/* The _Py_DebugOffsets tables, field by field, as each version's
 * pycore_debug_offsets.h (3.14+) or pycore_runtime.h (3.13) declares them.
 * tests/check-layouts compares these lists with the installed headers. */
static const char *const fields_313[] = {
	"runtime_state.size", "runtime_state.finalizing", "runtime_state.interpreters_head",
	"interpreter_state.size", "interpreter_state.id", "interpreter_state.next",
	"interpreter_state.threads_head", "interpreter_state.gc",
	"interpreter_state.imports_modules", "interpreter_state.sysdict",
	"interpreter_state.builtins", "interpreter_state.ceval_gil",
	"interpreter_state.gil_runtime_state", "interpreter_state.gil_runtime_state_enabled",
	"interpreter_state.gil_runtime_state_locked", "interpreter_state.gil_runtime_state_holder",
	"thread_state.size", "thread_state.prev", "thread_state.next", "thread_state.interp",
	"thread_state.current_frame", "thread_state.thread_id", "thread_state.native_thread_id",
	"thread_state.datastack_chunk", "thread_state.status",
	"interpreter_frame.size", "interpreter_frame.previous", "interpreter_frame.executable",
	"interpreter_frame.instr_ptr", "interpreter_frame.localsplus", "interpreter_frame.owner",
	"code_object.size", "code_object.filename", "code_object.name", "code_object.qualname",
	"code_object.linetable", "code_object.firstlineno", "code_object.argcount",
	"code_object.localsplusnames", "code_object.localspluskinds",
	"code_object.co_code_adaptive",
	"pyobject.size", "pyobject.ob_type",
	"type_object.size", "type_object.tp_name", "type_object.tp_repr", "type_object.tp_flags",
	"tuple_object.size", "tuple_object.ob_item", "tuple_object.ob_size",
	"list_object.size", "list_object.ob_item", "list_object.ob_size",
	"dict_object.size", "dict_object.ma_keys", "dict_object.ma_values",
	"float_object.size", "float_object.ob_fval",
	"long_object.size", "long_object.lv_tag", "long_object.ob_digit",
	"bytes_object.size", "bytes_object.ob_size", "bytes_object.ob_sval",
	"unicode_object.size", "unicode_object.state", "unicode_object.length",
	"unicode_object.asciiobject_size",
	"gc.size", "gc.collecting",
};

static const char *const fields_314[] = {
	"runtime_state.size", "runtime_state.finalizing", "runtime_state.interpreters_head",
	"interpreter_state.size", "interpreter_state.id", "interpreter_state.next",
	"interpreter_state.threads_head", "interpreter_state.threads_main", "interpreter_state.gc",
	"interpreter_state.imports_modules", "interpreter_state.sysdict",
	"interpreter_state.builtins", "interpreter_state.ceval_gil",
	"interpreter_state.gil_runtime_state", "interpreter_state.gil_runtime_state_enabled",
	"interpreter_state.gil_runtime_state_locked", "interpreter_state.gil_runtime_state_holder",
	"interpreter_state.code_object_generation", "interpreter_state.tlbc_generation",
	"thread_state.size", "thread_state.prev", "thread_state.next", "thread_state.interp",
	"thread_state.current_frame", "thread_state.thread_id", "thread_state.native_thread_id",
	"thread_state.datastack_chunk", "thread_state.status",
	"interpreter_frame.size", "interpreter_frame.previous", "interpreter_frame.executable",
	"interpreter_frame.instr_ptr", "interpreter_frame.localsplus", "interpreter_frame.owner",
	"interpreter_frame.stackpointer", "interpreter_frame.tlbc_index",
	"code_object.size", "code_object.filename", "code_object.name", "code_object.qualname",
	"code_object.linetable", "code_object.firstlineno", "code_object.argcount",
	"code_object.localsplusnames", "code_object.localspluskinds",
	"code_object.co_code_adaptive", "code_object.co_tlbc",
	"pyobject.size", "pyobject.ob_type",
	"type_object.size", "type_object.tp_name", "type_object.tp_repr", "type_object.tp_flags",
	"tuple_object.size", "tuple_object.ob_item", "tuple_object.ob_size",
	"list_object.size", "list_object.ob_item", "list_object.ob_size",
	"set_object.size", "set_object.used", "set_object.table", "set_object.mask",
	"dict_object.size", "dict_object.ma_keys", "dict_object.ma_values",
	"float_object.size", "float_object.ob_fval",
	"long_object.size", "long_object.lv_tag", "long_object.ob_digit",
	"bytes_object.size", "bytes_object.ob_size", "bytes_object.ob_sval",
	"unicode_object.size", "unicode_object.state", "unicode_object.length",
	"unicode_object.asciiobject_size",
	"gc.size", "gc.collecting",
	"gen_object.size", "gen_object.gi_name", "gen_object.gi_iframe",
	"gen_object.gi_frame_state",
	"llist_node.next", "llist_node.prev",
	"debugger_support.eval_breaker", "debugger_support.remote_debugger_support",
	"debugger_support.remote_debugging_enabled", "debugger_support.debugger_pending_call",
	"debugger_support.debugger_script_path", "debugger_support.debugger_script_path_size",
};

static const char *const fields_315[] = {
	"runtime_state.size", "runtime_state.finalizing", "runtime_state.interpreters_head",
	"interpreter_state.size", "interpreter_state.id", "interpreter_state.next",
	"interpreter_state.threads_head", "interpreter_state.threads_main", "interpreter_state.gc",
	"interpreter_state.imports_modules", "interpreter_state.sysdict",
	"interpreter_state.builtins", "interpreter_state.ceval_gil",
	"interpreter_state.gil_runtime_state", "interpreter_state.gil_runtime_state_enabled",
	"interpreter_state.gil_runtime_state_locked", "interpreter_state.gil_runtime_state_holder",
	"interpreter_state.code_object_generation", "interpreter_state.tlbc_generation",
	"thread_state.size", "thread_state.prev", "thread_state.next", "thread_state.interp",
	"thread_state.current_frame", "thread_state.base_frame",
	"thread_state.last_profiled_frame", "thread_state.last_profiled_frame_seq",
	"thread_state.thread_id", "thread_state.native_thread_id",
	"thread_state.datastack_chunk", "thread_state.status", "thread_state.holds_gil",
	"thread_state.gil_requested", "thread_state.current_exception",
	"thread_state.exc_state",
	"err_stackitem.exc_value",
	"interpreter_frame.size", "interpreter_frame.previous", "interpreter_frame.executable",
	"interpreter_frame.instr_ptr", "interpreter_frame.localsplus", "interpreter_frame.owner",
	"interpreter_frame.stackpointer", "interpreter_frame.tlbc_index",
	"code_object.size", "code_object.filename", "code_object.name", "code_object.qualname",
	"code_object.linetable", "code_object.firstlineno", "code_object.argcount",
	"code_object.localsplusnames", "code_object.localspluskinds",
	"code_object.co_code_adaptive", "code_object.co_tlbc",
	"pyobject.size", "pyobject.ob_type",
	"type_object.size", "type_object.tp_name", "type_object.tp_repr", "type_object.tp_flags",
	"type_object.tp_basicsize", "type_object.tp_dictoffset",
	"heap_type_object.size", "heap_type_object.ht_cached_keys",
	"tuple_object.size", "tuple_object.ob_item", "tuple_object.ob_size",
	"list_object.size", "list_object.ob_item", "list_object.ob_size",
	"set_object.size", "set_object.used", "set_object.table", "set_object.mask",
	"dict_object.size", "dict_object.ma_keys", "dict_object.ma_values",
	"float_object.size", "float_object.ob_fval",
	"long_object.size", "long_object.lv_tag", "long_object.ob_digit",
	"bytes_object.size", "bytes_object.ob_size", "bytes_object.ob_sval",
	"unicode_object.size", "unicode_object.state", "unicode_object.length",
	"unicode_object.asciiobject_size", "unicode_object.compactunicodeobject_size",
	"gc.size", "gc.collecting", "gc.frame", "gc.generation_stats_size",
	"gc.generation_stats",
	"gen_object.size", "gen_object.gi_name", "gen_object.gi_iframe",
	"gen_object.gi_frame_state",
	"llist_node.next", "llist_node.prev",
	"debugger_support.eval_breaker", "debugger_support.remote_debugger_support",
	"debugger_support.remote_debugging_enabled", "debugger_support.debugger_pending_call",
	"debugger_support.debugger_script_path", "debugger_support.debugger_script_path_size",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Struct sizes beyond these are garbage, not a real interpreter. */
#define MAX_INTERP_SIZE (64u << 20)
#define MAX_SMALL_STRUCT (1u << 16)

const char *const *
pylayout_field_names(unsigned minor, size_t *count)
{
	switch (minor) {
	case 13: *count = COUNT(fields_313); return fields_313;
	case 14: *count = COUNT(fields_314); return fields_314;
	case 15: *count = COUNT(fields_315); return fields_315;
	default: *count = 0; return NULL;
	}
}

size_t
pylayout_table_size(uint64_t version_hex)
{
	if (((version_hex >> 24) & 0xff) != 3)
		return 0;
	size_t n;
	if (!pylayout_field_names((unsigned)((version_hex >> 16) & 0xff), &n))
		return 0;
	return PY_DEBUG_HEADER_SIZE + n * 8;
}

void
pylayout_version_string(uint64_t v, char *buf, size_t len)
{
	unsigned major = (v >> 24) & 0xff, minor = (v >> 16) & 0xff, micro = (v >> 8) & 0xff;
	unsigned level = (v >> 4) & 0xf, serial = v & 0xf;
	const char *tag = level == 0xa ? "a" : level == 0xb ? "b" : level == 0xc ? "rc" : "";
	if (level == 0xf)
		snprintf(buf, len, "%u.%u.%u", major, minor, micro);
	else
		snprintf(buf, len, "%u.%u.%u%s%u", major, minor, micro, tag, serial);
}

struct table {
	const uint8_t *raw;
	const char *const *names;
	size_t count;
	const char *missing; /* first field asked for and not found */
};

static bool
table_has(const struct table *t, const char *name)
{
	for (size_t i = 0; i < t->count; i++)
		if (strcmp(t->names[i], name) == 0)
			return true;
	return false;
}

static uint64_t
table_get(struct table *t, const char *name)
{
	for (size_t i = 0; i < t->count; i++) {
		if (strcmp(t->names[i], name) == 0) {
			uint64_t v;
			memcpy(&v, t->raw + PY_DEBUG_HEADER_SIZE + i * 8, 8);
			return v;
		}
	}
	if (!t->missing)
		t->missing = name;
	return 0;
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Check that a field of `width` bytes at `off` lies inside a struct of `size`. */
static bool
fits(uint64_t off, uint64_t width, uint64_t size)
{
	return size > 0 && off < size && width <= size - off;
}

tt_status
pylayout_from_table(const uint8_t *raw, size_t len, struct py_layout *l, struct tt_error *err)
{
	memset(l, 0, sizeof *l);
	if (len < PY_DEBUG_HEADER_SIZE || memcmp(raw, PY_DEBUG_COOKIE, 8) != 0)
		return tt_fail(err, TT_ENOTPY, 0,
			       "the runtime section has no _Py_DebugOffsets cookie");
	memcpy(&l->version_hex, raw + 8, 8);
	uint64_t ft;
	memcpy(&ft, raw + 16, 8);
	l->free_threaded = ft != 0;
	l->major = (l->version_hex >> 24) & 0xff;
	l->minor = (l->version_hex >> 16) & 0xff;
	l->micro = (l->version_hex >> 8) & 0xff;
	pylayout_version_string(l->version_hex, l->version_str, sizeof l->version_str);

	if (l->major != 3 || l->minor < 13 || l->minor > 15)
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python version %s (tachyon-top supports 3.13, 3.14 and 3.15)",
			       l->version_str);
	/* Layouts change between pre-releases; only finals are ABI-frozen. */
	if (((l->version_hex >> 4) & 0xf) != 0xf)
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python pre-release %s (only final 3.13, 3.14 and 3.15 "
			       "releases have a stable layout)", l->version_str);
	if (l->free_threaded)
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python build %s free-threaded (only GIL builds are "
			       "supported)", l->version_str);

	struct table t = {.raw = raw};
	t.names = pylayout_field_names(l->minor, &t.count);
	l->table_size = PY_DEBUG_HEADER_SIZE + t.count * 8;
	if (len < l->table_size)
		return tt_fail(err, TT_EBADMEM, 0, "short _Py_DebugOffsets table (%zu of %llu bytes)",
			       len, (unsigned long long)l->table_size);

	l->rt_interpreters_head = table_get(&t, "runtime_state.interpreters_head");
	uint64_t rt_size = table_get(&t, "runtime_state.size");

	uint64_t is_size = table_get(&t, "interpreter_state.size");
	l->is_id = table_get(&t, "interpreter_state.id");
	l->is_next = table_get(&t, "interpreter_state.next");
	l->is_threads_head = table_get(&t, "interpreter_state.threads_head");
	l->has_threads_main = table_has(&t, "interpreter_state.threads_main");
	if (l->has_threads_main)
		l->is_threads_main = table_get(&t, "interpreter_state.threads_main");
	uint64_t gc_state = table_get(&t, "interpreter_state.gc");
	uint64_t gc_size = table_get(&t, "gc.size");
	uint64_t gc_collecting = table_get(&t, "gc.collecting");
	l->is_gc_collecting = gc_state + gc_collecting;
	l->has_gc_frame = table_has(&t, "gc.frame");
	uint64_t gc_frame = l->has_gc_frame ? table_get(&t, "gc.frame") : 0;
	l->is_gc_frame = gc_state + gc_frame;
	l->is_gil_locked = table_get(&t, "interpreter_state.gil_runtime_state_locked");
	l->is_gil_holder = table_get(&t, "interpreter_state.gil_runtime_state_holder");
	l->has_code_generation = table_has(&t, "interpreter_state.code_object_generation");
	if (l->has_code_generation)
		l->is_code_generation = table_get(&t, "interpreter_state.code_object_generation");

	l->ts_size = table_get(&t, "thread_state.size");
	l->ts_next = table_get(&t, "thread_state.next");
	l->ts_interp = table_get(&t, "thread_state.interp");
	l->ts_current_frame = table_get(&t, "thread_state.current_frame");
	l->ts_thread_id = table_get(&t, "thread_state.thread_id");
	l->ts_native_thread_id = table_get(&t, "thread_state.native_thread_id");
	l->ts_datastack_chunk = table_get(&t, "thread_state.datastack_chunk");
	l->has_base_frame = table_has(&t, "thread_state.base_frame");
	if (l->has_base_frame)
		l->ts_base_frame = table_get(&t, "thread_state.base_frame");
	l->has_tstate_gil = table_has(&t, "thread_state.holds_gil");
	if (l->has_tstate_gil) {
		l->ts_holds_gil = table_get(&t, "thread_state.holds_gil");
		l->ts_gil_requested = table_get(&t, "thread_state.gil_requested");
	}
	l->has_exception_state = table_has(&t, "thread_state.current_exception");
	if (l->has_exception_state)
		l->ts_current_exception = table_get(&t, "thread_state.current_exception");

	uint64_t fr_size = table_get(&t, "interpreter_frame.size");
	l->fr_previous = table_get(&t, "interpreter_frame.previous");
	l->fr_executable = table_get(&t, "interpreter_frame.executable");
	l->fr_instr_ptr = table_get(&t, "interpreter_frame.instr_ptr");
	l->fr_owner = table_get(&t, "interpreter_frame.owner");

	uint64_t co_size = table_get(&t, "code_object.size");
	l->co_filename = table_get(&t, "code_object.filename");
	l->co_name = table_get(&t, "code_object.name");
	l->co_qualname = table_get(&t, "code_object.qualname");
	l->co_linetable = table_get(&t, "code_object.linetable");
	l->co_firstlineno = table_get(&t, "code_object.firstlineno");
	l->co_code_adaptive = table_get(&t, "code_object.co_code_adaptive");

	l->ob_type = table_get(&t, "pyobject.ob_type");
	uint64_t type_size = table_get(&t, "type_object.size");
	l->tp_name = table_get(&t, "type_object.tp_name");
	uint64_t str_size = table_get(&t, "unicode_object.size");
	l->str_state = table_get(&t, "unicode_object.state");
	l->str_length = table_get(&t, "unicode_object.length");
	l->str_ascii_size = table_get(&t, "unicode_object.asciiobject_size");
	/* Before 3.15 the compact (non-ASCII) header size is not exported; it is
	 * PyASCIIObject plus utf8_length and utf8 (two words) on 64-bit. */
	l->str_compact_size = table_has(&t, "unicode_object.compactunicodeobject_size")
				      ? table_get(&t, "unicode_object.compactunicodeobject_size")
				      : l->str_ascii_size + 16;
	uint64_t bytes_obj_size = table_get(&t, "bytes_object.size");
	l->bytes_size = table_get(&t, "bytes_object.ob_size");
	l->bytes_sval = table_get(&t, "bytes_object.ob_sval");

	if (t.missing)
		return tt_fail(err, TT_EVERSION, 0, "Python %s: offset table lacks %s",
			       l->version_str, t.missing);

	/* Semantics the table does not carry. */
	l->tag_mask = 3; /* _PyStackRef tag bits (3.14+); harmless on 3.13's plain pointers */
	l->owner_thread = 0;
	l->owner_generator = 1;
	l->owner_frame_object = 2;
	switch (l->minor) {
	case 13:
		l->owner_cstack = 3;
		l->owner_interpreter = -1;
		break;
	case 14:
		l->owner_interpreter = 3;
		l->owner_cstack = 4;
		break;
	default:
		l->owner_interpreter = 3;
		l->owner_cstack = -1;
		break;
	}

	/* Every offset we dereference must lie inside its struct, and the
	 * structs must have plausible sizes: the table may be garbage. */
	const char *bad = NULL;
	if (!fits(l->rt_interpreters_head, 8, rt_size))
		bad = "runtime_state.interpreters_head";
	else if (is_size > MAX_INTERP_SIZE)
		bad = "interpreter_state.size";
	else if (!fits(l->is_id, 8, is_size) || !fits(l->is_next, 8, is_size) ||
		 !fits(l->is_threads_head, 8, is_size) ||
		 (l->has_threads_main && !fits(l->is_threads_main, 8, is_size)) ||
		 !fits(l->is_gil_locked, 4, is_size) || !fits(l->is_gil_holder, 8, is_size) ||
		 (l->has_code_generation && !fits(l->is_code_generation, 8, is_size)))
		bad = "interpreter_state";
	else if (!fits(gc_collecting, 4, gc_size) || !fits(l->is_gc_collecting, 4, is_size) ||
		 (l->has_gc_frame && (!fits(gc_frame, 8, gc_size) || !fits(l->is_gc_frame, 8, is_size))))
		bad = "gc";
	else if (l->ts_size > MAX_SMALL_STRUCT || !fits(l->ts_next, 8, l->ts_size) ||
		 !fits(l->ts_interp, 8, l->ts_size) || !fits(l->ts_current_frame, 8, l->ts_size) ||
		 !fits(l->ts_thread_id, 8, l->ts_size) ||
		 !fits(l->ts_native_thread_id, 8, l->ts_size) ||
		 !fits(l->ts_datastack_chunk, 8, l->ts_size) ||
		 (l->has_base_frame && !fits(l->ts_base_frame, 8, l->ts_size)) ||
		 (l->has_tstate_gil && (!fits(l->ts_holds_gil, 4, l->ts_size) ||
					!fits(l->ts_gil_requested, 4, l->ts_size))) ||
		 (l->has_exception_state && !fits(l->ts_current_exception, 8, l->ts_size)))
		bad = "thread_state";
	else if (fr_size > MAX_SMALL_STRUCT || !fits(l->fr_previous, 8, fr_size) ||
		 !fits(l->fr_executable, 8, fr_size) || !fits(l->fr_instr_ptr, 8, fr_size) ||
		 !fits(l->fr_owner, 1, fr_size))
		bad = "interpreter_frame";
	else if (co_size > MAX_SMALL_STRUCT || !fits(l->co_filename, 8, co_size) ||
		 !fits(l->co_name, 8, co_size) || !fits(l->co_qualname, 8, co_size) ||
		 !fits(l->co_linetable, 8, co_size) || !fits(l->co_firstlineno, 4, co_size) ||
		 l->co_code_adaptive > co_size || l->co_code_adaptive == 0)
		bad = "code_object";
	/* state and length are read from the header alone (str_ascii_size
	 * bytes), so they must lie within it. */
	else if (str_size > MAX_SMALL_STRUCT || l->str_ascii_size == 0 ||
		 l->str_ascii_size > 256 || !fits(l->str_state, 4, l->str_ascii_size) ||
		 !fits(l->str_length, 8, l->str_ascii_size) ||
		 l->str_compact_size < l->str_ascii_size || l->str_compact_size > 256)
		bad = "unicode_object";
	else if (bytes_obj_size > MAX_SMALL_STRUCT || !fits(l->bytes_size, 8, bytes_obj_size) ||
		 l->bytes_sval == 0 || l->bytes_sval > 256)
		bad = "bytes_object";
	else if (!fits(l->ob_type, 8, 64) || type_size > MAX_SMALL_STRUCT ||
		 !fits(l->tp_name, 8, type_size))
		bad = "type_object";
	if (bad)
		return tt_fail(err, TT_EBADMEM, 0,
			       "Python %s: implausible _Py_DebugOffsets entry for %s (corrupt table?)",
			       l->version_str, bad);

	/* Derived offsets (see pylayout.h). */
	l->is_threads_unique_id = l->is_threads_head - 8;
	l->is_threads_count = l->has_threads_main ? l->is_threads_main + 8 : l->is_threads_head + 16;
	l->is_gil_switch = l->is_gil_locked + 8;
	l->ts_datastack_top = l->ts_datastack_chunk + 8;
	uint64_t hot[] = {
		l->is_id, l->is_next, l->is_threads_unique_id, l->is_threads_head,
		l->is_threads_count, l->is_gc_collecting, l->is_gil_locked, l->is_gil_holder,
		l->is_gil_switch, l->has_code_generation ? l->is_code_generation : l->is_id,
		l->has_threads_main ? l->is_threads_main : l->is_id,
	};
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < COUNT(hot); i++) {
		lo = hot[i] < lo ? hot[i] : lo;
		hi = hot[i] + 8 > hi ? hot[i] + 8 : hi;
	}
	l->is_block_start = lo;
	l->is_block_size = hi - lo;
	if (l->is_threads_head < 8 || hi > is_size || l->is_block_size > 4096 ||
	    !fits(l->ts_datastack_top, 8, l->ts_size))
		return tt_fail(err, TT_EBADMEM, 0,
			       "Python %s: interpreter fields are not where this version keeps them",
			       l->version_str);

	l->ts_read_size = 0;
	uint64_t ts_fields[] = {
		l->ts_next, l->ts_interp, l->ts_current_frame, l->ts_thread_id,
		l->ts_native_thread_id, l->ts_datastack_chunk, l->ts_datastack_top,
		l->has_base_frame ? l->ts_base_frame : 0,
		l->has_tstate_gil ? l->ts_holds_gil : 0,
		l->has_tstate_gil ? l->ts_gil_requested : 0,
		l->has_exception_state ? l->ts_current_exception : 0,
	};
	for (size_t i = 0; i < COUNT(ts_fields); i++)
		l->ts_read_size = max_u64(l->ts_read_size, ts_fields[i] + 8);
	l->ts_read_size = l->ts_read_size < l->ts_size ? l->ts_read_size : l->ts_size;

	l->fr_read_size = max_u64(max_u64(l->fr_previous, l->fr_executable) + 8,
				  max_u64(l->fr_instr_ptr + 8, l->fr_owner + 1));
	l->co_read_size = max_u64(max_u64(l->co_filename, l->co_qualname),
				  max_u64(l->co_linetable, l->co_name)) + 8;
	l->co_read_size = max_u64(l->co_read_size, l->co_firstlineno + 4);
	return TT_OK;
}

enum py_frame_kind
pylayout_frame_kind(const struct py_layout *l, int owner)
{
	if (owner == l->owner_thread || owner == l->owner_generator)
		return PY_FRAME_PYTHON;
	if (owner == l->owner_cstack || owner == l->owner_interpreter)
		return PY_FRAME_SHIM;
	/* A frame owned by a frame object is not on a live stack; seeing one
	 * mid-walk means the chain changed under us. */
	return PY_FRAME_INVALID;
}

void
pylayout_print(FILE *f, const struct py_layout *l)
{
	struct { const char *name; uint64_t value; bool present; } rows[] = {
		{"interp.threads_head", l->is_threads_head, true},
		{"interp.threads_main", l->is_threads_main, l->has_threads_main},
		{"interp.threads_next_unique_id", l->is_threads_unique_id, true},
		{"interp.threads_count", l->is_threads_count, true},
		{"interp.gil_locked", l->is_gil_locked, true},
		{"interp.gil_last_holder", l->is_gil_holder, true},
		{"interp.gil_switch_number", l->is_gil_switch, true},
		{"interp.gc_collecting", l->is_gc_collecting, true},
		{"interp.code_object_generation", l->is_code_generation, l->has_code_generation},
		{"tstate.current_frame", l->ts_current_frame, true},
		{"tstate.native_thread_id", l->ts_native_thread_id, true},
		{"tstate.datastack_chunk", l->ts_datastack_chunk, true},
		{"tstate.datastack_top", l->ts_datastack_top, true},
		{"tstate.base_frame", l->ts_base_frame, l->has_base_frame},
		{"tstate.holds_gil", l->ts_holds_gil, l->has_tstate_gil},
		{"tstate.gil_requested", l->ts_gil_requested, l->has_tstate_gil},
		{"tstate.current_exception", l->ts_current_exception, l->has_exception_state},
		{"frame.previous", l->fr_previous, true},
		{"frame.executable", l->fr_executable, true},
		{"frame.instr_ptr", l->fr_instr_ptr, true},
		{"frame.owner", l->fr_owner, true},
		{"code.qualname", l->co_qualname, true},
		{"code.filename", l->co_filename, true},
		{"code.linetable", l->co_linetable, true},
		{"code.firstlineno", l->co_firstlineno, true},
		{"code.co_code_adaptive", l->co_code_adaptive, true},
		{"stackchunk.previous", PY_STACKCHUNK_PREVIOUS, true},
		{"stackchunk.size", PY_STACKCHUNK_SIZE, true},
	};
	for (size_t i = 0; i < COUNT(rows); i++)
		if (rows[i].present)
			fprintf(f, "%s=%llu\n", rows[i].name, (unsigned long long)rows[i].value);
}
