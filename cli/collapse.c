/* galatop collapse: `perf script` text to folded stacks, as FlameGraph's stackcollapse-perf.pl. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "../export/perfdata.h"
#include "../export/perfscript.h"

const char cmd_collapse_help[] =
	"Usage: galatop collapse [OPTIONS] [FILE|-]...\n"
	"\n"
	"Reads `perf script` output or a perf.data file (stdin when no FILE or '-') and prints\n"
	"folded stacks, \"comm;root;...;leaf COUNT\" sorted bytewise, byte for byte as\n"
	"FlameGraph's stackcollapse-perf.pl prints them (for perf.data: as it prints\n"
	"`perf script` of the file; names from this system's files and perf's build-id\n"
	"cache, user stacks of --call-graph dwarf files unwound by galatop). COUNT sums the period of each sample (1 when the\n"
	"header has none). Only the first event type seen is kept unless --event-filter says.\n"
	"\n"
	"Options:\n"
	"  --pid              root frame is comm-PID\n"
	"  --tid              root frame is comm-PID/TID\n"
	"  --kernel           annotate kernel frames with _[k]\n"
	"  --jit              annotate JIT frames (/tmp/perf-PID.map) with _[j]\n"
	"  --all              --kernel and --jit\n"
	"  --addrs            show unknown symbols as [dso <address>]\n"
	"  --event-filter EV  keep only samples of event EV\n"
	"  --samples          count samples instead of summing periods\n"
	"  -h, --help         show this help\n"
	"\n"
	"Not supported: the script's --inline, --context and --srcline. See docs/collapse.md.\n";

static const char cmd[] = "collapse";

int cmd_collapse(int argc, char **argv)
{
	enum { O_PID = 256, O_TID, O_KERNEL, O_JIT, O_ALL, O_ADDRS, O_EVENT, O_SAMPLES };
	static const struct option longopts[] = {
		{ "pid", no_argument, NULL, O_PID },
		{ "tid", no_argument, NULL, O_TID },
		{ "kernel", no_argument, NULL, O_KERNEL },
		{ "jit", no_argument, NULL, O_JIT },
		{ "all", no_argument, NULL, O_ALL },
		{ "addrs", no_argument, NULL, O_ADDRS },
		{ "event-filter", required_argument, NULL, O_EVENT },
		{ "samples", no_argument, NULL, O_SAMPLES },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perfscript_opts o = { .warn = stderr };
	struct perfscript *ps = NULL;
	struct stack_agg *sa = NULL;
	FILE **in = NULL;
	int c, i, nin, err, rc = 1;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case O_PID: o.include_pid = true; break;
		case O_TID: o.include_tid = true; break;
		case O_KERNEL: o.annotate_kernel = true; break;
		case O_JIT: o.annotate_jit = true; break;
		case O_ALL: o.annotate_kernel = o.annotate_jit = true; break;
		case O_ADDRS: o.include_addrs = true; break;
		case O_EVENT: o.event_filter = optarg; break;
		case O_SAMPLES: o.count_samples = true; break;
		case 'h': fputs(cmd_collapse_help, stdout); return 0;
		default: return cli_bad_option(cmd, argv, c);
		}
	}

	/* Open every input first, so a bad name fails before any output. */
	nin = argc > optind ? argc - optind : 1;
	in = calloc(nin, sizeof(*in));
	if (!in) {
		cli_error("out of memory");
		return 1;
	}
	for (i = 0; i < nin; i++) {
		in[i] = cli_open_in(argc > optind ? argv[optind + i] : NULL);
		if (!in[i])
			goto out;
	}
	sa = stack_agg__new();
	ps = sa ? perfscript__new(&o, stack_agg__add_cb, sa) : NULL;
	if (!ps) {
		cli_error("out of memory");
		goto out;
	}
	for (i = 0; i < nin; i++) {
		const char *name = argc > optind ? argv[optind + i] : "-";

		const char *label = strcmp(name, "-") ? name : "standard input";
		char head[8], msg[512] = "";
		size_t n = fread(head, 1, sizeof(head), in[i]);

		/* perf.data is read directly; anything else is perf script text */
		if (perfdata_sniff(head, n)) {
			err = perfdata_collapse_file(in[i], head, n, label, &o, stack_agg__add_cb, sa,
						     NULL, msg, sizeof(msg));
		} else {
			/* a file is read again from its start: reads stay block-aligned */
			err = fseek(in[i], 0, SEEK_SET) ? perfscript__feed(ps, head, n) : 0;
			if (!err)
				err = perfscript__parse_file(ps, in[i]);
		}
		if (err == -EBADMSG)
			perfscript__strerror(ps, label, msg, sizeof(msg));
		if (msg[0]) {
			cli_error("%s", msg);
			goto out;
		}
		if (err == -EIO) {
			cli_error("cannot read %s: %s", strcmp(name, "-") ? name : "standard input",
				  strerror(errno ? errno : EIO));
			goto out;
		}
		if (err) {
			cli_error("%s: %s", name, strerror(-err));
			goto out;
		}
	}
	err = stack_agg__write(sa, stdout);
	if (err == -ENOMEM) {
		cli_error("out of memory");
		goto out;
	}
	rc = cli_close_out(stdout, NULL);
out:
	for (i = 0; i < nin; i++)
		cli_close_in(in[i]);
	free(in);
	perfscript__free(ps);
	stack_agg__free(sa);
	return rc;
}
