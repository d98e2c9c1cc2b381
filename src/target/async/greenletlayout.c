/* greenlet's layouts, read off its headers (see greenletlayout.h). */
#include "async/greenletlayout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct greenlet_layout layouts[] = {
	/* greenlet 3.3 on CPython 3.14 and 3.15 (GREENLET_PY314: PythonState
	 * keeps current_executor and stackpointer; no _PyCFrame). */
	{
		.greenlet_versions = "3.3",
		.py_minor_min = 14,
		.py_minor_max = 15,
		.pyg_pimpl = 32,
		.g_self = 8,
		.g_stack_start = 56,
		.g_stack_stop = 64,
		.g_stack_copy = 72,
		.g_stack_saved = 80,
		.g_top_frame = 104,
		.ug_main_greenlet = 176,
		.ug_parent = 192,
		.mg_thread_state = 184,
		.ts_current_greenlet = 8,
		.frameobj_f_frame = 24,
		.read_size = 200,
	},
	/* greenlet 3.3 on CPython 3.13 (as pip builds it: the same headers,
	 * PythonState without 3.14's fields). */
	{
		.greenlet_versions = "3.3",
		.py_minor_min = 13,
		.py_minor_max = 13,
		.pyg_pimpl = 32,
		.g_self = 8,
		.g_stack_start = 56,
		.g_stack_stop = 64,
		.g_stack_copy = 72,
		.g_stack_saved = 80,
		.g_top_frame = 104,
		.ug_main_greenlet = 160,
		.ug_parent = 176,
		.mg_thread_state = 168,
		.ts_current_greenlet = 8,
		.frameobj_f_frame = 24,
		.read_size = 184,
	},
	/* greenlet 3.3 on CPython 3.11 and 3.12 (PythonState keeps the
	 * cframe of 3.11/3.12). */
	{
		.greenlet_versions = "3.3",
		.py_minor_min = 11,
		.py_minor_max = 12,
		.pyg_pimpl = 32,
		.g_self = 8,
		.g_stack_start = 56,
		.g_stack_stop = 64,
		.g_stack_copy = 72,
		.g_stack_saved = 80,
		.g_top_frame = 104,
		.ug_main_greenlet = 168,
		.ug_parent = 184,
		.mg_thread_state = 176,
		.ts_current_greenlet = 8,
		.frameobj_f_frame = 24,
		.read_size = 192,
	},
	/* greenlet 2.0 on CPython 3.11 (Debian 12's python3-greenlet 2.0.2,
	 * greenlet_greenlet.hpp): _self is not in Greenlet but in each
	 * subclass, at the same offset past Greenlet's 160 bytes. */
	{
		.greenlet_versions = "2.0",
		.py_minor_min = 11,
		.py_minor_max = 11,
		.pyg_pimpl = 32,
		.g_self = 160,
		.g_stack_start = 48,
		.g_stack_stop = 56,
		.g_stack_copy = 64,
		.g_stack_saved = 72,
		.g_top_frame = 96,
		.ug_main_greenlet = 168,
		.ug_parent = 184,
		.mg_thread_state = 168,
		.ts_current_greenlet = 8,
		.frameobj_f_frame = 24,
		.read_size = 192,
	},
};

const struct greenlet_layout *
greenlet_layout_find(const char *version, unsigned py_minor, const char **known)
{
	*known = "greenlet 3.3 on Python 3.11 to 3.15, 2.0 on 3.11";
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
		const struct greenlet_layout *g = &layouts[i];
		size_t n = strlen(g->greenlet_versions);
		if (strncmp(version, g->greenlet_versions, n) == 0 &&
		    (version[n] == '.' || version[n] == '\0') && py_minor >= g->py_minor_min &&
		    py_minor <= g->py_minor_max)
			return g;
	}
	return NULL;
}
