/* Unit tests for export/perfdata on real perf.data files recorded with perf 6.1 (the fuzz
 * seeds, fuzz/seeds/fuzz_perfdata): file and pipe mode, frame-pointer and DWARF stacks,
 * truncated and corrupted copies. Names depend on the files on this machine, so the counts
 * are checked against what perf script printed for the same files: samples, frames, periods. */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "export/perfdata.h"
#include "symbols/symbols.h"

#define SEEDS "fuzz/seeds/fuzz_perfdata/"

struct tally {
	uint64_t samples, frames, total;
	size_t not_burn; /* stacks whose root frame is not the workload's comm */
	const char *comm;
};

static int tally_add(void *ctx, const char *stack, size_t len, uint64_t count)
{
	struct tally *t = ctx;
	size_t n = strlen(t->comm);

	t->samples++;
	t->total += count;
	for (size_t i = 0; i < len; i++)
		t->frames += stack[i] == ';';
	if (len <= n || memcmp(stack, t->comm, n) || stack[n] != ';')
		t->not_burn++;
	return 0;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	*len = buf ? (size_t)n : 0;
	fclose(f);
	return buf;
}

/* One cache for every test: kallsyms read once. */
static struct sym_cache *cache(void)
{
	static struct sym_cache *sc;

	if (!sc) {
		sc = sym_cache__new();
		sym_cache__set_lines(sc, 0);
		sym_cache__set_inlines(sc, 0);
	}
	return sc;
}

static int run(const unsigned char *buf, size_t len, const char *comm, struct tally *t,
	       struct perfdata_stats *st, char *err, size_t errlen)
{
	static const struct perfscript_opts o = { .warn = NULL };

	memset(t, 0, sizeof(*t));
	t->comm = comm;
	return perfdata_collapse(buf, len, "x.data", cache(), &o, tally_add, t, st, err, errlen);
}

/* samples, frames and periods as `perf script -i FILE` printed them */
static void check_file(const char *name, const char *comm, uint64_t samples, uint64_t frames,
		       uint64_t period)
{
	size_t len;
	unsigned char *buf = slurp(name, &len);
	struct perfdata_stats st;
	struct tally t;
	char err[512];

	CHECK(buf != NULL);
	if (!buf)
		return;
	CHECK(perfdata_sniff(buf, len));
	CHECK(run(buf, len, comm, &t, &st, err, sizeof(err)) == 0);
	CHECK_STR(err, "");
	CHECK_NUM(t.samples, samples);
	CHECK_NUM(st.samples, samples);
	CHECK_NUM(t.frames, frames); /* one ';' per frame after the comm */
	CHECK_NUM(t.total, period);
	CHECK_NUM(t.not_burn, 0);
	CHECK_NUM(st.bad, 0);
	free(buf);
}

TEST_CASE(file_mode_frame_pointers)
{
	check_file(SEEDS "burn-fp.data", "burn", 54, 270, 271356750);
}

TEST_CASE(pipe_mode_frame_pointers)
{
	check_file(SEEDS "burn-pipe.data", "burn", 54, 270, 271356750);
}

/* Pipe mode with DWARF stacks: every sample and period read, and the user stacks handed to
 * the unwinder (how deep they unwind depends on the recorded binary being on this machine:
 * tests/cli/test_perfdata.sh records one here and checks the whole stacks). */
TEST_CASE(pipe_mode_dwarf_read)
{
	size_t len;
	unsigned char *buf = slurp(SEEDS "burn-dwarf-pipe.data", &len);
	struct perfdata_stats st;
	struct tally t;
	char err[512];

	CHECK(buf && perfdata_sniff(buf, len));
	CHECK(buf && run(buf, len, "burn_nofp", &t, &st, err, sizeof(err)) == 0);
	CHECK_STR(err, "");
	CHECK_NUM(t.samples, 14);
	CHECK_NUM(st.samples, 14);
	CHECK_NUM(t.total, 285714282);
	CHECK_NUM(t.not_burn, 0);
	CHECK_NUM(st.bad, 0);
	CHECK_NUM(st.unwound, 14);
	free(buf);
}

