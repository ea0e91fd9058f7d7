#!/bin/sh
# Java and JIT runtimes: galatop attaches its JVMTI agent to a running JVM started with no agent
# (Debian's openjdk-17), names its compiled methods and the methods inlined in them in one mixed
# stack reaching the thread's root, with String.format under the program's method and its
# share within 5 pp of what the program measures itself; --no-java-native hides libjvm between
# Java frames; a JVM without PreserveFramePointer gets one hint; a JVM in its own mount
# namespace and one galatop starts itself are attached too; a refusing JVM gets one line; a
# Node.js hot function is named.
# Needs root + BPF.
. tests/lib.sh
need_root_bpf java || exit 0
JDK=/usr/lib/jvm/java-17-openjdk-amd64/bin
[ -x "$JDK/javac" ] || { skip java "openjdk-17-jdk-headless not installed (make deps)"; exit 0; }
AGENT=${O:-build}/libgalatop-jvmti.so
[ -f "$AGENT" ] || { fail java_agent_built "$AGENT missing"; exit 0; }

# The agent and the attach code build clean with -Wall -Wextra.
check java_agent_warning_free sh -c "cc -std=gnu11 -Wall -Wextra -Werror -fPIC -shared \
	-I${JDK%/bin}/include -I${JDK%/bin}/include/linux -o $TMP/a.so symbols/jvmti/agent.c -lpthread 2>&1 \
	&& cc -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. -c -o $TMP/a.o symbols/java_attach.c 2>&1"

"$JDK/javac" -d "$TMP" tests/record/java/GtFormat.java || { fail java_compile; exit 0; }

# run_java OUT [JAVA OPTIONS]: starts the workload for 40 s and waits until it runs compiled code.
run_java() {
	out=$1; shift
	: >"$out"
	"$JDK/java" "$@" -cp "$TMP" GtFormat 40 >"$out" & jpid=$!
	# 5 s of warm-up (a line every 200 ms): String.format is compiled by then.
	wait_until 200 sh -c "[ \$(wc -l <'$out') -ge 25 ]"
}
# stop_java: ends the workload.
stop_java() { kill $jpid 2>/dev/null; wait $jpid 2>/dev/null; }

# 1. PreserveFramePointer: attach, names, inlined methods, roots, String.format's share.
run_java "$TMP/j1.out" -XX:+PreserveFramePointer -Dsun.reflect.inflationThreshold=2147483647
before=$(tail -1 "$TMP/j1.out")
timeout 60 "$GALATOP" record -p $jpid -d 10 -F 997 -o "$TMP/j1.folded" 2>"$TMP/j1.err"
rc=$?
after=$(tail -1 "$TMP/j1.out")
[ -s "$TMP/j1.folded" ] || fail java_recorded "rc=$rc $(cat "$TMP/j1.err")"
cp /tmp/perf-$jpid.map "$TMP/j1.map" 2>/dev/null
# the same JVM again, its libjvm frames between Java frames hidden
timeout 60 "$GALATOP" record -p $jpid -d 3 -F 997 --no-java-native -o "$TMP/j1n.folded" 2>"$TMP/j1n.err"
nspid=$jpid
check java_attached_no_warning sh -c "! grep -q 'warning: java' '$TMP/j1.err'"
check java_perf_map_written test -s "$TMP/j1.map"
# the copy the JVM mapped is gone (another galatop attaching meanwhile may make a copy of its own)
check java_agent_copy_removed sh -c "grep -q 'galatop-jvmti' /proc/$jpid/maps &&
	! grep 'galatop-jvmti' /proc/$jpid/maps | grep -qv '(deleted)'"
