/* tracefs for classic tracepoints (see tracefs.h). */
#include <sys/mount.h>
#include <unistd.h>

#include "bpf/tracefs.h"

#define TRACEFS "/sys/kernel/tracing"

void tracefs_ensure(void)
{
	if (access(TRACEFS "/events", F_OK) && access("/sys/kernel/debug/tracing/events", F_OK))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
}
