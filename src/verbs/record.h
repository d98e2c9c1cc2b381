/* `tachyon-top record`: sample to a profile file. */
#ifndef TT_RECORD_H
#define TT_RECORD_H

int record_main(int argc, char **argv);

#endif