/* A file cut anywhere in its header or data section is refused as truncated, in one line;
 * cut in the feature sections after the data it still reads every sample. */
TEST_CASE(truncated_files_are_refused)
{
	size_t len, data_end = 264 + 8696; /* perf report --header-only: data offset + size */
	unsigned char *buf = slurp(SEEDS "burn-fp.data", &len);
	struct tally t;
	char err[512];
	int bad = 0;

	CHECK(buf != NULL);
	for (size_t cut = 0; buf && cut < len; cut += cut < data_end ? 61 : 4099) {
		int ret = run(buf, cut, "burn", &t, NULL, err, sizeof(err));

		if (cut < 8 ? ret != -EINVAL
		    : cut < data_end ? ret != -EINVAL || !strstr(err, "x.data: truncated perf.data")
				     : ret != 0 || t.samples != 54)
			bad++;
		if (ret && strchr(err, '\n'))
			bad++;
	}
	CHECK_NUM(bad, 0);
	free(buf);
	/* pipe mode: a cut inside a record is truncation, at a record's end a shorter stream */
	buf = slurp(SEEDS "burn-pipe.data", &len);
	for (size_t cut = 16; buf && cut < len; cut += 37) {
		int ret = run(buf, cut, "burn", &t, NULL, err, sizeof(err));

		if (ret && (ret != -EINVAL || !strstr(err, "truncated")))
			bad++;
	}
	CHECK_NUM(bad, 0);
	free(buf);
}

/* Flipped bytes anywhere: an error in one line or samples, never a crash (ASan watches). */
TEST_CASE(corrupted_files_never_crash)
{
	const char *files[] = { SEEDS "burn-fp.data", SEEDS "burn-pipe.data",
				SEEDS "burn-dwarf-pipe.data" };
	uint64_t seed = 42;
	int bad = 0;

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		size_t len;
		unsigned char *buf = slurp(files[f], &len), *copy = buf ? malloc(len) : NULL;

		for (int round = 0; copy && round < 200; round++) {
			struct tally t;
			char err[512];
			int ret;

			memcpy(copy, buf, len);
			for (int k = 0; k < 4; k++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				copy[8 + (seed >> 33) % (len - 8)] ^= (unsigned char)(seed >> 20) | 1;
			}
			ret = run(copy, len, "burn", &t, NULL, err, sizeof(err));
			if (ret && (ret != -EINVAL || !err[0] || strchr(err, '\n')))
				bad++;
		}
		free(copy);
		free(buf);
	}
	CHECK_NUM(bad, 0);
}

TEST_CASE(foreign_input_is_refused)
{
	static const char text[] = "burn 1 1.0: 5 cycles:\n\t1 main (burn)\n\n";
	unsigned char junk[4096];
	struct tally t;
	char err[512];

	CHECK(!perfdata_sniff(text, sizeof(text) - 1));
	CHECK(run((const unsigned char *)text, sizeof(text) - 1, "burn", &t, NULL, err,
		  sizeof(err)) == -EINVAL);
	CHECK_STR(err, "x.data: not a perf.data file");
	memset(junk, 0x5a, sizeof(junk));
	memcpy(junk, "PERFILE2", 8);
	CHECK(run(junk, sizeof(junk), "burn", &t, NULL, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "x.data: ") == err && strstr(err, "perf.data") != NULL);
	CHECK_NUM(t.samples, 0);
}

int main(void)
{
	RUN(file_mode_frame_pointers);
	RUN(pipe_mode_frame_pointers);
	RUN(pipe_mode_dwarf_read);
	RUN(truncated_files_are_refused);
	RUN(corrupted_files_never_crash);
	RUN(foreign_input_is_refused);
	sym_cache__free(cache());
	HARNESS_EXIT();
}
