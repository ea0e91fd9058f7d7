/* galatop svg: folded stacks (or `perf script` output) to an interactive SVG flame graph. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "../export/folded.h"
#include "../export/perfscript.h"
#include "../export/svg.h"
#include "../model/filter.h"
#include "../model/group.h"

const char cmd_svg_help[] =
	"Usage: galatop svg [OPTIONS] [FILE|-]\n"
	"\n"
	"Draws an interactive SVG flame graph, as FlameGraph's flamegraph.pl does, from folded\n"
	"stacks (\"frame;frame;... COUNT\") or from `perf script` output (recognized by its\n"
	"first line), read from FILE or standard input. Open it in a browser: hover a frame\n"
	"for its details, click to zoom, Ctrl-F (or Search) for a regexp search whose share\n"
	"of the view shows as \"Matched: N%\", Ctrl-I (or ic) to ignore case.\n"
	"\n"
	"Lines with two counts make a differential graph: widths from the second count, red\n"
	"where a frame's own count grew, blue where it shrank (see galatop diff).\n"
	"\n"
	"Options:\n"
	"  --title TEXT       title (default \"Flame Graph\", \"Icicle Graph\" or \"Flame Chart\")\n"
	"  --subtitle TEXT    second title line (default none)\n"
	"  --width NUM        image width in pixels (default 1200)\n"
	"  --height NUM       height of each frame in pixels (default 16)\n"
	"  --minwidth NUM[%]  omit frames narrower than NUM pixels, or NUM percent of the total\n"
	"                     with a trailing % (default 0.1)\n"
	"  --fonttype FONT    font family (default \"Verdana\")\n"
	"  --fontsize NUM     font size (default 12)\n"
	"  --fontwidth NUM    average character width relative to the font size (default 0.59)\n"
	"  --countname TEXT   what the counts count (default \"samples\")\n"
	"  --nametype TEXT    label of the hovered frame's details (default \"Function:\")\n"
	"  --colors PALETTE   hot (default), mem, io, wakeup, java, js, perl, red, green, blue,\n"
	"                     aqua, yellow, purple, orange; java, js and perl color by the\n"
	"                     _[k] _[j] _[i] annotations and the shape of the names\n"
	"  --bgcolors COLOR   background: yellow, blue, green, grey (gradients) or #rrggbb\n"
	"                     (default: the palette's)\n"
	"  --hash             colors from flamegraph.pl's name hash (first characters weigh\n"
	"                     most) instead of a hash of the whole name\n"
	"  --inverted         icicle graph: root at the top\n"
	"  --reverse          reverse every stack (leaf first) before merging\n"
	"  --flamechart       keep the input order (time) instead of sorting by name, merging\n"
	"                     a stack only with the one just before it\n"
	"  --negate           differentials: swap red and blue and the sign of the change\n"
	"  --notes TEXT       notes kept in an XML comment at the top of the SVG\n"
	"  --group G          regroup galatop's [PID]comm roots: command (one root per\n"
	"                     program name), process, thread or none (default: as the input)\n"
	"  -o, --output FILE  write to FILE instead of standard output\n"
	"  -h, --help         show this help\n"
	"\n"
	"Colors come from the frame names, never from random numbers: the same input gives\n"
	"the same bytes. Invalid lines are reported as FILE:LINE and skipped. With no stack\n"
	"counts at all the output is an SVG saying \"ERROR: No valid input provided\" and the\n"
	"exit status is 2, as flamegraph.pl's. See docs/svg.md.\n";

static const char cmd[] = "svg";

#define PEEK_SIZE (64u << 10)

/* The input's first bytes, read to tell folded text from `perf script` output, then handed
 * out again before the rest of the file (pipes cannot be rewound). */
struct peek {
	FILE *f;
	char buf[PEEK_SIZE];
	size_t len, pos;
};

static ssize_t peek_read(void *cookie, char *buf, size_t size)
{
	struct peek *pk = cookie;
	size_t n;

	if (pk->pos < pk->len) {
		n = pk->len - pk->pos < size ? pk->len - pk->pos : size;
		memcpy(buf, pk->buf + pk->pos, n);
		pk->pos += n;
		return (ssize_t)n;
	}
	n = fread(buf, 1, size, pk->f);
	return n || !ferror(pk->f) ? (ssize_t)n : -1;
}

/* perf script output starts with a sample header ("comm PID ... TIME: PERIOD EVENT:") or an
 * indented frame line, a folded file with a line ending in a count; '#' lines are comments. */
static bool looks_like_perf_script(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		const char *nl = memchr(s + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - s) : len, e = end, d;

		while (e > i && isspace((unsigned char)s[e - 1]))
			e--;
		if (e == i || s[i] == '#') {
			i = end + 1;
			continue;
		}
		for (d = e; d > i && (isdigit((unsigned char)s[d - 1]) || s[d - 1] == '.'); d--)
			;
		return !(d < e && d > i && isspace((unsigned char)s[d - 1]));
	}
	return false;
}

