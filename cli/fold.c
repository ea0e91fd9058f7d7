/* galatop fold: merge and normalize folded files into sorted folded text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "../export/folded.h"
#include "../export/input.h"

const char cmd_fold_help[] =
	"Usage: galatop fold [--strict] [--reverse] [--range A-B] [--type T] [-o FILE] [FILE...]\n"
	"\n"
	"Reads folded stacks (\"frame;frame;... COUNT\", or two counts for differential\n"
	"input), `perf script` output, pprof files or .gtop snapshots from each FILE (or\n"
	"standard input, or '-'), adds identical stacks together and writes one sorted line per stack with\n"
	"integer counts.\n"
	"\n"
	"  --range A-B     from snapshots, only seconds A to B of their per-second history\n"
	"                  (fractions allowed; or clock times HH:MM:SS); the output starts\n"
	"                  with a '# range' comment\n"
	"  --type T        from snapshots, the profile of type T (oncpu, offcpu, mem); from\n"
	"                  pprof files, the sample type T (default: the first)\n"
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
		{ "range", required_argument, NULL, 'R' },
		{ "type", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct input_opts io = { 0 };
	const char *outpath = NULL, *type = NULL;
	char msg[512];
	double from = 0, to = 0;
	struct strtab *st = NULL;
	struct frames *ft = NULL;
	struct profile *p = NULL;
	FILE *out;
	int c, ret = 1;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			io.strict = true;
			break;
		case 'r':
			io.reverse = true;
			break;
		case 'R':
			if (input_range_parse(optarg, &io.range, msg, sizeof(msg)))
				return cli_usage_error("fold", "--range: %s", msg);
			break;
		case 't':
			type = io.sample_type = optarg;
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
		struct input in;
		struct profile *q;
		int err = input_load(path, ft, &io, &in, msg, sizeof(msg));

		if (err) {
			if (msg[0])
				cli_error("%s", msg);
			goto out;
		}
		q = input_profile(&in, type);
		if (!q && type) {
			cli_error("%s: no %s profile", strcmp(path, "-") ? path : "standard input",
				  type);
			input_release(&in);
			goto out;
		}
		err = q ? profile__merge(p, q) : 0;
		from = in.from;
		to = in.to;
		input_release(&in);
		if (err) {
			cli_error("out of memory");
			goto out;
		}
	}
	out = cli_open_out(outpath);
	if (!out)
		goto out;
	if (io.range.set)
		fprintf(out, "# range %s: %.3f-%.3f s from the start of the recording\n",
			io.range.text, from, to);
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
