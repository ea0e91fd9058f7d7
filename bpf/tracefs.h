/* Classic tracepoints (tp/..., tracepoint/...) are attached through tracefs, which a fresh
 * machine may not have mounted. Loaders that use them call tracefs_ensure() first. */
#ifndef GALATOP_BPF_TRACEFS_H
#define GALATOP_BPF_TRACEFS_H

/* Mounts tracefs at /sys/kernel/tracing unless it (or debugfs's tracing) is already there;
 * it stays mounted, as perf leaves it. Failure is quiet: the attach that needs it says why. */
void tracefs_ensure(void);

#endif
