/* galatop: argument dispatch only; each subcommand lives in cli/. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"

const struct cli_command cli_commands[] = {
	{ "collapse", cmd_collapse, "turn `perf script` output into folded stacks",
	  cmd_collapse_help },
	{ "svg", cmd_svg, "draw an interactive SVG flame graph from folded or perf script input",
	  cmd_svg_help },
	{ "diff", cmd_diff, "compare two folded profiles into two-column (differential) folded",
	  cmd_diff_help },
	{ "fold", cmd_fold, "normalize folded or perf script input into sorted, merged folded",
	  cmd_fold_help },
	{ "agent", cmd_agent_loaded, "run as a node agent: sinks, metrics, REST control (root)",
	  NULL },
	{ "live", cmd_live, "the live view (also what plain `galatop` runs; root)", cmd_live_help },
	{ "record", cmd_record, "sample stacks live with eBPF (root) into folded/SVG files",
	  cmd_record_help },
	{ "view", cmd_view, "explore a folded, perf script or .gtop file in the terminal",
	  cmd_view_help },
	{ NULL, NULL, NULL, NULL },
};

static const struct cli_command *find_command(const char *name)
{
	for (const struct cli_command *c = cli_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static void usage(FILE *out)
{
	fputs("Usage: galatop [--help | --version] COMMAND [OPTIONS] [ARGS]\n"
	      "       sudo galatop [LIVE OPTIONS]   (the live view; see galatop help live)\n"
	      "\n"
	      "galatop is a live performance explorer for Linux: flame graphs of where the time\n"
	      "goes, from eBPF probes or from perf and folded files.\n"
	      "\n"
	      "Commands:\n",
	      out);
	for (const struct cli_command *c = cli_commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fputs("  help CMD   show the options of CMD\n"
	      "\n"
	      "See galatop(8) and docs/ for formats and details.\n",
	      out);
}

int main(int argc, char **argv)
{
	const struct cli_command *c;

	/* No command, or options first: the live view. */
	if (argc < 2)
		return cmd_live(argc, argv);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("galatop %s\n", GALATOP_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		c = find_command(argv[2]);
		if (!c) {
			cli_error("unknown command '%s'", argv[2]);
			fputs("Try 'galatop --help'.\n", stderr);
			return EXIT_USAGE;
		}
		if (!c->help) /* a command in a library of its own prints its own */
			return c->run(2, (char *[]){ argv[2], "--help", NULL });
		fputs(c->help, stdout);
		return 0;
	}
	if (argv[1][0] == '-')
		return cmd_live(argc, argv);
	c = find_command(argv[1]);
	if (!c) {
		cli_error("unknown command '%s'", argv[1]);
		fputs("Try 'galatop --help'.\n", stderr);
		return EXIT_USAGE;
	}
	return c->run(argc - 1, argv + 1);
}
