/* galatop record: the recording loop and the stack profiles' output files (folded, SVG,
 * periodic and .gtop); the options are in record_opts.c. */
#include "record.h"
#include "bpf/leak.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "l7.h"
#include "record_threads.h"
#include "record_trigger.h"
#include "bpf/drain.h"
#include "bpf/probes.h"
#include "engine/history.h"
#include "engine/l7_capture.h"
#include "engine/session.h"
#include "engine/stack_collector.h"
#include "export/folded.h"
#include "export/pprof.h"
#include "export/sli.h"
#include "export/speedscope.h"
#include "export/svg.h"
#include "model/split.h"
#include "util/clock.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* The leak graph's second title line: what its bytes are and how they were sampled. */
static char leak_subtitle[192];

static void leak_subtitle_set(const struct record_opts *o)
{
	uint64_t r = o->leak_sample ? o->leak_sample : LEAK_SAMPLE_DEFAULT;

	if (r == 1)
		snprintf(leak_subtitle, sizeof(leak_subtitle), "bytes not freed at the end, allocated "
			 "%g s or more before it; every allocation taken", o->leak_min_age);
	else
		snprintf(leak_subtitle, sizeof(leak_subtitle), "bytes not freed at the end, allocated "
			 "%g s or more before it; one allocation sampled per %llu bytes on average "
			 "(weighted)", o->leak_min_age, (unsigned long long)r);
}

/* A stack type's flame graph: its title, what its values count, its palette. */
static void svg_setup(struct svg_opts *so, enum stack_type t, const struct profile *p)
{
	svg_opts__init(so);
	so->title = stack_types[t].title;
	if (t == STACK_LEAK && leak_subtitle[0])
		so->subtitle = leak_subtitle;
	so->countname = value_kind_str(profile__kind(p));
	so->palette = (enum palette)palette_parse(stack_types[t].palette);
}

int record_write_profile(const char *path, enum stack_type t, const struct profile *p,
			 const struct pprof_meta *m)
{
	const char *ext = record_output_ext(path);
	struct typed_profile tp = { t, p };
	FILE *f = cli_open_out(path);
	int err;

	if (!f)
		return 1;
	if (ext && !strcmp(ext, ".pb.gz")) {
		err = pprof_write(f, &tp, 1, m);
	} else if (ext && !strcmp(ext, ".speedscope.json")) {
		err = speedscope_write(f, &tp, 1, stack_types[t].title);
	} else if (ext && !strcmp(ext, ".svg")) {
		struct svg_opts so;

		svg_setup(&so, t, p);
		err = svg_write(f, p, &so);
		if (err == -ENODATA)
			err = 0; /* an empty graph that says so is still the right output */
	} else {
		err = folded_write(f, p);
	}
	return cli_finish_out(f, path, err);
}

/* "out.svg" for one type; "out-oncpu.svg" when several types are recorded. */
static void output_name(char *buf, size_t cap, const char *path, enum stack_type t,
			bool several)
{
	const char *ext = record_output_ext(path);

	if (!several || !ext)
		snprintf(buf, cap, "%s", path);
	else
		snprintf(buf, cap, "%.*s-%s%s", (int)(ext - path), path, stack_type_name(t),
			 ext);
}

/* Makes "DIR/NAME" safe: the process frame text may hold '/' or spaces. */
static void file_part(char *dst, size_t cap, const char *name)
{
	size_t i = 0;

	for (; *name && i + 1 < cap; name++)
		dst[i++] = (*name == '/' || *name == ' ' || *name == '[' || *name == ']' ||
			    (unsigned char)*name < 0x20) ? '_' : *name;
	dst[i] = '\0';
}

static int write_period(struct session *s, enum stack_type t, const char *stamp,
			const struct pprof_meta *m)
{
	struct profile *p = collector__profile(s->col, t);
	struct profile_part one = { 0, p }, *parts = &one;
	const char *svg_dir = s->o->svg_dir[0] ? s->o->svg_dir : s->o->out_dir;
	const char *fold_dir = s->o->flame_dir[0] ? s->o->flame_dir : s->o->out_dir;
	char path[8192], part[128];
	size_t n = 1;
	int ret = 0;

	if (s->o->multi_instance && profile_split_by_process(p, &parts, &n)) {
		cli_error("out of memory splitting the profile per process");
		return 1;
	}
	for (size_t i = 0; i < n && !ret; i++) {
		char prefix[160];

		if (s->o->multi_instance) {
			file_part(part, sizeof(part), frames__name(profile__frames(p), parts[i].root));
			snprintf(prefix, sizeof(prefix), "%s-%s", stack_type_name(t), part);
		} else {
			snprintf(prefix, sizeof(prefix), "%s", stack_type_name(t));
		}
		if (s->o->periodic_svg) {
			snprintf(path, sizeof(path), "%s/%s-%s.svg", svg_dir, prefix, stamp);
			ret |= record_write_profile(path, t, parts[i].p, m);
		}
		if (s->o->periodic_folded) {
			snprintf(path, sizeof(path), "%s/%s-%s.folded", fold_dir, prefix, stamp);
			ret |= record_write_profile(path, t, parts[i].p, m);
		}
	}
	if (s->o->multi_instance)
		profile_parts_free(parts, n);
	return ret;
}