stop_java
rm -f /tmp/perf-$nspid.map
# C2 inlines String.format (into formatPhase, or with it into main's loop): the map names the
# chain of inlined methods at each PC.
check java_inlined_chain_in_map grep -Eq ' GtFormat\.(main|formatPhase)->([^ ]*->)?java\.lang\.String\.format(->|$)' "$TMP/j1.map"
if grep -q 'GtFormat.main;GtFormat.formatPhase;java.lang.String.format;java.util.Formatter.format' "$TMP/j1.folded"
then pass java_string_format_under_program_method
else fail java_string_format_under_program_method "$(grep -c GtFormat "$TMP/j1.folded") GtFormat lines"; fi
# The program's own CPU time in String.format over the recording, against the flame graph's
# share of it in the program's stacks.
own=$(echo "$before $after" | awk '{ f = $6 - $1; b = $7 - $2; if (f + b > 0) printf "%.1f", 100 * f / (f + b); else print -100 }')
seen=$(share "$TMP/j1.folded" 'java.lang.String.format' 'GtFormat.main')
main=$(awk '/GtFormat.main/ { t += $NF } END { print t + 0 }' "$TMP/j1.folded")
if [ "$main" -ge 400 ] && near "$seen" "$own" 5; then pass java_string_format_share
else fail java_string_format_share "String.format: $seen% of $main samples, the program measured $own%"; fi
rooted=$(share "$TMP/j1.folded" 'start_thread;' 'GtFormat.main')
if near "$rooted" 100 10; then pass java_stacks_reach_thread_root
else fail java_stacks_reach_thread_root "$rooted% of GtFormat.main stacks from start_thread"; fi
check java_no_frame_pointer_hint_with_flag sh -c "! grep -q PreserveFramePointer '$TMP/j1.err'"
# Reflection's native path: Java -> libjvm (JVM_InvokeMethod ... JavaCalls) -> Java.
between='NativeMethodAccessorImpl.invoke0;.*JavaCalls::call_helper.*GtFormat.builderBatch'
check java_native_frames_shown grep -q "$between" "$TMP/j1.folded"
if ! grep -q "$between" "$TMP/j1n.folded" &&
	grep -q 'NativeMethodAccessorImpl.invoke0;[^ ]*GtFormat.builderBatch' "$TMP/j1n.folded"
then pass java_no_java_native_hides_libjvm
else fail java_no_java_native_hides_libjvm "$(grep -c invoke0 "$TMP/j1n.folded") stacks with invoke0"; fi

# 2. Without PreserveFramePointer: --no-java-agent does not attach; then the agent names the
# frames and the stacks stop in JIT code: one hint.
run_java "$TMP/j2.out"
timeout 60 "$GALATOP" record -p $jpid -d 1 --no-java-agent -o "$TMP/j2.folded" 2>"$TMP/j2.err"
check java_no_agent_option_skips_attach sh -c "[ ! -e /tmp/perf-$jpid.map ] && [ ! -e /tmp/.java_pid$jpid ]"
timeout 60 "$GALATOP" record -p $jpid -d 3 -F 499 -o "$TMP/j2b.folded" 2>"$TMP/j2b.err"
if [ "$(grep -c "hint: java pid $jpid: .*-XX:+PreserveFramePointer" "$TMP/j2b.err")" = 1 ]
then pass java_frame_pointer_hint; else fail java_frame_pointer_hint "$(cat "$TMP/j2b.err")"; fi
stop_java
rm -f /tmp/perf-$jpid.map

# 3. A JVM that disables attach gets one clear line, and the recording still ends.
run_java "$TMP/j3.out" -XX:+DisableAttachMechanism
timeout 60 "$GALATOP" record -p $jpid -d 1 -o "$TMP/j3.folded" 2>"$TMP/j3.err"
if [ "$(grep -c "warning: java pid $jpid: the JVM did not start its attach listener" "$TMP/j3.err")" = 1 ]
then pass java_refusing_jvm_one_line; else fail java_refusing_jvm_one_line "$(cat "$TMP/j3.err")"; fi
stop_java

# 4. A JVM in its own mount namespace with a private /tmp.
# (the classes are bound on /mnt first: the private /tmp hides $TMP)
unshare -m --propagation private sh -c "mount --bind '$TMP' /mnt && mount -t tmpfs gt-java /tmp && \
	exec $JDK/java -XX:+PreserveFramePointer -cp /mnt GtFormat 40" >"$TMP/j4.out" 2>&1 & jpid=$!
