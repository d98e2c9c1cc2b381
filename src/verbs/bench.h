/* `tachyon-top bench`: raw engine speed on a live target. */
#ifndef TT_BENCH_H
#define TT_BENCH_H

int bench_main(int argc, char **argv);

#endif
