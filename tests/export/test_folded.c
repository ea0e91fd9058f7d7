/* Unit tests for export/folded: flamegraph.pl's grammar, error reports, writer escaping. */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "export/folded.h"

struct fx {
	struct strtab *st;
	struct frames *ft;
	struct profile *p;
	struct folded_stats stats;
	char err[4096]; /* what the reader printed on stderr */
	int ret;
};

/* Reads text[0..len) as folded input named "in.folded", capturing stderr. */
static void load(struct fx *fx, const char *text, size_t len, const struct folded_opts *o)
{
	FILE *in = fmemopen((void *)text, len, "r");
	FILE *errf = tmpfile();
	int saved = dup(2);
	size_t n;

	fx->st = strtab__new();
	fx->ft = frames__new(fx->st);
	fx->p = profile__new(fx->ft, VALUE_SAMPLES, false);
	fflush(stderr);
	dup2(fileno(errf), 2);
	fx->ret = folded_read_profile(in, "in.folded", o, fx->p, &fx->stats);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(errf);
	n = fread(fx->err, 1, sizeof(fx->err) - 1, errf);
	fx->err[n] = '\0';
	fclose(errf);
	fclose(in);
}

static void unload(struct fx *fx)
{
	profile__free(fx->p);
	frames__free(fx->ft);
	strtab__free(fx->st);
}

/* Writes the profile as folded text into buf. */
static void dump(struct fx *fx, char *buf, size_t cap)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	CHECK(folded_write(out, fx->p) == 0);
	fclose(out);
	snprintf(buf, cap, "%s", text ? text : "");
	free(text);
}

TEST_CASE(reads_and_merges_stacks)
{
	static const char in[] = "main;mid;alpha 60\nmain;mid;beta 30\nmain;mid;alpha 1\nmain 2\n";
	struct fx fx;
	char out[512];

	load(&fx, in, sizeof(in) - 1, NULL);
	CHECK(fx.ret == 0 && fx.stats.stacks == 4 && fx.stats.skipped == 0);
	CHECK_NUM(profile__total(fx.p), 93);
	dump(&fx, out, sizeof(out));
	CHECK_STR(out, "main 2\nmain;mid;alpha 61\nmain;mid;beta 30\n");
	unload(&fx);
}

TEST_CASE(flamegraph_grammar)
{
	/* Fractions, tabs, CRLF, trailing spaces in the stack and blank lines are accepted as
	 * flamegraph.pl accepts them (CRLF better than it). */
	static const char in[] = "a;b 1.5\r\na;c\t2.\n\n  \na;d  3\na;b 0.5\n";
	struct fx fx;
	char out[512];

	load(&fx, in, sizeof(in) - 1, NULL);
	CHECK(fx.ret == 0);
	CHECK(fx.stats.stacks == 4);
	CHECK_NUM(profile__total(fx.p), 7);
	dump(&fx, out, sizeof(out));
	CHECK_STR(out, "a;b 2\na;c 2\na;d  3\n");
	unload(&fx);
}

TEST_CASE(invalid_lines_reported_and_skipped)
{
	static const char in[] = "a;b 1\nno count here\na;b .5\na;b -3\na;c 2\na;d 1\na;e 1\n";
	struct fx fx;

	load(&fx, in, sizeof(in) - 1, NULL);
	CHECK(fx.ret == 0 && fx.stats.stacks == 4 && fx.stats.skipped == 3);
	CHECK(strstr(fx.err, "in.folded:2: ") != NULL);
	CHECK(strstr(fx.err, "in.folded:3: ") != NULL);
	CHECK(strstr(fx.err, "in.folded:4: ") != NULL);
	CHECK(strstr(fx.err, "in.folded:1:") == NULL);
	CHECK_NUM(profile__total(fx.p), 5);
	unload(&fx);
}

TEST_CASE(strict_mode_fails_on_first_bad_line)
{
	static const char in[] = "a 1\nb 2\nbad\nc 3\n";
	struct folded_opts o = { .strict = true };
	struct fx fx;

	load(&fx, in, sizeof(in) - 1, &o);
	CHECK(fx.ret == -EINVAL);
	CHECK(strstr(fx.err, "in.folded:3: ") != NULL);
	unload(&fx);
}

/* A count of 400 digits is infinite as a double; two counts near DBL_MAX sum to infinity:
 * both lines are refused with file:line, the profile stays finite. */
