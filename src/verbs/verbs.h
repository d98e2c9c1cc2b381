/* The verbs (tachyon-top VERB ...): one table of their names, entry points
 * and one-line help, from which main() picks and --help lists them. The
 * live view (no verb) is not among them. */
#ifndef TT_VERBS_H
#define TT_VERBS_H

#include <stdio.h>

struct verb {
	const char *name;
	int (*main)(int argc, char **argv);   /* argv[0] is the verb */
	const char *synopsis;                 /* "dump -p PID [--json]" */
	const char *summary;                  /* lines after the first start with '\n' */
};

/* The verb named name, or NULL. */
const struct verb *verb_find(const char *name);
/* "dump, record, ...": their names, for messages. */
const char *verbs_names(void);
/* The table as --help's "Verbs:" section lists it. */
void verbs_print_help(FILE *f);

#endif
