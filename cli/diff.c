/* galatop diff: two folded profiles into one two-column (differential) folded file, as
 * FlameGraph's difffolded.pl, but sorted. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "../export/folded.h"
#include "../export/input.h"
#include "../model/stackset.h"
#include "../util/grow.h"

const char cmd_diff_help[] =
	"Usage: galatop diff [-n] [-s] [--range A-B] [--type T] [-o FILE] BEFORE AFTER\n"
	"\n"
	"Reads two profiles (folded stacks \"frame;frame;... COUNT\", `perf script` output or\n"
	".gtop snapshots; '-' is standard input) and prints\n"
	"every stack found in either as \"stack COUNT_BEFORE COUNT_AFTER\", 0 where a file\n"
	"lacks it, sorted bytewise, as FlameGraph's difffolded.pl (which prints in no order).\n"
	"Feed the result to `galatop svg` for a differential flame graph: widths from AFTER,\n"
	"red where a frame grew, blue where it shrank. To see what disappeared, swap the files\n"
	"and draw with --negate.\n"
	"\n"
	"  -n                normalize: scale BEFORE's counts to AFTER's total (each truncated\n"
	"                    to an integer)\n"
	"  -s                replace hexadecimal numbers (addresses) 0x1f2e... with 0x...\n"
	"                    so that stacks differing only in addresses merge\n"
	"  --range A-B       from snapshots, seconds A to B of their per-second history (or\n"
	"                    clock times HH:MM:SS); FILE@A-B gives one file its own range,\n"
	"                    e.g. x.gtop@0-5 x.gtop@60-65\n"
	"  --type T          from snapshots, the profile of type T; from pprof files, the\n"
	"                    sample type T (default: the first)\n"
	"  -o, --output FILE write to FILE instead of standard output\n"
	"  -h, --help        show this help\n"
	"\n"
	"Identical stacks within a file are added together. Invalid lines are reported as\n"
	"FILE:LINE and skipped; a line with two counts contributes its last one.\n";

static const char cmd[] = "diff";

/* The union of stacks, BEFORE in column 0 and AFTER in column 1. */
struct diff {
	struct stack_set *stacks;
	int side;	/* the file being read: 0 BEFORE, 1 AFTER */
	bool strip_hex; /* -s */
	char *buf;	/* the stack with addresses replaced */
	size_t buf_cap;
};

/* Copies s[0..len) into d->buf with every 0x[0-9a-fA-F]+ replaced by "0x...", as difffolded.pl
 * -s; returns the new length or -1 on ENOMEM. Each replacement of 3 or more bytes adds at most
 * 2, so 2 * len + 5 bytes always suffice. */
static long strip_hex(struct diff *d, const char *s, size_t len)
{
	size_t need = 2 * len + 5, n = 0;

	if (ARRAY_GROW(d->buf, d->buf_cap, need))
		return -1;
	for (size_t i = 0; i < len;) {
		if (s[i] == '0' && i + 2 < len && s[i + 1] == 'x' &&
		    isxdigit((unsigned char)s[i + 2])) {
			memcpy(d->buf + n, "0x...", 5);
			n += 5;
			for (i += 2; i < len && isxdigit((unsigned char)s[i]); i++)
				;
			continue;
		}
		d->buf[n++] = s[i++];
	}
	return (long)n;
}

static int diff_add(void *ctx, const char *stack, size_t len, double count, double count2)
{
	struct diff *d = ctx;

	if (count2 >= 0)
		count = count2;
	if (d->strip_hex) {
		long n = strip_hex(d, stack, len);

		if (n < 0)
			return -ENOMEM;
		stack = d->buf;
		len = (size_t)n;
	}
	return stack_set__add_value(d->stacks, d->side, stack, len, count);
}

/* A count as Perl prints a number: integers in full, others with 15 significant digits. */
static void put_count(FILE *out, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		fprintf(out, " %.0f", v == 0 ? 0 : v);
	else
		fprintf(out, " %.15g", v);
}

static int diff_write(struct diff *d, FILE *out, bool normalize)
{
	size_t n = stack_set__count(d->stacks);
	uint32_t *ids = stack_set__sorted(d->stacks);
	double total0 = stack_set__total(d->stacks, 0), total1 = stack_set__total(d->stacks, 1);

	if (!ids)
		return -ENOMEM;
	/* difffolded.pl divides by zero when BEFORE is empty; here it stays all zeros. */
	normalize = normalize && total0 != total1 && total0 != 0;
	for (size_t i = 0; i < n; i++) {
		double before = stack_set__value(d->stacks, 0, ids[i]);
		size_t len;
		const char *stack = stack_set__stack(d->stacks, ids[i], &len);

		if (normalize)
			before = trunc(before * total1 / total0);
		fwrite(stack, 1, len, out);
		put_count(out, before);
		put_count(out, stack_set__value(d->stacks, 1, ids[i]));
		fputc('\n', out);
	}
	free(ids);
	return 0;
}