static bool is_gtop(const char *path)
{
	const char *ext = strrchr(path, '.');

	return ext && !strcmp(ext, ".gtop");
}

static int write_all(struct session *s, unsigned types, bool periodic, double start_unix)
{
	bool several = __builtin_popcount(types & stack_type_probes()) > 1;
	char stamp[32];
	time_t now = time(NULL);
	struct pprof_meta meta = { start_unix, clock_wall_s() - start_unix, s->o->freq };
	int ret = 0;

	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&now));
	for_each_stack_type(t) {
		struct profile *p = collector__profile(s->col, t);

		if (!(types & stack_types[t].probe))
			continue;
		if (periodic) {
			ret |= write_period(s, t, stamp, &meta);
			continue;
		}
		if (!s->o->noutputs) {
			if (several)
				printf("# %s\n", stack_type_name(t));
			if (folded_write(stdout, p) || fflush(stdout)) {
				cli_error("cannot write standard output: %s", strerror(errno));
				ret = 1;
			}
		}
		for (size_t j = 0; j < s->o->noutputs; j++) {
			char path[8192];

			if (!(record_output_family(s->o, s->o->outputs[j]) & RECORD_FAMILY_STACKS) ||
			    is_gtop(s->o->outputs[j]))
				continue;
			output_name(path, sizeof(path), s->o->outputs[j], t, several);
			ret |= record_write_profile(path, t, p, &meta);
		}
	}
	return ret;
}

int record_write_period_files(struct session *s, double start_unix)
{
	return write_all(s, s->o->types, true, start_unix);
}

/* What the loop keeps of the families beside the stacks. */
struct record_run {
	struct record_l7 l7;		   /* the L7 request trace (.jsonl) */
	struct sli_json_periods *periods; /* --period with --type sli: every period's series */
	struct record_trigger *trigger;	   /* --trigger: its per-second step, NULL without */
};

/* Once a --period: the stack profiles' files, and the SLI period closed (its .prom files
 * updated). */
static int record_period(struct session *s, struct record_run *r, double start_unix)
{
	int ret = 0;

	if (s->probes) {
		ret |= write_all(s, s->o->types, true, start_unix);
		collector__clear(s->col);
		/* A history, when kept, moves along with the collector. */
		session__renew_frames(s, s->hist ? s->hist->total : NULL,
				      s->hist ? s->hist->ring : NULL, s->hist ? STACK_TYPES : 0, NULL,
				      NULL);
	}
	if (s->sli) {
		sli_collector__close(s->sli);
		ret |= sli_json_periods__add(r->periods, sli_collector__model(s->sli)) ? 1 : 0;
		ret |= record_sli_write(s->o, sli_collector__model(s->sli), r->periods, true);
	}
	return ret;
}

/* After the last drain: every family's summary and outputs, and one snapshot of them all. */
static int record_finish(struct session *s, struct record_run *r, double secs,
			 double start_unix)
{
	int ret = 0;

	if (s->l7)
		l7_capture__flush(s->l7);
	if (s->sli) {
		sli_collector__close(s->sli);
		if (r->periods && sli_collector__model(s->sli)->dt >= 0.5)
			ret |= sli_json_periods__add(r->periods, sli_collector__model(s->sli)) ? 1 : 0;
	}
	if (s->hist && history_finish(s->hist, s, clock_mono_s())) {
		cli_error("out of memory keeping the history");
		ret = 1;
	}
	session__summary(s, secs);
	cli_say(s->msgs);
	if (s->probes)
		ret |= write_all(s, s->o->types, s->o->period > 0, start_unix);
	ret |= record_threads_write(s); /* reads the calls in progress into the timeline first */
	ret |= record_l7_finish(s, &r->l7, secs);
	if (s->sli)
		ret |= record_sli_write(s->o, sli_collector__model(s->sli), r->periods, false);
	for (size_t j = 0; !s->o->period && j < s->o->noutputs; j++)
		if (is_gtop(s->o->outputs[j]))
			ret |= record_gtop_write(s, s->o->outputs[j], start_unix, secs);
	return ret;
}

