#include "config.h"

#include <stdio.h>
#include <string.h>

#include "python/pylayout.h"

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

/* What every layout computes from its offsets: the interpreter's hot
 * block and the bytes to read of each struct. */
static tt_status
finish_layout(struct py_layout *l, uint64_t is_size, struct tt_error *err)
{
	bool gil_here = l->gil_place == PY_GIL_IN_INTERP;
	uint64_t hot[] = {
		l->is_id, l->is_next, l->is_threads_unique_id, l->is_threads_head,
		l->is_threads_count, l->is_gc_collecting,
		gil_here ? l->is_gil_locked : l->is_id, gil_here ? l->is_gil_holder : l->is_id,
		gil_here ? l->is_gil_switch : l->is_id,
		l->has_code_generation ? l->is_code_generation : l->is_id,
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
		l->ts_next, l->ts_interp, l->has_cframe ? l->ts_cframe : l->ts_current_frame,
		l->ts_thread_id, l->ts_native_thread_id, l->ts_datastack_chunk, l->ts_datastack_top,
		l->has_base_frame ? l->ts_base_frame : 0,
		l->has_tstate_gil ? l->ts_holds_gil : 0,
		l->has_tstate_gil ? l->ts_gil_requested : 0,
		l->has_exception_state ? l->ts_current_exception : 0,
		l->has_cframe ? l->ts_root_cframe + l->cf_current_frame : 0,
	};
	for (size_t i = 0; i < COUNT(ts_fields); i++)
		l->ts_read_size = max_u64(l->ts_read_size, ts_fields[i] + 8);
	l->ts_read_size = l->ts_read_size < l->ts_size ? l->ts_read_size : l->ts_size;

	l->fr_read_size = max_u64(max_u64(l->fr_previous, l->fr_executable) + 8,
				  max_u64(l->fr_instr_ptr + 8, l->fr_owner + 1));
	if (l->has_is_entry)
		l->fr_read_size = max_u64(l->fr_read_size, l->fr_is_entry + 1);
	l->co_read_size = max_u64(max_u64(l->co_filename, l->co_qualname),
				  max_u64(l->co_linetable, l->co_name)) + 8;
	l->co_read_size = max_u64(l->co_read_size, l->co_firstlineno + 4);
	l->co_firsttraceable = l->co_code_adaptive - 16;
	l->co_read_size = max_u64(l->co_read_size, l->co_firsttraceable + 4);
	if (l->has_async) {
		l->gen_read_size = max_u64(l->gen_frame_state + 1,
					   l->gen_iframe + max_u64(l->fr_read_size,
								   l->fr_stackpointer + 8));
		l->set_read_size = max_u64(max_u64(l->set_used, l->set_table),
					   l->set_mask) + 8;
	}
	return TT_OK;
}

/* The sizes of the structs the table describes: offsets are checked
 * against them, and they are not kept in the layout. */
struct table_sizes {
	uint64_t rt, is, gc, gc_collecting, gc_frame, fr, co, type, str, bytes_obj, gen, set;
};

/* The table's header: cookie, version, a supported final GIL build. */
static tt_status
check_table_header(const uint8_t *raw, size_t len, struct py_layout *l, struct tt_error *err)
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

	if (l->major != 3 || l->minor < 13 || l->minor > PY_MAX_MINOR)
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python version %s (tachyon-top supports " PY_SUPPORTED_RANGE ")",
			       l->version_str);
	/* Layouts change between pre-releases; only finals are ABI-frozen. */
	if (((l->version_hex >> 4) & 0xf) != 0xf)
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python pre-release %s (only final releases of "
			       PY_SUPPORTED_RANGE " have a stable layout)", l->version_str);
	if (l->free_threaded)
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python build %s free-threaded (only GIL builds are "
			       "supported)", l->version_str);
	return TT_OK;
}

/* Offsets of the objects values are read through (dump --locals) that no
 * version has moved, the same for the table versions and the compiled-in
 * ones: a dict's ma_used, a cell's ob_ref, a method's im_func and im_self,
 * a built-in function's m_ml and m_self and a module's md_dict follow the
 * object header; a bytearray is a var-object, then ob_alloc, ob_bytes,
 * ob_start; a type's tp_dict and a function's qualified name.
 * tests/check-layouts.sh compiles offsetof() of each against every build. */
static void
set_fixed_value_offsets(struct py_layout *l)
{
	l->dict_used = 16;
	l->cell_ref = 16;
	l->method_func = 16;
	l->method_self = 24;
	l->cfunc_ml = 16;
	l->cfunc_self = 24;
	l->module_dict = 16;
	l->bytearray_size = 16;
	l->bytearray_start = 40;
	l->type_dict = 264;
	l->func_qualname = 40;
	l->tp_basicsize = 32;
	l->heap_cached_keys = l->heap_qualname + 8;
}

