#!/bin/sh
# The growth probe (--type growth, docs/leak.md): anonymous memory mapped and not unmapped, by
# the stack that mapped it, from the brk/mmap/munmap syscall tracepoints. tests/tools/grower
# maps 8 MiB (map_early), then 4 s later 16 MiB of which it unmaps 4 MiB (map_late), moves
# the break up by 4 MiB and back down by 1 MiB (brk_grow), and leaks 1 and 3 MiB through
# malloc (whose heap grows by brk): each function's bytes are exact (malloc's within its
# heap's padding), the total agrees with the kernel's RssAnon (everything is touched), the
# .gtop's history and heat map show each phase's growth, and the live view's `o` reaches
# growth on a running process and shows what it maps then. Needs root and BPF (CI).
. tests/lib.sh

need_root_bpf growth || exit 0
[ -x "$TOOLS/grower" ] || { fail growth "test workloads not built (make tools)"; exit 0; }
PIDS=""
trap 'kill $PIDS 2>/dev/null; wait; tmux -L "$SOCK" kill-server 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
MiB=1048576

# Stack by DWARF unwinding (the default): glibc's syscall wrappers keep no frame pointer.
"$GALATOP" record --type growth -o "$TMP/g.folded" -o "$TMP/g.gtop" -o "$TMP/g.svg" \
	-- "$TOOLS/grower" 4 >"$TMP/g.out" 2>"$TMP/g.err" &
g=$!
wait_until 600 grep -q ready "$TMP/g.out"
sleep 1
kill -INT $g
wait $g
rc=$?
if [ $rc = 0 ] && [ -s "$TMP/g.folded" ] && grep -q ready "$TMP/g.out"; then
	pass growth_record
else
	fail growth_record "exit $rc: $(tail -5 "$TMP/g.err")"; exit 0
fi
truth() { awk -v l="$1" '$1 == "truth" && $2 == l { print $3 }' "$TMP/g.out"; }
ok=1
why=""
for f in map_early map_late brk_grow; do
	got=$(frame_bytes "$TMP/g.folded" $f)
	[ "$got" = "$(truth $f)" ] || { ok=0; why="$why $f $got (want $(truth $f));"; }
done
if [ $ok = 1 ]; then pass growth_exact
else fail growth_exact "$why"; fi
# malloc's heap grows by brk in steps of 128 KiB and more, padded: its growth under malloc
# (sysmalloc, leak_early's and leak_late's but also stdio's first buffer) is at least the
# 4 MiB leaked, at most 512 KiB more.
heap=$(frame_bytes "$TMP/g.folded" sysmalloc)
leaked=$(( $(truth leak_early) + $(truth leak_late) ))
late=$(frame_bytes "$TMP/g.folded" leak_late)
if [ "$heap" -ge "$leaked" ] && [ "$heap" -le $((leaked + 512 * 1024)) ] && [ "$late" -ge $((3 * MiB - 256 * 1024)) ]; then
	pass growth_malloc_heap
else
	fail growth_malloc_heap "malloc's heap grew by $heap for $leaked leaked; leak_late's $late"
fi
# The kernel's count: RssAnon (every page grower mapped is touched) against the total, within
# 1.5 MiB (RssAnon also holds its stack and the copied pages of its libraries' data; the
# total, malloc's untouched heap padding).
total=$(folded_total "$TMP/g.folded")
rss=$(awk '$1 == "rss" { print $3 * 1024 }' "$TMP/g.out")
if [ -n "$rss" ] && near "$total" "$rss" $((3 * MiB / 2)) && [ "$total" -gt $((27 * MiB)) ]; then
	pass growth_rss_anon
else
	fail growth_rss_anon "growth total $total, RssAnon $rss"
fi
if grep -q "growth: [1-9][0-9]* anonymous mappings and [1-9][0-9]* unmaps recorded; .* $total bytes held" "$TMP/g.err"; then
	pass growth_summary
else
	fail growth_summary "$(grep growth: "$TMP/g.err")"
