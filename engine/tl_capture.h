/* The thread timeline of a session: opens bpf/threads with the session's targets and turns
 * its records into model/timeline intervals (system call names, file paths, socket
 * connections, futex owners, user stacks named by the session's collector). */
#ifndef GALATOP_ENGINE_TL_CAPTURE_H
#define GALATOP_ENGINE_TL_CAPTURE_H

#include <stddef.h>

#include "bpf/threads.h"
#include "model/timeline.h"

struct session;
struct tl_capture;

/* Attaches the thread probes for session s (its targets, s->o's classes, --min-dur and
 * --timeline-mem). NULL with a one-line reason in err. */
struct tl_capture *tl_capture__open(struct session *s, char *err, size_t errlen);
/* Detaches the thread probes at run time (their programs leave the kernel); the timeline
 * stays, with what was read, for the writers and panes. No-op when detached. */
void tl_capture__detach(struct tl_capture *c);
/* Attaches the thread probes again after tl_capture__detach (no-op when attached): the same
 * targets and options, records flow into the same timeline. 0, or -EPERM with one line in
 * err. */
int tl_capture__attach(struct tl_capture *c, char *err, size_t errlen);
/* The fd that becomes readable when records wait (for the session's epoll); owned by c; -1
 * when detached. */
int tl_capture__fd(const struct tl_capture *c);
/* Drains records without waiting, until deadline_ns (CLOCK_MONOTONIC). Count or -errno. */
int tl_capture__consume(struct tl_capture *c, uint64_t deadline_ns);
/* Reads the calls in progress and the short-call counters into the timeline and moves its
 * clock to now. */
void tl_capture__refresh(struct tl_capture *c);
/* The timeline (owned by c). */
struct timeline *tl_capture__timeline(struct tl_capture *c);
/* Adds a target process at run time (--cmdline matches). */
void tl_capture__add_pid(struct tl_capture *c, int pid);
void tl_capture__stats(const struct tl_capture *c, struct tl_probe_stats *st);
const char *tl_capture__warnings(const struct tl_capture *c);
/* Detaches and frees; NULL is a no-op. */
void tl_capture__free(struct tl_capture *c);

#endif