/* Every field of the table we use (a name missing is left in t->missing). */
static void
read_fields(struct table *t, struct py_layout *l, struct table_sizes *z)
{
	l->rt_interpreters_head = table_get(t, "runtime_state.interpreters_head");
	z->rt = table_get(t, "runtime_state.size");

	z->is = table_get(t, "interpreter_state.size");
	l->is_id = table_get(t, "interpreter_state.id");
	l->is_next = table_get(t, "interpreter_state.next");
	l->is_threads_head = table_get(t, "interpreter_state.threads_head");
	l->is_modules = table_get(t, "interpreter_state.imports_modules");
	l->has_threads_main = table_has(t, "interpreter_state.threads_main");
	if (l->has_threads_main)
		l->is_threads_main = table_get(t, "interpreter_state.threads_main");
	uint64_t gc_state = table_get(t, "interpreter_state.gc");
	z->gc = table_get(t, "gc.size");
	z->gc_collecting = table_get(t, "gc.collecting");
	l->is_gc_collecting = gc_state + z->gc_collecting;
	l->has_gc_frame = table_has(t, "gc.frame");
	z->gc_frame = l->has_gc_frame ? table_get(t, "gc.frame") : 0;
	l->is_gc_frame = gc_state + z->gc_frame;
	l->gil_place = PY_GIL_IN_INTERP;
	l->is_gil_locked = table_get(t, "interpreter_state.gil_runtime_state_locked");
	l->is_gil_holder = table_get(t, "interpreter_state.gil_runtime_state_holder");
	l->has_code_generation = table_has(t, "interpreter_state.code_object_generation");
	if (l->has_code_generation)
		l->is_code_generation = table_get(t, "interpreter_state.code_object_generation");

	l->ts_size = table_get(t, "thread_state.size");
	l->ts_next = table_get(t, "thread_state.next");
	l->ts_interp = table_get(t, "thread_state.interp");
	l->ts_current_frame = table_get(t, "thread_state.current_frame");
	l->ts_thread_id = table_get(t, "thread_state.thread_id");
	l->ts_native_thread_id = table_get(t, "thread_state.native_thread_id");
	l->ts_datastack_chunk = table_get(t, "thread_state.datastack_chunk");
	l->has_base_frame = table_has(t, "thread_state.base_frame");
	if (l->has_base_frame)
		l->ts_base_frame = table_get(t, "thread_state.base_frame");
	l->has_tstate_gil = table_has(t, "thread_state.holds_gil");
	if (l->has_tstate_gil) {
		l->ts_holds_gil = table_get(t, "thread_state.holds_gil");
		l->ts_gil_requested = table_get(t, "thread_state.gil_requested");
	}
	l->has_exception_state = table_has(t, "thread_state.current_exception");
	if (l->has_exception_state)
		l->ts_current_exception = table_get(t, "thread_state.current_exception");

	z->fr = table_get(t, "interpreter_frame.size");
	l->fr_previous = table_get(t, "interpreter_frame.previous");
	l->fr_executable = table_get(t, "interpreter_frame.executable");
	l->fr_instr_ptr = table_get(t, "interpreter_frame.instr_ptr");
	l->fr_owner = table_get(t, "interpreter_frame.owner");

	z->co = table_get(t, "code_object.size");
	l->co_filename = table_get(t, "code_object.filename");
	l->co_name = table_get(t, "code_object.name");
	l->co_qualname = table_get(t, "code_object.qualname");
	l->co_linetable = table_get(t, "code_object.linetable");
	l->co_firstlineno = table_get(t, "code_object.firstlineno");
	l->co_code_adaptive = table_get(t, "code_object.co_code_adaptive");

	l->ob_type = table_get(t, "pyobject.ob_type");
	z->type = table_get(t, "type_object.size");
	l->tp_name = table_get(t, "type_object.tp_name");
	z->str = table_get(t, "unicode_object.size");
	l->str_state = table_get(t, "unicode_object.state");
	l->str_length = table_get(t, "unicode_object.length");
	l->str_ascii_size = table_get(t, "unicode_object.asciiobject_size");
	/* Before 3.15 the compact (non-ASCII) header size is not exported; it is
	 * PyASCIIObject plus utf8_length and utf8 (two words) on 64-bit. */
	l->str_compact_size = table_has(t, "unicode_object.compactunicodeobject_size")
				      ? table_get(t, "unicode_object.compactunicodeobject_size")
				      : l->str_ascii_size + 16;
	z->bytes_obj = table_get(t, "bytes_object.size");
	l->bytes_size = table_get(t, "bytes_object.ob_size");
	l->bytes_sval = table_get(t, "bytes_object.ob_sval");

	/* locals and values */
	l->fr_localsplus = table_get(t, "interpreter_frame.localsplus");
	l->co_argcount = table_get(t, "code_object.argcount");
	/* int co_flags, then co_argcount, co_posonlyargcount, co_kwonlyargcount */
	l->co_flags = l->co_argcount - 4;
	l->co_kwonlyargcount = l->co_argcount + 8;
	l->co_localsplusnames = table_get(t, "code_object.localsplusnames");
	l->co_localspluskinds = table_get(t, "code_object.localspluskinds");
	l->type_flags = table_get(t, "type_object.tp_flags");
	l->tuple_size = table_get(t, "tuple_object.ob_size");
	l->tuple_item = table_get(t, "tuple_object.ob_item");
	l->list_size = table_get(t, "list_object.ob_size");
	l->list_item = table_get(t, "list_object.ob_item");
	l->float_value = table_get(t, "float_object.ob_fval");
	l->long_size = table_get(t, "long_object.lv_tag");
	l->long_digits = table_get(t, "long_object.ob_digit");
	l->dict_keys = table_get(t, "dict_object.ma_keys");
	l->dict_values = table_get(t, "dict_object.ma_values");
	/* derived: PyDictValues gained a header of four bytes before its
	 * array (aligned to 8) in 3.13 */
	l->dict_values_array = 8;
	l->heap_qualname = l->minor >= 15 ? 880 : 872;
	set_fixed_value_offsets(l);
	if (table_has(t, "set_object.used")) {
		l->set_used = table_get(t, "set_object.used");
		l->set_table = table_get(t, "set_object.table");
		l->set_mask = table_get(t, "set_object.mask");
	} else {   /* 3.13: fill, used, mask, table after the header */
		l->set_used = 24;
		l->set_mask = 32;
		l->set_table = 40;
	}

	l->has_async = table_has(t, "gen_object.gi_iframe") &&
		       table_has(t, "interpreter_frame.stackpointer");
	if (l->has_async) {
		z->gen = table_get(t, "gen_object.size");
		l->gen_iframe = table_get(t, "gen_object.gi_iframe");
		l->gen_frame_state = table_get(t, "gen_object.gi_frame_state");
		l->fr_stackpointer = table_get(t, "interpreter_frame.stackpointer");
		z->set = table_get(t, "set_object.size");
		l->set_used = table_get(t, "set_object.used");
		l->set_table = table_get(t, "set_object.table");
		l->set_mask = table_get(t, "set_object.mask");
		l->llist_next = table_get(t, "llist_node.next");
	}
}

