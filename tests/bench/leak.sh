#!/bin/sh
# The leak probe's cost (--type leak, docs/leak.md) next to heaptrack's (Debian's), on the
# same programs: ns per malloc+free pair at 16, 64 and 4096 bytes (tests/tools/mallocpair),
# with galatop's uprobe.session probes and with entry uprobes and uretprobes
# (--leak-uretprobe), beside the floor any uprobe sets: empty BPF programs on the same
# functions (tests/tools/uprobe_cost: the traps alone),
# the throughput a multi-threaded churn keeps (tests/tools/leaky: four threads allocating
# blocks and freeing them in each other) and galatop's own CPU and RSS meanwhile, then
# redis-server (jemalloc) under redis-benchmark with the probe attached to it. Figures, not
# pass/fail; each line says the load. Targets: a smaller churn loss than heaptrack's, at most
# 10% on redis-benchmark. Needs root (BPF), heaptrack, redis-server and redis-benchmark.
. "$(dirname "$0")/env.sh"
T="$BENCH_TMP/leak"
mkdir -p "$T"
SECS=${LEAK_SECS:-3}
PORT=18850
load() { cut -d' ' -f1 /proc/loadavg; }
if [ "$(id -u)" != 0 ]; then echo "leak: needs root (BPF)"; exit 0; fi
for c in heaptrack redis-server redis-benchmark redis-cli; do
	command -v $c >/dev/null 2>&1 || { echo "leak: $c is missing (make deps)"; exit 0; }
done

# under WAY CMD...: CMD alone (none), under galatop's leak probe at its default sampling
# (galatop: uprobe.session where the kernel has it; galatop-uret: --leak-uretprobe), or under
# heaptrack; its standard output in $T/out, galatop's CPU seconds and peak RSS (KiB) in $gcpu
# and $grss.
under() {
	way=$1
	shift
	gcpu="" grss=""
	case $way in
	none) "$@" >"$T/out" 2>/dev/null ;;
	galatop | galatop-uret)
		/usr/bin/time -f '%U %S %M' -o "$T/gtime" "$GALATOP_OPT" record --type leak \
			$([ $way = galatop-uret ] && echo --leak-uretprobe) \
			-o "$T/g.folded" -- "$@" >"$T/out" 2>"$T/g.err"
		read -r u s m <"$T/gtime"
		gcpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		grss=$m ;;
	heaptrack) heaptrack -o "$T/ht" "$@" >"$T/out" 2>/dev/null; rm -f "$T"/ht*.zst ;;
	esac
}
val() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) v = $(i + 1) } END { print v }' "$T/out"; }

echo "ns per malloc+free pair, one thread, ${SECS} s each (tests/tools/mallocpair), galatop at"
echo "its default sampling; floor: empty programs on malloc and free (tests/tools/uprobe_cost):"
for size in 16 64 4096; do
	line="  $size B:"
	for way in none galatop galatop-uret heaptrack; do
		under $way "$TOOLS/mallocpair" $size "$SECS"
		line="$line $way $(val ns_per_pair) ns,"
	done
	"$TOOLS/uprobe_cost" $size "$SECS" >"$T/floor"
	fl() { awk -v w="$1" '$1 == w { print $3 }' "$T/floor"; }
	echo "$line load $(load)"
	echo "    floor: entry uprobes $(fl entry) ns, + uretprobe on malloc $(fl entry+uretprobe) ns," \
		"session skipping the returns $(fl session_skip) ns, session with them $(fl session_ret) ns"
done

echo "churn, 4 threads for ${SECS} s handing blocks of 16 B-64 KiB to each other (tests/tools/leaky):"
under none "$TOOLS/leaky" "$SECS" 4
base=$(val churned)
echo "  alone: $base blocks, load $(load)"
for way in galatop galatop-uret heaptrack; do
	under $way "$TOOLS/leaky" "$SECS" 4
	n=$(val churned)
	extra=""
	[ -n "$gcpu" ] && extra=", galatop's own CPU ${gcpu} s, peak RSS $((grss / 1024)) MB"
	echo "  $way: $n blocks, throughput loss $(awk -v b="$base" -v n="$n" \
		'BEGIN { printf "%.1f", 100 * (1 - n / b) }')%$extra, load $(load)"
done

echo "redis-server (jemalloc) under redis-benchmark -t set,get,lpush,lpop -n 200000 -c 8:"
redis-server --port $PORT --bind 127.0.0.1 --save '' --appendonly no --dir "$T" \
	--daemonize no >"$T/redis.log" 2>&1 &
R=$!
i=0
while ! redis-cli -p $PORT ping >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
rps() {
	redis-benchmark -p $PORT -t set,get,lpush,lpop -n 200000 -c 8 -q 2>/dev/null |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /requests/) { s += $(i - 1); n++ } }
			END { printf "%.0f", n ? s / n : 0 }'
}
for round in 1 2; do
	a=$(rps)
	"$GALATOP_OPT" record --type leak -p $R -o "$T/r.folded" 2>"$T/r.err" &
	g=$!
	i=0
	while ! grep -q recording "$T/r.err" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	b=$(rps)
	kill -INT $g
	wait $g
	echo "  round $round: alone $a requests/s, with the leak probe $b requests/s: loss" \
		"$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", (a > 0 ? 100 * (1 - b / a) : 0) }')%" \
		"(target <= 10%), load $(load)"
done
grep 'leak:' "$T/r.err" | sed 's/^/  /'
# What the traps add: allocator calls per request (from the summary) times the trap floor per
# call (half the session_skip pair above), as a share of one CPU at the rate seen with the
# probe: the loss stays small while redis-server's one thread has that much to spare (here
# the clients and the loopback set the pace), and nears it when that thread is the bottleneck.
calls=$(sed -n 's/.*sampled of \([0-9]*\) calls.*/\1/p' "$T/r.err" | head -1)
awk -v c="$calls" -v n=800000 -v f="$(awk '$1 == "session_skip" { print $3 / 2 }' "$T/floor")" \
	-v b="$b" 'BEGIN { if (c > 0 && b > 0) { x = c / n * f / 1000
		printf "  %.1f allocator calls per request x %.0f ns per trapped call (the floor) = %.1f us of traps per request: %.0f%% of one CPU at the %.0f requests/s seen with the probe\n", c / n, f, x, x * b / 1e4, b } }'
kill $R 2>/dev/null
wait $R 2>/dev/null
