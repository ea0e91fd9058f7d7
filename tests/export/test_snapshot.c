/* Unit tests for export/snapshot: exact round trips, deterministic bytes, and a clear error (no
 * crash, no silently wrong graph) for every kind of damaged or hostile file. */
#include <errno.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "export/snapshot.h"
#include "model/slices.h"

struct session {
	struct strtab *st;
	struct frames *ft;
};

static void session_init(struct session *s)
{
	s->st = strtab__new();
	s->ft = frames__new(s->st);
}

static void session_fini(struct session *s)
{
	frames__free(s->ft);
	strtab__free(s->st);
}

static uint32_t frame(struct session *s, const char *name, const char *module, enum frame_kind kind,
		      const char *file, uint32_t line)
{
	struct frame f = {.kind = kind, .line = line};

	f.name = strtab__intern(s->st, name, strlen(name));
	f.module = strtab__intern(s->st, module, strlen(module));
	f.file = strtab__intern(s->st, file, strlen(file));
	return frames__intern(s->ft, &f);
}

static const struct snapshot_kv hz[] = {{"hz", "99"}, {"user_only", "false"}, {"comm", "nginx"}};
static const struct snapshot_kv min_us[] = {{"min_us", "1000"}, {"ratio", "0.25"}};
static const struct snapshot_probe probes[] = {{"oncpu", hz, 3}, {"offcpu", min_us, 2}};
static const struct snapshot_kv filters[] = {{"pid", "1234"}, {"container", "web-1"}};

/* A session with three profiles: every frame kind, module and file:line, a two-column one,
 * a flame chart, and a second frame table. */
struct fixture {
	struct session a, b;
	struct snapshot_profile profiles[3];
	struct snapshot snap;
};

static void fixture_init(struct fixture *fx)
{
	struct session *a = &fx->a;
	uint32_t f[FRAME_KIND_MAX + 2], g[3];
	struct profile *on, *diff, *chart;

	session_init(&fx->a);
	session_init(&fx->b);
	f[0] = frame(a, "[Pod]web", "", FRAME_POD, "", 0);
	f[1] = frame(a, "[Con]nginx", "", FRAME_CONTAINER, "", 0);
	f[2] = frame(a, "[1234]nginx", "", FRAME_PROCESS, "", 0);
	f[3] = frame(a, "worker-1", "", FRAME_THREAD, "", 0);
	f[4] = frame(a, "main", "/usr/sbin/nginx", FRAME_USER, "src/core/nginx.c", 291);
	f[5] = frame(a, "ngx_inline", "/usr/sbin/nginx", FRAME_INLINED, "src/a \"q\".h", 7);
	f[6] = frame(a, "LazyCompile:*run", "", FRAME_JIT, "", 0);
	f[7] = frame(a, "do_syscall_64", "[kernel.kallsyms]", FRAME_KERNEL, "", 0);
	f[8] = frame(a, "[unknown]", "", FRAME_SPECIAL, "", 0);
	f[9] =
	    frame(a, "caf\xc3\xa9 \xf0\x9f\x94\xa5 x;y", "/lib/\xe6\x97\xa5.so", FRAME_USER, "", 1);
	f[10] = frame(a, "main", "/other/bin", FRAME_USER, "", 0); /* same name, other module */

	on = profile__new(a->ft, VALUE_SAMPLES, false);
	CHECK(profile__add_stack(on, f, 9, 60) == 0);
	CHECK(profile__add_stack(on, f, 5, 30) == 0);
	CHECK(profile__add_stack(on, (uint32_t[]){f[4], f[9]}, 2, 1e15 + 0.5) == 0);
	CHECK(profile__add_stack(on, (uint32_t[]){f[10], f[7]}, 2, 0.1) == 0);
	CHECK(profile__add_stack(on, f, 0, 2) == 0); /* the root's own value */

	diff = profile__new(a->ft, VALUE_NANOSECONDS, false);
	CHECK(profile__add_stack2(diff, f + 4, 3, 5, 7) == 0);
	CHECK(profile__add_stack2(diff, f + 4, 2, 3, 0) == 0);
	CHECK(profile__add_stack2(diff, f + 7, 1, 0, 4) == 0);

	/* A flame chart in time order over a second frame table: a, b, a again. */
	g[0] = frame(&fx->b, "a", "m", FRAME_USER, "", 0);
	g[1] = frame(&fx->b, "b", "m", FRAME_USER, "", 0);
	chart = profile__new(fx->b.ft, VALUE_BYTES, true);
	CHECK(profile__add_stack(chart, g, 1, 1) == 0);
	CHECK(profile__add_stack(chart, g + 1, 1, 2) == 0);
	CHECK(profile__add_stack(chart, g, 2, 3) == 0);

	fx->profiles[0] = (struct snapshot_profile){"oncpu", "oncpu", on, NULL};
	fx->profiles[1] = (struct snapshot_profile){"before.folded vs after", "folded", diff, NULL};
	fx->profiles[2] = (struct snapshot_profile){"mem", "mem", chart, NULL};
	fx->snap = (struct snapshot){
	    .meta = {.host = "web-1",
		     .kernel = "6.1.0-18-amd64",
		     .version = "0.1-test",
		     .notes = "line one\n\tline two \"quoted\"",
		     .start = 1718000000.25,
		     .end = 1718000060.125,
		     .probes = probes,
		     .nprobes = 2,
		     .filters = filters,
		     .nfilters = 2},
	    .profiles = fx->profiles,
	    .nprofiles = 3,
	};
}