/* Semantics the table does not carry. */
static void
set_semantics(struct py_layout *l)
{
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

	/* Generator frame states (pycore_frame.h) and where SEND leaves the
	 * awaited object while the frame is suspended in it: 3.14 keeps it on
	 * top of the stack, 3.15 one slot below. */
	if (l->minor == 14) {
		l->gen_state_yield_from = -1;
		l->gen_state_yield_from_locked = -128;
		l->gen_state_cleared = 4;
		l->awaitee_slot = 1;
	} else {
		l->gen_state_yield_from = 2;
		l->gen_state_yield_from_locked = 3;
		l->gen_state_cleared = 5;
		l->awaitee_slot = 2;
	}
}

/* Every offset we dereference must lie inside its struct, and the structs
 * must have plausible sizes: the table may be garbage. The struct whose
 * entry is implausible, or NULL. */
static const char *
implausible(const struct py_layout *l, const struct table_sizes *z)
{
	const char *bad = NULL;
	if (!fits(l->rt_interpreters_head, 8, z->rt))
		bad = "runtime_state.interpreters_head";
	else if (z->is > MAX_INTERP_SIZE)
		bad = "interpreter_state.size";
	else if (!fits(l->is_id, 8, z->is) || !fits(l->is_next, 8, z->is) ||
		 !fits(l->is_threads_head, 8, z->is) ||
		 (l->has_threads_main && !fits(l->is_threads_main, 8, z->is)) ||
		 !fits(l->is_gil_locked, 4, z->is) || !fits(l->is_gil_holder, 8, z->is) ||
		 (l->has_code_generation && !fits(l->is_code_generation, 8, z->is)))
		bad = "interpreter_state";
	else if (!fits(z->gc_collecting, 4, z->gc) || !fits(l->is_gc_collecting, 4, z->is) ||
		 (l->has_gc_frame && (!fits(z->gc_frame, 8, z->gc) || !fits(l->is_gc_frame, 8, z->is))))
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
	else if (z->fr > MAX_SMALL_STRUCT || !fits(l->fr_previous, 8, z->fr) ||
		 !fits(l->fr_executable, 8, z->fr) || !fits(l->fr_instr_ptr, 8, z->fr) ||
		 !fits(l->fr_owner, 1, z->fr))
		bad = "interpreter_frame";
	else if (z->co > MAX_SMALL_STRUCT || !fits(l->co_filename, 8, z->co) ||
		 !fits(l->co_name, 8, z->co) || !fits(l->co_qualname, 8, z->co) ||
		 !fits(l->co_linetable, 8, z->co) || !fits(l->co_firstlineno, 4, z->co) ||
		 l->co_code_adaptive > z->co || l->co_code_adaptive < 64)
		bad = "code_object";
	/* state and length are read from the header alone (str_ascii_size
	 * bytes), so they must lie within it. */
	else if (z->str > MAX_SMALL_STRUCT || l->str_ascii_size == 0 ||
		 l->str_ascii_size > 256 || !fits(l->str_state, 4, l->str_ascii_size) ||
		 !fits(l->str_length, 8, l->str_ascii_size) ||
		 l->str_compact_size < l->str_ascii_size || l->str_compact_size > 256)
		bad = "unicode_object";
	else if (z->bytes_obj > MAX_SMALL_STRUCT || !fits(l->bytes_size, 8, z->bytes_obj) ||
		 l->bytes_sval == 0 || l->bytes_sval > 256)
		bad = "bytes_object";
	else if (!fits(l->ob_type, 8, 64) || z->type > MAX_SMALL_STRUCT ||
		 !fits(l->tp_name, 8, z->type))
		bad = "type_object";
	return bad;
}

