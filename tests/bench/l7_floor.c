/* Loader of tests/bench/l7_floor.bpf.c for tests/bench/l7_floor.sh. Takes the part of
 * `galatop record`'s command line the cost benchmarks pass (cost.lib's cost_under):
 *   l7_floor record --type l7[,sli] [-p PID[,PID...]] [-o FILE] [--probe-stats on]
 * With no -p every process is counted, each side of a connection on its own (FL_NOREAD=1 in the
 * environment: without reading a byte of any call, see l7_floor.bpf.c).
 * Says "Ctrl-C to stop" on standard error once attached; at SIGINT or SIGTERM prints the requests
 * and errors its maps counted and its programs' kernel time per call (BPF statistics, held on
 * with --probe-stats on), in the line cost.lib reads: "l7_floor: l7 NS_PER_CALL ...". */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "l7_floor.h"
#include "l7_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: l7_floor record --type l7[,sli] [-p PID[,PID...]] [-o FILE] "
			"[--probe-stats on|off]\n");
	return 2;
}

static int add_pids(struct l7_floor *f, const char *list)
{
	int fd = bpf_map__fd(f->maps.fl_pids);
	char *s = strdup(list), *save = NULL, *tok;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long pid = strtol(tok, &end, 10);
		__u32 w;
		__u64 bits = 0;

		if (*end || pid <= 0 || pid >= (1L << 22)) {
			fprintf(stderr, "l7_floor: bad pid '%s'\n", tok);
			free(s);
			return -1;
		}
		w = (__u32)pid >> 6;
		bpf_map_lookup_elem(fd, &w, &bits);
		bits |= 1ull << (pid & 63);
		bpf_map_update_elem(fd, &w, &bits, BPF_ANY);
	}
	free(s);
	return 0;
}

static void prog_time(struct bpf_program *p, __u64 *ns, __u64 *cnt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len)) {
		*ns += info.run_time_ns;
		*cnt += info.run_cnt;
	}
}

int main(int argc, char **argv)
{
	const char *pids = NULL, *noread;
	bool stats = false;
	struct l7_floor *f;
	int i, stats_fd = -1;
	__u64 ns = 0, cnt = 0, reqs = 0, errs = 0, key, next, *prev = NULL;
	unsigned eps = 0;
	struct fl_ep *v;
	int ncpu;

	if (argc < 2 || strcmp(argv[1], "record"))
		return usage();
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help")) {
			usage();
			return 0;
		} else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
			pids = argv[++i];
		} else if (!strcmp(argv[i], "--probe-stats") && i + 1 < argc) {
			stats = !strcmp(argv[++i], "on");
		} else if ((!strcmp(argv[i], "--type") || !strcmp(argv[i], "-o")) && i + 1 < argc) {
			i++; /* always l7; nothing written */
		} else {
			return usage();
		}
	}
	noread = getenv("FL_NOREAD");
	f = l7_floor__open();
	if (f) {
		f->rodata->fl_all = !pids;
		f->rodata->fl_noread = !pids && noread && !strcmp(noread, "1");
		if (l7_floor__load(f)) {
			l7_floor__destroy(f);
			f = NULL;
		}
	}
	if (!f) {
		fprintf(stderr, "l7_floor: cannot load the programs: %s\n", strerror(errno));
		return 1;
	}
	if ((pids && add_pids(f, pids)) || l7_floor__attach(f)) {
		fprintf(stderr, "l7_floor: cannot attach\n");
		l7_floor__destroy(f);
		return 1;
	}
	if (stats)
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "l7_floor: counting in the kernel, Ctrl-C to stop\n");
	while (!stop)
		pause();
	prog_time(f->progs.gt_l7_fl_send, &ns, &cnt);
	prog_time(f->progs.gt_l7_fl_recv, &ns, &cnt);
	ncpu = libbpf_num_possible_cpus();
	v = ncpu > 0 ? calloc(ncpu, sizeof(*v)) : NULL;
	while (v && !bpf_map_get_next_key(bpf_map__fd(f->maps.fl_eps), prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(bpf_map__fd(f->maps.fl_eps), &key, v))
			continue;
		eps++;
		for (i = 0; i < ncpu; i++) {
			reqs += v[i].count;
			errs += v[i].err;
		}
	}
	free(v);
	fprintf(stderr, "l7_floor: %llu requests, %llu errors, %u endpoints\n",
		(unsigned long long)reqs, (unsigned long long)errs, eps);
	fprintf(stderr, "l7_floor: l7 %.0f ns/call over %llu calls%s\n",
		cnt ? (double)ns / cnt : 0.0, (unsigned long long)cnt,
		stats_fd >= 0 ? "" : " (statistics off)");
	if (stats_fd >= 0)
		close(stats_fd);
	l7_floor__destroy(f);
	return 0;
}
