/* `tachyon-top info`: what interpreter a process runs and how we read it. */
#ifndef TT_INFO_H
#define TT_INFO_H

int info_main(int argc, char **argv);

#endif