/* The fields only asyncio tasks use: implausible ones cost the tasks
 * (has_async off), not the attach. */
static bool
async_plausible(const struct py_layout *l, const struct table_sizes *z)
{
	return !(z->gen > MAX_SMALL_STRUCT || !fits(l->gen_frame_state, 1, z->gen) ||
		 l->gen_iframe >= z->gen || l->gen_iframe > 512 ||
		 !fits(l->fr_stackpointer, 8, z->fr) || z->set > MAX_SMALL_STRUCT ||
		 !fits(l->set_used, 8, z->set) || !fits(l->set_table, 8, z->set) ||
		 !fits(l->set_mask, 8, z->set) || l->llist_next > 64 ||
		 !fits(l->type_flags, 8, z->type) || l->long_size > 64 || l->long_digits > 64);
}

/* Where the values' fields are, by the struct sizes the table gives: a
 * garbage table leaves locals unread, not the rest. */
static bool
values_plausible(const struct py_layout *l, const struct table_sizes *z)
{
	uint64_t small[] = {
		l->co_flags, l->co_kwonlyargcount, l->tuple_size, l->tuple_item, l->list_size,
		l->list_item, l->float_value, l->long_size, l->long_digits, l->dict_keys,
		l->dict_values, l->set_used, l->set_mask, l->set_table,
	};
	for (size_t i = 0; i < COUNT(small); i++)
		if (small[i] > 256)
			return false;
	return fits(l->fr_localsplus, 8, z->fr + 8) && fits(l->co_localsplusnames, 8, z->co) &&
	       fits(l->co_localspluskinds, 8, z->co) && fits(l->type_flags, 8, z->type);
}

tt_status
pylayout_from_table(const uint8_t *raw, size_t len, struct py_layout *l, struct tt_error *err)
{
	if (check_table_header(raw, len, l, err) != TT_OK)
		return err->status;
	struct table t = {.raw = raw};
	t.names = pylayout_field_names(l->minor, &t.count);
	l->table_size = PY_DEBUG_HEADER_SIZE + t.count * 8;
	if (len < l->table_size)
		return tt_fail(err, TT_EBADMEM, 0, "short _Py_DebugOffsets table (%zu of %llu bytes)",
			       len, (unsigned long long)l->table_size);
	struct table_sizes z = {0};
	read_fields(&t, l, &z);
	if (t.missing)
		return tt_fail(err, TT_EVERSION, 0, "Python %s: offset table lacks %s",
			       l->version_str, t.missing);
	set_semantics(l);
	const char *bad = implausible(l, &z);
	if (bad)
		return tt_fail(err, TT_EBADMEM, 0,
			       "Python %s: implausible _Py_DebugOffsets entry for %s (corrupt table?)",
			       l->version_str, bad);
	if (l->has_async && !async_plausible(l, &z))
		l->has_async = false;
	l->has_values = values_plausible(l, &z);

	/* Derived offsets (see pylayout.h). */
	l->is_threads_unique_id = l->is_threads_head - 8;
	l->is_threads_count = l->has_threads_main ? l->is_threads_main + 8 : l->is_threads_head + 16;
	l->is_gil_switch = l->is_gil_locked + 8;
	l->ts_datastack_top = l->ts_datastack_chunk + 8;
	return finish_layout(l, z.is, err);
}

