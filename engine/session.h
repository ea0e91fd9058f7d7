/* A capture session, the heart of the engine: symbol and identity caches, the stack collector,
 * every probe family with their targets (stack types, thread timeline, SLI; the L7 capture in
 * l7_capture.h), and an optional command run under them. Shared by `galatop record` and the
 * live view. Nothing here writes to a terminal: warnings and errors go to the caller's
 * message list (messages.h). */
#ifndef GALATOP_ENGINE_SESSION_H
#define GALATOP_ENGINE_SESSION_H

#include <regex.h>
#include <stdbool.h>
#include <sys/types.h>

#include "leak_inject.h"
#include "messages.h"
#include "record_opts.h"
#include "stack_collector.h"
#include "bpf/probes.h"
#include "sli_collector.h"
#include "self_cost.h"

struct history;
struct l7_capture;

/* The probe families whose ring buffers the session polls (SLI reads maps: no ring buffer). */
enum session_family { FAMILY_STACKS, FAMILY_THREADS, FAMILY_L7, FAMILY_MAX };

struct slices;

struct session {
	struct record_opts *o;
	struct msg_list *msgs;	    /* where warnings and errors go; the caller's */
	struct history *hist;	    /* record's per-second history for .gtop, NULL when none */
	struct strtab *st;
	struct frames *ft;
	struct sym_cache *sc;
	struct ident_cache *ic;
	struct collector *col;
	struct probes *probes;	    /* NULL when only other families run (--type threads, sli) */
	struct tl_capture *tl;	    /* the thread timeline, NULL until opened */
	struct sli_collector *sli;  /* the SLI probes, once attached */
	struct l7_capture *l7;	    /* the L7 capture, once attached */
	int epfd;		    /* the one epoll over every family's ring buffer */
	unsigned watched;	    /* 1 << family for each ring buffer on the epoll now */
	int first_family;	    /* the family session__poll drains first next time */
	regex_t cmdline_re;
	bool have_re;
	uint64_t *cgroups;
	size_t ncgroups;
	uint8_t *cpus;	     /* --cpu as flags per CPU, NULL = every CPU */
	size_t ncpus;
	int pids[RECORD_MAX_TARGETS + 1];
	size_t npids;
	pid_t child;  /* the -- CMD process, -1 when none or reaped */
	pid_t child_pid; /* the -- CMD process's pid, kept after it is reaped (0: none) */
	char leak_lib[4096]; /* leak: the sampler library preloaded into it, "" when none */
	struct leak_injects leak_inj; /* leak: running targets the sampler is injected into */
	int go_fd;    /* write end of the pipe the command waits on, -1 once started */
	int exec_fd;  /* read end of the pipe a failed exec of the command writes its errno on */
	uint32_t renewed_at; /* frames in the table when it was last renewed */
	uint32_t renew_min;  /* renew the table past this many frames (0: RENEW_FRAMES_MIN) */
	int poll_err; /* the first error reading the ring buffer (-errno), said once; 0 if none */
	bool java_child; /* the -- CMD process is to be attached once it runs a ready JVM */
	double java_check; /* when it was last looked at (clock_mono_s) */
	char java_hint[256]; /* the PreserveFramePointer hint, once made; "" when none */
	uint32_t java_hint_pid; /* the JVM java_hint was decided for (0: none yet) */
	double leak_scan_new, leak_scan_all; /* leak: when processes are next looked at for
					      * allocators (new ones, every one) */
	struct self_cost cost; /* galatop's own CPU and its programs' kernel time */
};

/* Sets up everything for o (o->types must be set) and attaches the probes; a command is
 * forked but waits for session__start_command. o->types is narrowed to the probes that
 * attached. Warnings and errors, now and later, are added to msgs (borrowed: it must outlive
 * the session). 0, or 1 with the reason in msgs; s is then already closed. */
int session__open(struct session *s, struct record_opts *o, struct msg_list *msgs);
/* Between updates (the collector's profiles empty): once the frame table has grown enough
 * (model/renew.h), moves the collector and the n profiles p[] and history rings r[] the caller
 * keeps (either may be NULL; see renew_move) onto a fresh table, so frames of processes long
 * gone do not pile up over a long run. The old tables go to *old_ft and *old_st when those are
 * not NULL (the caller frees them once nothing refers to them), else they are freed. 1 when
 * renewed, 0 when not due or out of memory (then nothing changed). */
int session__renew_frames(struct session *s, struct profile **p, struct slices **r, size_t n,
			  struct frames **old_ft, struct strtab **old_st);
