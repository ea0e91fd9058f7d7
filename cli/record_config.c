/* gala-gopher flamegraph (stackprobe) and sli (sliprobe) requests -> struct record_opts: the REST body's cmd,
 * snoopers, params and state keys, checked against gala-gopher's own ranges. Every accepted key
 * is in one of the tables below; docs/config.md explains each mapping. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "bpf/probes.h"
#include "bpf/threads.h"
#include "cli/record.h"
#include "model/l7/proto.h"
#include "model/sanitize.h"
#include "util/file.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define CONFIG_MAX_BYTES (1 << 20)    /* a request is a few hundred bytes; refuse anything huge */
#define CONFIG_PID_MAX 4194304	      /* the kernel's PID_MAX_LIMIT on 64-bit */
#define CONFIG_LABELS_MAX 10	      /* gala-gopher's CUSTOM_LABELS_MAX_NUM, POD_LABELS_MAX_NUM */
#define CONFIG_SVG_PERIOD_DEFAULT 180 /* gala-gopher's svg_period when given as 0 */
#define PATH_LEN 192		      /* key paths in messages */
#define SHOW_LEN 40		      /* untrusted text quoted in messages */

/* Characters special in a POSIX extended regular expression, and the same but '.'. */
#define ERE_PATTERN_CHARS "[]()*+?{}|^$\\"
static const char ere_special[] = "." ERE_PATTERN_CHARS;

#define TARGET_NAME_LEN sizeof(((struct record_opts *)0)->pods[0])

struct cfg {
	struct record_opts *o; /* working copy, committed only when the whole request is valid */
	bool sli;	       /* a gala-gopher sli request (PUT /sli), not a flamegraph one */
	bool tprof;	       /* a gala-gopher tprofiling request (PUT /tprofiling) */
	bool l7;	       /* a gala-gopher l7 request (PUT /l7: its probe names only) */
	int *state;	       /* the agent's requests: "running" 1, "stopped" 0 here; NULL:
				* record's, which must run */
	const char *name;
	char *err;
	size_t errlen;
};

struct key;
typedef int (*key_fn)(struct cfg *c, json_t *v, const char *path, const struct key *k);

/* One accepted key of an object: its handler and what the handler allows. */
struct key {
	const char *name;
	key_fn fn;
	long long min, max;	  /* integer keys */
	const char *const *words; /* word-list keys, NULL-terminated */
	const struct key *sub;	  /* object keys: the keys of the nested object */
	size_t nsub;
};

static void put_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Copies untrusted text s into buf for a one-line message: control and non-ASCII bytes become
 * '?', text longer than SHOW_LEN ends in "...". Returns buf. */
static const char *show(const char *s, char *buf, size_t cap)
{
	size_t i, n = 0;

	for (i = 0; s[i] && n + 4 < cap; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (i == SHOW_LEN) {
			memcpy(buf + n, "...", 3);
			n += 3;
			break;
		}
		buf[n++] = ch < 0x20 || ch >= 0x7f ? '?' : (char)ch;
	}
	buf[n] = '\0';
	return buf;
}

static int fail(struct cfg *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reports "NAME: PATH: MESSAGE" (or "NAME: MESSAGE" at the top level); returns -EINVAL. */
static int fail(struct cfg *c, const char *path, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (path[0])
		put_err(c->err, c->errlen, "%s: %s: %s", c->name, path, msg);
	else
		put_err(c->err, c->errlen, "%s: %s", c->name, msg);
	return -EINVAL;
}

static const char *type_word(json_type t)
{
	switch (t) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
		return "true";
	case JSON_FALSE:
		return "false";
	default:
		return "null";
	}
}

static int expect(struct cfg *c, const json_t *v, json_type t, const char *path)
{
	if (json_typeof(v) == t)
		return 0;
	return fail(c, path, "expected %s, got %s", type_word(t), type_word(json_typeof(v)));
}

