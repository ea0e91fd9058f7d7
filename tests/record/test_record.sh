#!/bin/sh
# galatop record against workloads of known behaviour (needs root and BPF: runs in CI).
. tests/lib.sh
need_root_bpf record || exit 0
[ -x "$TOOLS/burn" ] || { fail record "test workloads not built (make tools)"; exit 0; }


# 1. on-CPU 60/30/10 split, recorded around a command.
"$GALATOP" record --group process -F 499 -o "$TMP/burn.folded" -o "$TMP/burn.svg" -- "$TOOLS/burn" 4 2>"$TMP/burn.err"
a=$(share "$TMP/burn.folded" ";leaf_alpha;" ";mid;"); b=$(share "$TMP/burn.folded" ";leaf_beta;" ";mid;")
g=$(share "$TMP/burn.folded" ";leaf_gamma;" ";mid;")
n=$(samples "$TMP/burn.folded" ";mid;")
if near_truth "$a" "$n" 60 && near_truth "$b" "$n" 30 && near_truth "$g" "$n" 10; then pass oncpu_split_60_30_10
else fail oncpu_split_60_30_10 "alpha=$a beta=$b gamma=$g of $n samples"; cat "$TMP/burn.err"; head -5 "$TMP/burn.folded"; fi
check oncpu_process_root grep -q '^\[[0-9]*\]burn;' "$TMP/burn.folded"
check oncpu_full_user_stack grep -q ';main;mid;leaf_alpha;spin' "$TMP/burn.folded"
check oncpu_svg_valid xmllint --noout "$TMP/burn.svg"
check oncpu_summary grep -q 'recorded [0-9]* samples' "$TMP/burn.err"

# 2. Kernel frames for a syscall-heavy workload, annotated on request.
"$GALATOP" record --group process -F 499 --annotate -o "$TMP/sys.folded" -- "$TOOLS/syscaller" 2 2>/dev/null
k=$(share "$TMP/sys.folded" "_[k]")
if near "$k" 100 60 && grep -q '^\[[0-9]*\]syscaller;.*main;.*_\[k\];.*_\[k\]' "$TMP/sys.folded"; then pass kernel_frames_present
else fail kernel_frames_present "kernel share $k"; fi

# 3. Off-CPU: 300 ms vs 100 ms sleeps -> 75/25.
"$GALATOP" record --type offcpu -o "$TMP/off.folded" -- "$TOOLS/sleeper" 4 2>/dev/null
l=$(share "$TMP/off.folded" ";sleep_long;" ";main;"); s=$(share "$TMP/off.folded" ";sleep_short;" ";main;")
if near "$l" 75 5 && near "$s" 25 5; then pass offcpu_split_75_25
else fail offcpu_split_75_25 "long=$l short=$s"; head -5 "$TMP/off.folded"; fi
tot=$(awk '/;sleep_long;/ { t += $NF } END { print t + 0 }' "$TMP/off.folded")
# 10 rounds of 300 ms in 4 s: about 3 s in microseconds.
if near "$tot" 3000000 450000; then pass offcpu_value_is_microseconds; else fail offcpu_value_is_microseconds "sleep_long total $tot us"; fi

# 4. Page faults split 3:1, compared with perf on the same process at the same time.
"$TOOLS/faulter" 4 & fp=$!
wait_until 30 grep -q faulter "/proc/$fp/comm"
"$GALATOP" record --type mem -p $fp -d 2.5 -o "$TMP/mem.folded" 2>/dev/null &
gp=$!
if command -v perf >/dev/null 2>&1; then
	perf record -q -e exceptions:page_fault_user -g -p $fp -o "$TMP/perf.data" -- sleep 2.5 >/dev/null 2>&1
fi
wait $gp; wait $fp
gb=$(share "$TMP/mem.folded" ";fault_big;" ";main;")
if near "$gb" 75 5; then pass mem_split_75_25; else fail mem_split_75_25 "fault_big=$gb"; fi
if [ -s "$TMP/perf.data" ]; then
	perf script -i "$TMP/perf.data" 2>/dev/null | "$GALATOP" collapse > "$TMP/perf-mem.folded"
	pb=$(share "$TMP/perf-mem.folded" ";fault_big;" ";main;")
	if near "$gb" "$pb" 5; then pass mem_agrees_with_perf; else fail mem_agrees_with_perf "galatop=$gb perf=$pb"; fi
else
	skip mem_agrees_with_perf "perf could not record exceptions:page_fault_user"
fi

