#!/bin/sh
# Golden tests of `galatop collapse` against stackcollapse-perf.pl's own expected output,
# perf 6.1 input, the CLI's errors, and hostile input.
. "$(dirname "$0")/../lib.sh"
FG="$FIXTURES/flamegraph-tests"
P61="$FIXTURES/perf-script-6.1"

# 7 inputs x 6 options, byte for byte.
for f in "$FG"/*.txt; do
	b=$(basename "$f" .txt)
	for o in pid tid kernel jit all addrs; do
		if "$GALATOP" collapse --$o "$f" >"$TMP/out" 2>"$TMP/err" &&
			cmp -s "$TMP/out" "$FG/results/$b-collapsed-$o.txt"; then
			pass "golden $b --$o"
		else
			fail "golden $b --$o" "$(diff "$TMP/out" "$FG/results/$b-collapsed-$o.txt" | head -3)"
		fi
	done
done

# perf 6.1: period-weighted counts, --samples; a lone header number is the TID (PID "?").
burn="$P61/galatop-burn-fp.txt"
"$GALATOP" collapse "$burn" >"$TMP/burn" 2>"$TMP/err"
nsamples=$(grep -c 'cpu-clock' "$burn")
top=$(sort -k2 -n -r "$TMP/burn" | head -1)
check "6.1 burn-fp top stack" [ "$top" = "burn_fp;__libc_start_call_main;main;mid;spin 1911823632" ]
sum=$(awk '{ s += $NF } END { print s }' "$TMP/burn")
check "6.1 burn-fp counts sum the periods" [ "$sum" = "$((nsamples * 2004008))" ]
"$GALATOP" collapse --samples "$burn" >"$TMP/burn-s"
ssum=$(awk '{ s += $NF } END { print s }' "$TMP/burn-s")
check "6.1 burn-fp --samples counts samples" [ "$ssum" = "$nsamples" ]
check "6.1 burn-fp --samples top stack" grep -qx 'burn_fp;__libc_start_call_main;main;mid;spin 954' "$TMP/burn-s"
"$GALATOP" collapse --pid "$burn" >"$TMP/burn-p"
check "6.1 burn-fp --pid root is comm-?" [ "$(cut -d';' -f1 "$TMP/burn-p" | sort -u)" = "burn_fp-?" ]
"$GALATOP" collapse --tid "$burn" >"$TMP/burn-t"
check "6.1 burn-fp --tid root is comm-?/TID" [ "$(cut -d';' -f1 "$TMP/burn-t" | sort -u)" = "burn_fp-?/9717" ]

# DWARF stacks keep the leaves: 60/30/10 within 5 points.
"$GALATOP" collapse --samples "$P61/galatop-burn-nofp-dwarf.txt" >"$TMP/dwarf"
split=$(awk '/;leaf_(alpha|beta|gamma);/ { for (l in a) ; n = $NF; t += n
		if ($0 ~ /leaf_alpha/) a1 += n; else if ($0 ~ /leaf_beta/) b1 += n; else g1 += n }
	END { printf "%d %d %d", 100 * a1 / t, 100 * b1 / t, 100 * g1 / t }' "$TMP/dwarf")
set -- $split
check "6.1 dwarf leaf split near 60/30/10 ($split)" \
	[ "$1" -ge 55 -a "$1" -le 65 -a "$2" -ge 25 -a "$2" -le 35 -a "$3" -ge 5 -a "$3" -le 15 ]
"$GALATOP" collapse --pid --kernel "$P61/galatop-system-wide.txt" >"$TMP/sys"
check "6.1 system-wide: python3 with its unknown pid" grep -q '^python3-?;' "$TMP/sys"
check "6.1 system-wide: kernel frames annotated" grep -q '^python3-?;.*_\[k\] [0-9]*$' "$TMP/sys"

# Reading stdin, "-" or nothing.
"$GALATOP" collapse --tid - <"$FG/perf-java-stacks-01.txt" >"$TMP/stdin"
check "stdin via -" cmp -s "$TMP/stdin" "$FG/results/perf-java-stacks-01-collapsed-tid.txt"
cat "$FG/perf-dd-stacks-01.txt" | "$GALATOP" collapse --kernel >"$TMP/stdin2"
check "stdin without FILE" cmp -s "$TMP/stdin2" "$FG/results/perf-dd-stacks-01-collapsed-kernel.txt"

# Errors.
"$GALATOP" collapse --bogus "$burn" >"$TMP/out" 2>"$TMP/err"
rc=$?
printf "galatop collapse: unknown option '--bogus'\nTry 'galatop help collapse'.\n" >"$TMP/want"
check "unknown option: exit 2" [ "$rc" = 2 ]
check "unknown option: message" cmp -s "$TMP/err" "$TMP/want"
check "unknown option: no output" [ ! -s "$TMP/out" ]
"$GALATOP" collapse --event-filter >"$TMP/out" 2>"$TMP/err"
check "missing option value: exit 2" [ $? = 2 ]
"$GALATOP" collapse "$TMP/does-not-exist.txt" >"$TMP/out" 2>"$TMP/err"
rc=$?
echo "galatop: cannot open $TMP/does-not-exist.txt: No such file or directory" >"$TMP/want"
check "missing file: exit 1" [ "$rc" = 1 ]
check "missing file: message" cmp -s "$TMP/err" "$TMP/want"
check "help collapse" sh -c '"$GALATOP" help collapse | grep -q -- --event-filter'

# The event filter and its warning (which names the skipped event, as the script does).
f="$FG/perf-cycles-instructions-01.txt"
"$GALATOP" collapse "$f" >"$TMP/out" 2>"$TMP/err"
check "event filter: warning" grep -qx 'Filtering for events of type: cycles' "$TMP/err"
"$GALATOP" collapse --event-filter cycles "$f" >"$TMP/cyc" 2>"$TMP/err"
check "event filter: explicit, no warning" [ ! -s "$TMP/err" ]
check "event filter: explicit picks cycles" [ -s "$TMP/cyc" ] && ! cmp -s "$TMP/cyc" "$TMP/out"

# Hostile input: NUL bytes, a 1 MB line, a file cut mid-sample, random bytes.
printf 'ab\000c 1 1.0: 5 cycles: \n\t1 f\000g (x)\n\n' >"$TMP/nul"
"$GALATOP" collapse "$TMP/nul" >"$TMP/out" 2>"$TMP/err"
check "NUL bytes: exit 0" [ $? = 0 ]
check "NUL bytes: stack kept" cmp -s "$TMP/out" "$(printf 'ab\000c;f\000g 5\n' >"$TMP/want"; echo "$TMP/want")"
{ printf 'big 1 1.0: 7 cycles: \n\t1 '; head -c 1048576 /dev/zero | tr '\0' x; printf ' (m)\n\t2 main (m)\n\n'; } >"$TMP/long"
"$GALATOP" collapse "$TMP/long" >"$TMP/out" 2>"$TMP/err"
check "1 MB frame: exit 0" [ $? = 0 ]
check "1 MB frame: one stack of the right size" [ "$(wc -c <"$TMP/out")" = $((1048576 + 12)) ]
head -c 1048576 /dev/zero | tr '\0' y >"$TMP/longgarbage"
"$GALATOP" collapse "$TMP/longgarbage" >"$TMP/out" 2>"$TMP/err"
check "1 MB garbage line: fails, no output" [ $? != 0 -a ! -s "$TMP/out" ]
check "1 MB garbage line: one line says why" [ "$(cat "$TMP/err")" = \
	"galatop: $TMP/longgarbage: not perf script output: 1 of 1 lines unrecognized" ]
size=$(wc -c <"$burn")
head -c $((size / 2)) "$burn" >"$TMP/cut"
"$GALATOP" collapse --samples "$TMP/cut" >"$TMP/out" 2>"$TMP/err"
rc=$?
got=$(awk '{ s += $NF } END { print s }' "$TMP/out")
want=$(head -c $((size / 2)) "$burn" | grep -c '^$')
check "truncated file: exit 0, complete samples only ($got of $want)" [ "$rc" = 0 -a "$got" = "$want" ]
head -c 200000 /dev/urandom >"$TMP/rand"
"$GALATOP" collapse --all --addrs --tid "$TMP/rand" >"$TMP/out" 2>"$TMP/err"
check "random bytes: fails, no output" [ $? != 0 -a ! -s "$TMP/out" ]
check "random bytes: one line says why" sh -c "[ \$(wc -l <'$TMP/err') = 1 ] &&
	grep -q 'rand: not perf script output: [0-9]* of [0-9]* lines unrecognized\$' '$TMP/err'"
cat "$TMP/rand" "$FG/perf-dd-stacks-01.txt" "$TMP/rand" | "$GALATOP" collapse >/dev/null 2>"$TMP/err"
check "random bytes around a small profile: mostly invalid, fails" [ $? != 0 ]
check "random bytes around a small profile: one line names standard input" \
	grep -q '^galatop: standard input: not perf script output' "$TMP/err"
# A few bad lines in a real profile: still a profile, the lines are reported. The garbage has
# no blanks and no '#': random bytes with blanks match stackcollapse-perf.pl's header rule (a
# blank, digits, a blank) about once in 30 lines of 2000 bytes, and are then rightly a sample's
# header; a line that starts with '#' is a comment.
{ head -c 2000 /dev/urandom | tr -d '\n\t\v\f\r #'; echo; cat "$FG/perf-dd-stacks-01.txt"; } >"$TMP/damaged"
"$GALATOP" collapse "$TMP/damaged" >"$TMP/out" 2>"$TMP/err"
check "one garbage line before a profile: exit 0, stacks kept" [ $? = 0 -a -s "$TMP/out" ]
check "one garbage line before a profile: reported" grep -q '^Unrecognized line: ' "$TMP/err"

# With perl and the real script around, compare on the perf 6.1 files too (single-number
# headers: the script's comm-? with --pid/--tid).
sc=$(command -v stackcollapse-perf.pl 2>/dev/null)
for d in "$FLAMEGRAPH_DIR" "$FIXTURES/../anchors/FlameGraph"; do
	[ -z "$sc" ] && [ -n "$d" ] && [ -f "$d/stackcollapse-perf.pl" ] && sc="$d/stackcollapse-perf.pl"
done
if [ -n "$sc" ] && command -v perl >/dev/null; then
	for f in "$P61"/*.txt; do
		for o in "" --kernel --jit --all --addrs --pid --tid; do
			perl "$sc" $o "$f" >"$TMP/want" 2>/dev/null
			"$GALATOP" collapse $o "$f" >"$TMP/out" 2>/dev/null
			check "vs stackcollapse-perf.pl: $(basename "$f") $o" cmp -s "$TMP/out" "$TMP/want"
		done
	done
else
	skip "vs stackcollapse-perf.pl on perf 6.1 input" "perl or stackcollapse-perf.pl not found"
fi
