/* Where greenlet's own objects keep what a reader needs, per greenlet
 * version and CPython version: the one place that knows greenlet's C++
 * classes (TGreenlet.hpp, TThreadState.hpp). tests/check-greenlet-layout.sh
 * compiles offsetof() of each field against the installed greenlet's
 * headers and compares. */
#ifndef TT_GREENLETLAYOUT_H
#define TT_GREENLETLAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct greenlet_layout {
	const char *greenlet_versions;   /* "3.3" : the major.minor it was read from */
	unsigned py_minor_min, py_minor_max;
	uint64_t pyg_pimpl;              /* PyGreenlet.pimpl: its C++ Greenlet */
	uint64_t g_self;                 /* Greenlet._self: back to the PyGreenlet */
	uint64_t g_stack_start;          /* Greenlet.stack_state._stack_start */
	uint64_t g_stack_stop;           /*   .stack_stop: 0 until started */
	uint64_t g_stack_copy;           /*   .stack_copy: the part of its C stack saved */
	uint64_t g_stack_saved;          /*   ._stack_saved: its length */
	uint64_t g_top_frame;            /* Greenlet.python_state._top_frame (PyFrameObject *) */
	uint64_t ug_main_greenlet;       /* UserGreenlet._main_greenlet */
	uint64_t ug_parent;              /* UserGreenlet._parent */
	uint64_t mg_thread_state;        /* MainGreenlet._thread_state (ThreadState *) */
	uint64_t ts_current_greenlet;    /* ThreadState.current_greenlet (PyGreenlet *) */
	uint64_t frameobj_f_frame;       /* PyFrameObject.f_frame (CPython's, read here only) */
	uint64_t read_size;              /* bytes of a Greenlet read at once */
};

/* The layout of greenlet `version` ("3.3.2") on CPython 3.py_minor, or
 * NULL; then *known receives what is known, for the refusal. */
const struct greenlet_layout *greenlet_layout_find(const char *version, unsigned py_minor,
						   const char **known);

#endif
