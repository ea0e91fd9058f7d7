/* galatop diff: two folded profiles into one two-column (differential) folded file, as
 * FlameGraph's difffolded.pl, but sorted. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "../export/folded.h"
#include "../model/strtab.h"

const char cmd_diff_help[] =
	"Usage: galatop diff [-n] [-s] [-o FILE] BEFORE AFTER\n"
	"\n"
	"Reads two folded files (\"frame;frame;... COUNT\"; '-' is standard input) and prints\n"
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
	"  -o, --output FILE write to FILE instead of standard output\n"
	"  -h, --help        show this help\n"
	"\n"
	"Identical stacks within a file are added together. Invalid lines are reported as\n"
	"FILE:LINE and skipped; a line with two counts contributes its last one.\n";

static const char cmd[] = "diff";

/* The union of stacks: strtab ids index the two count columns. */
struct diff {
	struct strtab *stacks;
	double *count[2];
	size_t cap;
	double total[2];
	int side;	/* the file being read: 0 BEFORE, 1 AFTER */
	bool strip_hex; /* -s */
	bool empty_seen; /* strtab id 0 (the empty string) was a stack of the input */
	char *buf;	/* the stack with addresses replaced */
	size_t buf_cap;
};

/* Copies s[0..len) into d->buf with every 0x[0-9a-fA-F]+ replaced by "0x...", as difffolded.pl
 * -s; returns the new length or -1 on ENOMEM. Each replacement of 3 or more bytes adds at most
 * 2, so 2 * len + 5 bytes always suffice. */
static long strip_hex(struct diff *d, const char *s, size_t len)
{
	size_t need = 2 * len + 5, n = 0;

	if (need > d->buf_cap) {
		char *b = realloc(d->buf, need);

		if (!b)
			return -1;
		d->buf = b;
		d->buf_cap = need;
	}
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
	uint32_t id;

	if (count2 >= 0)
		count = count2;
	if (d->strip_hex) {
		long n = strip_hex(d, stack, len);

		if (n < 0)
			return -ENOMEM;
		stack = d->buf;
		len = (size_t)n;
	}
	d->empty_seen |= len == 0;
	id = strtab__intern(d->stacks, stack, len);
	if (id == (uint32_t)-1)
		return -ENOMEM;
	if (id >= d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 1024;

		while (ncap <= id)
			ncap *= 2;
		for (int k = 0; k < 2; k++) {
			double *c = realloc(d->count[k], ncap * sizeof(*c));

			if (!c)
				return -ENOMEM;
			memset(c + d->cap, 0, (ncap - d->cap) * sizeof(*c));
			d->count[k] = c;
		}
		d->cap = ncap;
	}
	d->count[d->side][id] += count;
	d->total[d->side] += count;
	return 0;
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
	uint32_t n = strtab__count(d->stacks), k = 0;
	uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));

	if (!ids)
		return -ENOMEM;
	/* Id 0 is the empty string, a stack only when some line had one. */
	for (uint32_t id = d->empty_seen ? 0 : 1; id < n; id++)
		ids[k++] = id;
	strtab__sort_ids(d->stacks, ids, k);
	/* difffolded.pl divides by zero when BEFORE is empty; here it stays all zeros. */
	normalize = normalize && d->total[0] != d->total[1] && d->total[0] != 0;
	for (uint32_t i = 0; i < k; i++) {
		double before = d->count[0][ids[i]];

		if (normalize)
			before = trunc(before * d->total[1] / d->total[0]);
		fwrite(strtab__str(d->stacks, ids[i]), 1, strtab__len(d->stacks, ids[i]), out);
		put_count(out, before);
		put_count(out, d->count[1][ids[i]]);
		fputc('\n', out);
	}
	free(ids);
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "normalize", no_argument, NULL, 'n' },
		{ "strip-hex", no_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct folded_opts fo = { 0 };
	struct diff d = { 0 };
	const char *outpath = NULL;
	bool normalize = false;
	FILE *in[2] = { NULL, NULL }, *out;
	int c, err, ret = 1;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":nso:h", longopts, NULL)) != -1) {
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
		in[i] = cli_open_in(argv[optind + i]);
		if (!in[i])
			goto out;
	}
	d.stacks = strtab__new();
	if (!d.stacks) {
		cli_error("out of memory");
		goto out;
	}
	for (d.side = 0; d.side < 2; d.side++) {
		const char *path = argv[optind + d.side];
		const char *label = strcmp(path, "-") ? path : "standard input";

		err = folded_parse(in[d.side], label, &fo, diff_add, &d, NULL);
		if (err == -ENOMEM) {
			cli_error("out of memory");
			goto out;
		}
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
	for (int i = 0; i < 2; i++)
		cli_close_in(in[i]);
	strtab__free(d.stacks);
	free(d.count[0]);
	free(d.count[1]);
	free(d.buf);
	return ret;
}
