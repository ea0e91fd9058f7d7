#!/bin/sh
# galatop diff: difffolded.pl's union of two folded files, sorted; -n and -s.
. "$(dirname "$0")/../lib.sh"
G=$GALATOP

printf 'main;a 10\nmain;b 5\nmain;a 2\nmain;c;0x7f00dead 3\n' >"$TMP/before"
printf 'main;b 20\nmain;d 4\nmain;c;0x7f00beef 6\n' >"$TMP/after"
"$G" diff "$TMP/before" "$TMP/after" >"$TMP/out" 2>"$TMP/err"
printf 'main;a 12 0\nmain;b 5 20\nmain;c;0x7f00beef 0 6\nmain;c;0x7f00dead 3 0\nmain;d 0 4\n' >"$TMP/want"
check "union, sums, zeros, sorted: exact bytes" cmp -s "$TMP/out" "$TMP/want"

"$G" diff -s "$TMP/before" "$TMP/after" >"$TMP/out"
printf 'main;a 12 0\nmain;b 5 20\nmain;c;0x... 3 6\nmain;d 0 4\n' >"$TMP/want"
check "-s merges stacks differing in addresses" cmp -s "$TMP/out" "$TMP/want"

# -n: before's total 20 scaled to after's 30: each count * 30 / 20, truncated.
"$G" diff -n "$TMP/before" "$TMP/after" >"$TMP/out"
printf 'main;a 18 0\nmain;b 7 20\nmain;c;0x7f00beef 0 6\nmain;c;0x7f00dead 4 0\nmain;d 0 4\n' >"$TMP/want"
check "-n normalizes before to after's total" cmp -s "$TMP/out" "$TMP/want"
"$G" diff -ns "$TMP/before" "$TMP/after" >"$TMP/out"
printf 'main;a 18 0\nmain;b 7 20\nmain;c;0x... 4 6\nmain;d 0 4\n' >"$TMP/want"
check "-ns together" cmp -s "$TMP/out" "$TMP/want"

printf 'x 1.5\nbroken line\n' >"$TMP/frac"
"$G" diff "$TMP/frac" "$TMP/after" >"$TMP/out" 2>"$TMP/err"
check "fractional counts kept, bad line reported as file:line" sh -c "grep -qx 'x 1.5 0' '$TMP/out' &&
	grep -q 'frac:2:' '$TMP/err'"

"$G" diff "$TMP/before" - <"$TMP/after" >"$TMP/out2"
"$G" diff "$TMP/before" "$TMP/after" >"$TMP/out"
check "standard input as AFTER" cmp -s "$TMP/out" "$TMP/out2"

"$G" diff "$TMP/before" "$TMP/after" | "$G" svg >"$TMP/d.svg" 2>/dev/null
check "diff | svg: differential graph" grep -q '<title>b (20 samples, 66.67%; +50.00%)</title>' "$TMP/d.svg"

"$G" diff "$TMP/before" >/dev/null 2>"$TMP/err"
check "one file: exit 2" sh -c "[ $? = 2 ] && grep -q 'expected two files' '$TMP/err'"
"$G" diff -x "$TMP/before" "$TMP/after" >/dev/null 2>"$TMP/err"
check "unknown option: exit 2" sh -c "[ $? = 2 ] && grep -q \"unknown option '-x'\" '$TMP/err'"
"$G" diff "$TMP/before" "$TMP/missing" >/dev/null 2>"$TMP/err"
check "missing file: exit 1" sh -c "[ $? = 1 ] && grep -q 'galatop: cannot open $TMP/missing: No such file or directory' '$TMP/err'"
"$G" diff --help | grep -q -- '-n' && "$G" diff --help | grep -q -- '-s'
check "--help" [ $? = 0 ]