/* The compiled-in layouts of 3.11 and 3.12, which carry no _Py_DebugOffsets
 * table: offsetof() values from each version's headers (Include/internal
 * pycore_runtime.h, pycore_interp.h, pycore_gil.h, pycore_frame.h,
 * cpython/pystate.h, cpython/code.h, cpython/unicodeobject.h) on x86-64.
 * Debian's 3.11.2 and python3.11-dbg (Py_DEBUG without Py_TRACE_REFS) and
 * pyenv's 3.11.7 and 3.12.1 give the same values for every field below;
 * tests/check-layouts.sh compares them with offsetof against each build's
 * headers and a live target of that build. */
struct compiled_layout {
	unsigned minor;
	uint64_t rt_interpreters_head, rt_gil, is_gil_ptr;
	uint64_t gil_holder, gil_locked, gil_switch;
	uint64_t is_size, is_id, is_next, is_threads_unique_id, is_threads_head, is_threads_count;
	uint64_t is_gc_collecting, is_modules;
	uint64_t ts_size, ts_next, ts_interp, ts_cframe, ts_thread_id, ts_native_thread_id;
	uint64_t ts_datastack_chunk, ts_datastack_top, ts_root_cframe, cf_current_frame;
	uint64_t fr_previous, fr_code, fr_prev_instr, fr_owner;
	uint64_t co_filename, co_name, co_qualname, co_linetable, co_firstlineno, co_code_adaptive;
	uint64_t ob_type, tp_name;
	uint64_t str_state, str_length, str_ascii_size, str_compact_size;
	uint64_t bytes_size, bytes_sval;
	int owner_cstack;
	uint64_t fr_is_entry;   /* 0: none (3.12 has shim frames instead) */
	/* locals and values */
	uint64_t fr_localsplus, co_flags, co_argcount, co_kwonlyargcount;
	uint64_t co_localsplusnames, co_localspluskinds, type_flags;
	uint64_t long_size;     /* 3.11: ob_size, signed; 3.12: lv_tag */
	uint64_t dict_keys, dict_values;
};

static const struct compiled_layout compiled[] = {
	{
		.minor = 11,
		/* 3.11: one GIL for the process, in _PyRuntime.ceval.gil */
		.rt_interpreters_head = 40, .rt_gil = 360,
		.gil_holder = 8, .gil_locked = 16, .gil_switch = 24,
		.is_size = 107752, .is_id = 48, .is_next = 0, .is_threads_unique_id = 8,
		.is_threads_head = 16, .is_threads_count = 24, .is_gc_collecting = 848,
		.is_modules = 888,
		.ts_size = 360, .ts_next = 8, .ts_interp = 16, .ts_cframe = 56,
		.ts_thread_id = 152, .ts_native_thread_id = 160, .ts_datastack_chunk = 296,
		.ts_datastack_top = 304, .ts_root_cframe = 336,
		.cf_current_frame = 8, /* after uint8_t use_tracing */
		/* f_func, f_globals, f_builtins, f_locals, f_code, frame_obj,
		 * previous, prev_instr, stacktop, is_entry, owner */
		.fr_previous = 48, .fr_code = 32, .fr_prev_instr = 56, .fr_owner = 69,
		.fr_is_entry = 68,
		.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
		.co_firstlineno = 72, .co_code_adaptive = 184,
		.ob_type = 8, .tp_name = 24,
		/* PyASCIIObject still has wstr in 3.11; compact adds utf8_length,
		 * utf8 and wstr_length */
		.str_state = 32, .str_length = 16, .str_ascii_size = 48, .str_compact_size = 72,
		.bytes_size = 16, .bytes_sval = 32,
		.fr_localsplus = 72, .co_flags = 48, .co_argcount = 56, .co_kwonlyargcount = 64,
		.co_localsplusnames = 96, .co_localspluskinds = 104, .type_flags = 168,
		.long_size = 16, .dict_keys = 32, .dict_values = 40,
		/* 3.11 entry frames are ordinary Python frames marked is_entry:
		 * reported like any other, no shim to skip */
		.owner_cstack = -1,
	},
	{
		.minor = 12,
		/* 3.12: per-interpreter GIL, reached through interp->ceval.gil */
		.rt_interpreters_head = 40, .is_gil_ptr = 384,
		.gil_holder = 8, .gil_locked = 16, .gil_switch = 24,
		.is_size = 383552, .is_id = 8, .is_next = 0, .is_threads_unique_id = 64,
		.is_threads_head = 72, .is_threads_count = 80, .is_gc_collecting = 312,
		.is_modules = 944,
		.ts_size = 288, .ts_next = 8, .ts_interp = 16, .ts_cframe = 56,
		.ts_thread_id = 136, .ts_native_thread_id = 144, .ts_datastack_chunk = 232,
		.ts_datastack_top = 240, .ts_root_cframe = 272,
		.cf_current_frame = 0,
		/* f_code, previous, f_funcobj, f_globals, f_builtins, f_locals,
		 * frame_obj, prev_instr, stacktop, return_offset, owner */
		.fr_previous = 8, .fr_code = 0, .fr_prev_instr = 56, .fr_owner = 70,
		.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
		.co_firstlineno = 68, .co_code_adaptive = 192,
		.ob_type = 8, .tp_name = 24,
		.str_state = 32, .str_length = 16, .str_ascii_size = 40, .str_compact_size = 56,
		.bytes_size = 16, .bytes_sval = 32,
		.fr_localsplus = 72, .co_flags = 48, .co_argcount = 52, .co_kwonlyargcount = 60,
		.co_localsplusnames = 96, .co_localspluskinds = 104, .type_flags = 168,
		.long_size = 16, .dict_keys = 32, .dict_values = 40,
		/* FRAME_OWNED_BY_CSTACK: the entry shim _PyEval_EvalFrameDefault pushes */
		.owner_cstack = 3,
	},
};