/* Opens the session of o with what its outputs need; 0, or an exit code after reporting. */
static int record_open(struct session *s, struct record_opts *o, struct msg_list *msgs,
		       struct history *hist, struct record_run *r)
{
	bool keep_history = false;
	int ret = session__open(s, o, msgs);

	cli_say(msgs);
	if (ret)
		return ret;
	/* --trigger keeps a window of its own and writes captures, not one .gtop. */
	for (size_t i = 0; !o->period && !o->trigger[0] && i < o->noutputs; i++)
		keep_history |= is_gtop(o->outputs[i]) && s->probes;
	if (keep_history &&
	    history_open(hist, s, o->history,
			 o->history ? (size_t)o->history + 2 : HISTORY_RECORD_SLICES, true)) {
		cli_error("out of memory");
		return 1;
	}
	if (keep_history)
		s->hist = hist;
	if (o->sli && o->period && !(r->periods = sli_json_periods__new())) {
		cli_error("out of memory");
		return 1;
	}
	return record_l7_start(s, &r->l7);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct session s = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct history hist = { 0 };
	struct msg_list msgs = { 0 };
	struct record_run run = { 0 };
	double start, start_unix, now, next_period, next_second;
	int ret;

	record_opts__init(&o);
	ret = record_parse_args(argc, argv, &o, "record");
	if (ret)
		return ret;
	if (!o.types && !o.sli)
		o.types = PROBE_ONCPU;
	leak_subtitle_set(&o);
	/* One signal path for every family: INT, TERM and HUP end the loop, and what was
	 * gathered is written. Taken before the probes load (seconds on a busy machine): a
	 * signal then ends the recording as soon as it starts, and is never lost to the
	 * SIG_IGN that a shell gives its background jobs' SIGINT. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	ret = record_open(&s, &o, &msgs, &hist, &run);
	if (ret) {
		if (s.o)
			session__close(&s, true);
		goto out;
	}
	session__start_command(&s);
	cli_say(&msgs);
	/* The trigger's window starts with the first reading of its metrics. */
	if (o.trigger[0] && !(run.trigger = record_trigger__open(&s))) {
		ret = 1;
		session__close(&s, true);
		goto out;
	}
	start = clock_mono_s();
	start_unix = clock_wall_s();
	next_period = start + o.period;
	next_second = start + 1;
	if (!run.trigger) {
		fprintf(stderr, "galatop: recording%s%s... Ctrl-C to stop\n",
			record_families(&o) == RECORD_FAMILY_L7	   ? " L7 requests"
			: record_families(&o) == RECORD_FAMILY_SLI ? " SLIs"
								   : "",
			o.duration ? " for the given duration" : "");
	}
	/* The one record loop for every mode: the engine polls every family's ring buffer at
	 * once; once a second the history, the SLI reading and the trigger take their step. */
	while (!stop_signal) {
		if (session__poll(&s, 100) < 0) {
			ret = 1;
			break;
		}
		now = clock_mono_s();
		if (o.duration && now - start >= o.duration)
			break;
		if (session__done(&s))
			break;
		cli_say(&msgs);
		if (now >= next_second) {
			if (s.hist && history_cut(s.hist, &s, now)) {
				cli_error("out of memory keeping the history");
				ret = 1;
				break;
			}
			session__tick(&s);
			if (run.trigger) {
				int r = record_trigger__second(run.trigger, &s, now);

				ret |= r != 0;
				if (r < 0)
					break;
			}
			next_second += 1;
			if (next_second < now)
				next_second = now + 1; /* a long stall: no burst of empty slices */
		}
		if (o.period && now >= next_period) {
			ret |= record_period(&s, &run, start_unix);
			next_period += o.period;
		}
	}
	if (run.trigger) {
		/* The captures are written as they complete; a last one in progress now. */
		ret |= record_trigger__close(run.trigger, &s);
		session__poll_report(&s);
		session__summary(&s, clock_mono_s() - start);
	} else {
		session__poll(&s, DRAIN_ALL);
		session__poll_report(&s);
		ret |= record_finish(&s, &run, clock_mono_s() - start, start_unix);
	}
	history_free(&hist); /* before the frame table its profiles use */
	session__close(&s, stop_signal != 0);
out:
	if (run.l7.f)
		fclose(run.l7.f);
	sli_json_periods__free(run.periods);
	history_free(&hist);
	cli_say(&msgs);
	msg_list__free(&msgs);
	return ret;
}