/* Feeds `perf script` samples into the profile as folded stacks of the same frames. */
struct perf_sink {
	struct profile *p;
	struct frames *ft;
	bool reverse;
	uint32_t *frames;
	size_t cap;
};

static int perf_sink_add(void *ctx, const char *stack, size_t len, uint64_t count)
{
	struct perf_sink *ps = ctx;
	long n = folded_split(ps->ft, stack, len, &ps->frames, &ps->cap);

	if (n < 0)
		return (int)n;
	for (long i = 0; ps->reverse && i < n / 2; i++) {
		uint32_t t = ps->frames[i];

		ps->frames[i] = ps->frames[n - 1 - i];
		ps->frames[n - 1 - i] = t;
	}
	return profile__add_stack(ps->p, ps->frames, (size_t)n, (double)count);
}

static int read_perf_script(struct peek *pk, struct profile *p, bool reverse)
{
	struct perfscript_opts po = { .warn = stderr };
	struct perf_sink sink = { .p = p, .ft = profile__frames(p), .reverse = reverse };
	struct perfscript *ps = perfscript__new(&po, perf_sink_add, &sink);
	int err;

	if (!ps)
		return -ENOMEM;
	err = perfscript__feed(ps, pk->buf, pk->len);
	if (!err)
		err = perfscript__parse_file(ps, pk->f);
	perfscript__free(ps);
	free(sink.frames);
	return err;
}

static int read_folded(struct peek *pk, const char *label, struct profile *p,
		       const struct folded_opts *fo)
{
	static const cookie_io_functions_t io = { .read = peek_read };
	FILE *f = fopencookie(pk, "r", io);
	int err;

	if (!f)
		return -ENOMEM;
	err = folded_read_profile(f, label, fo, p, NULL);
	fclose(f);
	return err;
}

/* Reads path (folded or perf script) into p. 0, -EINVAL (already reported), or -errno. */
static int read_input(FILE *in, const char *label, struct profile *p,
		      const struct folded_opts *fo)
{
	struct peek *pk = malloc(sizeof(*pk));
	int err;

	if (!pk)
		return -ENOMEM;
	pk->f = in;
	pk->pos = 0;
	pk->len = fread(pk->buf, 1, sizeof(pk->buf), in);
	if (ferror(in))
		err = -(errno ? errno : EIO);
	else if (looks_like_perf_script(pk->buf, pk->len))
		err = read_perf_script(pk, p, fo->reverse);
	else
		err = read_folded(pk, label, p, fo);
	if (err == -EIO && errno)
		err = -errno;
	free(pk);
	return err;
}

static int parse_minwidth(const char *arg, struct svg_opts *o)
{
	size_t n = strlen(arg);
	char *num = strdup(arg);
	int err;

	if (!num)
		return -1;
	o->minwidth_percent = n && num[n - 1] == '%';
	if (o->minwidth_percent)
		num[n - 1] = '\0';
	err = cli_parse_double(cmd, "--minwidth", num, 0, 1e9, &o->minwidth);
	free(num);
	return err;
}

