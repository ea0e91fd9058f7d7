/* `galatop view FILE`: the interactive explorer over a saved profile (folded stacks or
 * `perf script` output). Needs no privileges. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "../export/input.h"
#include "../export/l7_tables.h"
#include "../export/snapshot.h"
#include "../model/profile.h"
#include "../tui/tui.h"

const char cmd_view_help[] =
	"Usage: galatop view [OPTIONS] FILE\n"
	"       galatop view [OPTIONS] --diff BEFORE AFTER\n"
	"\n"
	"Explore a saved profile in the terminal: an icicle/flame graph with zoom, search and\n"
	"filters, and a top-like table of functions. FILE holds folded stacks (\"a;b;c 12\"),\n"
	"`perf script` output, a pprof file or a .gtop snapshot (detected), or is - for\n"
	"standard input. Press F1 or ? for the keys. The .gtop and .json files of `record --type l7` open in the L7 view.\n"
	"\n"
	"Options:\n"
	"  -t, --type TYPE    what the file's values are: oncpu (default), offcpu or mem; for a\n"
	"                     snapshot, the profile shown first; for a pprof file, the\n"
	"                     column galatop writes for that type\n"
	"  -T, --theme NAME   color theme: default, hot, mono, high-contrast, colorblind, or a\n"
	"                     path to a .theme file (themes are looked up in $GALATOP_THEMES,\n"
	"                     themes/ next to the binary, then PREFIX/share/galatop/themes)\n"
	"      --no-color     no colors, attributes only (the NO_COLOR variable does the same)\n"
	"      --ascii        ASCII glyphs only (automatic when the locale is not UTF-8)\n"
	"  -o, --out-dir DIR  where the s key saves files (default: the current directory)\n"
	"      --format FMT   input format: auto (default), folded or perf\n"
	"      --range A-B    from a .gtop snapshot, open on seconds A to B of its per-second\n"
	"                     history (fractions allowed; or clock times HH:MM:SS; the\n"
	"                     heatmap, key 6, picks another, a shows all); with --diff, the\n"
	"                     same range of both files\n"
	"  -h, --help         show this help\n"
	"\n"
	"No-display mode (for tests and scripts):\n"
	"      --dump         press --keys without a terminal, then print the final screen\n"
	"      --size WxH     screen size for --dump (default 120x40)\n"
	"      --keys SCRIPT  keys to press: characters, \\n \\t \\e \\\\, and names such as\n"
	"                     <Enter> <Esc> <Tab> <BS> <Up> <PgDn> <F1> <C-l> <lt>\n"
	"                     <Click:X,Y> <DClick:X,Y> <WheelUp:X,Y> <WheelDown:X,Y> <Resize:WxH>\n"
	"                     <Tick> (the data source updates, as once a second live)\n"
	"      --dump-roles   with --dump, also print the color role of every cell\n"
	"      --term NAME    terminfo entry for --dump (default xterm-256color)\n"
	"\n"
	"Exit status: 0 on success, 1 if FILE cannot be read or holds no stacks, 2 on usage\n"
	"errors.\n";

enum { OPT_NO_COLOR = 256, OPT_ASCII, OPT_FORMAT, OPT_DUMP, OPT_SIZE, OPT_KEYS, OPT_DUMP_ROLES,
       OPT_TERM, OPT_BENCH, OPT_DIFF, OPT_RANGE };

static const struct option long_opts[] = {
	{ "type", required_argument, NULL, 't' },
	{ "theme", required_argument, NULL, 'T' },
	{ "no-color", no_argument, NULL, OPT_NO_COLOR },
	{ "ascii", no_argument, NULL, OPT_ASCII },
	{ "out-dir", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "dump", no_argument, NULL, OPT_DUMP },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "keys", required_argument, NULL, OPT_KEYS },
	{ "dump-roles", no_argument, NULL, OPT_DUMP_ROLES },
	{ "term", required_argument, NULL, OPT_TERM },
	{ "diff", no_argument, NULL, OPT_DIFF },
	{ "range", required_argument, NULL, OPT_RANGE },
	{ "bench-render", required_argument, NULL, OPT_BENCH }, /* hidden: tests/bench/tui.sh */
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What a file gave: one profile (folded, perf script) or a snapshot's profiles. */
struct loaded {
	struct input in;
	struct l7_table *l7; /* L7 tables of a .json file (record --type l7 -o x.json) */
	const struct profile *p[STACK_TYPES];
	const struct slices *h[STACK_TYPES]; /* a snapshot's per-second histories */
};

/* Loads path (L7 JSON, or whatever the one input loader reads) into l. 0, or -1 after saying
 * why. */
static int load(const char *path, const struct input_opts *io, struct frames *ft,
		enum stack_type first, struct loaded *l)
{
	char *buf = NULL, err[512];
	size_t len = 0;
	int r;

