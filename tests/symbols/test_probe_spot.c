/* Unit tests for symbols/probe_spot: where an allocator's entry probe goes, on the first bytes
 * of real functions (Debian 12's glibc 2.36 and jemalloc 5.3) and on made-up ones that must
 * keep it at the start. */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "symbols/probe_spot.h"

/* code's spot, the rest of a 64-byte window filled with int3. */
static uint64_t spot(const uint8_t *code, size_t n, unsigned nargs)
{
	uint8_t buf[64];

	memset(buf, 0xcc, sizeof(buf));
	memcpy(buf, code, n < sizeof(buf) ? n : sizeof(buf));
	return probe_spot(buf, sizeof(buf), nargs);
}

TEST_CASE(probe_spot_skips_harmless_starts_to_an_emulated_instruction)
{
	/* jemalloc's malloc: cmp $0x1000,%rdi; ja: the probe on the ja. */
	static const uint8_t je_malloc[] = { 0x48, 0x81, 0xff, 0x00, 0x10, 0x00, 0x00,
					     0x0f, 0x87, 0x93, 0x00, 0x00, 0x00 };
	/* jemalloc's free: loads and moves into rax, rdx, rcx (a TLS read among them) and a
	 * compare before its first branch, at 0x30. */
	static const uint8_t je_free[] = {
		0x48, 0x89, 0xf8,				/* mov %rdi,%rax */
		0x48, 0x8b, 0x15, 0x0e, 0x53, 0x0a, 0x00,	/* mov 0xa530e(%rip),%rdx */
		0x48, 0x89, 0xf9,				/* mov %rdi,%rcx */
		0x48, 0xc1, 0xe8, 0x1a,				/* shr $0x1a,%rax */
		0x48, 0x81, 0xe1, 0x00, 0x00, 0x00, 0xc0,	/* and $..,%rcx */
		0x25, 0xf0, 0x00, 0x00, 0x00,			/* and $0xf0,%eax */
		0x64, 0x48, 0x03, 0x04, 0x25, 0, 0, 0, 0,	/* add %fs:0x0,%rax */
		0x48, 0x01, 0xd0,				/* add %rdx,%rax */
		0x48, 0x3b, 0x88, 0xb0, 0x01, 0x00, 0x00,	/* cmp 0x1b0(%rax),%rcx */
		0x0f, 0x85, 0x8a, 0x00, 0x00, 0x00,		/* jne */
	};
	/* glibc's free: test %rdi,%rdi; je. */
	static const uint8_t gl_free[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0x00, 0x00, 0x00,
					   0x55 };
	/* endbr64; push %rbp. */
	static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 };

	CHECK(spot(je_malloc, sizeof(je_malloc), 1) == 7);
	CHECK(spot(je_free, sizeof(je_free), 1) == 0x30);
	CHECK(spot(gl_free, sizeof(gl_free), 1) == 3);
	CHECK(spot(endbr, sizeof(endbr), 1) == 4);
	/* A function whose probe reads rdx too: jemalloc's free start writes it. */
	CHECK(spot(je_free, sizeof(je_free), 3) == 0);
}

TEST_CASE(probe_spot_stays_at_the_start_when_moving_would_change_what_the_probe_sees)
{
	static const uint8_t push_first[] = { 0x55, 0x48, 0x89, 0xe5 };	      /* push %rbp */
	static const uint8_t writes_rdi[] = { 0x48, 0x89, 0xc7, 0x74, 0x05 };	      /* mov %rax,%rdi */
	static const uint8_t writes_mem[] = { 0x48, 0x89, 0x07, 0x74, 0x05 };	      /* mov %rax,(%rdi) */
	static const uint8_t moves_rsp[] = { 0x48, 0x83, 0xec, 0x08, 0xe8, 0, 0, 0, 0 }; /* sub $8,%rsp */
	static const uint8_t no_branch[] = { 0x48, 0x89, 0xf8, 0x48, 0x8b, 0x00, 0xc3 }; /* ...; ret */

	CHECK(spot(push_first, sizeof(push_first), 1) == 0);
	CHECK(spot(writes_rdi, sizeof(writes_rdi), 1) == 0);
	CHECK(spot(writes_mem, sizeof(writes_mem), 1) == 0);
	CHECK(spot(moves_rsp, sizeof(moves_rsp), 1) == 0);
	CHECK(spot(no_branch, sizeof(no_branch), 1) == 0);
	/* Bytes that are no instruction. */
	CHECK(spot((const uint8_t *)"\x0f\x0b", 2, 1) == 0);
}

int main(void)
{
	RUN(probe_spot_skips_harmless_starts_to_an_emulated_instruction);
	RUN(probe_spot_stays_at_the_start_when_moving_would_change_what_the_probe_sees);
	HARNESS_EXIT();
}