TEST_CASE(counts_overflowing_to_infinity_are_rejected)
{
	char in[2000] = "a;b 1\na;c ", big[400];
	struct folded_opts o = { .strict = true };
	struct fx fx;

	memset(big, '9', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	strcat(in, big);
	strcat(in, "\na;d 1");
	strcat(in, big + 90); /* 1e309 > DBL_MAX */
	strcat(in, "\na;e 1\n");
	load(&fx, in, strlen(in), NULL);
	CHECK(fx.ret == 0 && fx.stats.stacks == 2 && fx.stats.skipped == 2);
	CHECK(strstr(fx.err, "in.folded:2: count too large") != NULL);
	CHECK(strstr(fx.err, "in.folded:3: count too large") != NULL);
	CHECK(isfinite(profile__total(fx.p)));
	CHECK_NUM(profile__total(fx.p), 2);
	unload(&fx);

	/* Each count finite, their sum not. */
	snprintf(in, sizeof(in), "a 9%s\nb 9%s\nc 9%s\n", big + 92, big + 92, big + 92);
	load(&fx, in, strlen(in), &o);
	CHECK(fx.ret == -EINVAL);
	CHECK(strstr(fx.err, "in.folded:2: counts add up past the largest number") != NULL);
	CHECK(isfinite(profile__total(fx.p)));
	unload(&fx);
	/* Same in the second column of a differential file. */
	snprintf(in, sizeof(in), "a 1 9%s\nb 1 9%s\n", big + 92, big + 92);
	load(&fx, in, strlen(in), NULL);
	CHECK(fx.stats.stacks == 1 && fx.stats.skipped == 1);
	CHECK(strstr(fx.err, "in.folded:2: counts add up") != NULL);
	unload(&fx);
}

TEST_CASE(many_bad_lines_are_summed_up)
{
	char in[4000] = "";
	struct fx fx;

	for (int i = 0; i < 50; i++)
		strcat(in, "garbage\n");
	for (int i = 0; i < 50; i++)
		strcat(in, "a;b 1\n");
	load(&fx, in, strlen(in), NULL);
	CHECK(fx.ret == 0 && fx.stats.skipped == 50 && fx.stats.stacks == 50);
	CHECK(strstr(fx.err, "in.folded:10: ") && !strstr(fx.err, "in.folded:11: "));
	CHECK(strstr(fx.err, "in.folded: 40 more invalid lines skipped") != NULL);
	unload(&fx);
}

/* More invalid lines than stacks: not folded text (a binary file, a log). One line says so,
 * none of the per-line reports, and the load fails. */
TEST_CASE(mostly_invalid_input_fails_in_one_line)
{
	char in[4000] = "a;b 1\n";
	struct fx fx;

	for (int i = 0; i < 2; i++)
		strcat(in, "garbage\n");
	load(&fx, in, strlen(in), NULL);
	CHECK(fx.ret == -EINVAL && fx.stats.skipped == 2 && fx.stats.stacks == 1);
	CHECK_STR(fx.err, "in.folded: not folded stacks: 2 of 3 lines invalid (line 2: expected "
		  "\"frame;frame;... COUNT\" with a decimal count at the end)\n");
	unload(&fx);
	/* As many invalid lines as stacks is still a profile with damage. */
	strcat(in, "a;c 2\n");
	load(&fx, in, strlen(in), NULL);
	CHECK(fx.ret == 0 && fx.stats.stacks == 2);
	CHECK_NUM(profile__total(fx.p), 3);
	unload(&fx);
}

TEST_CASE(two_columns_make_a_differential_profile)
{
	static const char in[] = "a;b 5 7\na;c 3 0\na;d 2\n";
	struct fx fx;
	char out[512];

	load(&fx, in, sizeof(in) - 1, NULL);
	CHECK(fx.stats.two_column && profile__two_column(fx.p));
	CHECK_NUM(profile__total(fx.p), 10);
	CHECK_NUM(profile__total2(fx.p, PROFILE_ROOT), 9);
	dump(&fx, out, sizeof(out));
	CHECK_STR(out, "a;b 5 7\na;c 3 0\na;d 2 2\n");
	unload(&fx);
}

TEST_CASE(nul_bytes_long_lines_and_truncation)
{
	size_t big = 1 << 20;
	char *in = malloc(big + 64);
	struct fx fx;
	char out[256];
	uint32_t kid;

	/* A NUL inside a frame name, a 1 MB frame name, and a last line cut mid-way. */
	memcpy(in, "a\0b;c 1\n", 8);
	memset(in + 8, 'x', big);
	memcpy(in + 8 + big, " 2\nd;e", 6);
	load(&fx, in, 8 + big + 6, NULL);
	CHECK(fx.ret == 0 && fx.stats.stacks == 2 && fx.stats.skipped == 1);
	CHECK(strstr(fx.err, "in.folded:3: ") != NULL);
	kid = profile__node(fx.p, PROFILE_ROOT)->first_child;
	CHECK(profile__child_count(fx.p, PROFILE_ROOT) == 2);
	/* The big frame is interned whole. */
	CHECK(frames__name_len(fx.ft, profile__node(fx.p, kid)->frame) == big ||
	      frames__name_len(fx.ft, profile__node(fx.p, profile__node(fx.p, kid)->next_sibling)->frame) == big);
	unload(&fx);
	load(&fx, "a\0b;c 1\n", 8, NULL);
	dump(&fx, out, sizeof(out));
	CHECK_STR(out, "a\xef\xbf\xbd" "b;c 1\n");
	unload(&fx);
	free(in);
}

TEST_CASE(writer_escapes_separators_and_controls)
{
	struct fx fx;
	char out[512];
	uint32_t f[2];

	load(&fx, "", 0, NULL);
	f[0] = frames__intern_name(fx.ft, "std::map<a;b>", 13);
	f[1] = frames__intern_name(fx.ft, "x\ny 12", 6);
	CHECK(profile__add_stack(fx.p, f, 2, 3) == 0);
	dump(&fx, out, sizeof(out));
	CHECK_STR(out, "std::map<a\xcd\xbe" "b>;x\xef\xbf\xbdy_12 3\n");
	unload(&fx);
}

TEST_CASE(sorted_input_prefix_reuse_matches_unsorted)
{
	static const char sorted[] = "a;b;c 1\na;b;c;d 2\na;b;e 3\na;bb;c 4\na;b 5\nab;b 6\n";
	static const char shuffled[] = "ab;b 6\na;b 5\na;bb;c 4\na;b;e 3\na;b;c;d 2\na;b;c 1\n";
	struct fx x, y;
	char ox[512], oy[512];

	load(&x, sorted, sizeof(sorted) - 1, NULL);
	load(&y, shuffled, sizeof(shuffled) - 1, NULL);
	dump(&x, ox, sizeof(ox));
	dump(&y, oy, sizeof(oy));
	CHECK_STR(ox, oy);
	CHECK_STR(ox, "a;b 5\na;b;c 1\na;b;c;d 2\na;b;e 3\na;bb;c 4\nab;b 6\n");
	CHECK(profile__node_count(x.p) == profile__node_count(y.p));
	unload(&x);
	unload(&y);
}

/* The resident kilobytes of the mapping that starts at addr, from /proc/self/smaps; -1 if not
 * found. */
static long mapping_rss_kb(const void *addr)
{
	char line[512], want[32];
	FILE *f = fopen("/proc/self/smaps", "r");
	bool in = false;
	long kb = -1;

	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)addr);
	while (f && fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') && strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, want, strlen(want));
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kb;
}

