/* galatop svg: folded stacks (or `perf script` output) to an interactive SVG flame graph. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "../export/input.h"
#include "../export/svg.h"
#include "../model/filter.h"
#include "../model/group.h"

const char cmd_svg_help[] =
	"Usage: galatop svg [OPTIONS] [FILE|-]\n"
	"\n"
	"Draws an interactive SVG flame graph, as FlameGraph's flamegraph.pl does, from folded\n"
	"stacks (\"frame;frame;... COUNT\"), `perf script` output or a .gtop snapshot (told\n"
	"apart as docs/formats.md says), read from FILE or standard input. Open it in a browser: hover a frame\n"
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
	"                     aqua, yellow, purple, orange, kind; java, js and perl color by the\n"
	"                     _[k] _[j] _[i] annotations and the shape of the names, kind by\n"
	"                     the frame's kind as galatop's flame view (user amber to yellow,\n"
	"                     kernel red, JIT green, inlined aqua, Python blue)\n"
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
	"  --type T           from a snapshot, the profile of type T: oncpu, offcpu, mem;\n"
	"                     from a pprof file, the sample type T (default: the first)\n"
	"  --range A-B        from a snapshot, only seconds A to B of its history (or clock\n"
	"                     times HH:MM:SS); the range goes into the subtitle\n"
	"  -o, --output FILE  write to FILE instead of standard output\n"
	"  -h, --help         show this help\n"
	"\n"
	"Colors come from the frame names, never from random numbers: the same input gives\n"
	"the same bytes. Invalid lines are reported as FILE:LINE and skipped. With no stack\n"
	"counts at all the output is an SVG saying \"ERROR: No valid input provided\" and the\n"
	"exit status is 2, as flamegraph.pl's. See docs/svg.md.\n";

static const char cmd[] = "svg";

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
		O_REVERSE, O_FLAMECHART, O_NEGATE, O_NOTES, O_GROUP, O_TYPE, O_RANGE
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
		{ "type", required_argument, NULL, O_TYPE },
		{ "range", required_argument, NULL, O_RANGE },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct svg_opts so;
	struct input_opts io = { 0 };
	struct input in = { 0 };
	const char *outpath = NULL, *path, *label, *type = NULL;
	char msg[512], subtitle[160];
	struct strtab *st = NULL;
	struct frames *ft = NULL;
	struct profile *p = NULL, *grouped = NULL;
	FILE *out;
	long lv;
	int c, err, pal, group = -1, ret = 1;

	svg_opts__init(&so);
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
			io.reverse = true;
			break;
		case O_FLAMECHART:
			io.chart = true;
			break;
		case O_TYPE:
			type = io.sample_type = optarg;
			break;
		case O_RANGE:
			if (input_range_parse(optarg, &io.range, msg, sizeof(msg)))
				return cli_usage_error(cmd, "--range: %s", msg);
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

	st = strtab__new();
	ft = st ? frames__new(st) : NULL;
	if (!ft) {
		cli_error("out of memory");
		goto out;
	}
	err = input_load(path, ft, &io, &in, msg, sizeof(msg));
	if (err) {
		if (msg[0])
			cli_error("%s", msg);
		goto out;
	}
	p = input_profile(&in, type);
	if (!p) {
		cli_error("%s: no %s profile", label, type ? type : "stack");
		goto out;
	}
	if (io.range.set && !so.subtitle) {
		snprintf(subtitle, sizeof(subtitle), "range %s (%.2f-%.2f s from the start)",
			 io.range.text, in.from, in.to);
		so.subtitle = subtitle;
	}
	if (group >= 0) {
		struct profile_filter f = { .regroup = true, .group = (enum group_by)group };

		grouped = profile__filter(p, &f);
		if (!grouped) {
			cli_error("out of memory");
			goto out;
		}
		p = grouped;
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
	profile__free(grouped);
	input_release(&in);
	frames__free(ft);
	strtab__free(st);
	return ret;
}
