#!/bin/sh
# --cpu: events of the listed CPUs only, filtered in the kernel. Two busy workloads with
# different functions, pinned with taskset: burn (leaf_alpha) on CPU 1, sli_work (spin) on
# CPU 0. Needs root, BPF and 2 CPUs.
. tests/lib.sh
need_root_bpf cpu || exit 0
[ -x "$TOOLS/burn" ] || { fail cpu "test workloads not built (make tools)"; exit 0; }
[ "$(nproc)" -ge 2 ] || { skip cpu "needs 2 CPUs"; exit 0; }
trap 'kill $W1 $W0 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM

# Bad lists: a line naming the input (then the usual usage hint), the usage exit code, before
# any probe loads.
for bad in 99 x 1- 3-1 ''; do
	"$GALATOP" record --cpu "$bad" -d 1 -o "$TMP/x.folded" 2>"$TMP/err"
	rc=$?
	if [ $rc = 2 ] && head -1 "$TMP/err" | grep -q -- "--cpu: .*'$bad'" &&
		! grep -qi "bpf\|probe" "$TMP/err"; then :
	else fail "cpu_bad_list_${bad:-empty}" "rc=$rc $(cat "$TMP/err")"; fi
done
pass cpu_bad_lists

taskset -c 1 "$TOOLS/burn" 120 >/dev/null & W1=$!
taskset -c 0 "$TOOLS/sli_work" spin 120 >/dev/null & W0=$!
wait_until 30 grep -q sli_work "/proc/$W0/comm"

# count FILE ROOT: samples under the root frame ROOT ([PID]comm: other sessions on the machine
# may run the same workloads).
count() { awk -v r="$2" '{ split($1, f, ";"); if (f[1] == r) n += $NF } END { print n + 0 }' "$1"; }
for cpus in 1 0 0-1; do
	"$GALATOP" record --cpu $cpus --group process -F 199 -d 3 -o "$TMP/c$cpus.folded" 2>"$TMP/c$cpus.err"
done
B="[$W1]burn" S="[$W0]sli_work"
b1=$(count "$TMP/c1.folded" "$B"); s1=$(count "$TMP/c1.folded" "$S")
b0=$(count "$TMP/c0.folded" "$B"); s0=$(count "$TMP/c0.folded" "$S")
ba=$(count "$TMP/c0-1.folded" "$B"); sa=$(count "$TMP/c0-1.folded" "$S")
echo "  --cpu 1: burn $b1 sli_work $s1; --cpu 0: burn $b0 sli_work $s0; --cpu 0-1: burn $ba sli_work $sa"
if [ "$b1" -ge 5 ] && [ "$s1" = 0 ] && grep -q ';leaf_alpha;' "$TMP/c1.folded"; then pass cpu_1_only_burn
else fail cpu_1_only_burn "burn $b1 sli_work $s1: $(cat "$TMP/c1.err")"; fi
if [ "$s0" -ge 5 ] && [ "$b0" = 0 ]; then pass cpu_0_only_sli_work
else fail cpu_0_only_sli_work "burn $b0 sli_work $s0: $(cat "$TMP/c0.err")"; fi
if [ "$ba" -ge 5 ] && [ "$sa" -ge 5 ]; then pass cpu_list_both
else fail cpu_list_both "burn $ba sli_work $sa"; fi
kill $W1 $W0 2>/dev/null
wait 2>/dev/null
no_gt_progs && pass cpu_no_leftovers || fail cpu_no_leftovers "$(gt_leftovers) programs left"