TEST_CASE(mapped_input_is_given_back_as_parsed)
{
	FILE *tmp = tmpfile();
	struct fx a = { 0 }, b = { 0 };
	struct folded_opts mapped = { .mapped = true };
	size_t size;
	char *map, *copy;

	/* 13 MB of stacks, read from a mapping of the file: the pages parsed are given back
	 * every 8 MB, the profile is the one of the same text in memory. */
	for (int i = 0; i < 500000; i++)
		fprintf(tmp, "main;work%d;leaf%d 1\n", i % 1000, i);
	fflush(tmp);
	size = (size_t)ftell(tmp);
	CHECK(size > (12u << 20));
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fileno(tmp), 0);
	CHECK(map != MAP_FAILED);
	copy = malloc(size);
	memcpy(copy, map, size);
	for (struct fx *x = &a; x; x = x == &a ? &b : NULL) {
		x->st = strtab__new();
		x->ft = frames__new(x->st);
		x->p = profile__new(x->ft, VALUE_SAMPLES, false);
	}
	CHECK(folded_read_profile_mem(map, size, "in.folded", &mapped, a.p, &a.stats) == 0);
	CHECK(mapping_rss_kb(map) >= 0 && mapping_rss_kb(map) < (long)(size / 1024 / 2));
	CHECK(folded_read_profile_mem(copy, size, "in.folded", NULL, b.p, &b.stats) == 0);
	CHECK(a.stats.stacks == 500000 && b.stats.stacks == 500000);
	CHECK(profile__node_count(a.p) == profile__node_count(b.p));
	CHECK_NUM(profile__total(a.p), 500000);
	for (uint32_t id = 0; id < profile__node_count(a.p); id++)
		CHECK(profile__node(a.p, id)->frame == profile__node(b.p, id)->frame &&
		      profile__node(a.p, id)->total == profile__node(b.p, id)->total);
	munmap(map, size);
	free(copy);
	fclose(tmp);
	unload(&a);
	unload(&b);
}

TEST_CASE(reverse_and_empty_frames)
{
	static const char in[] = "a;b;c 2\n;x;;y; 1\n";
	struct folded_opts o = { .reverse = true };
	struct fx fx;
	char out[512];

	load(&fx, in, sizeof(in) - 1, &o);
	dump(&fx, out, sizeof(out));
	/* perl's split keeps inner and leading empty frames, drops trailing ones. */
	CHECK_STR(out, "c;b;a 2\ny;;x; 1\n");
	unload(&fx);
}

int main(void)
{
	RUN(reads_and_merges_stacks);
	RUN(flamegraph_grammar);
	RUN(invalid_lines_reported_and_skipped);
	RUN(mostly_invalid_input_fails_in_one_line);
	RUN(strict_mode_fails_on_first_bad_line);
	RUN(counts_overflowing_to_infinity_are_rejected);
	RUN(many_bad_lines_are_summed_up);
	RUN(two_columns_make_a_differential_profile);
	RUN(nul_bytes_long_lines_and_truncation);
	RUN(writer_escapes_separators_and_controls);
	RUN(sorted_input_prefix_reuse_matches_unsorted);
	RUN(reverse_and_empty_frames);
	RUN(mapped_input_is_given_back_as_parsed);
	HARNESS_EXIT();
}
