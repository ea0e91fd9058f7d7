#!/bin/sh
# The L7 capture's memory with many open connections whose requests never get an answer: a
# process opens BENCH_L7_CONNS (10,000) loopback TCP connections to a listener that accepts and
# never reads, and sends one request on each, for each protocol in BENCH_L7_PROTOS (kafka: a
# Produce with acks=-1; http2: the preface, SETTINGS and a GET whose headers fill the HPACK
# table); galatop traces it. Prints galatop's RSS before and after, and per connection (each
# keeps its parser, its HPACK decoders, its waiting request, and the kernel's connection
# entry). Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "l7_conns: skipped (needs root)"; exit 0; }
N=${BENCH_L7_CONNS:-10000}
T=$(mktemp -d "$BENCH_TMP/l7conns.XXXXXX")
pids=""
trap 'kill $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT INT TERM
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# conns PROTO: one measure.
conns() {
	# l7_conns.py listen: accepts N connections, never reads, prints its port. l7_conns.py
	# connect PORT PROTO: on a line of input, opens N connections to PORT with one request on
	# each (two processes: each end needs N descriptors).
	/usr/bin/python3 tests/bench/l7_conns.py "$N" listen >"$T/port" 2>&1 &
	LPY=$!; pids="$pids $LPY"
	for i in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
	rm -f "$T/in" "$T/out" "$T/rec.err"
	mkfifo "$T/in"
	/usr/bin/python3 tests/bench/l7_conns.py "$N" connect "$(cat "$T/port")" "$1" <"$T/in" \
		>"$T/out" 2>&1 &
	PY=$!; pids="$pids $PY"
	exec 3>"$T/in"
	for i in $(seq 100); do grep -q ready "$T/out" && break; sleep 0.1; done
	"$GALATOP_OPT" record --type l7 -p $PY -o "$T/l7.json" 2>"$T/rec.err" &
	GT=$!; pids="$pids $GT"
	for i in $(seq 300); do grep -q 'recording L7' "$T/rec.err" && break; sleep 0.1; done
	sleep 1
	before=$(rss_kib $GT)
	echo go >&3
	for i in $(seq 600); do grep -q sent "$T/out" && break; sleep 0.1; done
	grep -q sent "$T/out" || { echo "l7_conns: the connections did not open: $(tail -2 "$T/out")"; exit 1; }
	sleep 3
	after=$(rss_kib $GT)
	kill -INT $GT; wait $GT
	exec 3>&-
	kill $PY $LPY; wait $PY $LPY 2>/dev/null
	n=$(jq '[.sessions[].req_count] | add // 0' "$T/l7.json")
	p=$(jq -r '[.endpoints[] | "\(.protocol) \(.endpoint)"] | unique | join(", ")' "$T/l7.json")
	echo "l7_conns: $N $1 connections, one unanswered request each ($n requests recorded: $p):"
	echo "  galatop RSS $((before / 1024)) MiB before, $((after / 1024)) MiB with them open:" \
		"$(( (after - before) * 1024 / N )) bytes per connection (load $(cut -d' ' -f1-3 /proc/loadavg))"
}
for proto in ${BENCH_L7_PROTOS:-kafka http2}; do
	conns "$proto"
done
