/* The one input loader: see input.h. */
#include "input.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../model/slices.h"
#include "../util/file.h"
#include "folded.h"
#include "perfdata.h"
#include "pprof.h"

#define INPUT_MAX_BYTES (1ul << 30)

/* "12", "12.5", or a clock time "HH:MM[:SS[.frac]]" (seconds since midnight). */
static int parse_time(const char *s, size_t n, double *v, bool *clock)
{
	char buf[32], *end;
	unsigned h, m;
	double sec = 0;
	int used = 0;

	if (!n || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*clock = strchr(buf, ':') != NULL;
	if (!*clock) {
		if (!isdigit((unsigned char)buf[0]) && buf[0] != '.')
			return -EINVAL;
		*v = strtod(buf, &end);
		return *end || !isfinite(*v) ? -EINVAL : 0;
	}
	if (sscanf(buf, "%2u:%2u%n", &h, &m, &used) != 2 || h > 23 || m > 59)
		return -EINVAL;
	if (buf[used] == ':') {
		if (!isdigit((unsigned char)buf[used + 1]))
			return -EINVAL;
		sec = strtod(buf + used + 1, &end);
		if (*end || !(sec < 60))
			return -EINVAL;
	} else if (buf[used]) {
		return -EINVAL;
	}
	*v = h * 3600.0 + m * 60.0 + sec;
	return 0;
}

int input_range_parse(const char *s, struct input_range *r, char *err, size_t errlen)
{
	const char *dash = strchr(s, '-');

	memset(r, 0, sizeof(*r));
	if (!dash || parse_time(s, (size_t)(dash - s), &r->a, &r->a_clock) ||
	    parse_time(dash + 1, strlen(dash + 1), &r->b, &r->b_clock)) {
		snprintf(err, errlen, "bad range '%s' (want A-B: seconds from the start such as "
			 "10-15.5, or clock times such as 14:02:10-14:02:15)", s);
		return -EINVAL;
	}
	if (r->a_clock == r->b_clock && !(r->b > r->a) && !r->a_clock) {
		snprintf(err, errlen, "bad range '%s': the end must come after the start", s);
		return -EINVAL;
	}
	r->set = true;
	snprintf(r->text, sizeof(r->text), "%s", s);
	return 0;
}

enum input_format input_sniff(const char *buf, size_t len)
{
	size_t i = 0;
	bool first_counts = false, seen = false, indented = false;

	if (snapshot_sniff(buf, len))
		return INPUT_SNAPSHOT;
	if (perfdata_sniff(buf, len))
		return INPUT_PERFDATA;
	if (pprof_sniff(buf, len))
		return INPUT_PPROF;
	for (int lines = 0; i < len && lines < 200; lines++) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - buf) : len, e = end, d;

		while (e > i && isspace((unsigned char)buf[e - 1]))
			e--;
		if (e > i && buf[i] != '#') {
			if (isspace((unsigned char)buf[i]))
				indented = true;
			if (!seen) {
				for (d = e; d > i && (isdigit((unsigned char)buf[d - 1]) ||
						      buf[d - 1] == '.');
				     d--)
					;
				first_counts = d < e && d > i && isspace((unsigned char)buf[d - 1]);
				seen = true;
			}
		}
		i = end + 1;
	}
	return seen && !first_counts && indented ? INPUT_PERF : INPUT_FOLDED;
}

struct perf_sink {
	struct profile *p;
	bool reverse;
	uint32_t *frames;
	size_t cap;
};

static int perf_sink_add(void *ctx, const char *stack, size_t len, uint64_t count)
{
	struct perf_sink *ps = ctx;
	long n = folded_split(profile__frames(ps->p), stack, len, &ps->frames, &ps->cap);

	if (n < 0)
		return (int)n;
	for (long i = 0; ps->reverse && i < n / 2; i++) {
		uint32_t t = ps->frames[i];

		ps->frames[i] = ps->frames[n - 1 - i];
		ps->frames[n - 1 - i] = t;
	}
	return profile__add_stack(ps->p, ps->frames, (size_t)n, (double)count);
}

static int load_perf(const char *buf, size_t len, const char *label, const struct input_opts *o,
		     struct profile *p, char *errbuf, size_t errlen)
{
	static const struct perfscript_opts defaults = { .warn = NULL };
	struct perfscript_opts po = o->perf ? *o->perf : defaults;
	struct perf_sink sink = { .p = p, .reverse = o->reverse };
	struct perfscript *ps;
	int err;

