/* Debug information (DWARF, through elfutils' libdw) as the native unwinder
 * reads it: where the evaluator function keeps its frame and instruction
 * pointer, from the location lists of its variables, and the call frame
 * information's rule for the frame's address (CFA) around the address
 * asked about. Input: the address (8 bytes), then an ELF file with its
 * debug information and CFI.
 *
 * parsers: src/target/native/varloc.c
 */
#include "config.h"

#include <elfutils/libdwfl.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "native/varloc.h"

/* The CFA's rule at addresses around addr, as the unwinder asks for it
 * where the evaluator's caller's frame begins. */
static void
cfa_rules(const char *path, char *debug_path, uint64_t addr)
{
	char *dp = debug_path;
	const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &dp,
	};
	Dwfl *d = dwfl_begin(&callbacks);
	if (!d)
		return;
	dwfl_report_begin(d);
	Dwfl_Module *mod = dwfl_report_elf(d, "fuzz", path, -1, 0, false);
	dwfl_report_end(d, NULL, NULL);
	for (int k = -2; mod && k < 6; k++) {
		uint8_t reg;
		int64_t off;
		if (varloc_cfa_rule(mod, addr + (uint64_t)(int64_t)(8 * k), &reg, &off))
			fuzz_say("cfa at %+d: reg %u %+lld\n", 8 * k, reg, (long long)off);
	}
	dwfl_end(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8)
		return 0;
	uint64_t addr;
	memcpy(&addr, data, 8);
	char path[64];
	int fd = fuzz_file(data + 8, size - 8, path, sizeof path);
	static const char *const names[VARLOC_VARS] = {"frame", "next_instr"};
	/* no debug file is looked for elsewhere: only the input's own */
	char debug_path[] = "/nonexistent-fuzz-debug";
	struct varloc_table t;
	if (varloc_table_read(&t, path, debug_path, addr, "_PyEval_EvalFrameDefault", names)) {
		fuzz_say("found: %u and %u spans\n", t.nspans[0], t.nspans[1]);
		for (int v = 0; v < VARLOC_VARS; v++) {
			for (uint32_t i = 0; i < t.nspans[v]; i++) {
				fuzz_check(i == 0 || t.spans[v][i - 1].lo <= t.spans[v][i].lo);
				varloc_table_at(&t, v, t.spans[v][i].lo);
			}
			varloc_table_at(&t, v, addr);
		}
	}
	varloc_table_free(&t);
	cfa_rules(path, debug_path, addr);
	close(fd);
	return 0;
}
