#!/bin/sh
# The leak probe's cost (--type leak, docs/leak.md) next to heaptrack's (Debian's), on the
# same programs, in alternating rounds so that every way sees the same load:
# - ns per malloc+free pair at 16, 64 and 4096 bytes (tests/tools/mallocpair) alone, under
#   galatop's in-process sampler (the default for -- CMD: libgalatop-leak.so preloaded,
#   uprobes on its markers only), under galatop's allocator uprobes (--leak-uprobes:
#   uprobe.session), under heaptrack;
# - the throughput a multi-threaded churn keeps (tests/tools/leaky: four threads allocating
#   blocks and freeing them in each other) under the same three, with galatop's own CPU and
#   RSS;
# - once: the floor any uprobe sets (tests/tools/uprobe_cost: empty BPF programs on malloc and
#   free, and on a marker with and without its 5-byte nop);
# - redis-server (jemalloc) under redis-benchmark with the probe attached to it (-p: the
#   in-process sampler injected, the default; and --leak-uprobes: allocator uprobes), alone
#   and probed in alternating rounds.
# Figures, not pass/fail; each line says the load. Targets: a smaller churn loss than
# heaptrack's, at most 10% on redis-benchmark. Needs root (BPF), heaptrack, redis-server and
# redis-benchmark. LEAK_SECS (3) per run, LEAK_ROUNDS (3), LEAK_REDIS_ROUNDS (4).
. "$(dirname "$0")/env.sh"
T="$BENCH_TMP/leak"
mkdir -p "$T"
SECS=${LEAK_SECS:-3}
ROUNDS=${LEAK_ROUNDS:-3}
REDIS_ROUNDS=${LEAK_REDIS_ROUNDS:-4}
PORT=18962
load() { cut -d' ' -f1 /proc/loadavg; }
if [ "$(id -u)" != 0 ]; then echo "leak: needs root (BPF)"; exit 0; fi
for c in heaptrack redis-server redis-benchmark redis-cli; do
	command -v $c >/dev/null 2>&1 || { echo "leak: $c is missing (make deps)"; exit 0; }
done
WAYS="none preload uprobes heaptrack"

# under WAY CMD...: CMD alone (none), under galatop's leak probe at its default sampling
# (preload: the in-process sampler; uprobes: --leak-uprobes), or under heaptrack; its
# standard output in $T/out; for galatop, its own CPU seconds (its summary's, without the
# command's), its programs' kernel time (from the sampled BPF statistics) and the peak RSS of
# the largest of galatop and its command (KiB) in $gcpu, $gprobes and $grss.
under() {
	way=$1
	shift
	gcpu="" grss="" gprobes=""
	case $way in
	none) "$@" >"$T/out" 2>/dev/null ;;
	preload | uprobes)
		/usr/bin/time -f '%M' -o "$T/gtime" "$GALATOP_OPT" record --type leak \
			$([ $way = uprobes ] && echo --leak-uprobes) \
			-o "$T/g.folded" -- "$@" >"$T/out" 2>"$T/g.err"
		gcpu=$(sed -n 's/.*galatop CPU [0-9.]*% of one core (\([0-9.]*\) s in.*/\1/p' "$T/g.err")
		gprobes=$(sed -n 's/.*its probes in the kernel [0-9.]*% ([a-z ]*\([0-9.]*\) s).*/\1/p' "$T/g.err")
		grss=$(cat "$T/gtime") ;;
	heaptrack) heaptrack -o "$T/ht" "$@" >"$T/out" 2>/dev/null; rm -f "$T"/ht*.zst "$T"/ht*.gz ;;
	esac
}
val() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) v = $(i + 1) } END { print v }' "$T/out"; }
# med FILE KEY: the median of the second column of FILE's lines whose first is KEY.
med() { awk -v k="$2" '$1 == k { print $2 }' "$1" | median; }