fi
if grep -q "Anonymous Memory Growth Flame Graph" "$TMP/g.svg" && grep -q map_late "$TMP/g.svg"; then
	pass growth_svg
else
	fail growth_svg "$(grep -o '<text[^>]*>[^<]*</text>' "$TMP/g.svg" | head -2)"
fi
# The snapshot: its total is the folded one, its heat map's level ends there, and each
# phase's range holds that phase's mappings.
heat_levels "$TMP/g.gtop" growth >"$TMP/g.levels" 2>"$TMP/g.perr"
end_lv=$(tail -1 "$TMP/g.levels" | awk '{ print $2 }')
if [ "$(gtop_total "$TMP/g.gtop" growth)" = "$total" ] && [ "$end_lv" = "$total" ]; then
	pass growth_gtop_heat_level
else
	fail growth_gtop_heat_level "gtop $(gtop_total "$TMP/g.gtop" growth), heat level $end_lv, folded $total $(head -2 "$TMP/g.perr")"
fi
# The level first holds map_early's 8 MiB, then map_late's 16 MiB on top.
t_e=$(awk -v b=$((8 * MiB)) '$2 >= b { print $1; exit }' "$TMP/g.levels")
t_l=$(awk -v b=$((24 * MiB)) '$2 >= b { print $1; exit }' "$TMP/g.levels")
mid=$(awk -v a="$t_e" -v b="$t_l" 'BEGIN { printf "%.2f", (a + b) / 2 }')
"$GALATOP" fold --type growth --range "0-$mid" "$TMP/g.gtop" >"$TMP/g1.folded" 2>"$TMP/g.rerr"
"$GALATOP" fold --type growth --range "$mid-$(awk -v t="$t_l" 'BEGIN { print t + 10 }')" "$TMP/g.gtop" \
	>"$TMP/g2.folded" 2>>"$TMP/g.rerr"
e1=$(frame_bytes "$TMP/g1.folded" map_early)
l1=$(frame_bytes "$TMP/g1.folded" map_late)
e2=$(frame_bytes "$TMP/g2.folded" map_early)
l2=$(frame_bytes "$TMP/g2.folded" map_late)
if [ -n "$t_e" ] && [ -n "$t_l" ] && [ "$e1" = $((8 * MiB)) ] && [ "$l1" = 0 ] &&
	[ "$e2" = 0 ] && [ "$l2" = $((12 * MiB)) ]; then
	pass growth_history_ranges
else
	fail growth_history_ranges "levels at ${t_e}s, ${t_l}s; 0-$mid: map_early $e1 map_late $l1; after: $e2 $l2 $(head -2 "$TMP/g.rerr")"
fi

# --- The live view on a running process: o reaches growth ------------------------------------
if command -v tmux >/dev/null 2>&1; then
	"$TOOLS/grower" 4 >"$TMP/lv.out" &
	L=$!
	PIDS="$PIDS $L"
	wait_until 100 grep -q "phase 1" "$TMP/lv.out"
	tm new-session -d -s gr -x 200 -y 40 "'$GALATOP' -p $L; echo \$? > '$TMP/rc'; sleep 30"
	pane_wait gr samples 200
	for want in offcpu mem leak growth; do
		tm send-keys -t gr o
		pane_wait gr "profile: $want" 100 || break
	done
	# Phase two maps after the attach: map_late's 12 MiB show.
	if pane_has gr "profile: growth" && wait_until 600 grep -q ready "$TMP/lv.out" &&
		pane_wait gr map_late 300; then
		pass growth_live_o
	else
		fail growth_live_o "$(head -12 "$TMP/screen"; tail -1 "$TMP/screen")"
	fi
	tm send-keys -t gr q
	wait_file "$TMP/rc" 100
	[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass growth_live_q_exits_0 ||
		fail growth_live_q_exits_0 "rc=$(cat "$TMP/rc" 2>/dev/null)"
	kill $L 2>/dev/null
	wait $L 2>/dev/null
else
	skip growth_live_o "tmux is missing (make deps)"
fi

check growth_no_leftovers no_gt_progs
