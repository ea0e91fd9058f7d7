/* HotSpot dynamic attach: loads galatop's JVMTI agent (symbols/jvmti/agent.c) into a running
 * JVM so its compiled methods get named through a perf map (symbols/jitmap.c). */
#ifndef GALATOP_SYMBOLS_JAVA_ATTACH_H
#define GALATOP_SYMBOLS_JAVA_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

/* Whether pid runs a HotSpot JVM (libjvm.so mapped executable). */
bool java_attach__is_jvm(int pid);
/* Whether pid is a JVM ready for the attach protocol: it catches SIGQUIT and runs its signal
 * dispatcher thread (a JVM still starting would die of the SIGQUIT). */
bool java_attach__ready(int pid);
/* Path of the agent library: $GALATOP_JVMTI_AGENT, next to the binary (build tree) or
 * PREFIX/lib/galatop. 0, or -ENOENT with buf empty. */
int java_attach__agent_path(char *buf, size_t len);
/* Copies the agent into pid's root (/tmp/galatop-jvmti-PID.so, removed by
 * java_attach__cleanup), joins the attach protocol (.attach_pid, SIGQUIT, .java_pid socket,
 * as the JVM's uid/gid) and loads it writing to the JVM's /tmp/perf-NSPID.map. Waits at most
 * timeout_ms. 0, or -1 with one line in err (e.g. attach disabled in that JVM). */
int java_attach(int pid, const char *agent, int timeout_ms, char *err, size_t errlen);
/* Attaches every JVM among pids (every JVM on the machine when n is 0; pid values <= 0 or
 * 0x7fffffff are skipped); one warning line on stderr per JVM that refuses. Returns how many
 * were attached. */
int java_attach__targets(const int *pids, size_t n);
/* Removes the agent copies made by java_attach. */
void java_attach__cleanup(void);

#endif
