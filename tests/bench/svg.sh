#!/bin/sh
# Benchmark: `galatop svg` on a generated folded profile of 200k distinct stacks, 5-60 frames
# deep (~4.9 M tree nodes, ~180 MB); prints wall time and peak RSS, and flamegraph.pl's when
# perl and flamegraph.pl are found (PATH or $FLAMEGRAPH_DIR). Targets: <= 1 s, <= 300 MB.
# Uses $GALATOP_OPT (the -O2 binary); $BENCH_STACKS changes the number of stacks. Figures, not
# pass/fail: exits non-zero only when galatop fails.
. "$(dirname "$0")/env.sh"
dir=$(mktemp -d "$BENCH_TMP/svg.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
n=${BENCH_STACKS:-200000}

cc -O2 -o "$dir/gen_folded" tests/bench/gen_folded.c || exit 1
"$dir/gen_folded" "$n" >"$dir/in.folded" 2>"$dir/gen.log" || exit 1
echo "svg: input: $(cat "$dir/gen.log" | sed 's/^gen_folded: //'), $(($(wc -c <"$dir/in.folded") / 1048576)) MiB"

# measure NAME CMD...: runs CMD with stdout to $dir/NAME.out, sets $secs and $kb.
measure() {
	name=$1; shift
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%e %M' -o "$dir/$name.time" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
		rc=$?
		read -r secs kb <"$dir/$name.time"
	else
		start=$(date +%s.%N)
		"$@" >"$dir/$name.out" 2>"$dir/$name.err"
		rc=$?
		secs=$(echo "$(date +%s.%N) - $start" | bc)
		kb=0
	fi
	return $rc
}

if ! measure galatop "$GALATOP_OPT" svg "$dir/in.folded"; then
	echo "svg: galatop svg failed:"; cat "$dir/galatop.err"; exit 1
fi
g_secs=$secs; g_kb=$kb
frames=$(grep -c '<g>' "$dir/galatop.out")
echo "svg: galatop svg: ${g_secs} s, $((g_kb / 1024)) MB peak RSS, $frames frames drawn, $(($(wc -c <"$dir/galatop.out") / 1024)) KiB of SVG"
ok=1
awk -v s="$g_secs" 'BEGIN { exit !(s <= 1.0) }' || { echo "svg: over the 1 s target"; ok=0; }
[ "$g_kb" -le $((300 * 1024)) ] || { echo "svg: over the 300 MB target"; ok=0; }

fg=""
if [ -n "${FLAMEGRAPH_DIR:-}" ] && [ -f "$FLAMEGRAPH_DIR/flamegraph.pl" ]; then
	fg="$FLAMEGRAPH_DIR/flamegraph.pl"
elif command -v flamegraph.pl >/dev/null 2>&1; then
	fg=$(command -v flamegraph.pl)
elif [ -f "$FIXTURES/../anchors/FlameGraph/flamegraph.pl" ]; then
	fg="$FIXTURES/../anchors/FlameGraph/flamegraph.pl"
fi

# The 20k-stack input side by side (target: galatop >= 60x flamegraph.pl): both draw the same
# frames; then vs_anchor, flamegraph.pl once a round and galatop 5 runs.
if [ -n "$fg" ] && command -v perl >/dev/null 2>&1; then
	"$dir/gen_folded" 20000 >"$dir/in20k.folded" 2>/dev/null
	"$GALATOP_OPT" svg "$dir/in20k.folded" >"$dir/g20.svg" 2>/dev/null
	perl "$fg" "$dir/in20k.folded" >"$dir/f20.svg" 2>/dev/null
	echo "svg: 20k stacks: galatop draws $(grep -c '<title>' "$dir/g20.svg") frames," \
		"flamegraph.pl $(grep -c '<title>' "$dir/f20.svg")"
	vs_anchor "${SVG_ROUNDS:-3}" 1 5 60 "svg: 20k stacks" flamegraph.pl \
		"perl '$fg' '$dir/in20k.folded'" "galatop svg" "'$GALATOP_OPT' svg '$dir/in20k.folded'"
fi
if [ -n "$fg" ] && command -v perl >/dev/null 2>&1; then
	if measure flamegraph perl "$fg" "$dir/in.folded"; then
		echo "svg: flamegraph.pl: ${secs} s, $((kb / 1024)) MB peak RSS"
		awk -v a="$secs" -v b="$g_secs" -v c="$kb" -v d="$g_kb" 'BEGIN {
			printf "svg: galatop is %.1fx faster and uses %.1fx less memory\n", a / (b > 0 ? b : 0.001), c / (d > 0 ? d : 1) }'
	else
		echo "svg: flamegraph.pl failed: $(tail -1 "$dir/flamegraph.err")"
	fi
else
	echo "svg: flamegraph.pl absent (set FLAMEGRAPH_DIR to compare): no ratio"
fi
if [ $ok = 1 ]; then echo "svg: within the targets (1 s, 300 MB)"; else echo "svg: OVER TARGET"; fi
exit 0
