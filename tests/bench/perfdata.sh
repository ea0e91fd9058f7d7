#!/bin/sh
# Benchmark: `perf script -i F | galatop collapse` against `galatop collapse F` on the same
# perf.data files, recorded here: the burn workload with -g, a system-wide frame-pointer
# capture (-a -g) of a busy machine (below), and a --call-graph dwarf capture of burn_nofp.
# Prints both side by side (wall and CPU seconds), the ratio and whether it meets the target
# (>= 10x end to end), and whether both give the same folded output. Needs root, perf, gcc and
# clang (make deps). Figures, not pass/fail. $BENCH_SECONDS sets the length of the captures (10).
#
# The system-wide capture records what this script runs, so that it is the same on any quiet
# machine: the burn workload, and a build next to it (gcc, then clang, compiling one C file
# over and over: a new compiler process every tenth of a second, libLLVM's, libclang-cpp's
# and cc1's tens of thousands of symbols, and call chains that end in junk addresses, as
# those binaries have no frame pointers); plus whatever else runs on the machine then (the
# bench prints the processes with the most samples).
. "$(dirname "$0")/env.sh"
secs=${BENCH_SECONDS:-10}
if ! command -v perf >/dev/null || [ "$(id -u)" != 0 ]; then
	echo "perfdata: needs root and perf (make deps installs linux-perf): skipped"; exit 0
fi
dir=$(mktemp -d "$BENCH_TMP/perfdata.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM

# run LABEL FILE: whether both give the same folded output, then `perf script | galatop
# collapse` against `galatop collapse` on FILE (vs_anchor, 5 rounds: the pipe 3 runs a round, the
# direct read 30, so that its few milliseconds a run add up past /usr/bin/time's 10 ms steps).
run() {
	samples=$(perf script -i "$2" -F event 2>/dev/null | wc -l)
	echo "perfdata: $1: $(($(wc -c <"$2") / 1048576)) MiB, $samples samples"
	"$GALATOP_OPT" collapse "$2" >"$dir/direct.folded" 2>/dev/null
	perf script -i "$2" 2>/dev/null | "$GALATOP_OPT" collapse >"$dir/pipe.folded" 2>/dev/null
	sed -f tests/cli/perf_aliases.sed "$dir/pipe.folded" >"$dir/pipe.renamed"
	if cmp -s "$dir/direct.folded" "$dir/pipe.folded"; then
		echo "perfdata: $1: the same folded output both ways"
	elif cmp -s "$dir/direct.folded" "$dir/pipe.renamed"; then
		echo "perfdata: $1: the same folded output both ways once perf's glibc aliases" \
			"are renamed (docs/perfdata.md)"
	else
		# the share of the pipe's weight that galatop gives to the same stacks
		echo "perfdata: $1: folded outputs DIFFER ($(diff "$dir/direct.folded" \
			"$dir/pipe.renamed" | grep -c '^>') of $(wc -l <"$dir/pipe.folded") lines" \
			"of the pipe's, aliases renamed; $(awk '{ n = $NF; sub(/ [^ ]*$/, "") }
			NR == FNR { got[$0] = n; next }
			{ all += n; same += ($0 in got) ? (got[$0] < n ? got[$0] : n) : 0 }
			END { printf "%.1f", all ? 100 * same / all : 0 }' "$dir/direct.folded" \
			"$dir/pipe.renamed")% of its weight on the same stacks)"
	fi
	vs_anchor "${PERFDATA_ROUNDS:-5}" 3 30 10 "perfdata: $1" "perf script | galatop collapse" \
		"perf script -i '$2' | '$GALATOP_OPT' collapse" "galatop collapse perf.data" \
		"'$GALATOP_OPT' collapse '$2'"
}

perf record -q -F 997 -g -o "$dir/burn.data" -- "$TOOLS/burn" "$secs" >/dev/null 2>&1 &&
	run "burn -g, ${secs} s" "$dir/burn.data"
# busy SECS DIR: burn, and the build loop, for SECS seconds
busy='"$TOOLS/burn" "$1" >/dev/null & end=$(($(date +%s) + $1))
while [ "$(date +%s)" -lt "$end" ]; do
	gcc -O2 -c -o "$2/busy_gcc.o" tests/bench/gen_folded.c
	clang -O2 -c -o "$2/busy_clang.o" tests/bench/gen_folded.c
done; wait'
if perf record -q -F 997 -a -g -o "$dir/sys.data" -- sh -c "$busy" sh "$secs" "$dir" \
	>/dev/null 2>&1; then
	echo "perfdata: system-wide: samples by process: $(perf script -i "$dir/sys.data" -F comm \
		2>/dev/null | sort | uniq -c | sort -rn | head -6 |
		awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }')"
	run "system-wide -g (burn + a gcc/clang build), ${secs} s" "$dir/sys.data"
fi
perf record -q -F 997 --call-graph dwarf -o "$dir/dwarf.data" "$TOOLS/burn_nofp" "$((secs / 2))" \
	>/dev/null 2>&1 && run "burn_nofp --call-graph dwarf, $((secs / 2)) s" "$dir/dwarf.data"
exit 0
