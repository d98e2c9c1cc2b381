/* Everything tachyon-top knows about how CPython versions differ lives here:
 * the shape of the _Py_DebugOffsets table each interpreter carries (which
 * fields, in which order, per minor version), and the semantics the table does
 * not describe (frame-owner values, pointer tagging, optional features).
 * The rest of the engine reads a struct py_layout and never a version number. */
#ifndef TT_PYLAYOUT_H
#define TT_PYLAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

#define PY_DEBUG_COOKIE "xdebugpy"
/* Bytes of the table header before the offsets: cookie, version, free_threaded. */
#define PY_DEBUG_HEADER_SIZE 24
/* Upper bound on any version's table size we read. */
#define PY_DEBUG_MAX_SIZE 2048

/* _PyStackChunk and _PyErr_StackItem are not in the table; they are ABI-stable
 * since 3.11 (previous, size, top, data[] / exc_value, previous_item). */
#define PY_STACKCHUNK_PREVIOUS 0
#define PY_STACKCHUNK_SIZE 8

/* PyDictKeysObject, the same from 3.11 to 3.15 in GIL builds: log2 of the
 * table size, log2 of the index bytes, the kind (general: 24-byte entries
 * with the hash; unicode or split: 16-byte key, value), the count of
 * entries used, then the indices and after them the entries. */
#define PY_DICTKEYS_LOG2_SIZE 8
#define PY_DICTKEYS_LOG2_INDEX_BYTES 9
#define PY_DICTKEYS_KIND 10
#define PY_DICTKEYS_NENTRIES 24
#define PY_DICTKEYS_INDICES 32
/* PyMethodDef.ml_name: its first member in every version */
#define PY_METHODDEF_NAME 0
/* Code flags and local kinds, the same from 3.11 to 3.15. */
#define PY_CO_VARARGS 0x4
#define PY_CO_VARKEYWORDS 0x8
#define PY_CO_FAST_HIDDEN 0x10
#define PY_CO_FAST_LOCAL 0x20
#define PY_CO_FAST_CELL 0x40
#define PY_CO_FAST_FREE 0x80
/* A type allocated on the heap (a class statement), not a built-in one. */
#define PY_TPFLAGS_HEAPTYPE (1ul << 9)
/* A type that is int or str, or derives from it. */
#define PY_TPFLAGS_LONG_SUBCLASS (1ul << 24)
#define PY_TPFLAGS_UNICODE_SUBCLASS (1ul << 28)
/* An instance's dict kept before it (3.11+), its values after it (3.13+). */
#define PY_TPFLAGS_MANAGED_DICT (1ul << 4)
#define PY_TPFLAGS_INLINE_VALUES (1ul << 2)
/* Where a managed dict is kept: three pointers before the object (3.11
 * keeps its values pointer one further); and PyDictValues.valid (3.13+). */
#define PY_MANAGED_DICT_BEFORE 24
#define PY_MANAGED_VALUES_BEFORE_311 32
#define PY_DICTVALUES_VALID 3

/* The versions tachyon-top reads, for messages and --help. */
#define PY_SUPPORTED_RANGE "3.11 to 3.15"
#define PY_MIN_MINOR 11
#define PY_MAX_MINOR 15

/* Where an interpreter's GIL state (struct _gil_runtime_state) lives. */
enum py_gil_place {
	PY_GIL_IN_INTERP,      /* 3.13+: inside PyInterpreterState (is_gil_* offsets) */
	PY_GIL_IN_RUNTIME,     /* 3.11: _PyRuntime.ceval.gil, one for all interpreters */
	PY_GIL_BEHIND_POINTER, /* 3.12: interp->ceval.gil points at it */
};

/* What the binary's symbols say about how it was built (3.11/3.12). */
enum {
	PY_BUILD_DEBUG = 1u << 0,      /* Py_DEBUG: same offsets as release for what we read */
	PY_BUILD_TRACE_REFS = 1u << 1, /* Py_TRACE_REFS: PyObject is 16 bytes longer */
};

/* How a walker treats a frame, decided by its owner byte. */
enum py_frame_kind {
	PY_FRAME_PYTHON,   /* a Python function's frame: report it */
	PY_FRAME_SHIM,     /* an entry/trampoline frame: skip it */
	PY_FRAME_INVALID,  /* an owner value this version never uses: torn memory */
};

struct py_layout {
	/* Identity */
	uint64_t version_hex;
	unsigned major, minor, micro;
	char version_str[32];          /* "3.15.2", "3.15.0b3" */
	bool free_threaded;
	uint64_t table_size;           /* bytes of _Py_DebugOffsets; 0 for compiled-in layouts */
	bool compiled_in;              /* 3.11/3.12: no table, offsets built into tachyon-top */
	bool debug_build;              /* known for compiled-in layouts only */

