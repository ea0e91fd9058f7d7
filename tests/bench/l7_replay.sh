#!/bin/sh
# galatop's own work per L7 message, without the probes or a server: tests/bench/l7_replay.c
# replays records shaped as the capture writes them (wrk against nginx, redis-benchmark GET)
# through the same path live records take, and prints the nanoseconds per exchange. Steady
# where the capture's throughput losses swing with the machine's load: the figure to compare
# when galatop's parsing and tables change (l7.sh's us/op is the same work plus reading the
# ring buffer, on a live server).
. "$(dirname "$0")/env.sh"
make --no-print-directory -s O="$O" "$O/bench/l7_replay" >"$BENCH_TMP/l7_replay.log" 2>&1 ||
	{ cat "$BENCH_TMP/l7_replay.log" >&2; echo "l7_replay: build failed" >&2; exit 1; }
"$O/bench/l7_replay" "${BENCH_L7_EXCHANGES:-500000}"