int cmd_svg(int argc, char **argv)
{
	enum {
		O_TITLE = 256, O_SUBTITLE, O_WIDTH, O_HEIGHT, O_MINWIDTH, O_FONTTYPE, O_FONTSIZE,
		O_FONTWIDTH, O_COUNTNAME, O_NAMETYPE, O_COLORS, O_BGCOLORS, O_HASH, O_INVERTED,
		O_REVERSE, O_FLAMECHART, O_NEGATE, O_NOTES, O_GROUP
	};
	static const struct option longopts[] = {
		{ "title", required_argument, NULL, O_TITLE },
		{ "subtitle", required_argument, NULL, O_SUBTITLE },
		{ "width", required_argument, NULL, O_WIDTH },
		{ "height", required_argument, NULL, O_HEIGHT },
		{ "minwidth", required_argument, NULL, O_MINWIDTH },
		{ "fonttype", required_argument, NULL, O_FONTTYPE },
		{ "fontsize", required_argument, NULL, O_FONTSIZE },
		{ "fontwidth", required_argument, NULL, O_FONTWIDTH },
		{ "countname", required_argument, NULL, O_COUNTNAME },
		{ "nametype", required_argument, NULL, O_NAMETYPE },
		{ "colors", required_argument, NULL, O_COLORS },
		{ "bgcolors", required_argument, NULL, O_BGCOLORS },
		{ "hash", no_argument, NULL, O_HASH },
		{ "inverted", no_argument, NULL, O_INVERTED },
		{ "reverse", no_argument, NULL, O_REVERSE },
		{ "flamechart", no_argument, NULL, O_FLAMECHART },
		{ "negate", no_argument, NULL, O_NEGATE },
		{ "notes", required_argument, NULL, O_NOTES },
		{ "group", required_argument, NULL, O_GROUP },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct svg_opts so;
	struct folded_opts fo = { 0 };
	bool chart = false;
	const char *outpath = NULL, *path, *label;
	struct strtab *st = NULL;
	struct frames *ft = NULL;
	struct profile *p = NULL;
	FILE *in = NULL, *out;
	long lv;
	int c, err, pal, group = -1, ret = 1;

	svg_opts_init(&so);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case O_TITLE:
			so.title = optarg;
			break;
		case O_SUBTITLE:
			so.subtitle = optarg;
			break;
		case O_WIDTH:
			if (cli_parse_long(cmd, "--width", optarg, 21, 1000000, &lv))
				return EXIT_USAGE;
			so.width = lv;
			break;
		case O_HEIGHT:
			if (cli_parse_long(cmd, "--height", optarg, 1, 10000, &lv))
				return EXIT_USAGE;
			so.frameheight = lv;
			break;
		case O_MINWIDTH:
			if (parse_minwidth(optarg, &so))
				return EXIT_USAGE;
			break;
		case O_FONTTYPE:
			so.fonttype = optarg;
			break;
		case O_FONTSIZE:
			if (cli_parse_double(cmd, "--fontsize", optarg, 0.1, 1000, &so.fontsize))
				return EXIT_USAGE;
			break;
		case O_FONTWIDTH:
			if (cli_parse_double(cmd, "--fontwidth", optarg, 0.01, 10, &so.fontwidth))
				return EXIT_USAGE;
			break;
		case O_COUNTNAME:
			so.countname = optarg;
			break;
		case O_NAMETYPE:
			so.nametype = optarg;
			break;
		case O_COLORS:
			pal = palette_parse(optarg);
			if (pal < 0)
				return cli_usage_error(cmd, "--colors: unknown palette '%s'", optarg);
			so.palette = (enum palette)pal;
			break;
		case O_BGCOLORS:
			if (!svg_bgcolors_valid(optarg))
				return cli_usage_error(cmd, "--bgcolors: bad value '%s' (expected "
						       "yellow, blue, green, grey or #rrggbb)",
						       optarg);
			so.bgcolors = optarg;
			break;
		case O_HASH:
			so.hash = true;
			break;
		case O_INVERTED:
			so.inverted = true;
			break;
		case O_REVERSE:
			fo.reverse = true;
			break;
		case O_FLAMECHART:
			chart = true;
			break;
		case O_NEGATE:
			so.negate = true;
			break;
		case O_NOTES:
			so.notes = optarg;
			break;
		case O_GROUP:
			group = group_by_parse(optarg);
			if (group < 0)
				return cli_usage_error(cmd, "--group: bad value '%s' (thread, process, "
						       "command or none)", optarg);
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'h':
			fputs(cmd_svg_help, stdout);
			return 0;
		default:
			return cli_bad_option(cmd, argv, c);
		}
	}
	if (argc - optind > 1)
		return cli_usage_error(cmd, "one input at most ('%s' is extra)", argv[optind + 1]);
	path = optind < argc ? argv[optind] : "-";
	label = strcmp(path, "-") ? path : "standard input";

	in = cli_open_in(path);
	if (!in)
		return 1;
	st = strtab__new();
	ft = st ? frames__new(st) : NULL;
	p = ft ? profile__new(ft, VALUE_SAMPLES, chart) : NULL;
	err = p ? read_input(in, label, p, &fo) : -ENOMEM;
	cli_close_in(in);
	if (err == -ENOMEM) {
		cli_error("out of memory");
		goto out;
	}
	if (err == -EINVAL)
		goto out;
	if (err) {
		cli_error("cannot read %s: %s", label, strerror(-err));
		goto out;
	}
	if (group >= 0) {
		struct profile_filter f = { .regroup = true, .group = (enum group_by)group };
		struct profile *g = profile__filter(p, &f);

		if (!g) {
			cli_error("out of memory");
			goto out;
		}
		profile__free(p);
		p = g;
	}

	out = cli_open_out(outpath);
	if (!out)
		goto out;
	err = svg_write(out, p, &so);
	if (err == -ENODATA) {
		cli_error("ERROR: No stack counts found in %s", label);
		ret = cli_close_out(out, outpath) ? 1 : 2;
	} else if (err == -ENOMEM) {
		cli_error("out of memory");
		if (out != stdout)
			fclose(out);
	} else if (err) {
		cli_error("cannot write %s: %s", outpath ? outpath : "standard output",
			  strerror(-err));
		if (out != stdout)
			fclose(out);
	} else {
		ret = cli_close_out(out, outpath);
	}
out:
	profile__free(p);
	frames__free(ft);
	strtab__free(st);
	return ret;
}
