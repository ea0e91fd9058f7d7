#!/bin/sh
# --group: the roots of recorded stacks (command by default), on a build-like workload of three
# processes with the same name; perf's habits (-a, -g, -F max). Needs root and BPF.
. tests/lib.sh
need_root_bpf group || exit 0
[ -x "$TOOLS/burn" ] || { fail group "test workloads not built (make tools)"; exit 0; }

three="for i in 1 2 3; do $TOOLS/burn 1.5 & done; wait"
# roots FILE: the distinct first frames of the burn stacks
roots() { awk '/;leaf_(alpha|beta|gamma);/ { split($0, f, ";"); print f[1] }' "$1" | sort -u; }

# 1. Default: every burn process under one "burn" root, as perf + flamegraph.pl draw a build.
"$GALATOP" record -F 499 -o "$TMP/cmd.folded" -- sh -c "$three" 2>"$TMP/cmd.err"
if [ "$(roots "$TMP/cmd.folded")" = burn ]; then pass group_default_is_command
else fail group_default_is_command "roots: $(roots "$TMP/cmd.folded" | head -5 | tr '\n' ' ')"; fi
n=$(awk '/^burn;.*;leaf_(alpha|beta|gamma);/ { t += $NF } END { print t + 0 }' "$TMP/cmd.folded")
all=$(awk '/;leaf_(alpha|beta|gamma);/ { t += $NF } END { print t + 0 }' "$TMP/cmd.folded")
if [ "$n" -gt 0 ] && [ "$n" = "$all" ]; then pass group_command_keeps_every_sample
else fail group_command_keeps_every_sample "burn root $n of $all samples"; fi

# 2. process: one [PID]burn root per process, three in all.
"$GALATOP" record --group process -F 499 -o "$TMP/proc.folded" -- sh -c "$three" 2>/dev/null
np=$(roots "$TMP/proc.folded" | grep -c '^\[[0-9]*\]burn$')
if [ "$np" = 3 ] && [ "$(roots "$TMP/proc.folded" | wc -l)" = 3 ]; then pass group_process_one_root_per_pid
else fail group_process_one_root_per_pid "$(roots "$TMP/proc.folded" | tr '\n' ' ')"; fi

# 3. thread: [PID]burn;[TID]burn (single-threaded: TID = PID).
"$GALATOP" record --group thread -F 499 -o "$TMP/thr.folded" -- sh -c "$three" 2>/dev/null
if grep -Eq '^\[([0-9]+)\]burn;\[\1\]burn;.*;leaf_alpha;' "$TMP/thr.folded" &&
	! grep ';leaf_alpha;' "$TMP/thr.folded" | grep -Evq '^\[[0-9]+\]burn;\[[0-9]+\]burn;'; then
	pass group_thread_frames
else fail group_thread_frames "$(grep ';leaf_alpha;' "$TMP/thr.folded" | cut -c1-60 | head -3)"; fi

# 4. none: stacks start with the program's own frames.
"$GALATOP" record --group none -F 499 -o "$TMP/none.folded" -- sh -c "$three" 2>/dev/null
if [ -s "$TMP/none.folded" ] && ! grep ';leaf_alpha;' "$TMP/none.folded" | grep -Eq '^(burn|\[)'; then
	pass group_none_no_identity
else fail group_none_no_identity "$(roots "$TMP/none.folded" | head -3 | tr '\n' ' ')"; fi

# 5. The gala-gopher config path keeps [PID]comm roots.
"$TOOLS/burn" 2 & bp=$!
printf '{"cmd": {"probe": ["oncpu"]}, "snoopers": {"proc_id": [%d]}}\n' $bp >"$TMP/gg.json"
"$GALATOP" record --config "$TMP/gg.json" -d 1 -o "$TMP/gg.folded" 2>"$TMP/gg.err"
wait $bp
if [ -s "$TMP/gg.folded" ] && ! grep -qv "^\[$bp\]burn;" "$TMP/gg.folded"; then pass group_config_keeps_pid_roots
else fail group_config_keeps_pid_roots "$(head -c 300 "$TMP/gg.err") $(cut -c1-40 "$TMP/gg.folded" | head -3)"; fi

# 6. Bad value: one line, exit 2.
"$GALATOP" record --group pods 2>"$TMP/bad.err"; rc=$?
if [ $rc = 2 ] && grep -q "^galatop record: --group: bad value 'pods'" "$TMP/bad.err"; then pass group_bad_value
else fail group_bad_value "rc=$rc $(head -2 "$TMP/bad.err")"; fi

# 7. perf's habits: -a and -g accepted; -F max samples at the kernel's maximum rate (capped at
# 10000 Hz), far above the default 99 Hz. The expectation is a tenth of that rate over the CPU
# time burn really got (the kernel throttles sampling, and a busy machine gives burn less than
# its second): the shell reports its reaped child's CPU ticks (cutime + cstime).
"$GALATOP" record -a -g -F max --group process -o "$TMP/max.folded" -- \
	sh -c "'$TOOLS/burn' 1; cut -d' ' -f16,17 /proc/\$\$/stat >'$TMP/max.cpu'" 2>"$TMP/max.err"; rc=$?
want=$(awk -v tck="$(getconf CLK_TCK)" -v cpu="$(cat "$TMP/max.cpu" 2>/dev/null)" '{
	split(cpu, t, " "); r = $1 > 10000 ? 10000 : $1; print int(r * 0.1 * (t[1] + t[2]) / tck) }' \
	/proc/sys/kernel/perf_event_max_sample_rate)
got=$(awk '/\]burn;/ { t += $NF } END { print t + 0 }' "$TMP/max.folded")
if [ $rc = 0 ] && [ "$want" -ge 100 ] && [ "$got" -ge "$want" ]; then pass perf_habits_a_g_F_max
else fail perf_habits_a_g_F_max "rc=$rc burn samples=$got want>=$want; $(head -2 "$TMP/max.err")"; fi

# 8. svg --group on a folded file regroups the roots.
printf '[1]cc1;main;parse 5\n[2]cc1;main;parse 3\n[3]as;main 1\n' >"$TMP/b.folded"
"$GALATOP" svg --group command "$TMP/b.folded" >"$TMP/b.svg" 2>/dev/null
check svg_group_command grep -q '<title>cc1 (8 samples, 88.89%)</title>' "$TMP/b.svg"
