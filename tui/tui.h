/* The interactive TUI: views over the profiles of a tui_source, run on the terminal or, for
 * tests and benchmarks, in a no-display dump mode that prints the final screen. */
#ifndef GALATOP_TUI_TUI_H
#define GALATOP_TUI_TUI_H

#include <stdbool.h>
#include <stdio.h>

#include "source.h"

struct tui_opts {
	const char *theme;     /* theme name or path; NULL = "default" */
	bool no_color;	       /* attributes only (NO_COLOR is honoured too) */
	bool ascii;	       /* ASCII glyphs even on a UTF-8 locale */
	const char *out_dir;   /* where `s` saves; NULL = current directory */
	enum stack_type ptype;  /* profile type shown first (falls back to one that exists) */
	int refresh_ms;	       /* how often a live source is asked for news; 0 = 1000 */
	bool regroup;	       /* start with the roots regrouped as group says (`H` cycles) */
	int group;	       /* enum group_by: thread, process, command, none */
	const char *first_view; /* name of the view shown first ("Threads"); NULL = Flame */
	bool range;	       /* start showing [range_from, range_to) seconds of the history */
	double range_from, range_to;
	/* No-display mode: no terminal is touched. */
	bool dump;	       /* run keys, print the final screen to dump_out */
	int dump_cols, dump_rows;
	const char *dump_term; /* terminfo name for the dump; NULL = xterm-256color */
	const char *keys;      /* key script (see tui_keys_parse) */
	bool dump_roles;       /* also print the color role of each cell */
	long bench_frames;     /* > 0: render this many frames and print timings instead */
	FILE *dump_out;	       /* NULL = stdout */
};

/* Runs the TUI over src until the user quits (or the key script ends in dump mode), or until
 * SIGINT, SIGTERM or SIGHUP, which end it the same way (only fatal signals such as SIGSEGV
 * restore the terminal from their handler). Returns an exit code, 128 + the signal after one;
 * errors are reported on stderr, once, after the terminal is restored. */
int tui_run(struct tui_source *src, const struct tui_opts *o);

#endif