/* Writes PATH.KEY into buf[PATH_LEN], cutting a (never seen) overlong PATH, not KEY. */
static void key_path(char *buf, const char *path, const char *key)
{
	char shown[SHOW_LEN + 8];

	show(key, shown, sizeof(shown));
	snprintf(buf, PATH_LEN, "%.*s%s%s", (int)(PATH_LEN - sizeof(shown) - 2), path,
		 path[0] ? "." : "", shown);
}

/* Writes PATH[I] into buf[PATH_LEN], like key_path. */
static void index_path(char *buf, const char *path, size_t i)
{
	snprintf(buf, PATH_LEN, "%.*s[%zu]", PATH_LEN - 24, path, i);
}

static int get_int(struct cfg *c, const json_t *v, const char *path, long long min, long long max,
		   long long *out)
{
	int ret = expect(c, v, JSON_INTEGER, path);

	if (ret)
		return ret;
	*out = json_integer_value(v);
	if (*out < min || *out > max)
		return fail(c, path, "%lld is out of range %lld..%lld", *out, min, max);
	return 0;
}

/* The same for gala-gopher's periods, where 0 asks for the default. */
static int get_period(struct cfg *c, const json_t *v, const char *path, const struct key *k,
		      long long *out)
{
	if (json_is_integer(v) && json_integer_value(v) == 0) {
		*out = 0;
		return 0;
	}
	return get_int(c, v, path, k->min, k->max, out);
}

/* Checks that v is a string of at most max bytes without control characters; *s is v's text. */
static int get_string(struct cfg *c, const json_t *v, const char *path, size_t max, const char **s)
{
	size_t i, len;
	int ret = expect(c, v, JSON_STRING, path);

	if (ret)
		return ret;
	*s = json_string_value(v);
	len = json_string_length(v);
	if (len > max)
		return fail(c, path, "%zu bytes, longer than the %zu allowed", len, max);
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)(*s)[i];

		if (ch < 0x20 || ch == 0x7f)
			return fail(c, path, "contains a control character");
	}
	return 0;
}

/* Copies string v into dst[cap], refusing (not truncating) what does not fit. */
static int copy_string(struct cfg *c, const json_t *v, const char *path, char *dst, size_t cap)
{
	const char *s;
	int ret = get_string(c, v, path, cap - 1, &s);

	if (!ret)
		snprintf(dst, cap, "%s", s);
	return ret;
}

