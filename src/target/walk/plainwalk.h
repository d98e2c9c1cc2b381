/* The plain walker: a target's interpreters, threads and frames read into
 * a sample one pointer after another, with no state kept between samples
 * but its code cache (dump, bench --verify's oracle; the sampler's walker
 * is stackwalk.h). */
#ifndef TT_PLAINWALK_H
#define TT_PLAINWALK_H

#include <stdbool.h>
#include <stdint.h>

#include "python/codecache.h"
#include "proc/tidmap.h"
#include "error.h"
#include "target.h"

#include "walk/sample.h"

enum {
	PLAINWALK_CPU_STATE = 1u << 0,  /* ask the kernel whether each thread is on CPU */
};

struct plainwalk {
	struct target *target;
	struct code_cache codes;
	struct tidmap tids;
	unsigned flags;
};

tt_status plainwalk_init(struct plainwalk *u, struct target *t, unsigned flags,
			 struct tt_error *err);
void plainwalk_free(struct plainwalk *u);

/* Take one sample of every thread of every interpreter. On failure the
 * sample's content is unspecified; the error says why (a torn read shows as
 * TT_EBADMEM or TT_EFAULT and is worth retrying). */
tt_status plainwalk_sample(struct plainwalk *u, struct tt_sample *s, struct tt_error *err);


#endif
