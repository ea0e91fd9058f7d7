#!/bin/sh
# record --trigger: a workload quiet for 4 s, then burning both CPUs in burst_hot() for 3 s,
# then quiet again; the trigger is its own CPU % (-- CMD), from the kernel's accounting. One
# capture, at the burst, holding burst_hot; a quiet command gives none. Bad conditions: one line
# naming the place. Needs root and BPF.
. tests/lib.sh
need_root_bpf trigger || exit 0
[ -x "$TOOLS/burst" ] || { fail trigger "test workloads not built (make tools)"; exit 0; }

# Bad expressions, before anything loads.
for bad in 'cpu>>80' 'mem>1' 'cpu>80 load>1' ''; do
	"$GALATOP" record --trigger "$bad" -d 1 2>"$TMP/err"
	rc=$?
	if [ $rc = 2 ] && head -1 "$TMP/err" | grep -q "^galatop record: --trigger: at "; then :
	else fail "trigger_bad_${bad:-empty}" "rc=$rc $(cat "$TMP/err")"; fi
done
"$GALATOP" record --trigger 'cpu>1' -o "$TMP/x.json" 2>"$TMP/err"
rc=$?
"$GALATOP" record --trigger 'cpu>1' --trigger-before 0 --trigger-after 0 2>>"$TMP/err"
rc2=$?
[ $rc = 2 ] && [ $rc2 = 2 ] && grep -q "writes .gtop, .svg, .folded, .pb.gz or .speedscope.json" "$TMP/err" &&
	grep -q "a capture needs at least 1 s" "$TMP/err" && pass trigger_bad_input_one_line ||
	fail trigger_bad_input_one_line "$(cat "$TMP/err")"

# A burst. The threshold is low because this machine is shared (at load 15 two spinning threads
# get about a quarter of a CPU); quiet, the workload uses none.
mkdir "$TMP/out"
"$GALATOP" record --trigger 'cpu>10' --trigger-before 2 --trigger-after 2 --trigger-cooldown 30 \
	--out-dir "$TMP/out" -o "$TMP/out/cap.folded" -o "$TMP/out/cap.pb.gz" -F 199 -- "$TOOLS/burst" 4 3 \
	>"$TMP/burst.out" 2>"$TMP/burst.err"
n=$(ls "$TMP/out"/galatop-trigger-*.gtop 2>/dev/null | wc -l)
if [ "$n" = 1 ] && grep -q "^galatop: 1 capture$" "$TMP/burst.err"; then pass trigger_fires_once_on_burst
else fail trigger_fires_once_on_burst "$n snapshots: $(cat "$TMP/burst.err")"; fi
# When: the capture's moment (in its name) lies within the burst (the first reading that saw
# it can be up to a second late, the name rounds down).
read -r _ bs be <"$TMP/burst.out"
g=$(ls "$TMP/out"/galatop-trigger-*.gtop 2>/dev/null | head -1)
stamp=$(basename "$g" .gtop | sed 's/galatop-trigger-//')
at=$(date -d "$(echo "$stamp" | sed 's/\(....\)\(..\)\(..\)-\(..\)\(..\)\(..\)/\1-\2-\3 \4:\5:\6/')" +%s 2>/dev/null)
if [ -n "$at" ] && awk -v a="$at" -v s="$bs" -v e="$be" 'BEGIN { exit !(a >= int(s) - 1 && a <= e + 1) }'; then
	pass trigger_moment_in_burst
else
	fail trigger_moment_in_burst "capture at $at ($stamp), burst $bs..$be"
fi
f=$(ls "$TMP/out"/cap-*.folded 2>/dev/null | head -1)
hot=$(awk '/;burst_hot/ { n += $NF } END { print n + 0 }' "$f" 2>/dev/null)
all=$(awk '{ n += $NF } END { print n + 0 }' "$f" 2>/dev/null)
if [ "${hot:-0}" -ge 20 ] && [ "$hot" -ge $((all * 9 / 10)) ]; then pass trigger_capture_holds_burst_function
else fail trigger_capture_holds_burst_function "burst_hot $hot of $all samples in $f"; fi
# The pprof file of the capture, named as the folded one, holds the same stacks.
pb=$(ls "$TMP/out"/cap-*.pb.gz 2>/dev/null | head -1)
if [ "${pb%.pb.gz}" = "${f%.folded}" ] && [ -s "$f" ] &&
	[ "$("$GALATOP" fold "$pb" 2>&1)" = "$("$GALATOP" fold "$f" 2>&1)" ]; then pass trigger_capture_pprof
else fail trigger_capture_pprof "'$pb' beside '$f'"; fi
# The snapshot: its range is the 2 s before and after the moment, its profile the burst's, and
# `galatop view` opens it without root.
if zcat "$g" | jq -e '(.meta.end - .meta.start) > 3.9 and (.meta.end - .meta.start) < 4.1' >/dev/null 2>&1 &&
	zcat "$g" | grep -q '"trigger":"cpu>10"'; then
	pass trigger_snapshot_range_and_metadata
else
	fail trigger_snapshot_range_and_metadata "$(zcat "$g" 2>/dev/null | head -c 300)"
fi
if "$GALATOP" view --dump --size 160x40 "$g" 2>&1 | grep -q burst_hot; then pass trigger_snapshot_opens
else fail trigger_snapshot_opens "$("$GALATOP" view --dump --size 160x40 "$g" 2>&1 | head -5)"; fi

# Quiet: a command that only sleeps never fires.
mkdir "$TMP/quiet"
"$GALATOP" record --trigger 'cpu>10' --out-dir "$TMP/quiet" -- sleep 4 2>"$TMP/quiet.err"
if grep -q "^galatop: 0 captures$" "$TMP/quiet.err" && [ -z "$(ls "$TMP/quiet")" ]; then pass trigger_quiet_no_capture
else fail trigger_quiet_no_capture "$(cat "$TMP/quiet.err"; ls "$TMP/quiet")"; fi
no_gt_progs && pass trigger_no_leftovers || fail trigger_no_leftovers "$(gt_leftovers) programs left"