	if (!o->perf)
		po.warn = stderr;
	if (perfdata_sniff(buf, len)) {
		err = perfdata_collapse(buf, len, label, NULL, &po, perf_sink_add, &sink, NULL,
					errbuf, errlen);
		free(sink.frames);
		return err == -EINVAL ? -EBADMSG : err; /* said in errbuf */
	}
	ps = perfscript__new(&po, perf_sink_add, &sink);
	err = ps ? perfscript__feed(ps, buf, len) : -ENOMEM;
	if (!err)
		err = perfscript__end_file(ps);
	if (err == -EBADMSG)
		perfscript__strerror(ps, label, errbuf, errlen);
	perfscript__free(ps);
	free(sink.frames);
	return err;
}

static int load_folded(const char *buf, size_t len, const char *label,
		       const struct input_opts *o, struct profile *p, bool mapped)
{
	struct folded_opts fo = { .strict = o->strict, .reverse = o->reverse, .mapped = mapped };

	/* A large file's tree allocated once: at most one node per 16 bytes of it in practice
	 * (a frame's name and ';', prefixes shared). Only a hint, the tree grows past it. */
	if (len >= (4u << 20))
		(void)profile__reserve(p, len / 16);
	return folded_read_profile_mem(buf, len, label, &fo, p, NULL);
}

/* Seconds from the snapshot's start of a clock time (seconds since local midnight), the day
 * being the start's (or the next one, for a time before the start's). */
static double from_clock(double start, double tod)
{
	time_t t = (time_t)floor(start);
	struct tm tm;
	double start_tod, d;

	localtime_r(&t, &tm);
	start_tod = tm.tm_hour * 3600.0 + tm.tm_min * 60.0 + tm.tm_sec + (start - floor(start));
	d = tod - start_tod;
	return d < -1 ? d + 86400 : d;
}

static const char *nonempty(const char *s)
{
	return s && *s ? s : "?";
}

int input_range_seconds(const struct input_range *r, double start, double *from, double *to)
{
	*from = r->a_clock ? from_clock(start, r->a) : r->a;
	*to = r->b_clock ? from_clock(start, r->b) : r->b;
	if (r->b_clock && r->a_clock && *to < *from)
		*to += 86400; /* across midnight */
	return *to > *from ? 0 : -EINVAL;
}

/* Checks the range against the history of every profile and, unless whole, replaces each
 * profile by the slices of its history that overlap it. */
static int apply_range(const char *label, struct input *in, const struct input_range *r,
		       bool whole, char *err, size_t errlen)
{
	struct snapshot *sn = &in->snap;
	double lo = INFINITY, hi = -INFINITY;

	if (input_range_seconds(r, sn->meta.start, &in->from, &in->to)) {
		snprintf(err, errlen, "%s: range %s: the end must come after the start", label,
			 r->text);
		return -EINVAL;
	}
	for (size_t i = 0; i < sn->nprofiles; i++) {
		const struct slices *h = sn->profiles[i].history;

		if (!h) {
			snprintf(err, errlen, "%s: no per-second history in profile %s (written by "
				 "an older galatop, or not a recording): --range needs one",
				 label, nonempty(sn->profiles[i].name));
			return -EINVAL;
		}
		if (slices__count(h)) {
			lo = fmin(lo, slices__start(h));
			hi = fmax(hi, slices__end(h));
		}
	}
	if (!sn->nprofiles) {
		snprintf(err, errlen, "%s: no profiles to take range %s of", label, r->text);
		return -EINVAL;
	}
	if (!(lo < hi) || in->from >= hi || in->to <= lo) {
		if (lo < hi)
			snprintf(err, errlen, "%s: range %s (%.2f-%.2f s) is outside the recording "
				 "(%.2f-%.2f s from its start)", label, r->text, in->from, in->to,
				 lo, hi);
		else
			snprintf(err, errlen, "%s: range %s: the history is empty", label, r->text);
		return -EINVAL;
	}
	for (size_t i = 0; !whole && i < sn->nprofiles; i++) {
		struct profile *p = sn->profiles[i].p;
		struct profile *q = profile__new(profile__frames(p), profile__kind(p), false);

		if (!q || slices__fold_overlap(sn->profiles[i].history, in->from, in->to, q)) {
			profile__free(q);
			snprintf(err, errlen, "%s: %s", label, strerror(ENOMEM));
			return -ENOMEM;
		}
		profile__free(p);
		sn->profiles[i].p = q;
	}
	return 0;
}

/* input_load_mem, of a buffer that is a private mapping of a file when mapped (a folded
 * file's pages are then given back as they are parsed). */
