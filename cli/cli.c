#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine/messages.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("galatop: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_say(struct msg_list *l)
{
	const struct msg *m;

	while ((m = msg_list__next(l)))
		cli_error("%s", m->text);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "galatop %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'galatop help %s'.\n", cmd);
	return EXIT_USAGE;
}

int cli_bad_option(const char *cmd, char **argv, int c)
{
	/* getopt leaves the offending word at optind - 1. */
	const char *word = optind > 0 ? argv[optind - 1] : "?";

	if (c == ':')
		return cli_usage_error(cmd, "option '%s' needs a value", word);
	if (optopt)
		return cli_usage_error(cmd, "unknown option '-%c'", optopt);
	return cli_usage_error(cmd, "unknown option '%s'", word);
}

FILE *cli_open_in(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdin;
	f = fopen(path, "rb");
	if (!f)
		cli_error("cannot open %s: %s", path, strerror(errno));
	return f;
}

FILE *cli_open_out(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	f = fopen(path, "wb");
	if (!f)
		cli_error("cannot open %s: %s", path, strerror(errno));
	return f;
}

int cli_close_out(FILE *f, const char *path)
{
	int err;

	if (f == stdout) {
		err = fflush(f) || ferror(f);
	} else {
		err = ferror(f);
		err |= fclose(f) != 0;
	}
	if (err) {
		cli_error("cannot write %s: %s", path && strcmp(path, "-") ? path : "standard output",
			  strerror(errno ? errno : EIO));
		return 1;
	}
	return 0;
}

int cli_finish_out(FILE *f, const char *path, int err)
{
	if (!err)
		return cli_close_out(f, path);
	cli_error("cannot write %s: %s", path && strcmp(path, "-") ? path : "standard output",
		  strerror(-err));
	if (f != stdout)
		fclose(f);
	return 1;
}

void cli_close_in(FILE *f)
{
	if (f && f != stdin)
		fclose(f);
}

int cli_parse_double(const char *cmd, const char *option, const char *arg, double min,
		     double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || isnan(v) || v < min || v > max) {
		cli_usage_error(cmd, "%s: bad value '%s' (expected a number from %g to %g)", option,
				arg, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_long(const char *cmd, const char *option, const char *arg, long min, long max,
		   long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max) {
		cli_usage_error(cmd, "%s: bad value '%s' (expected an integer from %ld to %ld)",
				option, arg, min, max);
		return -1;
	}
	*out = v;
	return 0;
}
