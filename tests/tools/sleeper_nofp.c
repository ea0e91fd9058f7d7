/* Test workload: sleeper.c (sleep_long 300 ms / sleep_short 100 ms through libc's nanosleep)
 * built without frame pointers (the Makefile's *nofp rule), for off-CPU DWARF unwinding. */
#include "sleeper.c"
