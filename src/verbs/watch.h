/* `tachyon-top watch`: attach for good, and leave a report directory when a
 * thread is stuck (watchreport.h). */
#ifndef TT_WATCH_H
#define TT_WATCH_H

int watch_main(int argc, char **argv);

#endif
