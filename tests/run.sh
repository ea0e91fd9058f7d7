#!/bin/sh
# Runs every unit test binary and every shell test, then prints "N not applicable" and, last,
# "N passed, N failed, N skipped". T=SUBSTRING runs only the tests whose name contains it; a
# test's line ends with its wall time. Each test prints "PASS: name", "FAIL: name", "SKIP:
# name: reason" (cannot run here; FAIL under CI) or "N/A: name: reason" (does not apply to this
# machine by nature) lines.
cd "$(dirname "$0")/.." || exit 1
O=${O:-build}; case $O in /*) ;; *) O="$PWD/$O";; esac
BIN=${BIN:-galatop}; case $BIN in /*) ;; *) BIN="$PWD/$BIN";; esac
export O
export GALATOP="$O/asan/galatop"
export GALATOP_OPT="$BIN"
export FIXTURES="${FIXTURES:-$PWD/../shared/fixtures}"
export TOOLS="$O/tools"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
out=$O/test-logs
rm -rf "$out"; mkdir -p "$out"
pass=0; fail=0; skip=0; na=0
run_one() { # name, command...
	name=$1; shift
	case "$name" in *"${T:-}"*) ;; *) return ;; esac
	log="$out/$(echo "$name" | tr '/' '_').log"
	t0=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	p=$(grep -c '^PASS: ' "$log"); f=$(grep -c '^FAIL: ' "$log"); s=$(grep -c '^SKIP: ' "$log")
	a=$(grep -c '^N/A: ' "$log")
	p=${p:-0} f=${f:-0} s=${s:-0} a=${a:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1; echo "FAIL: $name (exit $rc)" >>"$log"
	elif [ $((p + f + s + a)) -eq 0 ]; then
		# A test that reports nothing (or whose log is gone) has shown nothing.
		f=1; echo "FAIL: $name (no PASS, FAIL, SKIP or N/A line)" >>"$log"
	fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s)); na=$((na + a))
	if [ "$f" -gt 0 ]; then
		echo "FAIL $name ($p passed, $f failed) ${secs}s"; grep -v '^PASS: ' "$log" | tail -n 30 | sed 's/^/    /'
	else
		echo "ok   $name ($p passed, $s skipped, $a not applicable) ${secs}s" |
			sed 's/, 0 skipped//; s/, 0 not applicable//'
		grep -E '^(SKIP|N/A): ' "$log" | sed 's/^/    /'
	fi
}
for t in "$O"/asan/tests/*/test_*; do
	[ -x "$t" ] && run_one "${t#$O/asan/tests/}" "$t"
done
for t in tests/*/test_*.sh; do
	[ -f "$t" ] && run_one "${t#tests/}" sh "$t"
done
# Apart from the closing line, which CI's reader parses: not applicable is neither a pass nor
# a skip (a case that cannot run here, which fails under CI).
echo "$na not applicable"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