static int walk(struct cfg *c, json_t *obj, const char *path, const struct key *keys, size_t n)
{
	char sub[PATH_LEN];
	const char *name;
	json_t *v;
	size_t i;
	int ret = expect(c, obj, JSON_OBJECT, path);

	if (ret)
		return ret;
	json_object_foreach(obj, name, v) {
		key_path(sub, path, name);
		for (i = 0; i < n && strcmp(keys[i].name, name); i++)
			;
		if (i == n)
			return fail(c, sub, "unknown key");
		ret = keys[i].fn(c, v, sub, &keys[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int parse_object(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	return walk(c, v, path, k->sub, k->nsub);
}

static int ignore_int(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	long long x;

	return get_int(c, v, path, k->min, k->max, &x);
}

static int ignore_string(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	const char *s;

	return get_string(c, v, path, (size_t)-1, &s);
}

/* An array of words from k->words, compared without case as gala-gopher does. */
static int ignore_words(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	char sub[PATH_LEN], shown[SHOW_LEN + 8], list[128] = "";
	const char *s;
	size_t i, w;
	json_t *e;
	int ret = expect(c, v, JSON_ARRAY, path);

	if (ret)
		return ret;
	json_array_foreach(v, i, e) {
		index_path(sub, path, i);
		ret = get_string(c, e, sub, (size_t)-1, &s);
		if (ret)
			return ret;
		for (w = 0; k->words[w] && strcasecmp(k->words[w], s); w++)
			;
		if (k->words[w])
			continue;
		for (w = 0; k->words[w]; w++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 w ? ", " : "", k->words[w]);
		return fail(c, sub, "\"%s\" is not one of %s", show(s, shown, sizeof(shown)), list);
	}
	return 0;
}

static int other_probe(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	return fail(c, path, "a parameter of other gala-gopher probes, not of flamegraph");
}

/* cmd.* */

static int parse_check_cmd(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	const char *s;
	int ret = get_string(c, v, path, (size_t)-1, &s);

	if (!ret && s[0])
		return fail(c, path, "galatop runs no check command; leave it empty");
	return ret;
}

/* A gala-gopher probe name and the galatop bits it selects. */
struct probe_word {
	const char *name;
	unsigned bits;
};

/* The probe names one kind of gala-gopher request takes. An entry with no bits is a probe
 * galatop lacks (an error naming what it has), unless zero_ok: then it is a name galatop
 * accepts and always honours (sliprobe's reporting levels). */
struct probe_words {
	const char *kind;  /* "" or "sli " ..., as the messages say it */
	const char *known; /* the names listed when one is unknown */
	const char *has;   /* what galatop has, when a known name is one it lacks */
	bool zero_ok;
	size_t n;
	const struct probe_word *w;
};

/* The bits of the names in the array v at path, or an error naming the first bad one. */
static int map_probe_words(struct cfg *c, json_t *v, const char *path,
			   const struct probe_words *pw, unsigned *bits)
{
	char sub[PATH_LEN], shown[SHOW_LEN + 8];
	const char *s;
	size_t i, p;
	json_t *e;
	int ret;

	*bits = 0;
	json_array_foreach(v, i, e) {
		index_path(sub, path, i);
		ret = get_string(c, e, sub, (size_t)-1, &s);
		if (ret)
			return ret;
		for (p = 0; p < pw->n && strcasecmp(pw->w[p].name, s); p++)
			;
		show(s, shown, sizeof(shown));
		if (p == pw->n)
			return fail(c, sub, "unknown %sprobe \"%s\" (%s)", pw->kind, shown, pw->known);
		if (!pw->w[p].bits && !pw->zero_ok)
			return fail(c, sub, "galatop has no \"%s\" %sprobe (it has %s)", shown, pw->kind,
				    pw->has);
		*bits |= pw->w[p].bits;
	}
	return 0;
}

/* gala-gopher's sliprobe ranges: cpu, mem, io pick the SLI families; node and container are
 * the levels it reports, which galatop always shows (the host row and the group rows). */
static const struct probe_word sli_words[] = {
	{ "cpu", RECORD_SLI_CPU }, { "mem", RECORD_SLI_MEM }, { "io", RECORD_SLI_IO },
	{ "node", 0 },		   { "container", 0 },
};
static const struct probe_words sli_probes = {
	"sli ", "cpu, mem, io, node, container", NULL, true, ARRAY_SIZE(sli_words), sli_words,
};

/* Whether a request is an sli one: --type sli came first, or cmd.probe names a range only
 * the sli probe has ("mem" and "io" are flamegraph ranges too). */
static bool is_sli_request(const struct record_opts *o, json_t *root)
{
	json_t *probe = json_object_get(json_object_get(root, "cmd"), "probe"), *e;
	size_t i;

	if (o->sli)
		return true;
	json_array_foreach(probe, i, e) {
		const char *s = json_string_value(e);

		if (s && (!strcasecmp(s, "cpu") || !strcasecmp(s, "node") ||
			  !strcasecmp(s, "container")))
			return true;
	}
	return false;
}

/* gala-gopher's tprofiling probes: the thread timeline's classes (TL_PROBE_*). */
static const struct probe_word tprof_words[] = {
	{ "oncpu", TL_PROBE_ONCPU },	    { "syscall_file", TL_PROBE_FILE },
	{ "syscall_net", TL_PROBE_NET },    { "syscall_lock", TL_PROBE_LOCK },
	{ "syscall_sched", TL_PROBE_SCHED }, { "python_gc", 0 },
	{ "pthrd_sync", 0 },		    { "mem_glibc", 0 },
	{ "mem_pymem", 0 },		    { "offcpu", 0 },
};
static const struct probe_words tprof_probes = {
	"tprofiling ", "oncpu, syscall_file, syscall_net, syscall_lock, syscall_sched",
	"oncpu, syscall_file, syscall_net, syscall_lock, syscall_sched", false,
	ARRAY_SIZE(tprof_words), tprof_words,
};

/* gala-gopher's flamegraph probes; its l7 probe's metrics and per-request traces come from
 * one capture. */
static const struct probe_word flame_words[] = {
	{ "oncpu", PROBE_ONCPU },
	{ "offcpu", PROBE_OFFCPU },
	{ "mem", PROBE_MEM },
	{ "io", 0 },
	{ "l7_bytes_metrics", RECORD_TYPE_L7 },
	{ "l7_rpc_metrics", RECORD_TYPE_L7 },
	{ "l7_rpc_trace", RECORD_TYPE_L7 },
};
/* gala-gopher's l7 probe (PUT /l7). */
static const struct probe_word l7_words[] = {
	{ "l7_bytes_metrics", RECORD_TYPE_L7 },
	{ "l7_rpc_metrics", RECORD_TYPE_L7 },
	{ "l7_rpc_trace", RECORD_TYPE_L7 },
};
static const struct probe_words l7_probes = {
	"l7 ", "l7_bytes_metrics, l7_rpc_metrics, l7_rpc_trace", NULL, false,
	ARRAY_SIZE(l7_words), l7_words,
};

static const struct probe_words flame_probes = {
	"", "galatop has oncpu, offcpu, mem, l7_bytes_metrics, l7_rpc_metrics, l7_rpc_trace",
	"oncpu, offcpu, mem", false, ARRAY_SIZE(flame_words), flame_words,
};

/* Whether a request is a tprofiling one: --type threads came first, or cmd.probe names a
 * syscall_* probe (only tprofiling has those). */
static bool is_tprof_request(const struct record_opts *o, json_t *root)
{
	json_t *probe = json_object_get(json_object_get(root, "cmd"), "probe"), *e;
	size_t i;

	if (o->types & PROBE_THREADS)
		return true;
	json_array_foreach(probe, i, e) {
		const char *s = json_string_value(e);

		if (s && !strncasecmp(s, "syscall_", 8))
			return true;
	}
	return false;
}

/* params.min_exec_dur (microseconds) and params.min_aggr_dur (milliseconds) of tprofiling. */
static int parse_tprof_dur(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	long long x;
	int ret;

	if (!c->tprof)
		return fail(c, path, "a tprofiling parameter: name syscall_* probes in cmd.probe "
			    "(or use --type threads)");
	ret = get_int(c, v, path, k->min, k->max, &x);
	if (!ret && !strcmp(k->name, "min_exec_dur"))
		c->o->min_dur_us = (uint64_t)x;
	else if (!ret)
		c->o->min_aggr_ms = (uint64_t)x;
	return ret;
}

static int parse_probes(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	unsigned bits;
	int ret = expect(c, v, JSON_ARRAY, path);

	if (ret)
		return ret;
	if (c->sli) {
		ret = map_probe_words(c, v, path, &sli_probes, &bits);
		if (!ret)
			c->o->sli_families = bits;
		return ret;
	}
	if (c->tprof) {
		ret = map_probe_words(c, v, path, &tprof_probes, &bits);
		if (!ret) {
			c->o->types = PROBE_THREADS;
			c->o->tl_classes = bits;
		}
		return ret;
	}
	ret = map_probe_words(c, v, path, c->l7 ? &l7_probes : &flame_probes, &bits);
	if (!ret && bits)
		c->o->types = bits;
	return ret;
}

/* snoopers.* */

static int parse_pids(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	struct record_opts *o = c->o;
	char sub[PATH_LEN];
	long long pid;
	size_t i;
	json_t *e;
	int ret = expect(c, v, JSON_ARRAY, path);

	if (ret)
		return ret;
	if (json_array_size(v) > RECORD_MAX_TARGETS - o->npids)
		return fail(c, path, "more than %d targets", RECORD_MAX_TARGETS);
	json_array_foreach(v, i, e) {
		index_path(sub, path, i);
		ret = get_int(c, e, sub, 1, CONFIG_PID_MAX, &pid);
		if (ret)
			return ret;
		o->pids[o->npids++] = (int)pid;
	}
	return 0;
}

/* Appends the non-empty strings of array v to names[*n] (gala-gopher skips empty ones too). */
static int parse_names(struct cfg *c, json_t *v, const char *path, char (*names)[TARGET_NAME_LEN],
		       size_t *n)
{
	char sub[PATH_LEN], id[TARGET_NAME_LEN];
	size_t i;
	json_t *e;
	int ret = expect(c, v, JSON_ARRAY, path);

	if (ret)
		return ret;
	json_array_foreach(v, i, e) {
		index_path(sub, path, i);
		ret = copy_string(c, e, sub, id, sizeof(id));
		if (ret)
			return ret;
		if (!id[0])
			continue;
		if (*n == RECORD_MAX_TARGETS)
			return fail(c, path, "more than %d targets", RECORD_MAX_TARGETS);
		memcpy(names[(*n)++], id, sizeof(id));
	}
	return 0;
}

static int parse_pods(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	return parse_names(c, v, path, c->o->pods, &c->o->npods);
}

static int parse_containers(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	return parse_names(c, v, path, c->o->containers, &c->o->ncontainers);
}

/* gala-gopher matches comm as an unanchored regular expression; galatop matches it exactly, so
 * only plain names (a '.' taken literally) carry over. */
static int parse_comm(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	char comm[sizeof(c->o->comm)];
	int ret = copy_string(c, v, path, comm, sizeof(comm));

	if (ret)
		return ret;
	if (!comm[0])
		return fail(c, path, "must not be empty");
	if (strpbrk(comm, ERE_PATTERN_CHARS))
		return fail(c, path, "a pattern; galatop matches one exact process name");
	memcpy(c->o->comm, comm, sizeof(comm));
	return 0;
}

/* gala-gopher looks for cmdline as a plain substring; --cmdline is a regular expression, so the
 * special characters are escaped. */
static int parse_cmdline(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	char *dst = c->o->cmdline;
	size_t i, n = 0, cap = sizeof(c->o->cmdline);
	const char *s;
	int ret = get_string(c, v, path, cap - 1, &s);

	if (ret || !s[0])
		return ret;
	for (i = 0; s[i]; i++)
		n += strchr(ere_special, s[i]) ? 2 : 1;
	if (n >= cap)
		return fail(c, path, "%zu bytes once escaped as a regular expression, longer "
			    "than the %zu allowed", n, cap - 1);
	for (i = 0; s[i]; i++) {
		if (strchr(ere_special, s[i]))
			*dst++ = '\\';
		*dst++ = s[i];
	}
	*dst = '\0';
	return 0;
}

static const struct key proc_name_keys[] = {
	{ .name = "comm", .fn = parse_comm },
	{ .name = "cmdline", .fn = parse_cmdline },
	{ .name = "debugging_dir", .fn = ignore_string },
};

static int parse_proc_names(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	char sub[PATH_LEN], comm_path[PATH_LEN];
	json_t *e;
	int ret = expect(c, v, JSON_ARRAY, path);

	if (ret || json_array_size(v) == 0)
		return ret;
	if (json_array_size(v) > 1)
		return fail(c, path, "galatop follows one process name, %zu given",
			    json_array_size(v));
	e = json_array_get(v, 0);
	index_path(sub, path, 0);
	ret = walk(c, e, sub, proc_name_keys, ARRAY_SIZE(proc_name_keys));
	if (ret)
		return ret;
	key_path(comm_path, sub, "comm");
	if (!json_object_get(e, "comm"))
		return fail(c, comm_path, "missing");
	return 0;
}

/* At most CONFIG_LABELS_MAX strings in v: an object's values or an array's items (type). */
static int ignore_labels(struct cfg *c, json_t *v, const char *path, json_type type)
{
	char sub[PATH_LEN];
	const char *name, *s;
	size_t i;
	json_t *e;
	int ret = expect(c, v, type, path);

	if (ret)
		return ret;
	if ((type == JSON_OBJECT ? json_object_size(v) : json_array_size(v)) > CONFIG_LABELS_MAX)
		return fail(c, path, "more than %d labels", CONFIG_LABELS_MAX);
	if (type == JSON_OBJECT) {
		json_object_foreach(v, name, e) {
			key_path(sub, path, name);
			if ((ret = get_string(c, e, sub, (size_t)-1, &s)))
				return ret;
		}
	} else {
		json_array_foreach(v, i, e) {
			index_path(sub, path, i);
			if ((ret = get_string(c, e, sub, (size_t)-1, &s)))
				return ret;
		}
	}
	return 0;
}

static int ignore_custom_labels(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	return ignore_labels(c, v, path, JSON_OBJECT);
}

static int ignore_pod_labels(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	return ignore_labels(c, v, path, JSON_ARRAY);
}

/* params.* */

static int parse_l7_protocols(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	char sub[PATH_LEN], shown[SHOW_LEN + 8], names[256];
	unsigned mask = 0;
	const char *s;
	size_t i;
	json_t *e;
	int ret = expect(c, v, JSON_ARRAY, path);

	if (ret)
		return ret;
	json_array_foreach(v, i, e) {
		int p;

		index_path(sub, path, i);
		ret = get_string(c, e, sub, (size_t)-1, &s);
		if (ret)
			return ret;
		p = l7_proto_parse(s);
		show(s, shown, sizeof(shown));
		if (p > 0) {
			mask |= 1u << p;
			continue;
		}
		l7_proto_names(names, sizeof(names));
		if (l7_proto_planned(s))
			return fail(c, sub, "galatop does not parse \"%s\" yet (it has %s)", shown,
				    names);
		return fail(c, sub, "unknown protocol \"%s\" (%s)", shown, names);
	}
	c->o->l7_protocols = mask;
	return 0;
}

static int parse_support_ssl(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	long long x;
	int ret = get_int(c, v, path, k->min, k->max, &x);

	if (!ret)
		c->o->no_tls = !x;
	return ret;
}

/* A flamegraph parameter given to the sli probe: an error naming it; 0 otherwise. */
static int flame_only(struct cfg *c, const char *path)
{
	return c->sli ? fail(c, path, "a flamegraph parameter: the sli probe takes report_period")
		      : 0;
}

static int parse_sample_period(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	long long ms;
	int ret = flame_only(c, path);

	if (!ret)
		ret = get_period(c, v, path, k, &ms);

	if (!ret && ms)
		c->o->freq = (unsigned)((1000 + ms / 2) / ms);
	return ret;
}

static int parse_svg_period(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	long long s;
	int ret = flame_only(c, path);

	if (!ret)
		ret = get_period(c, v, path, k, &s);

	if (!ret)
		c->o->period = s ? (double)s : CONFIG_SVG_PERIOD_DEFAULT;
	return ret;
}

/* An integer flamegraph parameter within the key's bounds (the sli probe has none). */
static int get_flame_int(struct cfg *c, json_t *v, const char *path, const struct key *k,
			 long long *x)
{
	int ret = flame_only(c, path);

	return ret ? ret : get_int(c, v, path, k->min, k->max, x);
}

static int parse_multi_instance(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	long long x;
	int ret = get_flame_int(c, v, path, k, &x);

	if (!ret)
		c->o->multi_instance = x;
	return ret;
}

/* gala-gopher's switch for the native frames of Java stacks: 0 hides libjvm's frames between
 * Java frames (--no-java-native), 1 shows them (--java-native). */
static int parse_native_stack(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	long long x;
	int ret = get_flame_int(c, v, path, k, &x);

	if (!ret)
		c->o->no_java_native = !x;
	return ret;
}

static int parse_svg_dir(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	int ret = flame_only(c, path);

	return ret ? ret : copy_string(c, v, path, c->o->svg_dir, sizeof(c->o->svg_dir));
}

static int parse_flame_dir(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	int ret = flame_only(c, path);

	return ret ? ret : copy_string(c, v, path, c->o->flame_dir, sizeof(c->o->flame_dir));
}

/* flamegraph: the agent posts each period's profiles to this Pyroscope (record ignores it). */
static int parse_pyroscope_server(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	int ret = flame_only(c, path);

	return ret ? ret
		   : copy_string(c, v, path, c->o->pyroscope_server,
				 sizeof(c->o->pyroscope_server));
}

/* sli: every report_period seconds an interval closes (and .prom files are rewritten);
 * flamegraph requests check it and ignore it. */
static int parse_report_period(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	long long s;
	int ret = get_int(c, v, path, k->min, k->max, &s);

	if (!ret && c->sli)
		c->o->period = (double)s;
	return ret;
}

/* top level */

static int parse_state(struct cfg *c, json_t *v, const char *path, const struct key *k)
{
	char shown[SHOW_LEN + 8];
	const char *s;
	int ret = get_string(c, v, path, (size_t)-1, &s);

	if (!ret && c->state && !strcasecmp(s, "running"))
		*c->state = 1;
	if (ret || !strcasecmp(s, "running"))
		return ret;
	/* "stoped" is how gala-gopher's parser spells it. */
	if (c->state && (!strcasecmp(s, "stopped") || !strcasecmp(s, "stoped"))) {
		*c->state = 0;
		return 0;
	}
	if (!strcasecmp(s, "stopped") || !strcasecmp(s, "stoped"))
		return fail(c, path, "\"%s\" stops a gala-gopher probe; galatop record needs "
			    "\"running\"", show(s, shown, sizeof(shown)));
	return fail(c, path, "\"%s\" is neither running nor stopped",
		    show(s, shown, sizeof(shown)));
}

static const struct key cmd_keys[] = {
	{ .name = "bin", .fn = ignore_string },
	{ .name = "check_cmd", .fn = parse_check_cmd },
	{ .name = "probe", .fn = parse_probes },
};

static const struct key snooper_keys[] = {
	{ .name = "proc_id", .fn = parse_pids },
	{ .name = "proc_name", .fn = parse_proc_names },
	{ .name = "pod_id", .fn = parse_pods },
	{ .name = "container_id", .fn = parse_containers },
	{ .name = "custom_labels", .fn = ignore_custom_labels },
	{ .name = "pod_labels", .fn = ignore_pod_labels },
};

static const char *const metrics_words[] = { "raw", "telemetry", NULL };
static const char *const env_words[] = { "node", "container", "kubenet", NULL };

/* Ranges from gala-gopher's src/lib/probe/probe_params_parser.c (param_keys[]). */
static const struct key param_keys[] = {
	{ .name = "perf_sample_period", .fn = parse_sample_period, .min = 10, .max = 1000 },
	{ .name = "svg_period", .fn = parse_svg_period, .min = 30, .max = 600 },
	{ .name = "multi_instance", .fn = parse_multi_instance, .min = 0, .max = 1 },
	{ .name = "svg_dir", .fn = parse_svg_dir },
	{ .name = "flame_dir", .fn = parse_flame_dir },
	{ .name = "native_stack", .fn = parse_native_stack, .min = 0, .max = 1 },
	{ .name = "pyroscope_server", .fn = parse_pyroscope_server },
	{ .name = "report_period", .fn = parse_report_period, .min = 5, .max = 600 },
	/* parameters galatop checks and then ignores */
	{ .name = "res_lower_thr", .fn = ignore_int, .min = 0, .max = 100 },
	{ .name = "res_upper_thr", .fn = ignore_int, .min = 0, .max = 100 },
	{ .name = "report_event", .fn = ignore_int, .min = 0, .max = 1 },
	{ .name = "metrics_type", .fn = ignore_words, .words = metrics_words },
	{ .name = "env", .fn = ignore_words, .words = env_words },
	/* tprofiling */
	{ .name = "min_exec_dur", .fn = parse_tprof_dur, .min = 1, .max = 10000000 },
	{ .name = "min_aggr_dur", .fn = parse_tprof_dur, .min = 1, .max = 3600000 },
	/* parameters of gala-gopher's other probes */
	{ .name = "sample_period", .fn = other_probe },
	{ .name = "latency_thr", .fn = other_probe },
	{ .name = "offline_thr", .fn = other_probe },
	{ .name = "drops_thr", .fn = other_probe },
	{ .name = "l7_protocol", .fn = parse_l7_protocols },
	{ .name = "support_ssl", .fn = parse_support_ssl, .min = 0, .max = 1 },
	{ .name = "cluster_ip_backend", .fn = other_probe },
	{ .name = "dev_name", .fn = other_probe },
	{ .name = "continuous_sampling", .fn = other_probe },
	{ .name = "elf_path", .fn = other_probe },
	{ .name = "kafka_port", .fn = other_probe },
	{ .name = "cadvisor_port", .fn = other_probe },
};

static const struct key top_keys[] = {
	{ .name = "cmd", .fn = parse_object, .sub = cmd_keys, .nsub = ARRAY_SIZE(cmd_keys) },
	{ .name = "snoopers", .fn = parse_object, .sub = snooper_keys,
	  .nsub = ARRAY_SIZE(snooper_keys) },
	{ .name = "params", .fn = parse_object, .sub = param_keys, .nsub = ARRAY_SIZE(param_keys) },
	{ .name = "state", .fn = parse_state },
};

void record_opts__init(struct record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->freq = 99;
	o->group = -1;
	o->min_block_us = 1000;
	o->event_rate = RECORD_EVENT_RATE;
	o->leak_min_age = RECORD_LEAK_MIN_AGE;
	o->trigger_before = TRIGGER_BEFORE_S;
	o->trigger_after = TRIGGER_AFTER_S;
	o->trigger_cooldown = TRIGGER_COOLDOWN_S;
	o->max_stacks = RECORD_MAX_STACKS;
	o->periodic_svg = true;
	o->periodic_folded = true;
	snprintf(o->out_dir, sizeof(o->out_dir), ".");
}

int record_config_parse(const char *text, size_t len, const char *name, struct record_opts *o,
			char *err, size_t errlen)
{
	return record_config_parse_request(text, len, name, RECORD_REQ_GUESS, o, NULL, err,
					   errlen);
}

int record_config_parse_request(const char *text, size_t len, const char *name,
				enum record_request kind, struct record_opts *o, int *state,
				char *err, size_t errlen)
{
	struct cfg c = { .name = name ? name : "config", .err = err, .errlen = errlen,
			 .state = state };
	char shown[SANITIZE_MAX(JSON_ERROR_TEXT_LENGTH)];
	json_error_t je;
	json_t *root;
	int ret;

	put_err(err, errlen, "%s", "");
	root = json_loadb(text ? text : "", text ? len : 0, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		/* jansson quotes the input near the error; keep the message on one line. */
		sanitize_cstr(je.text, shown, sizeof(shown));
		put_err(err, errlen, "%s:%d:%d: %s", c.name, je.line, je.column, shown);
		return -EINVAL;
	}
	c.o = malloc(sizeof(*c.o));
	if (!c.o) {
		json_decref(root);
		put_err(err, errlen, "%s: out of memory", c.name);
		return -ENOMEM;
	}
	*c.o = *o;
	if (kind == RECORD_REQ_GUESS) {
		c.sli = is_sli_request(o, root);
		c.o->sli = c.sli;
		c.tprof = !c.sli && is_tprof_request(o, root);
	} else {
		c.sli = kind == RECORD_REQ_SLI;
		c.tprof = kind == RECORD_REQ_TPROFILING;
		c.l7 = kind == RECORD_REQ_L7;
	}

	ret = walk(&c, root, "", top_keys, ARRAY_SIZE(top_keys));
	if (!ret)
		*o = *c.o;
	free(c.o);
	json_decref(root);
	return ret;
}

int record_config_load(const char *path, struct record_opts *o, char *err, size_t errlen)
{
	char *text;
	size_t len;
	/* A regular file, a pipe or /dev/stdin: read as the user's own input. */
	int ret = file_read(path, CONFIG_MAX_BYTES, 0, &text, &len);

	if (ret == -EFBIG) {
		put_err(err, errlen, "%s: larger than %d bytes; not a flamegraph request", path,
			CONFIG_MAX_BYTES);
		return ret;
	}
	if (ret) {
		put_err(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = record_config_parse(text, len, path, o, err, errlen);
	free(text);
	return ret;
}