/* Opens one side: arg is FILE or FILE@A-B (when FILE@A-B is no file itself). Folded files
 * are read as they are; a snapshot, perf script output or a range goes through the one input
 * loader and comes back as folded text in *text (*tlen bytes). *path is the file's name.
 * 0, or -1 after saying why. */
static int open_side(const char *arg, const struct input_range *all, const char *type,
		     char **path, char **text, size_t *tlen)
{
	struct input_opts io = { .range = *all, .sample_type = type };
	const char *at = strrchr(arg, '@');
	struct strtab *st = NULL;
	struct frames *ft = NULL;
	struct input in = { 0 };
	struct profile *p;
	char msg[512];
	FILE *m;
	int ret = -1;

	*text = NULL;
	*tlen = 0;
	if (at && strcmp(arg, "-") && access(arg, F_OK)) {
		*path = strndup(arg, (size_t)(at - arg));
		if (input_range_parse(at + 1, &io.range, msg, sizeof(msg))) {
			cli_error("%s", msg);
			return -1;
		}
	} else {
		*path = strdup(arg);
	}
	if (!*path) {
		cli_error("out of memory");
		return -1;
	}
	if (!strcmp(*path, "-") && !io.range.set)
		return 0; /* standard input: folded, read once */
	st = strtab__new();
	ft = st ? frames__new(st) : NULL;
	if (!ft) {
		cli_error("out of memory");
		goto out;
	}
	if (input_load(*path, ft, &io, &in, msg, sizeof(msg))) {
		if (msg[0])
			cli_error("%s", msg);
		goto out;
	}
	if (in.format == INPUT_FOLDED && !io.range.set && strcmp(*path, "-")) {
		ret = 0; /* read as it is, every line's count kept */
		goto out;
	}
	p = input_profile(&in, type);
	if (!p) {
		cli_error("%s: no %s profile", *path, type ? type : "stack");
		goto out;
	}
	m = open_memstream(text, tlen);
	if (!m) {
		cli_error("out of memory");
		goto out;
	}
	if (folded_write(m, p) | fclose(m)) {
		cli_error("out of memory");
		goto out;
	}
	ret = 0;
out:
	input_release(&in);
	frames__free(ft);
	strtab__free(st);
	return ret;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "normalize", no_argument, NULL, 'n' },
		{ "strip-hex", no_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "range", required_argument, NULL, 'R' },
		{ "type", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct folded_opts fo = { 0 };
	struct input_range range = { 0 };
	const char *type = NULL;
	char msg[512], *paths[2] = { NULL, NULL }, *text[2] = { NULL, NULL };
	struct diff d = { 0 };
	const char *outpath = NULL;
	bool normalize = false;
	FILE *in[2] = { NULL, NULL }, *out;
	int c, err, ret = 1;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":nso:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			normalize = true;
			break;
		case 's':
			d.strip_hex = true;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'R':
			if (input_range_parse(optarg, &range, msg, sizeof(msg)))
				return cli_usage_error(cmd, "--range: %s", msg);
			break;
		case 't':
			type = optarg;
			break;
		case 'h':
			fputs(cmd_diff_help, stdout);
			return 0;
		default:
			return cli_bad_option(cmd, argv, c);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error(cmd, "expected two files, BEFORE and AFTER (got %d)",
				       argc - optind);
	if (!strcmp(argv[optind], "-") && !strcmp(argv[optind + 1], "-"))
		return cli_usage_error(cmd, "only one of BEFORE and AFTER can be standard input");
	for (int i = 0; i < 2; i++) {
		size_t tlen;

		if (open_side(argv[optind + i], &range, type, &paths[i], &text[i], &tlen))
			goto out;
		in[i] = !text[i] ? cli_open_in(paths[i])
			: tlen	 ? fmemopen(text[i], tlen, "r")
				 : fopen("/dev/null", "r");
		if (!in[i]) {
			if (text[i])
				cli_error("out of memory");
			goto out;
		}
	}
	d.stacks = stack_set__new();
	if (!d.stacks) {
		cli_error("out of memory");
		goto out;
	}
	for (d.side = 0; d.side < 2; d.side++) {
		const char *path = paths[d.side];
		const char *label = strcmp(path, "-") ? path : "standard input";

		err = folded_parse(in[d.side], label, &fo, diff_add, &d, NULL);
		if (err == -ENOMEM) {
			cli_error("out of memory");
			goto out;
		}
		if (err == -EINVAL)
			goto out; /* not folded text: folded_parse said so */
		if (err) {
			cli_error("cannot read %s: %s", label, strerror(-err));
			goto out;
		}
	}
	out = cli_open_out(outpath);
	if (!out)
		goto out;
	if (diff_write(&d, out, normalize)) {
		cli_error("out of memory");
		if (out != stdout)
			fclose(out);
		goto out;
	}
	ret = cli_close_out(out, outpath);
out:
	for (int i = 0; i < 2; i++) {
		if (text[i]) {
			if (in[i])
				fclose(in[i]);
		} else {
			cli_close_in(in[i]);
		}
		free(text[i]);
		free(paths[i]);
	}
	stack_set__free(d.stacks);
	free(d.buf);
	return ret;
}