tt_status
pylayout_compiled_in(uint64_t version_hex, unsigned build_flags, struct py_layout *l,
		     struct tt_error *err)
{
	memset(l, 0, sizeof *l);
	l->version_hex = version_hex;
	l->major = (version_hex >> 24) & 0xff;
	l->minor = (version_hex >> 16) & 0xff;
	l->micro = (version_hex >> 8) & 0xff;
	pylayout_version_string(version_hex, l->version_str, sizeof l->version_str);
	const struct compiled_layout *c = NULL;
	for (size_t i = 0; i < COUNT(compiled); i++)
		if (l->major == 3 && compiled[i].minor == l->minor)
			c = &compiled[i];
	if (!c)
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python version %s (tachyon-top supports " PY_SUPPORTED_RANGE ")",
			       l->version_str);
	if (((version_hex >> 4) & 0xf) != 0xf)
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python pre-release %s (only final releases of "
			       PY_SUPPORTED_RANGE " have a stable layout)", l->version_str);
	/* Py_TRACE_REFS puts two list pointers before ob_refcnt, moving every
	 * object field by 16 bytes; no distribution ships such a build and we
	 * have none to test with, so we say so rather than guess. */
	if (build_flags & PY_BUILD_TRACE_REFS)
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python build %s with Py_TRACE_REFS (its objects have "
			       "another layout)", l->version_str);
	l->compiled_in = true;
	l->debug_build = (build_flags & PY_BUILD_DEBUG) != 0;
	l->rt_interpreters_head = c->rt_interpreters_head;
	l->is_id = c->is_id;
	l->is_next = c->is_next;
	l->is_threads_head = c->is_threads_head;
	l->is_threads_unique_id = c->is_threads_unique_id;
	l->is_threads_count = c->is_threads_count;
	l->is_gc_collecting = c->is_gc_collecting;
	l->is_modules = c->is_modules;
	l->gil_place = c->minor == 11 ? PY_GIL_IN_RUNTIME : PY_GIL_BEHIND_POINTER;
	l->rt_gil = c->rt_gil;
	l->is_gil_ptr = c->is_gil_ptr;
	l->gil_holder = c->gil_holder;
	l->gil_locked = c->gil_locked;
	l->gil_switch = c->gil_switch;
	l->gil_read_size = c->gil_switch + 8;
	l->ts_size = c->ts_size;
	l->ts_next = c->ts_next;
	l->ts_interp = c->ts_interp;
	l->has_cframe = true;
	l->ts_cframe = c->ts_cframe;
	l->ts_root_cframe = c->ts_root_cframe;
	l->cf_current_frame = c->cf_current_frame;
	l->ts_current_frame = c->ts_cframe; /* unused with has_cframe; kept in bounds */
	l->ts_thread_id = c->ts_thread_id;
	l->ts_native_thread_id = c->ts_native_thread_id;
	l->ts_datastack_chunk = c->ts_datastack_chunk;
	l->ts_datastack_top = c->ts_datastack_top;
	l->fr_previous = c->fr_previous;
	l->fr_executable = c->fr_code;
	l->fr_instr_ptr = c->fr_prev_instr;
	l->instr_is_prev = true;
	l->fr_owner = c->fr_owner;
	l->has_is_entry = c->fr_is_entry != 0;
	l->fr_is_entry = c->fr_is_entry;
	l->co_filename = c->co_filename;
	l->co_name = c->co_name;
	l->co_qualname = c->co_qualname;
	l->co_linetable = c->co_linetable;
	l->co_firstlineno = c->co_firstlineno;
	l->co_code_adaptive = c->co_code_adaptive;
	l->ob_type = c->ob_type;
	l->tp_name = c->tp_name;
	l->str_state = c->str_state;
	l->str_length = c->str_length;
	l->str_ascii_size = c->str_ascii_size;
	l->str_compact_size = c->str_compact_size;
	l->bytes_size = c->bytes_size;
	l->bytes_sval = c->bytes_sval;
	l->fr_localsplus = c->fr_localsplus;
	l->co_flags = c->co_flags;
	l->co_argcount = c->co_argcount;
	l->co_kwonlyargcount = c->co_kwonlyargcount;
	l->co_localsplusnames = c->co_localsplusnames;
	l->co_localspluskinds = c->co_localspluskinds;
	l->type_flags = c->type_flags;
	/* object layouts the same in both: var-objects' items after ob_size,
	 * a list's behind a pointer; ob_digit after the size or tag */
	l->tuple_size = l->list_size = 16;
	l->tuple_item = l->list_item = 24;
	l->float_value = 16;
	l->long_signed_size = c->minor == 11;
	l->long_size = c->long_size;
	l->long_digits = 24;
	l->dict_keys = c->dict_keys;
	l->dict_values = c->dict_values;
	l->dict_values_array = 0;
	l->set_used = 24;
	l->set_mask = 32;
	l->set_table = 40;
	l->heap_qualname = c->minor == 11 ? 864 : 872;
	set_fixed_value_offsets(l);
	l->has_values = true;
	l->tag_mask = 0; /* plain PyObject pointers */
	l->owner_thread = 0;
	l->owner_generator = 1;
	l->owner_frame_object = 2;
	l->owner_cstack = c->owner_cstack;
	l->owner_interpreter = -1;
	/* No threads.main, no code-object generation counter (code objects
	 * are re-checked periodically, as for 3.13), no per-thread GIL flags
	 * (so no "waiting for the GIL"), no exception state, no base frame. */
	return finish_layout(l, c->is_size, err);
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
	bool gil_here = l->gil_place == PY_GIL_IN_INTERP;
	bool cf = l->has_cframe;
	struct { const char *name; uint64_t value; bool present; } rows[] = {
		{"runtime.interpreters_head", l->rt_interpreters_head, true},
		{"runtime.gil", l->rt_gil, l->gil_place == PY_GIL_IN_RUNTIME},
		{"interp.id", l->is_id, true},
		{"interp.next", l->is_next, true},
		{"interp.threads_head", l->is_threads_head, true},
		{"interp.threads_main", l->is_threads_main, l->has_threads_main},
		{"interp.threads_next_unique_id", l->is_threads_unique_id, true},
		{"interp.threads_count", l->is_threads_count, true},
		{"interp.gil_locked", l->is_gil_locked, gil_here},
		{"interp.gil_last_holder", l->is_gil_holder, gil_here},
		{"interp.gil_switch_number", l->is_gil_switch, gil_here},
		{"interp.ceval_gil", l->is_gil_ptr, l->gil_place == PY_GIL_BEHIND_POINTER},
		{"gil.locked", l->gil_locked, !gil_here},
		{"gil.last_holder", l->gil_holder, !gil_here},
		{"gil.switch_number", l->gil_switch, !gil_here},
		{"interp.gc_collecting", l->is_gc_collecting, true},
		{"interp.code_object_generation", l->is_code_generation, l->has_code_generation},
		{"tstate.next", l->ts_next, true},
		{"tstate.interp", l->ts_interp, true},
		{"tstate.current_frame", l->ts_current_frame, !cf},
		{"tstate.cframe", l->ts_cframe, cf},
		{"tstate.root_cframe", l->ts_root_cframe, cf},
		{"cframe.current_frame", l->cf_current_frame, cf},
		{"tstate.thread_id", l->ts_thread_id, true},
		{"tstate.native_thread_id", l->ts_native_thread_id, true},
		{"tstate.datastack_chunk", l->ts_datastack_chunk, true},
		{"tstate.datastack_top", l->ts_datastack_top, true},
		{"tstate.base_frame", l->ts_base_frame, l->has_base_frame},
		{"tstate.holds_gil", l->ts_holds_gil, l->has_tstate_gil},
		{"tstate.gil_requested", l->ts_gil_requested, l->has_tstate_gil},
		{"tstate.current_exception", l->ts_current_exception, l->has_exception_state},
		{"frame.previous", l->fr_previous, true},
		{"frame.executable", l->fr_executable, true},
		{"frame.instr_ptr", l->fr_instr_ptr, !l->instr_is_prev},
		{"frame.prev_instr", l->fr_instr_ptr, l->instr_is_prev},
		{"frame.owner", l->fr_owner, true},
		{"code.name", l->co_name, true},
		{"code.qualname", l->co_qualname, true},
		{"code.filename", l->co_filename, true},
		{"code.linetable", l->co_linetable, true},
		{"code.firstlineno", l->co_firstlineno, true},
		{"code.co_code_adaptive", l->co_code_adaptive, true},
		{"code.firsttraceable", l->co_firsttraceable, true},
		{"object.ob_type", l->ob_type, true},
		{"type.tp_name", l->tp_name, true},
		{"str.state", l->str_state, true},
		{"str.length", l->str_length, true},
		{"str.ascii_size", l->str_ascii_size, true},
		{"str.compact_size", l->str_compact_size, true},
		{"bytes.ob_size", l->bytes_size, true},
		{"bytes.ob_sval", l->bytes_sval, true},
		{"frame.localsplus", l->fr_localsplus, true},
		{"code.flags", l->co_flags, true},
		{"code.argcount", l->co_argcount, true},
		{"code.kwonlyargcount", l->co_kwonlyargcount, true},
		{"code.localsplusnames", l->co_localsplusnames, true},
		{"code.localspluskinds", l->co_localspluskinds, true},
		{"type.tp_flags", l->type_flags, true},
		{"tuple.ob_size", l->tuple_size, true},
		{"tuple.ob_item", l->tuple_item, true},
		{"list.ob_size", l->list_size, true},
		{"list.ob_item", l->list_item, true},
		{"float.ob_fval", l->float_value, true},
		{"long.ob_size", l->long_size, l->long_signed_size},
		{"long.lv_tag", l->long_size, !l->long_signed_size},
		{"long.ob_digit", l->long_digits, true},
		{"dict.ma_used", l->dict_used, true},
		{"dict.ma_keys", l->dict_keys, true},
		{"dict.ma_values", l->dict_values, true},
		{"dictvalues.values", l->dict_values_array, true},
		{"dictkeys.log2_size", PY_DICTKEYS_LOG2_SIZE, true},
		{"dictkeys.log2_index_bytes", PY_DICTKEYS_LOG2_INDEX_BYTES, true},
		{"dictkeys.kind", PY_DICTKEYS_KIND, true},
		{"dictkeys.nentries", PY_DICTKEYS_NENTRIES, true},
		{"dictkeys.indices", PY_DICTKEYS_INDICES, true},
		{"set.used", l->set_used, true},
		{"set.mask", l->set_mask, true},
		{"set.table", l->set_table, true},
		{"bytearray.ob_size", l->bytearray_size, true},
		{"bytearray.ob_start", l->bytearray_start, true},
		{"cell.ob_ref", l->cell_ref, true},
		{"type.tp_dict", l->type_dict, true},
		{"heaptype.ht_qualname", l->heap_qualname, true},
		{"function.func_qualname", l->func_qualname, true},
		{"method.im_func", l->method_func, true},
		{"method.im_self", l->method_self, true},
		{"cfunction.m_ml", l->cfunc_ml, true},
		{"cfunction.m_self", l->cfunc_self, true},
		{"methoddef.ml_name", PY_METHODDEF_NAME, true},
		{"module.md_dict", l->module_dict, true},
		{"type.tp_basicsize", l->tp_basicsize, true},
		{"heaptype.ht_cached_keys", l->heap_cached_keys, true},
		{"interp.modules", l->is_modules, true},
		{"stackchunk.previous", PY_STACKCHUNK_PREVIOUS, true},
		{"stackchunk.size", PY_STACKCHUNK_SIZE, true},
	};
	fprintf(f, "layout=%s\n", !l->compiled_in ? "_Py_DebugOffsets"
				  : l->debug_build ? "compiled-in (debug build)"
						   : "compiled-in (release build)");
	for (size_t i = 0; i < COUNT(rows); i++)
		if (rows[i].present)
			fprintf(f, "%s=%llu\n", rows[i].name, (unsigned long long)rows[i].value);
	if (l->has_async) {
		/* asyncio semantics not in the table (tests/check-layouts.sh) */
		fprintf(f, "gen.state_suspended_yield_from=%d\n", l->gen_state_yield_from);
		if (l->gen_state_yield_from_locked != -128)
			fprintf(f, "gen.state_suspended_yield_from_locked=%d\n",
				l->gen_state_yield_from_locked);
		fprintf(f, "gen.state_cleared=%d\n", l->gen_state_cleared);
	}
}
