/* Recordings (`replay`, and `--diff-base` given one) read back and written
 * out in every format, as `replay -o` writes them. What a recording holds
 * came from a target: the text formats must come out with no control
 * bytes but line ends and tabs, whatever the recording says. *
 * parsers: src/export/binrec.c src/sampling/samplelog.c src/export/export.c src/export/collapsed.c src/export/speedscope.c src/export/flamegraph.c src/export/pprof.c src/export/pstats.c src/export/heatmap.c src/export/gecko.c src/export/labels.c src/common/sanitize.c
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binrec.h"
#include "export.h"
#include "fuzz.h"
#include "outputs.h"

static void
write_all(struct binrec_replay *r)
{
	profile_settle(&r->prof, &r->log.mirror);
	timeline_settle(&r->timeline, &r->log.mirror);
	struct export_meta meta;
	outputs_meta(&meta, &r->h, r->end_command ? r->end_command : r->h.command, &r->progress,
		     &r->log.mirror);
	meta.timeline = r->log.timeline;
	meta.sources = (struct export_sources){
		.recorded = true, .root_fd = -1, .cwd_fd = -1, .texts = r->sources,
		.ntexts = r->nsources,
	};
	for (int f = 0; f < EXPORT_FORMAT_COUNT; f++) {
		char *out = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&out, &len);
		if (!mem)
			abort();
		meta.per_thread = f % 2;
		export_write((enum export_format)f, &r->prof, &r->log.mirror, &meta, mem);
		fclose(mem);
		if (f != EXPORT_PPROF && f != EXPORT_PSTATS)
			for (size_t i = 0; i < len; i++) {
				unsigned char c = (unsigned char)out[i];
				fuzz_check(c >= 0x20 || c == '\n' || c == '\t' || c == '\r');
				fuzz_check(c != 0x7f);
			}
		free(out);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_file(data, size, path, sizeof path);
	struct binrec_replay r;
	struct tt_error err;
	if (binrec_replay(path, NULL, true, &r, &err) == TT_OK)
		write_all(&r);
	binrec_replay_free(&r);
	close(fd);
	return 0;
}