	/* _PyRuntimeState */
	uint64_t rt_interpreters_head;

	/* PyInterpreterState (all offsets from the interpreter's address) */
	uint64_t is_id, is_next, is_threads_head;
	uint64_t is_threads_main;      /* valid when has_threads_main */
	uint64_t is_gc_collecting;     /* gc + gc.collecting */
	uint64_t is_gc_frame;          /* valid when has_gc_frame */
	uint64_t is_gil_locked, is_gil_holder; /* when gil_place == PY_GIL_IN_INTERP */
	/* GIL elsewhere: the struct's address is runtime + rt_gil (3.11) or the
	 * pointer at interp + is_gil_ptr (3.12); fields at these offsets in it. */
	enum py_gil_place gil_place;
	uint64_t rt_gil, is_gil_ptr;
	uint64_t gil_locked, gil_holder, gil_switch, gil_read_size;
	uint64_t is_code_generation;   /* valid when has_code_generation */
	/* Derived from neighbouring table fields by struct knowledge that
	 * tests/check-layouts.sh verifies with offsetof against each version's
	 * headers: interp->threads.next_unique_id and .count (a changed list
	 * shows in them) and _gil.switch_number (bumped whenever another thread
	 * takes the GIL). */
	uint64_t is_threads_unique_id, is_threads_count, is_gil_switch;
	/* The hot interpreter fields lie in one range read as a single block. */
	uint64_t is_block_start, is_block_size;

	/* PyThreadState */
	uint64_t ts_size;
	uint64_t ts_next, ts_interp, ts_current_frame, ts_thread_id, ts_native_thread_id;
	/* 3.11/3.12: the current frame is one hop further, at
	 * tstate->cframe->current_frame (ts_current_frame is then unused). The
	 * cframe usually lives on the C stack of the innermost eval loop, or is
	 * the thread state's own root_cframe. */
	bool has_cframe;
	uint64_t ts_cframe, cf_current_frame;
	uint64_t ts_root_cframe;       /* read with the thread state, for threads outside any eval loop */
	uint64_t ts_datastack_chunk;
	uint64_t ts_datastack_top;     /* derived: datastack_chunk + 8 */
	uint64_t ts_base_frame;        /* valid when has_base_frame */
	uint64_t ts_holds_gil, ts_gil_requested;  /* valid when has_tstate_gil */
	uint64_t ts_current_exception; /* valid when has_exception_state */
	uint64_t ts_read_size;         /* bytes covering every field we use */

	/* _PyInterpreterFrame */
	uint64_t fr_previous, fr_executable, fr_instr_ptr, fr_owner;
	/* 3.11 marks the outermost frame of each evaluator call is_entry; 3.12+
	 * put a shim frame below it instead (owner_cstack/owner_interpreter) */
	bool has_is_entry;
	uint64_t fr_is_entry;
	/* 3.11/3.12 keep prev_instr (the code unit before the next instruction)
	 * where 3.13+ keep instr_ptr; CPython computes a frame's line from
	 * either the same way (pointer - co_code_adaptive in code units), so we
	 * do too. Only the name in `info` differs. */
	bool instr_is_prev;
	uint64_t fr_read_size;

	/* PyCodeObject */
	uint64_t co_filename, co_name, co_qualname, co_linetable, co_firstlineno;
	uint64_t co_code_adaptive;
	/* derived: int _co_firsttraceable, the index of the code's first RESUME.
	 * On every version we read, it and then void *co_extra end just before
	 * co_code_adaptive (not in the table; checked against each build's
	 * headers by tests/check-layouts.sh). A frame of a thread that has not
	 * reached it yet is "incomplete", and CPython leaves it out of
	 * tracebacks and f_back: so do we (see codecache_frame_incomplete). */
	uint64_t co_firsttraceable;
	uint64_t co_read_size;

	/* Objects */
	uint64_t ob_type;
	uint64_t tp_name;               /* PyTypeObject.tp_name (const char *) */
	uint64_t str_state, str_length, str_ascii_size, str_compact_size;
	uint64_t bytes_size, bytes_sval;

