/* The L7 capture of a session: the L7 probes (bpf/l7_probe), the connection tracker and the
 * session tables (model/l7), user stacks named through the session's symbol cache; used by
 * `galatop record --type l7` and by the live view's L7 pane. */
#ifndef GALATOP_ENGINE_L7_CAPTURE_H
#define GALATOP_ENGINE_L7_CAPTURE_H

#include <stdint.h>

#include "session.h"
#include "model/l7/table.h"
#include "model/l7/track.h"

struct l7_capture;

/* Opens the capture for session s's targets and its L7 options (s->o). NULL with a one-line
 * reason in err. */
struct l7_capture *l7_capture__open(struct session *s, char *err, size_t errlen);
/* The same without probes: a capture fed recorded input through l7_capture__replay (tests). */
struct l7_capture *l7_capture__open_replay(struct session *s, char *err, size_t errlen);
/* Takes in one record of the L7 ring buffer as the kernel wrote it (struct l7_event and the
 * bytes that follow), checked as a live one. 0, or -EINVAL when it is malformed. */
int l7_capture__replay(struct l7_capture *e, const void *data, size_t size);
/* Detaches the L7 probes at run time (their programs leave the kernel) after reading what is
 * queued; the tables and the tracker stay, with what was read, for the writers and panes.
 * No-op when detached. */
void l7_capture__detach(struct l7_capture *e);
/* Attaches the L7 probes again after l7_capture__detach (no-op when attached): the same
 * targets and options, records flow into the same tables. 0, or -EPERM with one line in err. */
int l7_capture__attach(struct l7_capture *e, char *err, size_t errlen);
/* The fd that becomes readable when records wait (for the session's epoll); owned by e; -1
 * when detached. */
int l7_capture__fd(const struct l7_capture *e);
/* Takes in what the capture delivered, without waiting, until deadline_ns (CLOCK_MONOTONIC);
 * ends connections idle for long. Returns records read or -errno. */
int l7_capture__consume(struct l7_capture *e, uint64_t deadline_ns);
/* The tables; owned by the capture. */
struct l7_table *l7_capture__table(struct l7_capture *e);
/* Warnings of the capture (TLS coverage), "" if none. */
const char *l7_capture__warnings(struct l7_capture *e);
/* Calls fn(ctx, ...) for every paired request (NULL stops). */
void l7_capture__set_trace(struct l7_capture *e, l7_trace_fn fn, void *ctx);
/* When the capture opened: CLOCK_MONOTONIC ns and UNIX seconds (the trace's time 0). */
void l7_capture__clock0(const struct l7_capture *e, uint64_t *ts0_ns, double *wall0);
/* Ends every connection so that waiting requests are counted (end of a recording). */
void l7_capture__flush(struct l7_capture *e);
/* Messages the kernel could not deliver (ring buffer full) so far. */
uint64_t l7_capture__drops(struct l7_capture *e);
/* The recording summary of secs seconds, one line into buf. */
void l7_capture__summary(struct l7_capture *e, double secs, char *buf, size_t len);
/* Detaches and frees; NULL is a no-op. */
void l7_capture__free(struct l7_capture *e);

#endif
