/* Theme files (--theme): the user's own text, warnings and errors about
 * it written into fixed buffers. *
 * parsers: ui/theme.c ui/xterm256.c
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "theme.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct theme t;
	char warnings[512], err[256];
	/* small buffers too: warnings are cut, never overrun */
	char small[8];
	theme_parse(text, "/themes/fuzz.theme", &t, warnings, sizeof warnings, err, sizeof err);
	fuzz_check_str(warnings, sizeof warnings);
	theme_parse(text, "fuzz", &t, small, sizeof small, small, sizeof small);
	fuzz_check_str(small, sizeof small);
	for (int r = 0; theme_role_key((enum theme_role)r); r++)
		;
	free(text);
	return 0;
}