	/* Locals and values (dump --locals). A frame's fast locals follow it
	 * (fr_localsplus: one pointer each, tagged on 3.14+), named by its
	 * code's co_localsplusnames tuple, with a CO_FAST_* byte each in the
	 * co_localspluskinds bytes; the first co_argcount +
	 * co_kwonlyargcount (+1 for *args, +1 for **kwargs, by co_flags) are
	 * the arguments. The rest say where the built-in types keep their
	 * values. tests/check-layouts.sh checks each against the headers. */
	bool has_values;                /* the fields below are plausible */
	uint64_t fr_localsplus;
	uint64_t co_argcount, co_kwonlyargcount, co_flags, co_localsplusnames, co_localspluskinds;
	uint64_t type_flags;            /* PyTypeObject.tp_flags (unsigned long) */
	uint64_t tuple_size, tuple_item, list_size, list_item;
	uint64_t float_value;
	bool long_signed_size;          /* 3.11: ob_size is the signed count of digits,
					   not lv_tag (count << 3 | sign) */
	uint64_t long_size, long_digits;
	uint64_t dict_used, dict_keys, dict_values;
	uint64_t dict_values_array;     /* PyDictValues.values: 0 before 3.13 */
	uint64_t bytearray_size, bytearray_start;
	uint64_t cell_ref;
	/* what an object of another type is called: a class's __module__ in
	 * its type's dict, its __qualname__ in the heap type; a function's
	 * qualified name */
	uint64_t type_dict, heap_qualname, func_qualname;
	/* a bound method's function and self; a built-in function's
	 * PyMethodDef and self; a module's dict */
	uint64_t method_func, method_self, cfunc_ml, cfunc_self, module_dict;
	/* an object's own attributes (the names Python gives threads, in
	 * threading's Thread objects): each interpreter's sys.modules; a
	 * type's instance size (inline values follow it) and the keys its
	 * instances' values share */
	uint64_t is_modules;
	uint64_t tp_basicsize, heap_cached_keys;

	/* Semantics not in the table */
	uint64_t tag_mask;             /* bits to clear from tagged _PyStackRef pointers */
	int owner_thread, owner_generator, owner_frame_object;
	int owner_cstack;              /* -1 when the version has none */
	int owner_interpreter;         /* -1 when the version has none */

	bool has_threads_main;
	bool has_code_generation;
	bool has_base_frame;
	bool has_tstate_gil;           /* holds_gil / gil_requested on the thread */
	bool has_exception_state;
	bool has_gc_frame;

	/* asyncio introspection (3.14+; has_async false on 3.13). Offsets from
	 * the table; the frame-state numbering and the awaited object's stack
	 * slot are not in it and differ by version. */
	bool has_async;
	uint64_t gen_iframe, gen_frame_state; /* PyGenObject: embedded frame, state byte */
	uint64_t gen_read_size;        /* bytes covering the state and the frame's fields */
	uint64_t fr_stackpointer;
	uint64_t set_used, set_table, set_mask;
	uint64_t set_read_size;
	uint64_t llist_next;
	int gen_state_yield_from;      /* suspended in `await` / `yield from` */
	int gen_state_yield_from_locked; /* 3.15: same, while inspected; -128 if none */
	int gen_state_cleared;
	unsigned awaitee_slot;         /* the awaited object is at stackpointer[-awaitee_slot] */
};

/* Decode a table read from a target. `raw` holds `len` bytes read at the
 * runtime address. Refuses bad cookies, unknown versions, pre-releases,
 * free-threaded builds (not supported yet) and offsets that do not fit their
 * struct, each with a message naming the problem. */
tt_status pylayout_from_table(const uint8_t *raw, size_t len, struct py_layout *out,
			      struct tt_error *err);

/* Fill a compiled-in layout (3.11, 3.12) for a version read from the
 * binary's Py_Version, with PY_BUILD_* flags from its symbols. Refuses other
 * versions, pre-releases and Py_TRACE_REFS builds with a message. */
tt_status pylayout_compiled_in(uint64_t version_hex, unsigned build_flags, struct py_layout *out,
			       struct tt_error *err);

/* Bytes of the table for a version hex, or 0 if the minor version is unknown. */
size_t pylayout_table_size(uint64_t version_hex);

/* Format a version hex as "3.15.2" or "3.15.0b3". */
void pylayout_version_string(uint64_t version_hex, char *buf, size_t len);

/* Print the offsets the engine uses as "name=value" lines (`tachyon-top info`). */
void pylayout_print(FILE *f, const struct py_layout *l);

enum py_frame_kind pylayout_frame_kind(const struct py_layout *l, int owner);

/* For the layout tests: the table's field names ("thread_state.current_frame")
 * in order for a minor version; NULL if unknown. */
const char *const *pylayout_field_names(unsigned minor, size_t *count);

#endif
