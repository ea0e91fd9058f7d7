/* Test workload: shortlived.c built without frame pointers. */
#include "shortlived.c"