: >"$T/pairs"
: >"$T/churn"
for round in $(seq "$ROUNDS"); do
	echo "round $round of $ROUNDS (load $(load)):"
	for size in 16 64 4096; do
		line="  ns per malloc+free pair, $size B:"
		for way in $WAYS; do
			under $way "$TOOLS/mallocpair" $size "$SECS"
			ns=$(val ns_per_pair)
			echo "$size-$way $ns" >>"$T/pairs"
			line="$line $way $ns,"
		done
		echo "$line load $(load)"
	done
	line="  churn, 4 threads, ${SECS} s:"
	for way in $WAYS; do
		under $way "$TOOLS/leaky" "$SECS" 4
		n=$(val churned)
		[ $way = none ] && base=$n
		loss=$(awk -v b="$base" -v n="$n" 'BEGIN { printf "%.1f", 100 * (1 - n / b) }')
		echo "$way $loss" >>"$T/churn"
		[ -n "$gcpu" ] && echo "$way-cpu $gcpu" >>"$T/churn" &&
			echo "$way-probes $gprobes" >>"$T/churn" && echo "$way-rss $((grss / 1024))" >>"$T/churn"
		line="$line $way $n blocks ($loss% lost),"
	done
	echo "$line load $(load)"
done
echo "medians of $ROUNDS rounds, ns per malloc+free pair (galatop at its default sampling, 512 KiB):"
for size in 16 64 4096; do
	line="  $size B:"
	for way in $WAYS; do line="$line $way $(med "$T/pairs" $size-$way),"; done
	echo "$line"
done
echo "churn throughput loss, medians of $ROUNDS rounds (target: galatop's below heaptrack's):"
echo "  galatop in-process sampler $(med "$T/churn" preload)% (galatop's own CPU" \
	"$(med "$T/churn" preload-cpu) s, its programs in the kernel about $(med "$T/churn" preload-probes) s," \
	"peak RSS $(med "$T/churn" preload-rss) MB), galatop allocator uprobes $(med "$T/churn" uprobes)%" \
	"(CPU $(med "$T/churn" uprobes-cpu) s, programs $(med "$T/churn" uprobes-probes) s)," \
	"heaptrack $(med "$T/churn" heaptrack)%, load $(load)"

"$TOOLS/uprobe_cost" 16 1 >"$T/floor"
fl() { awk -v w="$1" '$1 == w { print $3 }' "$T/floor"; }
echo "floor, 16 B (empty programs, tests/tools/uprobe_cost): entry uprobes $(fl entry) ns per pair," \
	"session skipping the returns $(fl session_skip) ns; a marker call: on a 5-byte nop" \
	"$(fl marker_nop5) ns (optimized by the kernel: $(awk '$1 == "marker_nop5" { print $5 }' "$T/floor"))," \
	"on a push $(fl marker_push) ns; load $(load)"

echo "redis-server (jemalloc) under redis-benchmark -t set,get,lpush,lpop -n 200000 -c 8, the leak"
echo "probe attached to it (-p: the in-process sampler injected, the default; --leak-uprobes:"
echo "uprobes on jemalloc), $REDIS_ROUNDS alternating rounds of the three:"
redis-server --port $PORT --bind 127.0.0.1 --save '' --appendonly no --dir "$T" \
	--daemonize no >"$T/redis.log" 2>&1 &