wait_until 200 sh -c "[ \$(wc -l <'$TMP/j4.out') -ge 25 ]"
timeout 60 "$GALATOP" record -p $jpid -d 6 -F 499 -o "$TMP/j4.folded" 2>"$TMP/j4.err"
rc=$?
check java_mount_ns_map_inside sh -c "[ -s /proc/$jpid/root/tmp/perf-$jpid.map ] && [ ! -e /tmp/perf-$jpid.map ]"
if grep -q 'GtFormat.main;.*java.util.Formatter' "$TMP/j4.folded" 2>/dev/null
then pass java_mount_ns_named; else fail java_mount_ns_named "rc=$rc $(cat "$TMP/j4.err")"; fi
stop_java

# 5. A JVM that galatop starts itself (record -- java ...) is attached once it is ready.
timeout 60 "$GALATOP" record -d 20 -F 499 -o "$TMP/j5.folded" -- \
	"$JDK/java" -XX:+PreserveFramePointer -cp "$TMP" GtFormat 9 >/dev/null 2>"$TMP/j5.err"
rc=$?
if grep -q 'GtFormat.main;GtFormat.formatPhase;java.lang.String.format' "$TMP/j5.folded" 2>/dev/null
then pass java_command_attached; else fail java_command_attached "rc=$rc $(cat "$TMP/j5.err")"; fi
check java_command_no_warning sh -c "! grep -q 'warning: java' '$TMP/j5.err'"
# galatop outlived this JVM: the agent copy in the JVM's /tmp is removed all the same
left=
for m in /tmp/perf-*.map; do
	p=${m#/tmp/perf-}; p=${p%.map}
	[ -d /proc/$p ] || ! grep -q 'GtFormat.main' "$m" 2>/dev/null && continue
	ls /tmp/galatop-jvmti-$p-*.so >/dev/null 2>&1 && left="$left $p"
	rm -f "$m"
done
check java_command_agent_copy_removed test -z "$left"

# 6. Compiled code freed by the JVM (its class loader collected) is written over as unloaded.
"$JDK/javac" -d "$TMP/u" tests/record/java/GtUnload.java tests/record/java/GtUnloadable.java ||
	fail java_unload_compile
"$JDK/java" -cp "$TMP/u" GtUnload "$TMP/u/go" >"$TMP/u.out" 2>&1 & jpid=$!
wait_until 200 grep -q ready "$TMP/u.out"
timeout 60 "$GALATOP" record -p $jpid -d 1 -o "$TMP/u.folded" 2>"$TMP/u.err"
touch "$TMP/u/go"
wait $jpid
# every start of GtUnloadable.work's code has an [unloaded] line after it
if grep -q '^unloaded' "$TMP/u.out" && grep -q ' GtUnloadable.work' /tmp/perf-$jpid.map &&
	awk '$3 == "GtUnloadable.work" { w[$1] = NR } $3 == "[unloaded]" && ($1 in w) { delete w[$1] }
		END { for (k in w) exit 1 }' /tmp/perf-$jpid.map
then pass java_unloaded_code_written
else fail java_unloaded_code_written "$(cat "$TMP/u.out"; grep -c 'GtUnloadable\|unloaded' /tmp/perf-$jpid.map)"; fi
rm -f /tmp/perf-$jpid.map

# 7. Node.js with --perf-basic-prof: the hot JS function is named.
if command -v node >/dev/null; then
	js=$PWD/tests/record/java/hot.js
	(cd "$TMP" && exec node --perf-basic-prof "$js" 30 >/dev/null) & npid=$!
	wait_until 100 grep -q gtHotLoop /tmp/perf-$npid.map
	timeout 60 "$GALATOP" record -p $npid -d 3 -F 499 -o "$TMP/n.folded" 2>"$TMP/n.err"
	kill $npid 2>/dev/null; wait $npid 2>/dev/null
	rm -f /tmp/perf-$npid.map
	hot=$(share "$TMP/n.folded" 'gtHotLoop')
	if near "$hot" 100 30; then pass node_hot_function_named
	else fail node_hot_function_named "gtHotLoop in $hot% of samples"; fi
else
	skip node_hot_function_named "nodejs not installed (make deps)"
fi
check java_no_bpf_left no_gt_progs
