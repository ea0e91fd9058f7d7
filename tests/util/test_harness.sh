#!/bin/sh
# The test harness itself (tests/harness.h, tests/lib.sh, tests/run.sh): a case that did not
# run never prints PASS; SKIP fails under CI, N/A never does; run.sh counts each kind apart.
# The sample tests run in a directory of their own, so their lines are not this test's.
. tests/lib.sh
H=$PWD/tests
# shown FILE: the sample's lines, indented so that run.sh does not count them as ours.
shown() { sed 's/^/    | /' "$1"; }

# C: a case that passes, one that skips, one that does not apply, one that fails before it
# would skip (FAIL wins), and a skip outside any case.
cat >"$TMP/sample.c" <<'EOF'
#include "harness.h"

TEST_CASE(runs) { CHECK(1 + 1 == 2); }
TEST_CASE(cannot) { SKIP_CASE("needs %s", "a tool"); }
TEST_CASE(not_here) { NA_CASE("not applicable on cgroup v2 (a v1 case)"); }
TEST_CASE(fails_then_skips)
{
	CHECK(0);
	SKIP_CASE("too late");
}

int main(void)
{
	RUN(runs);
	RUN(cannot);
	RUN(not_here);
	RUN(fails_then_skips);
	harness_skip("outside", "no such device");
	HARNESS_EXIT();
}
EOF
if cc -I"$H" -o "$TMP/sample" "$TMP/sample.c" 2>"$TMP/cc.err"; then
	(unset CI; "$TMP/sample") >"$TMP/local.out"; local_rc=$?
	CI=true "$TMP/sample" >"$TMP/ci.out"; ci_rc=$?
	printf '%s\n' "PASS: runs" "SKIP: cannot: needs a tool" \
		"N/A: not_here: not applicable on cgroup v2 (a v1 case)" "FAIL: fails_then_skips" \
		"SKIP: outside: no such device" >"$TMP/local.want"
	printf '%s\n' "PASS: runs" "FAIL: cannot: cannot run under CI: needs a tool" \
		"N/A: not_here: not applicable on cgroup v2 (a v1 case)" "FAIL: fails_then_skips" \
		"FAIL: outside: cannot run under CI: no such device" >"$TMP/ci.want"
	grep -v '^  check failed' "$TMP/local.out" | cmp -s - "$TMP/local.want" && [ $local_rc = 1 ] &&
		pass harness_c_lines || { fail harness_c_lines "exit $local_rc"; shown "$TMP/local.out"; }
	grep -v '^  check failed' "$TMP/ci.out" | cmp -s - "$TMP/ci.want" && [ $ci_rc = 1 ] &&
		pass harness_c_lines_under_ci || { fail harness_c_lines_under_ci "exit $ci_rc"; shown "$TMP/ci.out"; }
else
	fail harness_c_lines "cc: $(head -3 "$TMP/cc.err")"
	fail harness_c_lines_under_ci "cc failed"
fi

# Shell: skip and na, with and without CI.
sample_sh() { sh -c '. tests/lib.sh; pass a; skip b "no tmux"; na c "not applicable on cgroup v2"'; }
[ "$(unset CI; sample_sh)" = "$(printf 'PASS: a\nSKIP: b: no tmux\nN/A: c: not applicable on cgroup v2')" ] &&
	pass harness_sh_lines || { fail harness_sh_lines; (unset CI; sample_sh) | shown -; }
[ "$(CI=1 sample_sh)" = "$(printf 'PASS: a\nFAIL: b: cannot run under CI: no tmux\nN/A: c: not applicable on cgroup v2')" ] &&
	pass harness_sh_lines_under_ci || { fail harness_sh_lines_under_ci; CI=1 sample_sh | shown -; }

# run.sh: the N/A count on its own line, then the closing line CI reads; a test that only
# skips is ok, one under CI fails the run.
mkdir -p "$TMP/tree/tests/x"
cp "$H/run.sh" "$H/lib.sh" "$TMP/tree/tests/"
printf '. tests/lib.sh\npass one\nskip two "no perl"\nna three "not applicable here"\n' >"$TMP/tree/tests/x/test_s.sh"
(cd "$TMP/tree" && unset CI T && O=b sh tests/run.sh) >"$TMP/run.out" 2>&1; run_rc=$?
if [ $run_rc = 0 ] && [ "$(tail -n 2 "$TMP/run.out")" = "$(printf '1 not applicable\n1 passed, 0 failed, 1 skipped')" ] &&
	grep -q '^ok   x/test_s.sh (1 passed, 1 skipped, 1 not applicable) [0-9]*s$' "$TMP/run.out"; then
	pass harness_run_counts
else
	fail harness_run_counts "exit $run_rc"; shown "$TMP/run.out"
fi
(cd "$TMP/tree" && unset T && CI=true O=b sh tests/run.sh) >"$TMP/runci.out" 2>&1; run_rc=$?
if [ $run_rc != 0 ] && [ "$(tail -n 1 "$TMP/runci.out")" = "1 passed, 1 failed, 0 skipped" ]; then
	pass harness_run_fails_skip_under_ci
else
	fail harness_run_fails_skip_under_ci "exit $run_rc"; shown "$TMP/runci.out"
fi