static void fixture_fini(struct fixture *fx)
{
	for (int i = 0; i < 3; i++)
		profile__free(fx->profiles[i].p);
	session_fini(&fx->a);
	session_fini(&fx->b);
}

static char *tmp_path(const char *tag)
{
	static char path[64];

	snprintf(path, sizeof(path), "/tmp/test_snapshot.%d.%s.gtop", (int)getpid(), tag);
	return path;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = malloc(1 << 24);

	*len = f ? fread(buf, 1, 1 << 24, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

/* Every node of b matches a: tree shape, frames (by content), values exactly. */
static bool same_profile(const struct profile *a, const struct profile *b)
{
	const struct frames *fa = profile__frames(a), *fb = profile__frames(b);
	const struct strtab *sa = frames__strtab(fa), *sb = frames__strtab(fb);

	if (profile__node_count(a) != profile__node_count(b) ||
	    profile__kind(a) != profile__kind(b) || profile__is_chart(a) != profile__is_chart(b) ||
	    profile__two_column(a) != profile__two_column(b))
		return false;
	for (uint32_t id = 0; id < profile__node_count(a); id++) {
		const struct profile_node *na = profile__node(a, id), *nb = profile__node(b, id);
		const struct frame *x = frames__get(fa, na->frame), *y = frames__get(fb, nb->frame);

		if (na->parent != nb->parent || na->first_child != nb->first_child ||
		    na->next_sibling != nb->next_sibling || na->total != nb->total ||
		    na->self != nb->self || profile__self2(a, id) != profile__self2(b, id) ||
		    profile__total2(a, id) != profile__total2(b, id))
			return false;
		if (strcmp(strtab__str(sa, x->name), strtab__str(sb, y->name)) ||
		    strcmp(strtab__str(sa, x->module), strtab__str(sb, y->module)) ||
		    strcmp(strtab__str(sa, x->file), strtab__str(sb, y->file)) ||
		    x->kind != y->kind || x->line != y->line)
			return false;
	}
	return true;
}

TEST_CASE(round_trip_is_exact)
{
	struct fixture fx;
	struct session r;
	struct snapshot got;
	const struct snapshot_meta *m = &got.meta;
	char err[256] = "";

	fixture_init(&fx);
	session_init(&r);
	CHECK(snapshot_write(tmp_path("rt"), &fx.snap, err, sizeof(err)) == 0);
	CHECK(snapshot_read(tmp_path("rt"), r.ft, &got, err, sizeof(err)) == 0);
	CHECK_STR(err, "");
	CHECK(got.nprofiles == 3);
	for (size_t i = 0; i < got.nprofiles && i < 3; i++) {
		CHECK_STR(got.profiles[i].name, fx.profiles[i].name);
		CHECK_STR(got.profiles[i].type, fx.profiles[i].type);
		CHECK(same_profile(fx.profiles[i].p, got.profiles[i].p));
		CHECK(profile__frames(got.profiles[i].p) == r.ft);
	}
	CHECK_NUM(profile__total(got.profiles[0].p), 1e15 + 0.5 + 92.1);
	CHECK_STR(m->host, "web-1");
	CHECK_STR(m->kernel, "6.1.0-18-amd64");
	CHECK_STR(m->version, "0.1-test");
	CHECK_STR(m->notes, "line one\n\tline two \"quoted\"");
	CHECK(m->start == 1718000000.25 && m->end == 1718000060.125);
	CHECK(m->nprobes == 2 && m->nfilters == 2);
	if (m->nprobes == 2 && m->nfilters == 2) {
		CHECK_STR(m->probes[0].type, "oncpu");
		CHECK(m->probes[0].nparams == 3 && m->probes[1].nparams == 2);
		CHECK_STR(m->probes[0].params[0].key, "hz");
		CHECK_STR(m->probes[0].params[0].value, "99");
		CHECK_STR(m->probes[0].params[1].value, "false");
		CHECK_STR(m->probes[0].params[2].value, "nginx");
		CHECK_STR(m->probes[1].params[1].value, "0.25");
		CHECK_STR(m->filters[1].key, "container");
		CHECK_STR(m->filters[1].value, "web-1");
	}
	snapshot_release(&got);
	CHECK(got.nprofiles == 0 && got.store == NULL);
	snapshot_release(&got); /* twice is harmless */
	unlink(tmp_path("rt"));
	session_fini(&r);
	fixture_fini(&fx);
}

TEST_CASE(output_is_deterministic_and_stable)
{
	struct fixture fx;
	struct session r;
	struct snapshot got;
	unsigned char *x, *y, *z;
	size_t nx, ny, nz;
	char err[256];

	fixture_init(&fx);
	session_init(&r);
	CHECK(snapshot_write(tmp_path("d1"), &fx.snap, err, sizeof(err)) == 0);
	CHECK(snapshot_write(tmp_path("d2"), &fx.snap, err, sizeof(err)) == 0);
	/* Read back and written again: the same bytes, though frame ids differ. */
	CHECK(snapshot_read(tmp_path("d1"), r.ft, &got, err, sizeof(err)) == 0);
	CHECK(snapshot_write(tmp_path("d3"), &got, err, sizeof(err)) == 0);
	x = slurp(tmp_path("d1"), &nx);
	y = slurp(tmp_path("d2"), &ny);
	z = slurp(tmp_path("d3"), &nz);
	CHECK(nx > 20 && nx == ny && !memcmp(x, y, nx));
	CHECK(nx == nz && !memcmp(x, z, nx));
	CHECK(snapshot_sniff(x, nx < 256 ? nx : 256));
	CHECK(snapshot_sniff(x, 2));
	free(x);
	free(y);
	free(z);
	snapshot_release(&got);
	unlink(tmp_path("d1"));
	unlink(tmp_path("d2"));
	unlink(tmp_path("d3"));
	session_fini(&r);
	fixture_fini(&fx);
}

/* Gzips text[0..len) in memory. */
static unsigned char *gzip(const char *text, size_t len, size_t *out_len)
{
	z_stream z = {0};
	size_t cap = len + 1024;
	unsigned char *out = malloc(cap);

	deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)text;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	deflate(&z, Z_FINISH);
	*out_len = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

/* Reads hand-made JSON through gzip; returns the error text ("" on success). */
static const char *read_json(const char *json, struct snapshot *got, struct session *r)
{
	static char err[512];
	size_t n;
	unsigned char *gz = gzip(json, strlen(json), &n);
	int ret;

	err[0] = '\0';
	ret = snapshot_read_mem(gz, n, "hand.gtop", r->ft, got, err, sizeof(err));
	free(gz);
	if (ret) {
		CHECK(ret == -EINVAL);
		CHECK(!strncmp(err, "hand.gtop: ", 11) && !strchr(err, '\n'));
		CHECK(got->nprofiles == 0 && got->store == NULL);
	} else {
		CHECK(err[0] == '\0');
	}
	return err;
}

#define HEAD "{\"format\":\"galatop-snapshot\",\"version\":1,"
#define FRAMES "\"frames\":[[\"a\",\"\",\"user\",\"\",0],[\"b\",\"m\",\"kernel\",\"f.c\",3]],"
#define PROFILE(body)                                                                              \
	"\"profiles\":[{\"name\":\"p\",\"type\":\"oncpu\",\"value\":\"samples\"," body "}]}"

TEST_CASE(hand_made_json_is_read)
{
	struct session r;
	struct snapshot got;
	const struct profile *p;
	const struct frame *f;

	session_init(&r);
	/* Whitespace, keys in another order, unknown members of a newer writer. */
	CHECK_STR(read_json(" { \"format\" : \"galatop-snapshot\" , \"version\" : 1 ,\n"
			    "\"future\": {\"x\": [1, 2.5e3, -1, true, null, \"s\"]}," FRAMES
			    "\"profiles\":[{\"self\":[1,2],\"frame\":[0,1],\"parent\":[1,1],"
			    "\"nodes\":2,\"value\":\"ns\",\"type\":\"offcpu\",\"name\":\"x\","
			    "\"new\":{}}]}\n",
			    &got, &r),
		  "");
	CHECK(got.nprofiles == 1);
	if (got.nprofiles == 1) {
		p = got.profiles[0].p;
		CHECK(profile__kind(p) == VALUE_NANOSECONDS && profile__node_count(p) == 3);
		CHECK_NUM(profile__total(p), 3);
		CHECK_NUM(profile__node(p, 1)->total, 3);
		f = frames__get(r.ft, profile__node(p, 2)->frame);
		CHECK(f->kind == FRAME_KERNEL && f->line == 3);
		CHECK_STR(strtab__str(r.st, f->file), "f.c");
		CHECK(got.meta.host == NULL && got.meta.nprobes == 0);
	}
	snapshot_release(&got);

	/* Untrusted names: escapes decoded, control characters and bad UTF-8 replaced. */
	CHECK_STR(read_json(HEAD
			    "\"frames\":[[\"a\\u0001b\\ud83d\\udd25\\ud800\\t\xff\",\"\","
			    "\"user\",\"\",0]]," PROFILE("\"nodes\":1,\"parent\":[1],\"frame\":[0],"
							 "\"self\":[1e2]"),
			    &got, &r),
		  "");
	if (got.nprofiles == 1) {
		p = got.profiles[0].p;
		CHECK_STR(frames__name(r.ft, profile__node(p, 1)->frame),
			  "a\xef\xbf\xbd"
			  "b\xf0\x9f\x94\xa5\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
		CHECK_NUM(profile__total(p), 100);
	}
	snapshot_release(&got);

	/* A duplicate sibling merges, as the same stack would. */
	CHECK_STR(read_json(HEAD FRAMES PROFILE("\"nodes\":2,\"parent\":[1,2],\"frame\":[0,0],"
						"\"self\":[1,2]"),
			    &got, &r),
		  "");
	if (got.nprofiles == 1) {
		CHECK(profile__node_count(got.profiles[0].p) == 2);
		CHECK_NUM(profile__total(got.profiles[0].p), 3);
	}
	snapshot_release(&got);
	session_fini(&r);
}

TEST_CASE(bad_content_is_refused_with_a_reason)
{
	static const struct {
		const char *json, *why;
	} cases[] = {
	    {"hello", "not a galatop snapshot"},
	    {"{\"format\":\"perf\"}", "not a galatop snapshot"},
	    {"{\"version\":1,\"format\":\"galatop-snapshot\"}", "not a galatop snapshot"},
	    {"{\"format\":\"galatop-snapshot\",\"version\":2,\"new\":[",
	     "snapshot version 2 is not supported"},
	    {"{\"format\":\"galatop-snapshot\",\"version\":\"1\"}", "version: expected a number"},
	    {"{\"format\":\"galatop-snapshot\",\"version\":1.5}", "version: expected an integer"},
	    {"{\"format\":\"galatop-snapshot\",\"frames\":[]}", "expected \"version\""},
	    {HEAD "\"frames\":[", "found the end"},
	    {HEAD FRAMES, "found the end"},
	    {HEAD FRAMES "\"profiles\":[]", "expected ',', found the end"},
	    {HEAD FRAMES "\"profiles\":[]} x", "trailing data after the document"},
	    {HEAD FRAMES "\"profiles\":[],}", "expected a string"},
	    {HEAD "\"frames\":[]}", "no \"profiles\""},
	    {HEAD PROFILE("\"nodes\":0,\"parent\":[],\"frame\":[],\"self\":[]"),
	     "\"profiles\" before \"frames\""},
	    {HEAD FRAMES FRAMES "\"profiles\":[]}", "duplicate member"},
	    {HEAD "\"frames\":[[\"a\",\"\",\"userland\",\"\",0]],\"profiles\":[]}",
	     "frames[0]: unknown frame kind"},
	    {HEAD "\"frames\":[[\"a\",\"\",\"user\",\"\",-1]],\"profiles\":[]}",
	     "frames[0]: expected an integer"},
	    {HEAD "\"frames\":[[\"a\",\"\",\"user\",\"\"]],\"profiles\":[]}",
	     "frames[0]: expected ','"},
	    {HEAD "\"frames\":[[1,\"\",\"user\",\"\",0]],\"profiles\":[]}",
	     "frames[0]: expected a string"},
	    {HEAD "\"frames\":[[\"a\\x\",\"\",\"user\",\"\",0]],\"profiles\":[]}",
	     "invalid escape"},
	    {HEAD "\"frames\":[[\"a\\u12\",\"\",\"user\",\"\",0]],\"profiles\":[]}",
	     "invalid \\u escape"},
	    {HEAD "\"frames\":[[\"a\x01\",\"\",\"user\",\"\",0]],\"profiles\":[]}",
	     "control character inside a string"},
	    {HEAD "\"frames\":[[\"abc", "unterminated string"},
	    {HEAD FRAMES PROFILE("\"nodes\":2,\"parent\":[1,0],\"frame\":[0,1],\"self\":[1,1]"),
	     "profiles[0].parent[1]: parent distance 0 out of range"},
	    {HEAD FRAMES PROFILE("\"nodes\":2,\"parent\":[1,3],\"frame\":[0,1],\"self\":[1,1]"),
	     "parent distance 3 out of range"},
	    {HEAD FRAMES PROFILE("\"nodes\":2,\"parent\":[1,1],\"frame\":[0,2],\"self\":[1,1]"),
	     "profiles[0].frame[1]: frame 2 out of range (2 frames)"},
	    {HEAD FRAMES PROFILE("\"nodes\":1,\"parent\":[1],\"frame\":[0],\"self\":[-1]"),
	     "profiles[0].self[0]: expected a finite number >= 0"},
	    {HEAD FRAMES PROFILE("\"nodes\":1,\"parent\":[1],\"frame\":[0],\"self\":[-0.0]"),
	     "expected a finite number >= 0"},
	    {HEAD FRAMES PROFILE("\"nodes\":1,\"parent\":[1],\"frame\":[0],\"self\":[1e999]"),
	     "self[0]: expected a finite number >= 0"},
	    {HEAD FRAMES PROFILE("\"nodes\":1,\"parent\":[1],\"frame\":[0],\"self\":[NaN]"),
	     "self[0]: expected a number"},
	    {HEAD FRAMES PROFILE("\"nodes\":1,\"parent\":[1],\"frame\":[0],\"self\":[\"1\"]"),
	     "self[0]: expected a number"},
	    {HEAD FRAMES PROFILE("\"nodes\":1,\"parent\":[1],\"frame\":[4294967296],\"self\":[1]"),
	     "frame[0]: expected an integer in 0..4294967295"},
	    {HEAD FRAMES PROFILE("\"nodes\":99999999999,\"parent\":[1],\"frame\":[0],\"self\":[1]"),
	     "profiles[0].nodes: expected an integer in 0..4294967294"},
	    {HEAD FRAMES PROFILE("\"nodes\":3,\"parent\":[1,1],\"frame\":[0,1],\"self\":[1,1]"),
	     "parent has 2 entries for 3 nodes"},
	    {HEAD FRAMES PROFILE("\"nodes\":1,\"parent\":[1],\"frame\":[0]"), "missing members"},
	    {HEAD FRAMES PROFILE(
		 "\"nodes\":1,\"parent\":[1],\"frame\":[0],\"self\":[1],\"self2\":[1]"),
	     "self2 without two_column"},
	    {HEAD FRAMES PROFILE(
		 "\"two_column\":true,\"nodes\":1,\"parent\":[1],\"frame\":[0],\"self\":[1]"),
	     "missing members"},
	    {HEAD FRAMES PROFILE("\"nodes\":1,\"nodes\":1"), "profiles[0].nodes: duplicate member"},
	    {HEAD FRAMES
	     "\"profiles\":[{\"name\":\"p\",\"type\":\"oncpu\",\"value\":\"parsecs\"}]}",
	     "unknown value kind"},
	    {HEAD FRAMES "\"profiles\":[{\"name\":\"p\",\"type\":\"\",\"value\":\"samples\","
			 "\"nodes\":0,\"parent\":[],\"frame\":[],\"self\":[]}]}",
	     "empty type"},
	    {HEAD FRAMES PROFILE("\"chart\":1"), "profiles[0].chart: expected true or false"},
	    {HEAD "\"meta\":{\"start\":5,\"end\":4}," FRAMES "\"profiles\":[]}",
	     "end of the time range before its start"},
	    {HEAD "\"meta\":{\"host\":7}," FRAMES "\"profiles\":[]}", "expected a string"},
	    {HEAD "\"meta\":{\"probes\":[{\"hz\":99}]}," FRAMES "\"profiles\":[]}",
	     "meta.probes[0]: probe without a \"type\""},
	    {HEAD "\"meta\":{\"probes\":[{\"type\":\"oncpu\",\"hz\":[]}]}," FRAMES
		  "\"profiles\":[]}",
	     "expected a number"},
	    {HEAD "\"meta\":{\"filters\":{\"pid\":\"1\",\"pid\":\"2\"}}," FRAMES "\"profiles\":[]}",
	     "meta.filters: duplicate key"},
	    {HEAD "\"meta\":{\"filters\":{\"pid\":1}}," FRAMES "\"profiles\":[]}",
	     "expected a string"},
	    {HEAD "\"x\":"
		  "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
	     "nested deeper than 64 levels"},
	    {HEAD "\"x\":01}", "expected a number"},
	    {HEAD "\"x\":tru}", "expected a number"},
	};
	struct session r;
	struct snapshot got;

	session_init(&r);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const char *err = read_json(cases[i].json, &got, &r);

		if (!strstr(err, cases[i].why))
			printf("  case %zu: \"%s\" lacks \"%s\"\n", i, err, cases[i].why);
		CHECK(strstr(err, cases[i].why) != NULL);
		snapshot_release(&got);
	}
	session_fini(&r);
}

TEST_CASE(deep_chains_load_in_linear_time)
{
	/* 50000 nested nodes that each carry a value: walking up from each would take 1.25e9
	 * steps; totals are summed in one pass instead. */
	size_t n = 50000, len = 0;
	char *json = malloc(n * 8 + 1024);
	struct session r;
	struct snapshot got;

	session_init(&r);
	len += (size_t)sprintf(json,
			       HEAD FRAMES "\"profiles\":[{\"name\":\"p\",\"type\":\"oncpu\","
					   "\"value\":\"samples\",\"nodes\":%zu,\"parent\":[",
			       n);
	for (int c = 0; c < 3; c++) {
		for (size_t i = 0; i < n; i++)
			len +=
			    (size_t)sprintf(json + len, "%s%c", i ? "," : "", c == 1 ? '0' : '1');
		len += (size_t)sprintf(json + len, "%s",
				       c == 0	? "],\"frame\":["
				       : c == 1 ? "],\"self\":["
						: "]}]}");
	}
	CHECK_STR(read_json(json, &got, &r), "");
	CHECK(got.nprofiles == 1);
	if (got.nprofiles == 1) {
		const struct profile *p = got.profiles[0].p;

		CHECK_NUM(profile__total(p), 50000);
		CHECK_NUM(profile__node(p, profile__node_count(p) - 1)->total, 1);
		CHECK(profile__max_depth(p) == 50000);
	}
	snapshot_release(&got);
	free(json);
	session_fini(&r);
}

TEST_CASE(damaged_files_never_crash)
{
	struct fixture fx;
	struct session r;
	struct snapshot got;
	unsigned char *buf;
	size_t len, ok = 0, refused = 0;
	char err[512];

	fixture_init(&fx);
	session_init(&r);
	CHECK(snapshot_write(tmp_path("dmg"), &fx.snap, err, sizeof(err)) == 0);
	buf = slurp(tmp_path("dmg"), &len);
	/* Every truncation is refused with a reason. */
	for (size_t cut = 0; cut < len; cut++) {
		err[0] = '\0';
		if (snapshot_read_mem(buf, cut, "cut.gtop", r.ft, &got, err, sizeof(err)) == 0) {
			printf("  truncated at %zu of %zu was accepted\n", cut, len);
			CHECK(0);
		}
		CHECK(!strncmp(err, "cut.gtop: ", 10));
		snapshot_release(&got);
	}
	CHECK(strstr(err, "truncated") != NULL);
	/* Flipped bits: the gzip CRC refuses changed data; what passes must be the same data. */
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			int ret;

			buf[i] ^= (unsigned char)(1 << bit);
			err[0] = '\0';
			ret =
			    snapshot_read_mem(buf, len, "flip.gtop", r.ft, &got, err, sizeof(err));
			buf[i] ^= (unsigned char)(1 << bit);
			if (ret) {
				refused++;
				CHECK(!strncmp(err, "flip.gtop: ", 11) && !strchr(err, '\n'));
			} else {
				/* Header flags, mtime, OS, or padding bits: the data is intact. */
				ok++;
				CHECK(got.nprofiles == 3);
				for (size_t k = 0; k < got.nprofiles && k < 3; k++)
					CHECK(same_profile(fx.profiles[k].p, got.profiles[k].p));
			}
			snapshot_release(&got);
		}
	}
	CHECK(refused > len && ok < len / 10);
	/* Trailing garbage and non-gzip input. */
	buf[len] = 0;
	CHECK(snapshot_read_mem(buf, len + 1, "t.gtop", r.ft, &got, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "trailing data after the gzip stream") != NULL);
	CHECK(snapshot_read_mem("main;f 1\n", 9, "t.gtop", r.ft, &got, err, sizeof(err)) ==
	      -EINVAL);
	CHECK_STR(err, "t.gtop: not a galatop snapshot (not gzip data)");
	CHECK(snapshot_read_mem("", 0, "t.gtop", r.ft, &got, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "t.gtop: empty file");
	CHECK(snapshot_read("/nonexistent/x.gtop", r.ft, &got, err, sizeof(err)) == -ENOENT);
	CHECK_STR(err, "/nonexistent/x.gtop: No such file or directory");
	free(buf);
	unlink(tmp_path("dmg"));
	session_fini(&r);
	fixture_fini(&fx);
}

TEST_CASE(writer_refuses_what_cannot_be_read_back)
{
	struct fixture fx;
	struct snapshot s;
	struct snapshot_kv dup[] = {{"pid", "1"}, {"pid", "2"}};
	struct snapshot_kv reserved[] = {{"type", "x"}};
	struct snapshot_probe bad_probe = {"oncpu", reserved, 1};
	char err[256];
	uint32_t f;

	fixture_init(&fx);
	s = fx.snap;
	s.meta.filters = dup;
	CHECK(snapshot_write(tmp_path("w"), &s, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "duplicate filters \"pid\"") != NULL);
	s = fx.snap;
	s.meta.probes = &bad_probe;
	s.meta.nprobes = 1;
	CHECK(snapshot_write(tmp_path("w"), &s, err, sizeof(err)) == -EINVAL);
	s = fx.snap;
	s.meta.end = NAN;
	CHECK(snapshot_write(tmp_path("w"), &s, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "invalid time range") != NULL);
	s = fx.snap;
	f = frame(&fx.a, "neg", "", FRAME_USER, "", 0);
	CHECK(profile__add_stack(fx.profiles[0].p, &f, 1, -1) == 0);
	CHECK(snapshot_write(tmp_path("w"), &s, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "negative or non-finite value") != NULL);
	CHECK(access(tmp_path("w"), F_OK) != 0); /* nothing half-written is left behind */
	CHECK(snapshot_write("/nonexistent/dir/x.gtop", &fx.snap, err, sizeof(err)) == -ENOENT);
	CHECK(!strncmp(err, "/nonexistent/dir/x.gtop: ", 25));
	fixture_fini(&fx);
}

TEST_CASE(sniff_tells_snapshots_apart)
{
	size_t n;
	unsigned char *gz = gzip("main;f 1\n", 9, &n);

	CHECK(!snapshot_sniff(gz, n));
	free(gz);
	gz = gzip(" {\n \"format\": \"galatop-snapshot\", \"version\": 1}", 47, &n);
	CHECK(snapshot_sniff(gz, n));
	free(gz);
	CHECK(!snapshot_sniff("main;f 1\n", 9));
	CHECK(!snapshot_sniff("\x1f", 1));
	CHECK(!snapshot_sniff("", 0));
}

/* A profile's per-second history and heat map come back slice by slice; a file without them
 * reads with no history. */
TEST_CASE(history_round_trips)
{
	struct fixture fx;
	struct session r;
	struct snapshot got;
	struct slices *h;
	const double *heat;
	int64_t first;
	size_t n;
	char err[256] = "";
	uint32_t f[2];

	fixture_init(&fx);
	session_init(&r);
	h = slices__new(fx.a.ft, VALUE_SAMPLES, 8, 0);
	f[0] = frame(&fx.a, "main", "/usr/sbin/nginx", FRAME_USER, "src/core/nginx.c", 291);
	f[1] = frame(&fx.a, "phase_b", "/x", FRAME_USER, "", 0);
	for (int i = 0; i < 3; i++) {
		struct profile *p = profile__new(fx.a.ft, VALUE_SAMPLES, false);

		CHECK(profile__add_stack(p, f, i < 2 ? 1 : 2, 10 + i) == 0);
		CHECK(slices__push(h, i * 1.0, i + 1.0 + (i == 2 ? 0.5 : 0), p) == 0);
		profile__free(p);
	}
	CHECK(slices__heat_add(h, 0.02, 3) == 0);
	CHECK(slices__heat_add(h, 2.31, 7) == 0);
	fx.profiles[0].history = h;
	CHECK(snapshot_write(tmp_path("hist"), &fx.snap, err, sizeof(err)) == 0);
	CHECK(snapshot_read(tmp_path("hist"), r.ft, &got, err, sizeof(err)) == 0);
	CHECK_STR(err, "");
	CHECK(got.nprofiles == 3 && got.profiles[0].history && !got.profiles[1].history);
	if (got.nprofiles == 3 && got.profiles[0].history) {
		const struct slices *g = got.profiles[0].history;

		CHECK(slices__count(g) == 3);
		for (size_t i = 0; i < 3 && i < slices__count(g); i++) {
			CHECK(slices__get(g, i)->t0 == slices__get(h, i)->t0);
			CHECK(slices__get(g, i)->t1 == slices__get(h, i)->t1);
			CHECK(same_profile(slices__get(h, i)->p, slices__get(g, i)->p));
		}
		heat = slices__heat(g, &first, &n);
		CHECK(heat && first == 0 && n == 47);
		CHECK_NUM(slices__heat_sum(g, 0, 0.05), 3);
		CHECK_NUM(slices__heat_sum(g, 2.3, 2.35), 7);
	}
	snapshot_release(&got);
	/* Slices out of order cannot be written (nor read back). */
	slices__clear(h);
	CHECK(slices__push(h, 5, 6, fx.profiles[0].p) == 0);
	CHECK(slices__push(h, 2, 3, fx.profiles[0].p) == 0);
	CHECK(snapshot_write(tmp_path("hist"), &fx.snap, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "out of order") != NULL);
	fx.profiles[0].history = NULL;
	slices__free(h);
	unlink(tmp_path("hist"));
	session_fini(&r);
	fixture_fini(&fx);
}

/* A type whose values go down (leak, growth) keeps changes in its history: slices and heat
 * buckets with negative values, and the level before the buckets kept, come back; other
 * types' negative slices are refused. */
TEST_CASE(history_of_values_that_go_down_round_trips)
{
	struct fixture fx;
	struct session r;
	struct snapshot got;
	struct slices *h;
	const char *type;
	char err[256] = "";
	uint32_t f[2];
	double *lv = NULL;
	size_t cap = 0;

	fixture_init(&fx);
	session_init(&r);
	type = fx.profiles[0].type;
	h = slices__new(fx.a.ft, VALUE_SAMPLES, 8, 0);
	f[0] = frame(&fx.a, "main", "/usr/sbin/nginx", FRAME_USER, "src/core/nginx.c", 291);
	f[1] = frame(&fx.a, "grow", "/x", FRAME_USER, "", 0);
	for (int i = 0; i < 2; i++) {
		struct profile *p = profile__new(fx.a.ft, VALUE_SAMPLES, false);

		CHECK(profile__add_stack(p, f, 2, i ? -4096 : 16384) == 0);
		CHECK(slices__push(h, i, i + 1, p) == 0);
		profile__free(p);
	}
	CHECK(slices__heat_add(h, 0.02, 16384) == 0);
	CHECK(slices__heat_add(h, 1.51, -4096) == 0);
	slices__heat_add_base(h, 100);
	fx.profiles[0].history = h;
	fx.profiles[0].type = "leak";
	CHECK(snapshot_write(tmp_path("down"), &fx.snap, err, sizeof(err)) == 0);
	CHECK_STR(err, "");
	CHECK(snapshot_read(tmp_path("down"), r.ft, &got, err, sizeof(err)) == 0);
	CHECK_STR(err, "");
	if (got.nprofiles >= 1 && got.profiles[0].history) {
		const struct slices *g = got.profiles[0].history;
		int64_t first;
		size_t n;

		CHECK(slices__count(g) == 2);
		CHECK_NUM(profile__total(slices__get(g, 1)->p), -4096);
		CHECK_NUM(slices__heat_base(g), 100);
		CHECK(slices__heat_levels(g, &lv, &cap) == 0);
		slices__heat(g, &first, &n);
		CHECK(first == 0 && n == 31);
		CHECK_NUM(lv[0], 16484);
		CHECK_NUM(lv[30], 12388);
	} else {
		CHECK(!"leak history read back");
	}
	snapshot_release(&got);
	/* The same slices on a type whose values only grow cannot be written. */
	fx.profiles[0].type = type;
	CHECK(snapshot_write(tmp_path("down"), &fx.snap, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "negative") != NULL);
	fx.profiles[0].history = NULL;
	free(lv);
	slices__free(h);
	unlink(tmp_path("down"));
	session_fini(&r);
	fixture_fini(&fx);
}

TEST_CASE(hand_made_history_is_read_or_refused)
{
	struct session r;
	struct snapshot got;
	const char *e;

	session_init(&r);
	CHECK_STR(read_json(HEAD FRAMES PROFILE("\"nodes\":1,\"parent\":[1],\"frame\":[0],"
						"\"self\":[5],\"history\":{\"slices\":[{\"t0\":0,"
						"\"t1\":1,\"nodes\":1,\"parent\":[1],"
						"\"frame\":[1],\"self\":[2],\"x\":1}],"
						"\"heat\":[1,0,2],\"heat_first\":4,"
						"\"bucket_s\":0.05}"),
			    &got, &r),
		  "");
	CHECK(got.nprofiles == 1 && got.profiles[0].history &&
	      slices__count(got.profiles[0].history) == 1);
	if (got.nprofiles == 1 && got.profiles[0].history) {
		CHECK_NUM(profile__total(slices__get(got.profiles[0].history, 0)->p), 2);
		CHECK_NUM(slices__heat_sum(got.profiles[0].history, 0.2, 0.35), 3);
	}
	snapshot_release(&got);
	e = read_json(HEAD FRAMES PROFILE("\"nodes\":0,\"parent\":[],\"frame\":[],\"self\":[],"
					  "\"history\":{\"bucket_s\":0.1}"),
		      &got, &r);
	CHECK(strstr(e, "heat bucket of 0.1 s") != NULL);
	e = read_json(HEAD FRAMES PROFILE("\"nodes\":0,\"parent\":[],\"frame\":[],\"self\":[],"
					  "\"history\":{\"slices\":[{\"t0\":2,\"t1\":3,"
					  "\"nodes\":0,\"parent\":[],\"frame\":[],\"self\":[]},"
					  "{\"t0\":1,\"t1\":2,\"nodes\":0,\"parent\":[],"
					  "\"frame\":[],\"self\":[]}]}"),
		      &got, &r);
	CHECK(strstr(e, "out of order") != NULL);
	e = read_json(HEAD FRAMES PROFILE("\"nodes\":0,\"parent\":[],\"frame\":[],\"self\":[],"
					  "\"history\":{\"slices\":[{\"t0\":0,\"t1\":1,"
					  "\"nodes\":1,\"parent\":[1],\"frame\":[7],"
					  "\"self\":[1]}]}"),
		      &got, &r);
	CHECK(strstr(e, "frame 7 out of range") != NULL);
	e = read_json(HEAD FRAMES PROFILE("\"nodes\":0,\"parent\":[],\"frame\":[],\"self\":[],"
					  "\"history\":{\"slices\":[{\"t0\":0,\"nodes\":0,"
					  "\"parent\":[],\"frame\":[],\"self\":[]}]}"),
		      &got, &r);
	CHECK(strstr(e, "missing members") != NULL);
	session_fini(&r);
}

int main(void)
{
	RUN(round_trip_is_exact);
	RUN(output_is_deterministic_and_stable);
	RUN(hand_made_json_is_read);
	RUN(bad_content_is_refused_with_a_reason);
	RUN(deep_chains_load_in_linear_time);
	RUN(damaged_files_never_crash);
	RUN(writer_refuses_what_cannot_be_read_back);
	RUN(sniff_tells_snapshots_apart);
	RUN(history_round_trips);
	RUN(history_of_values_that_go_down_round_trips);
	RUN(hand_made_history_is_read_or_refused);
	HARNESS_EXIT();
}