/* The probe options (targets included) the session's probe families share. */
void session__probe_options(const struct session *s, struct probe_opts *po);
/* Opens the thread timeline probes now (at start with --type threads, or when the Threads
 * pane first opens), or attaches them again after session__detach. 0, or -errno with a one-line reason in err. */
int session__threads_open(struct session *s, char *err, size_t errlen);
/* Opens the L7 capture (engine/l7_capture.h) for the session's targets (at start with
 * --type l7, or when the L7 pane first opens), or attaches it again after session__detach; its warnings go to the messages. 0, or -errno
 * with a one-line reason in err. */
int session__attach_l7(struct session *s, char *err, size_t errlen);
/* The L7 family without probes, fed by session__replay (recorded input, tests). 0, or
 * -ENOMEM with a one-line reason in err. */
int session__replay_l7(struct session *s, char *err, size_t errlen);
/* Takes in one ring-buffer record of family f (FAMILY_STACKS: a struct gt_event with its
 * stacks; FAMILY_L7: a struct l7_event with its bytes) as if its probes had delivered it: the
 * same checks and collectors as live records. 0, -EINVAL (malformed), -ENOENT (the family is
 * not open) or -ENOTSUP (FAMILY_THREADS: the timeline needs its loaded probes' tables). */
int session__replay(struct session *s, enum session_family f, const void *data, size_t size);
/* Attaches the SLI probes to the session's targets (no-op when attached). 0, or -errno with a
 * one-line reason in err. */
int session__attach_sli(struct session *s, char *err, size_t errlen);
/* Detaches the SLI probes and drops their series (no-op when not attached); attached again,
 * they start afresh. */
void session__detach_sli(struct session *s);
/* Once a second (record): the SLI probes are read into the current interval, and processes
 * matching --cmdline that started since become SLI targets. */
void session__tick(struct session *s);
/* Lets the -- CMD process exec (no-op without one); a failed exec is said in the messages. */
void session__start_command(struct session *s);
/* Attaches a stack probe (PROBE_OFFCPU, ...) loaded at start through o->lazy_types, or one
 * detached by session__detach(_probe); adds it to o->types. 0, or -errno with one line in err. */
int session__attach_probe(struct session *s, unsigned type, char *err, size_t errlen);
/* Detaches family f at run time: its probes leave the kernel (the stack types': their links
 * and perf events; their programs stay loaded for session__attach_probe) and its ring buffer
 * the epoll, after what was queued is read. What it gathered stays readable (the collector's
 * profiles, the timeline, the L7 tables) and o->types keeps it, so it is still written. It
 * attaches again through session__attach_probe, session__threads_open or session__attach_l7.
 * 0, or -ENOENT when the family never opened. */
int session__detach(struct session *s, enum session_family f);
/* Detaches one stack probe type (PROBE_OFFCPU, ...) the same way; the last one takes the
 * stack family off the epoll. 0, or -errno. */
int session__detach_probe(struct session *s, unsigned type);
/* Waits up to timeout_ms on one epoll over every open family's ring buffer, then drains them
 * all within one budget (bpf/drain.h; DRAIN_ALL at stop): the record count, or -errno. An
 * interruption by a signal counts as 0 records; any other error is kept in s->poll_err (for
 * the caller to report, with session__poll_report) and every later call returns it. */
int session__poll(struct session *s, int timeout_ms);
/* Adds to the messages why the probes could no longer be read, if they could not. */
void session__poll_report(const struct session *s);
/* True once the command has exited or every -p target is gone (said in the messages). */
bool session__done(struct session *s);
/* What the kernel samples now (--event-rate) into buf: "" when every event is taken, else
 * e.g. "mem 1/16" (brief, for the status line) or a sentence for the summary. */
void session__sampling(const struct session *s, bool brief, char *buf, size_t len);
/* The hint for a JVM whose Java stacks stop in JIT code for want of frame pointers (it runs
 * without -XX:+PreserveFramePointer), or NULL when there is none; owned by s. */
const char *session__java_hint(struct session *s);
/* Samples galatop's own cost now (engine/self_cost.h); the model is then s->cost.model. */
void session__cost_sample(struct session *s);
/* Samples galatop's cost and writes its summary since the session opened into buf (lines of
 * text, always terminated): the process CPU, the probes' kernel time per family and per
 * program. Returns the length it needed (as snprintf). For `record` and the agent. */
size_t session__cost_text(struct session *s, char *buf, size_t len);
/* Adds the summary of what was recorded in secs seconds to the messages (notes). */
void session__summary(struct session *s, double secs);
/* Detaches and frees everything (a last warning of the symbol cache goes to the messages);
 * the command is killed if interrupted, then reaped. */
void session__close(struct session *s, bool interrupted);

#endif
