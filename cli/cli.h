/* What every subcommand shares: its entry point, help text, and the one-line error style. */
#ifndef GALATOP_CLI_CLI_H
#define GALATOP_CLI_CLI_H

#include <getopt.h>
#include <stdio.h>

#define EXIT_USAGE 2

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	const char *summary;		   /* one line for `galatop --help` */
	const char *help;		   /* full text for `galatop help CMD`; NULL: CMD --help */
};

/* The table of subcommands, NULL-name terminated (galatop.c). */
extern const struct cli_command cli_commands[];

/* Prints "galatop: <message>" and a newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct msg_list;
/* Prints the engine's messages not said yet, each as "galatop: <message>" on stderr. */
void cli_say(struct msg_list *l);
/* Prints "galatop CMD: <message>" and "Try 'galatop help CMD'." on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports the option getopt_long just rejected (unknown or missing argument); returns
 * EXIT_USAGE. Call with opterr = 0 and the optstring starting with ':'. */
int cli_bad_option(const char *cmd, char **argv, int c);
/* Opens path for reading, "-" or NULL meaning stdin; on failure prints
 * "galatop: cannot open PATH: reason" and returns NULL. */
FILE *cli_open_in(const char *path);
/* Opens path for writing, "-" or NULL meaning stdout; reports failure like cli_open_in. */
FILE *cli_open_out(const char *path);
/* Closes f (not stdin/stdout, which are flushed); reports a write error naming path.
 * Returns 0 or 1 (an exit code). */
int cli_close_out(FILE *f, const char *path);
/* cli_close_out after a writer returned err (0 or -errno into f): a failed writer is reported
 * naming path and f closed. Returns 0 or 1 (an exit code). */
int cli_finish_out(FILE *f, const char *path, int err);
/* Closes an input opened by cli_open_in. */
void cli_close_in(FILE *f);
/* Parses a decimal number into *out within [min, max]; reports "OPTION: bad value 'ARG'" and
 * returns -1 when it is not one. */
int cli_parse_double(const char *cmd, const char *option, const char *arg, double min,
		     double max, double *out);
int cli_parse_long(const char *cmd, const char *option, const char *arg, long min, long max,
		   long *out);

#endif