# 5. Filters: pid and comm keep out everything else.
# The syscaller runs under a name of its own: other suites on the machine run syscallers too.
sc=sc$$; sc=$(echo "$sc" | cut -c1-15)
cp "$TOOLS/syscaller" "$TMP/$sc"
# The workloads outlive both recordings, which run one after the other (on a loaded machine
# each one's start-up alone has taken seconds).
"$TOOLS/burn" 60 & b1=$!
"$TMP/$sc" 60 & s1=$!
"$GALATOP" record --group process -p $b1 -d 1.5 -o "$TMP/pid.folded" 2>/dev/null
"$GALATOP" record --group process --comm "$sc" -d 1 -o "$TMP/comm.folded" 2>/dev/null
kill $b1 $s1; wait $b1 $s1 2>/dev/null
if [ -s "$TMP/pid.folded" ] && ! grep -qv "^\[$b1\]burn;" "$TMP/pid.folded"; then pass pid_filter_excludes_others
else fail pid_filter_excludes_others; cut -c1-80 "$TMP/pid.folded" | sort | uniq -c | head; fi
if [ -s "$TMP/comm.folded" ] && ! grep -qv "^\[$s1\]$sc;" "$TMP/comm.folded"; then pass comm_filter_excludes_others
else fail comm_filter_excludes_others "$(grep -v "^\[$s1\]$sc;" "$TMP/comm.folded" | cut -c1-80 | head -3)"; fi

# 6. A process in a docker-like cgroup gets the [Con] root; --container keeps only it.
# The v2 hierarchy: /sys/fs/cgroup/unified on a hybrid machine, /sys/fs/cgroup on a v2-only one.
cg=/sys/fs/cgroup/unified
[ "$(stat -fc %T "$cg" 2>/dev/null)" = cgroup2fs ] || cg=/sys/fs/cgroup
if [ "$(stat -fc %T "$cg" 2>/dev/null)" != cgroup2fs ]; then
	na container_root_and_filter "not applicable on cgroup v1 only (no v2 hierarchy to make a docker-like scope in)"
elif [ -w "$cg" ]; then
	id=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 64)
	dir="$cg/system.slice/docker-$id.scope"
	mkdir -p "$dir"
	# The workloads outlive the recording: one that exits while recorded (a loaded machine's
	# start-up has taken seconds) has no cgroup left to name its container by.
	"$TOOLS/burn" 60 & cb=$!
	echo $cb > "$dir/cgroup.procs"
	"$TOOLS/burn" 60 & ob=$!
	"$GALATOP" record --group process --container "$(echo "$id" | head -c 12)" -d 1.5 -o "$TMP/con.folded" 2>"$TMP/con.err"
	kill $cb $ob; wait $cb $ob 2>/dev/null
	short=$(echo "$id" | head -c 12)
	if [ -s "$TMP/con.folded" ] && ! grep -qv "^\[Con\]$short;\[$cb\]burn;" "$TMP/con.folded"; then
		pass container_root_and_filter
	else
		fail container_root_and_filter "$(head -c 300 "$TMP/con.err") $(cut -c1-60 "$TMP/con.folded" | sort -u | head -3)"
	fi
	rmdir "$dir" 2>/dev/null
else
	skip container_root_and_filter "cannot write the cgroup v2 hierarchy at $cg"
fi

# 7. A process living 50 ms is symbolized.
"$GALATOP" record -F 999 --comm shortlived -d 2 -o "$TMP/short.folded" 2>"$TMP/short.err" &
gp=$!
wait_until 100 grep -qs "recording" "$TMP/short.err"; "$TOOLS/shortlived"; wait $gp
check shortlived_symbolized grep -q 'short_burst' "$TMP/short.folded"

# 8. C++ names are demangled.
if command -v g++ >/dev/null 2>&1; then
	cat > "$TMP/cxx.cc" <<'CXX'
#include <cstdlib>
#include <ctime>
namespace galatop_test {
template <typename T> struct Worker {
	volatile T sink = 0;
	__attribute__((noinline)) void crunch(int n) { for (int i = 0; i < n; i++) sink += i; }
};
}
int main(int argc, char **argv) {
	galatop_test::Worker<long> w;
	time_t end = time(nullptr) + (argc > 1 ? atoi(argv[1]) : 2);
	while (time(nullptr) < end) w.crunch(100000);
}
CXX
	g++ -O1 -g -fno-omit-frame-pointer -o "$TMP/cxx" "$TMP/cxx.cc"
	"$GALATOP" record -F 499 -o "$TMP/cxx.folded" -- "$TMP/cxx" 2 2>/dev/null
	check cxx_demangled grep -q 'galatop_test::Worker<long>::crunch(int)' "$TMP/cxx.folded"
else
	skip cxx_demangled "g++ not installed"
fi

# 9. Agreement with perf record -g + galatop collapse on the same workload.
if command -v perf >/dev/null 2>&1; then
	"$TOOLS/burn" 4 & bp=$!
	wait_until 20 grep -q burn "/proc/$bp/comm"
	"$GALATOP" record -F 499 -p $bp -d 3 -o "$TMP/g.folded" 2>/dev/null &
	gp=$!
	perf record -q -F 499 -g -p $bp -o "$TMP/cpu.data" -- sleep 3 >/dev/null 2>&1
	wait $gp $bp
	perf script -i "$TMP/cpu.data" 2>/dev/null | "$GALATOP" collapse > "$TMP/p.folded"
	ok=1; msg=""
	for f in leaf_alpha leaf_beta leaf_gamma; do
		x=$(share "$TMP/g.folded" ";$f;" ";mid;"); y=$(share "$TMP/p.folded" ";$f;" ";mid;")
		near_counts "$x" "$(samples "$TMP/g.folded" ";mid;")" "$y" "$(samples "$TMP/p.folded" ";mid;")" || ok=0
		msg="$msg $f:$x/$y"
	done
	if [ $ok = 1 ]; then pass agrees_with_perf; else fail agrees_with_perf "galatop/perf$msg"; fi
