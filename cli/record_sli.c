/* galatop record --type sli: the SLI probes over the session's targets, read every second,
 * closed every --period (or once at the end), written as JSON, Prometheus text or a snapshot. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "record.h"
#include "session.h"
#include "export/sli.h"
#include "export/snapshot.h"
#include "util/clock.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static const char *const formats[] = { ".json", ".prom", ".gtop" };

bool record_sli_format(const char *ext)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(ext, formats[i]))
			return true;
	return false;
}

int record_sli_check(const struct record_opts *o, const char *cmd)
{
	bool live = strcmp(cmd, "record") != 0;

	for (size_t i = 0; i < o->noutputs; i++) {
		const char *ext = record_output_ext(o->outputs[i]);
		bool sli_fmt = ext && record_sli_format(ext);

		if (!o->sli && ext && !strcmp(ext, ".gtop"))
			continue; /* the stack profiles' snapshot */
		if (sli_fmt != o->sli)
			return cli_usage_error(cmd, "-o %s: %s", o->outputs[i],
					       o->sli ? "--type sli writes .json, .prom or .gtop"
						      : "this format needs --type sli");
	}
	if (o->sli && o->types && !live)
		return cli_usage_error(cmd, "--type sli records alone: record stacks (oncpu, "
					    "offcpu, mem) in another run");
	if (!o->sli && (o->longsys_ns || o->cgroup[0]) && !live)
		return cli_usage_error(cmd, "--longsys and --cgroup go with --type sli");
	if (o->sli && o->multi_instance)
		return cli_usage_error(cmd, "--multi-instance is for flame graphs, not --type sli");
	return 0;
}

static int write_gtop(const char *path, struct sli *sli)
{
	struct snapshot_build b;
	char err[512];

	snapshot_build_init(&b, true, "galatop record --type sli", sli->start,
			    sli->end > sli->start ? sli->end : sli->start);
	snapshot_build_probe(&b, "sli", NULL, 0);
	b.sn.sli = sli;
	if (snapshot_write(path, &b.sn, err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	return 0;
}

/* Writes every output (JSON on standard output when none was named). With atomic, files are
 * written under a temporary name and renamed (periodic .prom updates). */
static int write_outputs(const struct record_opts *o, struct sli *sli,
			 const struct sli_json_periods *periods, const char *host, bool prom_only)
{
	int ret = 0;

	if (!o->noutputs && !prom_only) {
		if (sli_json_write(stdout, sli, host, periods)) {
			cli_error("cannot write standard output: %s", strerror(errno));
			return 1;
		}
		return 0;
	}
	for (size_t i = 0; i < o->noutputs; i++) {
		const char *path = o->outputs[i], *ext = strrchr(path, '.');
		char tmp[8192];
		FILE *f;
		int r;

		if (!strcmp(ext, ".gtop")) {
			if (!prom_only)
				ret |= write_gtop(path, sli);
			continue;
		}
		if (prom_only && strcmp(ext, ".prom"))
			continue;
		/* Prometheus' textfile collectors must never see a half-written file. */
		snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
		f = cli_open_out(strcmp(path, "-") ? tmp : path);
		if (!f) {
			ret = 1;
			continue;
		}
		r = !strcmp(ext, ".prom") ? sli_prom_write(f, sli)
					  : sli_json_write(f, sli, host, periods);
		if (r) {
			cli_error("cannot write %s: %s", path, strerror(-r));
			fclose(f);
			unlink(tmp);
			ret = 1;
			continue;
		}
		if (cli_close_out(f, tmp) || rename(tmp, path)) {
			cli_error("cannot write %s: %s", path, strerror(errno));
			unlink(tmp);
			ret = 1;
		}
	}
	return ret;
}

int record_sli_run(struct record_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sli_json_periods *periods = NULL;
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	double start, next_read, next_period;
	struct session s;
	char host[256] = "";
	uint64_t events, drops;
	int ret;

	o->types = 0; /* no stacks: only the SLI probes */
	ret = session__open(&s, o);
	if (ret)
		return ret;
	if (o->period && !(periods = sli_json_periods__new())) {
		cli_error("out of memory");
		session__close(&s, true);
		return 1;
	}
	gethostname(host, sizeof(host) - 1);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	session__start_command(&s);
	start = clock_mono_s();
	next_read = start + 1;
	next_period = start + o->period;
	fprintf(stderr, "galatop: recording SLIs%s... Ctrl-C to stop\n",
		o->duration ? " for the given duration" : "");
	while (!stop_signal) {
		double now;

		nanosleep(&tick, NULL);
		now = clock_mono_s();
		if (o->duration && now - start >= o->duration)
			break;
		if (session__done(&s))
			break;
		if (now >= next_read) {
			sli_collector__read(s.sli);
			session__tick(&s);
			next_read += 1;
		}
		if (o->period && now >= next_period) {
			sli_collector__close(s.sli);
			ret |= sli_json_periods__add(periods, sli_collector__model(s.sli)) ? 1 : 0;
			ret |= write_outputs(o, sli_collector__model(s.sli), periods, host, true);
			next_period += o->period;
		}
	}
	sli_collector__close(s.sli);
	if (periods && sli_collector__model(s.sli)->dt >= 0.5)
		ret |= sli_json_periods__add(periods, sli_collector__model(s.sli)) ? 1 : 0;
	sli_collector__counts(s.sli, &events, &drops);
	fprintf(stderr, "galatop: recorded %llu delays in %.1f s; %llu lost (maps full)\n",
		(unsigned long long)events, clock_mono_s() - start, (unsigned long long)drops);
	ret |= write_outputs(o, sli_collector__model(s.sli), periods, host, false);
	sli_json_periods__free(periods);
	session__close(&s, stop_signal != 0);
	return ret;
}