R=$!
i=0
while ! redis-cli -p $PORT ping >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
# rps: "REQUESTS/S CPU_US": the mean requests/s of redis-benchmark's four tests, and
# redis-server's CPU time (user + system, from /proc) per request over them.
ticks() { awk '{ print $14 + $15 }' "/proc/$R/stat"; }
rps() {
	t0=$(ticks)
	redis-benchmark -p $PORT -t set,get,lpush,lpop -n 200000 -c 8 -q >"$T/rb.out" 2>/dev/null
	awk -v t0="$t0" -v t1="$(ticks)" -v hz="$(getconf CLK_TCK)" '
		{ for (i = 1; i <= NF; i++) if ($i ~ /requests/) { s += $(i - 1); n++ } }
		END { printf "%.0f %.2f", n ? s / n : 0, (t1 - t0) / hz * 1e6 / 800000 }' "$T/rb.out"
}
# probed NAME OPTIONS...: the requests/s with galatop record --type leak OPTIONS -p on
# redis-server, its messages in $T/NAME.err.
probed() {
	n=$1
	shift
	"$GALATOP_OPT" record --type leak "$@" -p $R -o "$T/$n.folded" 2>"$T/$n.err" &
	g=$!
	i=0
	while ! grep -q recording "$T/$n.err" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	rps
	kill -INT $g
	wait $g
}
# first WORDS / second WORDS: a rps answer's requests/s, its CPU per request.
first() { echo "$1" | cut -d' ' -f1; }
second() { echo "$1" | cut -d' ' -f2; }
# lost A1 B A2: the loss of B against the mean of A1 and A2 (measured just before and after).
lost() {
	awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN { m = (a + c) / 2
		printf "%.1f", (m > 0 ? 100 * (1 - b / m) : 0) }'
}
: >"$T/redis"
# Each probed run between two runs alone: the load of the moment is in its baseline.
for round in $(seq "$REDIS_ROUNDS"); do
	r1=$(rps)
	ri=$(probed ri)
	r2=$(rps)
	ru=$(probed r --leak-uprobes)
	r3=$(rps)
	a1=$(first "$r1") bi=$(first "$ri") a2=$(first "$r2") bu=$(first "$ru") a3=$(first "$r3")
	li=$(lost "$a1" "$bi" "$a2")
	lu=$(lost "$a2" "$bu" "$a3")
	echo "injected $li" >>"$T/redis"
	echo "uprobes $lu" >>"$T/redis"
	for x in "alone $r1" "alone $r2" "alone $r3" "injected $ri" "uprobes $ru"; do
		set -- $x
		echo "cpu-$1 $3" >>"$T/redis"
	done
	echo "  round $round: alone $a1, injected sampler $bi ($li% lost), alone $a2, allocator" \
		"uprobes $bu ($lu% lost), alone $a3 requests/s; redis-server CPU per request" \
		"$(second "$r1")/$(second "$ri")/$(second "$r2")/$(second "$ru")/$(second "$r3") us;" \
		"load $(load)"
done
echo "  median loss: injected sampler $(med "$T/redis" injected)% (target <= 10%)," \
	"allocator uprobes $(med "$T/redis" uprobes)%; redis-server's CPU per request (medians):" \
	"alone $(med "$T/redis" cpu-alone) us, injected sampler $(med "$T/redis" cpu-injected) us," \
	"allocator uprobes $(med "$T/redis" cpu-uprobes) us"
grep 'leak:' "$T/ri.err" | sed 's/^/  injected: /'
grep 'leak:' "$T/r.err" | sed 's/^/  uprobes: /'
b=$bu
# With the allocator uprobes, what the traps add: allocator calls per request (from the summary) times the trap floor per
# call (half the session_skip pair above), as a share of one CPU at the rate seen with the
# probe: the loss stays small while redis-server's one thread has that much to spare (the
# clients and the loopback set the pace), and nears it when that thread is the bottleneck.
calls=$(sed -n 's/.*sampled of \([0-9]*\) calls.*/\1/p' "$T/r.err" | head -1)
awk -v c="$calls" -v n=800000 -v f="$(awk '$1 == "session_skip" { print $3 / 2 }' "$T/floor")" \
	-v b="$b" 'BEGIN { if (c > 0 && b > 0) { x = c / n * f / 1000
		printf "  %.1f allocator calls per request x %.0f ns per trapped call (the floor) = %.1f us of traps per request: %.0f%% of one CPU at the %.0f requests/s seen with the probe\n", c / n, f, x, x * b / 1e4, b } }'
kill $R 2>/dev/null
wait $R 2>/dev/null
