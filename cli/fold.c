/* galatop fold: merge and normalize folded files into sorted folded text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "../export/folded.h"

const char cmd_fold_help[] =
	"Usage: galatop fold [--strict] [--reverse] [-o FILE] [FILE...]\n"
	"\n"
	"Reads folded stacks (\"frame;frame;... COUNT\", or two counts for differential\n"
	"input) from each FILE (or standard input, or '-'), adds identical stacks together\n"
	"and writes one sorted line per stack with integer counts.\n"
	"\n"
	"  --strict        stop at the first invalid line (exit 1) instead of skipping it\n"
	"  --reverse       reverse the frames of every stack (leaf first)\n"
	"  -o, --output F  write to F instead of standard output\n"
	"\n"
	"Invalid lines are reported as FILE:LINE: reason on standard error.\n";

int cmd_fold(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "strict", no_argument, NULL, 's' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct folded_opts fo = { 0 };
	const char *outpath = NULL;
	struct strtab *st = NULL;
	struct frames *ft = NULL;
	struct profile *p = NULL;
	FILE *out;
	int c, ret = 1;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			fo.strict = true;
			break;
		case 'r':
			fo.reverse = true;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'h':
			fputs(cmd_fold_help, stdout);
			return 0;
		default:
			return cli_bad_option("fold", argv, c);
		}
	}
	st = strtab__new();
	ft = st ? frames__new(st) : NULL;
	p = ft ? profile__new(ft, VALUE_SAMPLES, false) : NULL;
	if (!p) {
		cli_error("out of memory");
		goto out;
	}
	for (int i = optind; i < argc || i == optind; i++) {
		const char *path = i < argc ? argv[i] : "-";
		const char *label = strcmp(path, "-") ? path : "<stdin>";
		FILE *in = cli_open_in(path);
		int err;

		if (!in)
			goto out;
		err = folded_read_profile(in, label, &fo, p, NULL);
		cli_close_in(in);
		if (err == -EINVAL)
			goto out;
		if (err) {
			cli_error("cannot read %s: %s", label, strerror(-err));
			goto out;
		}
	}
	out = cli_open_out(outpath);
	if (!out)
		goto out;
	if (folded_write(out, p)) {
		cli_error("cannot write %s: %s", outpath ? outpath : "standard output",
			  strerror(errno ? errno : EIO));
		if (out != stdout)
			fclose(out);
		goto out;
	}
	ret = cli_close_out(out, outpath);
out:
	profile__free(p);
	frames__free(ft);
	strtab__free(st);
	return ret;
}
