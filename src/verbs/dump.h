/* `tachyon-top dump`: one-shot stacks of every thread. */
#ifndef TT_DUMP_H
#define TT_DUMP_H

int dump_main(int argc, char **argv);

#endif
