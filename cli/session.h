/* A recording session: symbol and identity caches, the collector, the probes with their
 * targets, and an optional command run under them. Shared by `galatop record` and the live
 * view; cli/ is where the rooms are wired together. */
#ifndef GALATOP_CLI_SESSION_H
#define GALATOP_CLI_SESSION_H

#include <regex.h>
#include <stdbool.h>
#include <sys/types.h>

#include "record.h"
#include "bpf/collector.h"
#include "bpf/probes.h"

struct session {
	struct record_opts *o;
	struct strtab *st;
	struct frames *ft;
	struct sym_cache *sc;
	struct ident_cache *ic;
	struct collector *col;
	struct probes *probes;
	regex_t cmdline_re;
	bool have_re;
	uint64_t *cgroups;
	size_t ncgroups;
	int pids[RECORD_MAX_TARGETS + 1];
	size_t npids;
	pid_t child;  /* the -- CMD process, -1 when none or reaped */
	int go_fd;    /* write end of the pipe the command waits on, -1 once started */
};

/* Sets up everything for o (o->types must be set) and attaches the probes; a command is
 * forked but waits for session_start_command. o->types is narrowed to the probes that
 * attached. 0, or an exit code after a one-line report; s is then already closed. */
int session_open(struct session *s, struct record_opts *o);
/* Lets the -- CMD process exec (no-op without one). */
void session_start_command(struct session *s);
/* True once the command has exited or every -p target is gone (said on stderr). */
bool session_done(struct session *s);
/* Prints the one-line summary of what was recorded in secs seconds. */
void session_summary(struct session *s, double secs);
/* Detaches and frees everything; the command is killed if interrupted, then reaped. */
void session_close(struct session *s, bool interrupted);

#endif
