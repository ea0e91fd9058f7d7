#!/bin/sh
# Render time of the flame view: a generated tree of 111,111 nodes (fanout 10, depth 5)
# drawn at 200x50 through `galatop view --bench-render N` (dump mode, no terminal).
# Prints the time per frame: layout+draw (after new data or a zoom), cached layout, and with
# the terminal output ncurses would send. The goal is under 5 ms per frame.
. "$(dirname "$0")/env.sh"
BIN=$GALATOP_OPT
FRAMES=${FRAMES:-200}
TMP=$(mktemp -d "$BENCH_TMP/tui.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
awk 'BEGIN {
	for (i = 0; i < 100000; i++) {
		s = "root"; x = i
		for (d = 0; d < 5; d++) { s = s ";fn_" d "_" (x % 10); x = int(x / 10) }
		print s, 1 + (i * 7919) % 97
	}
}' >"$TMP/tree.folded"
"$BIN" view --dump --size 200x50 --bench-render "$FRAMES" "$TMP/tree.folded"
