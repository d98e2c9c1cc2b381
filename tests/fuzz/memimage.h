/* A memory image of a real interpreter: the bytes a walk of a live target
 * read (tests/fuzz/snapshot writes them), loaded behind the fake memory
 * backend for the fuzz targets that read Python's structures. The fuzzer
 * mutates the image; the readers must survive whatever it holds.
 *
 * Format, little-endian: "TTMEMIM3", then u64 _PyRuntime's address, u64
 * the version for 3.11/3.12 (PY_VERSION_HEX; 0: the layout table is in the
 * image), u64 the asyncio offsets table's address (0: none), u64 the JIT's
 * __jit_debug_descriptor's (0: none), greenlet's three vtable symbols'
 * addresses (u64 each, UserGreenlet, MainGreenlet, BrokenGreenlet; 0: no
 * greenlet) and its version (16 bytes, NUL-padded), u32 the number of
 * regions, and each region as u64 address, u32 length, bytes; then,
 * optionally, what the process wrote between the sampler's two samples:
 * u32 the number of patches, each as a region is, written over the
 * regions' bytes after the first sample (bytes outside every region are
 * dropped). "TTMEMIM2" images have no greenlet fields and no patches,
 * "TTMEMIMG" images no descriptor field either. */
#ifndef TT_MEMIMAGE_H
#define TT_MEMIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../fakemem.h"
#include "error.h"
#include "target.h"

#define MEMIMAGE_MAGIC "TTMEMIM3"
#define MEMIMAGE_MAGIC_V2 "TTMEMIM2"
#define MEMIMAGE_MAGIC_V1 "TTMEMIMG"
#define MEMIMAGE_VERSION_LEN 16
#define MEMIMAGE_MAX_REGIONS 8192

struct memimage_patch {
	uint64_t addr;
	uint32_t len;
	const uint8_t *bytes;    /* in the input */
};

struct memimage {
	struct fakemem mem;
	struct memimage_patch *patches;
	uint32_t npatches;
	uint64_t runtime, version_hex, asyncio_table, jit_descriptor;
	uint64_t greenlet_vtables[3];
	char greenlet_version[MEMIMAGE_VERSION_LEN + 1];
};

/* False for bytes that are not an image (nothing to free then). */
bool memimage_load(struct memimage *m, const uint8_t *data, size_t size);
tt_status memimage_attach(struct memimage *m, struct target *t, struct tt_error *err);
void memimage_free(struct memimage *m);
/* Write the patches over the regions (between the sampler's samples). */
void memimage_apply_patches(struct memimage *m);

/* Structure-aware mutation for libFuzzer's custom mutator: mostly inside
 * one region's bytes, leaving the format whole, and often a pointer-sized
 * word set to an address inside another region (where a reader would be
 * led by a torn or reused object), a small number or zero; now and then
 * libFuzzer's own mutation of the whole input. mutate(buf, size, max) is
 * libFuzzer's LLVMFuzzerMutate. Returns the new size. */
size_t memimage_mutate(uint8_t *data, size_t size, size_t max, unsigned seed,
		       size_t (*mutate)(uint8_t *buf, size_t size, size_t max));

/* The memory targets' custom mutator (with libFuzzer only). */
#ifdef TT_FUZZ_ENGINE
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed);
#define MEMIMAGE_CUSTOM_MUTATOR                                                          \
	size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed) \
	{                                                                                \
		return memimage_mutate(data, size, max, seed, LLVMFuzzerMutate);             \
	}
#else
#define MEMIMAGE_CUSTOM_MUTATOR
#endif

#endif