else
	skip agrees_with_perf "perf not installed"
fi

# 10. No BPF program is left after exit, SIGINT, SIGTERM or SIGKILL; output survives signals.
for sig in INT TERM KILL; do
	"$GALATOP" record -o "$TMP/sig.folded" 2>"$TMP/sig.err" &
	gp=$!
	# Attached once it says so; then a second of whole-system samples to write out.
	wait_until 100 grep -qs "recording" "$TMP/sig.err"
	sleep 1
	kill -$sig $gp || cat "$TMP/sig.err"; wait $gp
	if no_gt_progs; then pass "no_leftover_after_SIG$sig"; else fail "no_leftover_after_SIG$sig"; fi
	# What was gathered is written: every sample the closing line counts.
	if [ $sig != KILL ]; then
		n=$(sed -n 's/.*recorded \([0-9]*\) samples.*/\1/p' "$TMP/sig.err")
		got=$(folded_total "$TMP/sig.folded")
		if [ "${n:-0}" -gt 0 ] && [ "$got" = "$n" ]; then pass "writes_output_on_SIG$sig"
		else fail "writes_output_on_SIG$sig" "$got samples written, $n recorded"; fi
	fi
	rm -f "$TMP/sig.folded"
done
"$GALATOP" record -d 0.5 -o "$TMP/exit.folded" 2>/dev/null
check no_leftover_after_exit no_gt_progs

# 11. Not root: one line naming the missing privilege.
if command -v setpriv >/dev/null 2>&1; then
	cp "$GALATOP" "$TMP/galatop-nobody"; chmod 755 "$TMP" "$TMP/galatop-nobody"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/galatop-nobody" record -d 1 \
		>/dev/null 2>"$TMP/nobody.err"
	rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l < "$TMP/nobody.err")" -eq 1 ] && grep -qi 'root\|CAP_' "$TMP/nobody.err"; then
		pass not_root_error
	else
		fail not_root_error "exit $rc: $(cat "$TMP/nobody.err")"
	fi
else
	skip not_root_error "setpriv missing"
fi

# 12. Bad usage: one line and exit 2.
"$GALATOP" record --bogus 2>"$TMP/u.err"; rc=$?
if [ $rc -eq 2 ] && grep -q "unknown option '--bogus'" "$TMP/u.err"; then pass record_unknown_option; else fail record_unknown_option; fi
"$GALATOP" record -o out.txt 2>"$TMP/u.err"; rc=$?
if [ $rc -eq 2 ] && grep -q "cannot tell the format" "$TMP/u.err"; then pass record_bad_output_ext; else fail record_bad_output_ext; fi

# 13. Periodic mode: timestamped SVG + folded every period, per process with --multi-instance.
mkdir -p "$TMP/periodic"
"$TOOLS/burn" 4 & pb=$!
"$GALATOP" record -p $pb --period 1 --out-dir "$TMP/periodic" --multi-instance -d 2.5 2>/dev/null
wait $pb
nsvg=$(ls "$TMP/periodic" | grep -c "^oncpu-_${pb}_burn-[0-9]\{8\}-[0-9]\{6\}\.svg$")
nfold=$(ls "$TMP/periodic" | grep -c "^oncpu-_${pb}_burn-[0-9]\{8\}-[0-9]\{6\}\.folded$")
if [ "$nsvg" -ge 2 ] && [ "$nfold" -ge 2 ]; then pass periodic_multi_instance_files
else fail periodic_multi_instance_files "$(ls "$TMP/periodic" | tr '\n' ' ')"; fi
if cat "$TMP/periodic"/*.folded | grep -q ';leaf_alpha;spin' && xmllint --noout "$TMP"/periodic/*.svg; then
	pass periodic_files_hold_stacks
else
	fail periodic_files_hold_stacks
fi

# A SIGINT while the probes still load ends the recording once they have: a shell's background
# job inherits SIGINT ignored, and a signal that came before record set its handler was lost
# (it then recorded until a second one). The L7 probes take the longest to load.
sh -c '"$0" record --type l7 -o "$1" -p $$ 2>"$1.err" & p=$!; sleep 0.2; kill -INT $p
	i=0; while kill -0 $p 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	kill -0 $p 2>/dev/null && { echo still-running; kill -INT $p; }; wait $p' \
	"$GALATOP" "$TMP/early.json" >"$TMP/early.out" 2>&1
if ! grep -q still-running "$TMP/early.out" && [ -s "$TMP/early.json" ]; then
	pass sigint_while_loading_ends_the_recording
else
	fail sigint_while_loading_ends_the_recording "$(cat "$TMP/early.out") $(tail -2 "$TMP/early.json.err")"
fi
