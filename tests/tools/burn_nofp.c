/* Test workload: burn.c (main -> mid -> leaf_alpha|leaf_beta|leaf_gamma -> spin, 60/30/10)
 * built without frame pointers (the Makefile's *nofp rule), for DWARF unwinding tests. */
#include "burn.c"