	if (input_read(path, &buf, &len, err, sizeof(err))) {
		cli_error("%s", err);
		return -1;
	}
	if (!io->format && !io->range.set && l7_json_sniff(buf, len)) {
		l->l7 = l7_table__new();
		r = l->l7 ? l7_json_load(buf, len, path, l->l7, NULL, err, sizeof(err)) : -ENOMEM;
		free(buf);
		if (r)
			cli_error("%s", r == -ENOMEM ? "out of memory" : err);
		return r ? -1 : 0;
	}
	r = input_load_mem(buf, len, strcmp(path, "-") ? path : "standard input", ft, io, &l->in,
			   err, sizeof(err));
	free(buf);
	if (r) {
		if (err[0])
			cli_error("%s", err);
		return -1;
	}
	if (l->in.own)
		l->p[first] = l->in.own;
	for (size_t i = 0; i < l->in.snap.nprofiles; i++) {
		const struct snapshot_profile *sp = &l->in.snap.profiles[i];
		int t = stack_type_parse(sp->type ? sp->type : "");

		/* Imported ("folded") profiles take the first free type, the asked one first. */
		for (int k = 0; t < 0 && k < STACK_TYPES; k++)
			if (!l->p[(first + k) % STACK_TYPES])
				t = (first + k) % STACK_TYPES;
		if (t >= 0 && !l->p[t]) {
			l->p[t] = sp->p;
			l->h[t] = io->range.set && !io->range_whole ? NULL : sp->history;
		}
	}
	if (l->in.snap.timeline || l->in.snap.sli)
		return 0; /* the Threads or Containers pane has something to show */
	for (int t = 0; t < STACK_TYPES; t++)
		if (l->p[t] && profile__total(l->p[t]) > 0)
			return 0;
	if (l->in.snap.l7)
		return 0; /* L7 tables only: the L7 view opens first */
	if (io->range.set)
		cli_error("%s: no stacks in range %s", path, io->range.text);
	else
		cli_error("%s: no stacks", path);
	return -1;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* A snapshot saved from a range picked in the heatmap opens on that range (`a`: all time). */
static void saved_range(const struct snapshot *sn, struct tui_opts *o)
{
	struct input_range r;
	char err[128];

	for (size_t i = 0; i < sn->meta.nfilters; i++)
		if (sn->meta.filters[i].key && !strcmp(sn->meta.filters[i].key, "range") &&
		    sn->meta.filters[i].value &&
		    !input_range_parse(sn->meta.filters[i].value, &r, err, sizeof(err)) &&
		    !input_range_seconds(&r, sn->meta.start, &o->range_from, &o->range_to))
			o->range = true;
}

/* Differential profiles of the types both files have: "before" in the first column, "after"
 * in the second. 0, or -1 with the reason said. */
static int diff_profiles(const char *bname, const char *aname, struct frames *ft,
			 const struct loaded *b, const struct loaded *a, struct profile **dp)
{
	int common = 0;

	for (int t = 0; t < STACK_TYPES; t++) {
		if (!b->p[t] || !a->p[t])
			continue;
		if (profile__kind(b->p[t]) != profile__kind(a->p[t])) {
			cli_error("%s and %s: %s values are %s in one and %s in the other", bname,
				  aname, stack_type_name((enum stack_type)t),
				  value_kind_str(profile__kind(b->p[t])),
				  value_kind_str(profile__kind(a->p[t])));
			return -1;
		}
		dp[t] = profile__new(ft, profile__kind(a->p[t]), false);
		if (!dp[t] || profile__merge_column(dp[t], b->p[t], 0, 1) ||
		    profile__merge_column(dp[t], a->p[t], 1, 1)) {
			cli_error("out of memory");
			return -1;
		}
		common++;
	}
	if (!common) {
		cli_error("%s and %s have no profile type in common (%s)", bname, aname,
			  stack_type_list());
		return -1;
	}
	return 0;
}

int cmd_view(int argc, char **argv)
{
	struct tui_opts o = { .dump_cols = 120, .dump_rows = 40 };
	static const struct perfscript_opts perf = { .include_pid = true, .annotate_kernel = true,
						     .count_samples = true, .annotate_jit = true };
	struct input_opts io = { .perf = &perf };
	char msg[512];
	struct tui_static_source src;
	struct strtab *st = NULL;
	struct frames *ft = NULL;
	struct loaded l = { 0 }, before = { 0 };
	struct profile *dp[STACK_TYPES] = { 0 };
	char origin[512];
	bool diff = false;
	long bench = 0;
	int c, r = 1, t;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":t:T:o:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 't':
			t = stack_type_parse(optarg);
			if (t < 0)
				return cli_usage_error("view", "--type: want one of %s, not '%s'",
						       stack_type_list(), optarg);
			o.ptype = (enum stack_type)t;
			io.sample_type = optarg;
			break;
		case 'T':
			o.theme = optarg;
			break;
		case OPT_NO_COLOR:
			o.no_color = true;
			break;
		case OPT_ASCII:
			o.ascii = true;
			break;
		case 'o':
			o.out_dir = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "auto") && strcmp(optarg, "folded") && strcmp(optarg, "perf"))
				return cli_usage_error("view", "--format: want auto, folded or perf, not '%s'",
						       optarg);
			io.format = !strcmp(optarg, "folded") ? INPUT_FOLDED
				    : !strcmp(optarg, "perf")	  ? INPUT_PERF
								  : INPUT_AUTO;
			break;
		case OPT_DUMP:
			o.dump = true;
			break;
		case OPT_SIZE:
			if (sscanf(optarg, "%dx%d", &o.dump_cols, &o.dump_rows) != 2 || o.dump_cols < 1 ||
			    o.dump_rows < 1 || o.dump_cols > 1000 || o.dump_rows > 1000)
				return cli_usage_error("view", "--size: want WxH such as 120x40, not '%s'",
						       optarg);
			break;
		case OPT_KEYS:
			o.keys = optarg;
			break;
		case OPT_DUMP_ROLES:
			o.dump_roles = true;
			break;
		case OPT_TERM:
			o.dump_term = optarg;
			break;
		case OPT_DIFF:
			diff = true;
			break;
		case OPT_RANGE:
			if (input_range_parse(optarg, &io.range, msg, sizeof(msg)))
				return cli_usage_error("view", "--range: %s", msg);
			break;
		case OPT_BENCH:
			if (cli_parse_long("view", "--bench-render", optarg, 1, 1000000, &bench))
				return EXIT_USAGE;
			o.bench_frames = bench;
			break;
		case 'h':
			fputs(cmd_view_help, stdout);
			return 0;
		default:
			return cli_bad_option("view", argv, c);
		}
	}
	if (diff && optind != argc - 2)
		return cli_usage_error("view", "--diff takes two files: BEFORE and AFTER");
	if (!diff && optind != argc - 1)
		return cli_usage_error("view", optind < argc ? "one FILE only" : "FILE is missing");
	if ((o.keys || o.dump_roles) && !o.dump)
		return cli_usage_error("view", "--keys and --dump-roles go with --dump");
	st = strtab__new();
	ft = st ? frames__new(st) : NULL;
	if (!ft) {
		cli_error("out of memory");
		goto out;
	}
	if (diff) {
		if (load(argv[optind], &io, ft, o.ptype, &before) ||
		    load(argv[optind + 1], &io, ft, o.ptype, &l) ||
		    diff_profiles(argv[optind], argv[optind + 1], ft, &before, &l, dp))
			goto out;
		snprintf(origin, sizeof(origin), "%s -> %s", base_name(argv[optind]),
			 base_name(argv[optind + 1]));
	} else {
		/* The viewer selects a range itself: the whole history stays (`a` shows it all). */
		io.range_whole = true;
		if (load(argv[optind], &io, ft, o.ptype, &l))
			goto out;
		o.range = io.range.set;
		o.range_from = l.in.from;
		o.range_to = l.in.to;
		if (!o.range)
			saved_range(&l.in.snap, &o);
		snprintf(origin, sizeof(origin), "%s", argv[optind]);
	}
	tui_static_source_init(&src, origin);
	for (int k = 0; k < STACK_TYPES; k++) {
		tui_static_source_set(&src, (enum stack_type)k, diff ? dp[k] : l.p[k]);
		if (!diff)
			tui_static_source_set_history(&src, (enum stack_type)k, l.h[k]);
	}
	if (!diff)
		src.since = l.in.snap.meta.start;
	if (l.in.snap.timeline) {
		tui_static_source_set_data(&src, TUI_DATA_TIMELINE, l.in.snap.timeline);
		if (!l.in.snap.nprofiles)
			o.first_view = "Threads"; /* a recording of threads only */
	}
	if (l.in.snap.sli) {
		bool stacks = false;

		tui_static_source_set_data(&src, TUI_DATA_SLI, l.in.snap.sli);
		for (int k = 0; k < STACK_TYPES; k++)
			stacks |= l.p[k] && profile__total(l.p[k]) > 0;
		if (!stacks)
			o.first_view = "Containers";
	}
	if (l.in.snap.l7 || l.l7) {
		tui_static_source_set_data(&src, TUI_DATA_L7, l.l7 ? l.l7 : l.in.snap.l7);
		for (t = 0; t < STACK_TYPES && !l.p[t]; t++)
			;
		if (t == STACK_TYPES && !l.in.snap.sli)
			o.first_view = "L7";
	}
	r = tui_run(&src.src, &o);
out:
	for (int k = 0; k < STACK_TYPES; k++)
		profile__free(dp[k]);
	input_release(&before.in);
	input_release(&l.in);
	l7_table__free(l.l7);
	frames__free(ft);
	strtab__free(st);
	return r;
}
