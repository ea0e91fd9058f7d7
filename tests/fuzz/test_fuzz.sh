#!/bin/sh
# Every libFuzzer target fuzz/fuzz_*.c (built by `make test` into $O/fuzz) runs for FUZZ_TIME
# seconds (default 10) from its seeds in fuzz/seeds/<target>; a crash, leak, sanitizer report or
# timeout fails the run and keeps the reproducing input in $O/fuzz/crash-<target>-*.
. tests/lib.sh
: "${O:=build}"
t=${FUZZ_TIME:-10}
for src in fuzz/fuzz_*.c; do
	[ -f "$src" ] || continue
	n=$(basename "$src" .c)
	bin="$O/fuzz/$n"
	if [ ! -x "$bin" ]; then fail "fuzz_$n" "$bin not built (make test builds it)"; continue; fi
	if [ -n "$(ls -A "fuzz/seeds/$n" 2>/dev/null)" ]; then pass "fuzz_${n}_has_seeds"
	else fail "fuzz_${n}_has_seeds" "no seed inputs in fuzz/seeds/$n"; fi
	corpus="$O/fuzz/corpus-$n"; mkdir -p "$corpus"
	seeds=; [ -d "fuzz/seeds/$n" ] && seeds="fuzz/seeds/$n"
	"$bin" -max_total_time="$t" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-artifact_prefix="$O/fuzz/crash-$n-" -print_final_stats=1 "$corpus" $seeds \
		>"$TMP/$n.log" 2>&1
	rc=$?
	runs=$(awk '/^stat::number_of_executed_units:/ { print $2 }' "$TMP/$n.log")
	if [ "$rc" = 0 ] && [ "${runs:-0}" -gt 0 ]; then
		pass "fuzz_$n ($runs inputs in ${t}s)"
	else
		fail "fuzz_$n" "exit $rc after ${runs:-0} inputs; input kept as $(ls "$O/fuzz/crash-$n-"* 2>/dev/null | head -1)"
		grep -E 'ERROR|SUMMARY|#[0-9]+ +(INITED|DONE)|^ +#[0-9]+ ' "$TMP/$n.log" | head -25
	fi
done
