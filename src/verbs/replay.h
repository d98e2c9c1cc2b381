/* `tachyon-top replay`: a recording written by `record -o run.ttrec`,
 * rendered into any output format afterwards. */
#ifndef TT_REPLAY_H
#define TT_REPLAY_H

int replay_main(int argc, char **argv);

#endif
