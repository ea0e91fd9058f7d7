#!/bin/sh
# Per-second history and ranges: `galatop record -o x.gtop` of a workload with known phases
# (phase_one for 3 s, then phase_two for 3 s) keeps 1 s slices; fold/svg/view --range and
# diff FILE@A-B show the right function per phase; ranges outside the data, on files without
# history and malformed ones give one clear line. Needs root + BPF.
. "$(dirname "$0")/../lib.sh"
need_root_bpf history || exit 0
[ -x "$TOOLS/phases" ] || { fail history "test workloads not built (make tools)"; exit 0; }
G=$GALATOP
X=$TMP/x.gtop

"$G" record -F 199 -o "$X" -- "$TOOLS/phases" 3 3 >/dev/null 2>"$TMP/rec.err"
rc=$?
no_gt_progs && pass history_no_leftover_progs || fail history_no_leftover_progs "$(gt_leftovers) left"
[ $rc = 0 ] && [ -s "$X" ] && pass history_record_gtop || {
	fail history_record_gtop "rc $rc: $(tail -2 "$TMP/rec.err")"; exit 0; }

# The whole recording, and every range together, hold the same samples.
"$G" fold "$X" >"$TMP/all.folded" 2>"$TMP/err"
"$G" fold --range 0-1000 "$X" >"$TMP/wide.folded" 2>>"$TMP/err"
all=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/all.folded")
wide=$(awk '!/^#/ { s += $NF } END { print s + 0 }' "$TMP/wide.folded")
[ "$all" -gt 100 ] && [ "$all" = "$wide" ] && pass history_slices_add_up ||
	fail history_slices_add_up "all $all, range 0-1000 $wide: $(head -2 "$TMP/err")"

# Phase by phase (a second's margin at the switch: slices are whole seconds).
"$G" fold --range 0-2 "$X" >"$TMP/one.folded" 2>"$TMP/err"
"$G" fold --range 4.5-6.5 "$X" >"$TMP/two.folded" 2>>"$TMP/err"
one=$(share "$TMP/one.folded" phase_one phases)
one2=$(share "$TMP/one.folded" phase_two phases)
two=$(share "$TMP/two.folded" phase_two phases)
two1=$(share "$TMP/two.folded" phase_one phases)
near "$one" 100 10 && near "$one2" 0 10 && pass history_fold_range_first_phase ||
	fail history_fold_range_first_phase "phase_one $one%, phase_two $one2% of 0-2 s"
near "$two" 100 10 && near "$two1" 0 10 && pass history_fold_range_second_phase ||
	fail history_fold_range_second_phase "phase_two $two%, phase_one $two1% of 4.5-6.5 s"
head -1 "$TMP/one.folded" | grep -q '^# range 0-2: 0.000-2.000 s' && pass history_fold_range_header ||
	fail history_fold_range_header "$(head -1 "$TMP/one.folded")"

# Clock times: the recording's start, from the snapshot, in local time.
start=$(zcat <"$X" | sed 's/.*"start":\([0-9.]*\).*/\1/')
a=$(date -d "@$(awk -v s="$start" 'BEGIN { printf "%d", s + 4.5 }')" +%H:%M:%S)
b=$(date -d "@$(awk -v s="$start" 'BEGIN { printf "%d", s + 7 }')" +%H:%M:%S)
"$G" fold --range "$a-$b" "$X" >"$TMP/clock.folded" 2>"$TMP/err"
c=$(share "$TMP/clock.folded" phase_two phases)
near "$c" 100 10 && pass history_fold_range_clock || fail history_fold_range_clock "$a-$b: phase_two $c% $(head -1 "$TMP/err")"

# svg and view take the same ranges.
"$G" svg --range 0-2 "$X" >"$TMP/one.svg" 2>"$TMP/err"
grep -q 'range 0-2 (0.00-2.00 s' "$TMP/one.svg" && grep -q phase_one "$TMP/one.svg" &&
	! grep -q phase_two "$TMP/one.svg" && pass history_svg_range ||
	fail history_svg_range "$(head -1 "$TMP/err")"
"$G" view --dump --size 150x30 --range 4.5-6.5 --keys '2' "$X" >"$TMP/view.txt" 2>"$TMP/err"
grep -q 'range 4.50-6.50 s' "$TMP/view.txt" && grep -q phase_two "$TMP/view.txt" &&
	! grep -q phase_one "$TMP/view.txt" && pass history_view_range ||
	fail history_view_range "$(head -3 "$TMP/view.txt"; head -1 "$TMP/err")"

# diff between the phases: phase_one only before, phase_two only after.
"$G" diff "$X@0-2" "$X@4.5-6.5" >"$TMP/diff.folded" 2>"$TMP/err"
awk '/phase_one/ { b1 += $(NF-1); a1 += $NF } /phase_two/ { b2 += $(NF-1); a2 += $NF }
	END { exit !(b1 > 50 && a1 < b1 / 10 && a2 > 50 && b2 < a2 / 10) }' "$TMP/diff.folded" &&
	pass history_diff_ranges || fail history_diff_ranges "$(head -3 "$TMP/diff.folded"; head -1 "$TMP/err")"

# One clear line for every bad range.
"$G" fold --range 100-200 "$X" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q "x.gtop: range 100-200 (100.00-200.00 s) is outside the recording" "$TMP/err" &&
	pass history_range_outside || fail history_range_outside "rc $rc: $(cat "$TMP/err")"
"$G" fold --range 5-2 "$X" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc = 2 ] && grep -q "the end must come after the start" "$TMP/err" && pass history_range_backwards ||
	fail history_range_backwards "rc $rc: $(cat "$TMP/err")"
"$G" svg --range 1-x "$X" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc = 2 ] && grep -q "bad range '1-x'" "$TMP/err" && pass history_range_malformed ||
	fail history_range_malformed "rc $rc: $(cat "$TMP/err")"
"$G" fold --range 0-2 "$TMP/all.folded" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q "needs a .gtop snapshot" "$TMP/err" &&
	pass history_range_on_folded || fail history_range_on_folded "rc $rc: $(cat "$TMP/err")"
# A snapshot without history (an older galatop's) still opens; a range on it says why not.
printf '%s' '{"format":"galatop-snapshot","version":1,"frames":[["a","","user","",0]],"profiles":[{"name":"oncpu","type":"oncpu","value":"samples","nodes":1,"parent":[1],"frame":[0],"self":[5]}]}' |
	gzip -n >"$TMP/old.gtop"
"$G" fold "$TMP/old.gtop" >"$TMP/old.folded" 2>"$TMP/err" && grep -qx 'a 5' "$TMP/old.folded" &&
	pass history_old_snapshot_opens || fail history_old_snapshot_opens "$(cat "$TMP/err")"
"$G" view --range 0-1 --dump "$TMP/old.gtop" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q "no per-second history" "$TMP/err" &&
	pass history_range_without_history || fail history_range_without_history "rc $rc: $(cat "$TMP/err")"