static int load_buf(const char *buf, size_t len, const char *label, struct frames *ft,
		    const struct input_opts *o, struct input *in, char *err, size_t errlen,
		    bool mapped)
{
	static const struct input_opts none = { 0 };
	int ret;

	if (!o)
		o = &none;
	memset(in, 0, sizeof(*in));
	err[0] = '\0';
	in->format = o->format ? o->format : input_sniff(buf, len);
	if (in->format == INPUT_SNAPSHOT) {
		ret = snapshot_read_mem(buf, len, label, ft, &in->snap, err, errlen);
		if (!ret && o->range.set)
			ret = apply_range(label, in, &o->range, o->range_whole, err, errlen);
		if (ret)
			input_release(in);
		return ret;
	}
	if (o->range.set) {
		snprintf(err, errlen, "%s: --range needs a .gtop snapshot with per-second history, "
			 "not %s", label, in->format == INPUT_PERF ? "perf script output"
					  : in->format == INPUT_PERFDATA ? "a perf.data file"
					  : in->format == INPUT_PPROF	 ? "a pprof profile"
									 : "folded stacks");
		return -EINVAL;
	}
	if (in->format == INPUT_PPROF)
		return pprof_read_mem(buf, len, label, o->sample_type, ft, &in->own, err, errlen);
	in->own = profile__new(ft, VALUE_SAMPLES, o->chart);
	if (!in->own) {
		snprintf(err, errlen, "%s: %s", label, strerror(ENOMEM));
		return -ENOMEM;
	}
	ret = in->format == INPUT_FOLDED ? load_folded(buf, len, label, o, in->own, mapped)
					 : load_perf(buf, len, label, o, in->own, err, errlen);
	if (ret == -EINVAL && in->format == INPUT_FOLDED) {
		err[0] = '\0'; /* folded_parse said which line, or that most were invalid */
	} else if (ret == -EBADMSG) {
		ret = -EINVAL; /* load_perf said what was wrong with the file */
	} else if (ret) {
		snprintf(err, errlen, "%s: %s", label, strerror(ret < 0 ? -ret : EINVAL));
		ret = ret == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	if (ret)
		input_release(in);
	return ret;
}

int input_load_mem(const char *buf, size_t len, const char *label, struct frames *ft,
		   const struct input_opts *o, struct input *in, char *err, size_t errlen)
{
	return load_buf(buf, len, label, ft, o, in, err, errlen, false);
}

int input_read(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	bool std_in = !strcmp(path, "-");
	int ret = std_in ? file_read_fd(STDIN_FILENO, INPUT_MAX_BYTES, buf, len)
			 : file_read(path, INPUT_MAX_BYTES, 0, buf, len);

	if (ret) {
		bool open = ret == -ENOENT || ret == -EACCES || ret == -EPERM || ret == -ENOTDIR;

		snprintf(err, errlen, "cannot %s %s: %s", open ? "open" : "read",
			 std_in ? "standard input" : path, file_strerror(ret, INPUT_MAX_BYTES));
		return ret == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	return 0;
}

/* A regular file of 64 KiB to 1 GiB mapped read-only (parsed in place: no copy of a large
 * profile); NULL when it is anything else or cannot be mapped (then it is read). */
static void *map_file(const char *path, size_t *len)
{
	struct stat st;
	void *p;
	int fd;

	if (!strcmp(path, "-"))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	p = !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size >= (1 << 16) &&
		    (uint64_t)st.st_size <= INPUT_MAX_BYTES
		    ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0)
		    : MAP_FAILED;
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	*len = (size_t)st.st_size;
	return p;
}

int input_load(const char *path, struct frames *ft, const struct input_opts *o,
	       struct input *in, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	void *map = map_file(path, &len);
	int ret;

	memset(in, 0, sizeof(*in));
	if (map) {
		ret = load_buf(map, len, path, ft, o, in, err, errlen, true);
		munmap(map, len);
		return ret;
	}
	ret = input_read(path, &buf, &len, err, errlen);
	if (ret)
		return ret;
	ret = input_load_mem(buf, len, strcmp(path, "-") ? path : "standard input", ft, o, in,
			     err, errlen);
	free(buf);
	return ret;
}

struct profile *input_profile(const struct input *in, const char *type)
{
	if (in->own)
		return in->own;
	for (size_t i = 0; i < in->snap.nprofiles; i++)
		if (!type || !strcmp(in->snap.profiles[i].type, type))
			return in->snap.profiles[i].p;
	return NULL;
}

void input_release(struct input *in)
{
	profile__free(in->own);
	snapshot_release(&in->snap);
	memset(in, 0, sizeof(*in));
}
