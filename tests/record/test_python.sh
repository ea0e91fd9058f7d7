#!/bin/sh
# CPython frames (Debian's python3, 3.11 on Debian 12): a program already running before galatop
# starts, with two hot functions whose split it measures itself (thread CPU time), is recorded;
# its Python frames stand where the interpreter loop stood, named "function (file.py:line)"
# with the lines of the source, merged under the native frames that called the interpreter;
# the split is within 3 pp of the program's and >= 95% of its samples reach main() and
# <module>. A program galatop starts gets its frames too; Python called back from C stands
# after the C frames; a recursion deeper than the walk keeps its innermost 128 frames under
# [truncated]; threads each get their own Python stack (on-CPU and off-CPU);
# frame-pointer mode too. Needs root + BPF.
. tests/lib.sh
need_root_bpf python || exit 0
PY=/usr/bin/python3
[ -x "$PY" ] || { skip python "Debian's python3 not installed (make deps)"; exit 0; }
DIR=tests/record/python
trap 'kill $P1 $P2 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM

# line FILE PATTERN: the line number of the first line of FILE matching PATTERN.
line() { grep -n -- "$2" "$1" | head -1 | cut -d: -f1; }
S=$DIR/gt_split.py
L_CALL=$(line $S '            f(n)'); L_MOD=$(line $S '^    main()')
# body F: the lines of function F, "def" (its first instruction) to "return s", as a regex
# alternation.
body() { l=$(line $S "def $1"); echo "$l|$(( l + 1 ))|$(( l + 2 ))|$(( l + 3 ))|$(( l + 4 ))"; }

# 1. The split program, started 2 s before galatop.
"$PY" $S 14 >"$TMP/split.out" & P1=$!
sleep 2
kill -0 $P1 2>/dev/null || { fail python_started "$(cat "$TMP/split.out")"; exit 0; }
timeout 60 "$GALATOP" record -p $P1 -F 997 -d 8 -o "$TMP/split.folded" 2>"$TMP/split.err"
wait $P1
read -r t_alpha t_beta <"$TMP/split.out"
[ -s "$TMP/split.folded" ] || { fail python_recorded "$(cat "$TMP/split.err")"; exit 0; }

# sum FILE REGEX: samples whose stack matches the extended regex (LP, RP: literal parentheses).
LP='[(]' RP='[)]'
sum() { awk -v re="$2" '{ v = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) n += v } END { print n + 0 }' "$1"; }
B=gt_split.py
total=$(sum "$TMP/split.folded" '.')
rooted=$(sum "$TMP/split.folded" ";<module> $LP$B:$L_MOD$RP;main $LP$B:[0-9]+$RP(;|$)")
merged=$(sum "$TMP/split.folded" ";Py_RunMain;.*;PyEval_EvalCode;<module> $LP$B:$L_MOD$RP;main")
a=$(sum "$TMP/split.folded" ";main $LP$B:$L_CALL$RP;alpha $LP$B:($(body alpha))$RP(;|$)")
b=$(sum "$TMP/split.folded" ";main $LP$B:$L_CALL$RP;beta $LP$B:($(body beta))$RP(;|$)")
a_any=$(sum "$TMP/split.folded" ";alpha $LP")
b_any=$(sum "$TMP/split.folded" ";beta $LP")
eval_left=$(sum "$TMP/split.folded" '_PyEval_EvalFrameDefault')
echo "  $total samples: $rooted under <module>;main, $merged under Py_RunMain..PyEval_EvalCode;<module>;" \
	"alpha $a ($a_any any line), beta $b ($b_any); $eval_left with _PyEval_EvalFrameDefault left;" \
	"the program measured alpha $t_alpha s, beta $t_beta s (load $(cut -d' ' -f1 /proc/loadavg))"
if [ "$total" -ge 500 ] && [ $(( rooted * 100 )) -ge $(( total * 95 )) ]; then pass python_reach_main_and_module
else fail python_reach_main_and_module "$rooted of $total: $(head -c 600 "$TMP/split.err")"; fi
if [ $(( merged * 100 )) -ge $(( total * 95 )) ]; then pass python_merged_under_native_callers
else fail python_merged_under_native_callers "$merged of $total"; fi
# Every alpha and beta frame named with a line of its own body, called from main's call line.
if [ "$a" -gt 0 ] && [ "$a" = "$a_any" ] && [ "$b" -gt 0 ] && [ "$b" = "$b_any" ]; then
	pass python_names_files_lines
else
	fail python_names_files_lines "alpha $a of $a_any, beta $b of $b_any: $(grep -o ';[a-z]* (gt_split[^;]*' "$TMP/split.folded" | sort | uniq -c | head)"
fi
share=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a + b) printf "%.1f", 100 * a / (a + b) }')
truth=$(awk -v a="$t_alpha" -v b="$t_beta" 'BEGIN { if (a + b) printf "%.1f", 100 * a / (a + b) }')
echo "  alpha's share: $share % in the flame graph, $truth % measured by the program"
if [ -n "$share" ] && [ -n "$truth" ] && near_truth "$share" $((a + b)) "$truth"; then pass python_split_within_3pp
else fail python_split_within_3pp "flame graph $share %, program $truth %"; fi
if [ "$eval_left" -le $(( total / 20 )) ]; then pass python_eval_loop_replaced
else fail python_eval_loop_replaced "$eval_left of $total stacks keep _PyEval_EvalFrameDefault"; fi

# 2. A program galatop starts itself: its interpreter is found at its first samples (those
# taken before, in its start-up, have no Python frames).
timeout 60 "$GALATOP" record -F 499 -o "$TMP/cmd.folded" -- "$PY" $S 4 >/dev/null 2>"$TMP/cmd.err"
total=$(sum "$TMP/cmd.folded" '.')
rooted=$(sum "$TMP/cmd.folded" ";<module> $LP$B:$L_MOD$RP;main $LP$B:[0-9]+$RP(;|$)")
echo "  started by galatop: $rooted of $total samples under <module>;main"
if [ "$total" -ge 100 ] && [ $(( rooted * 100 )) -ge $(( total * 90 )) ]; then pass python_command_found
else fail python_command_found "$rooted of $total: $(tail -3 "$TMP/cmd.err")"; fi

# 3. Python called back from C (sorted() calling key()): two calls of the interpreter loop, each
# in its own place, with the C frames between them.
C=$DIR/gt_callback.py
timeout 60 "$GALATOP" record -F 499 -o "$TMP/cb.folded" -- "$PY" $C 3 >/dev/null 2>"$TMP/cb.err"
B=gt_callback.py
keyed=$(sum "$TMP/cb.folded" ";key $LP")
between=$(sum "$TMP/cb.folded" ";<module> $LP$B:[0-9]+$RP;main $LP$B:$(line $C '        sorted(')$RP;([^;(]+;)+key $LP$B:[0-9]+$RP")
echo "  callbacks: $between of $keyed samples in key() under main's sorted() line and C frames"
if [ "$keyed" -ge 100 ] && [ $(( between * 100 )) -ge $(( keyed * 95 )) ]; then pass python_called_from_c
else fail python_called_from_c "$between of $keyed: $(grep 'key (' "$TMP/cb.folded" | head -2 | cut -c1-400)"; fi

# 4. Deeper than the walk: the innermost 128 frames, a [truncated] frame for the others.
D=$DIR/gt_deep.py B=gt_deep.py
timeout 60 "$GALATOP" record -F 499 -o "$TMP/deep.folded" -- "$PY" $D 3 >/dev/null 2>"$TMP/deep.err"
deep=$(sum "$TMP/deep.folded" "rec $LP")
# A sample is either deep (128 rec frames right under [truncated]) or, on the way down or up,
# shallow enough to reach <module>;main.
cut128=$(awk '{ s = $0; sub(/ [0-9]+$/, "", s); if (gsub(/;rec [(]gt_deep.py:[0-9]+[)]/, "", s) == 128 &&
	s ~ /;PyEval_EvalCode;\[truncated\](;|$)/) n += $NF } END { print n + 0 }' "$TMP/deep.folded")
whole=$(sum "$TMP/deep.folded" ";<module> $LP$B:[0-9]+$RP;main $LP$B:[0-9]+$RP;rec $LP")
echo "  deep recursion: of $deep samples, $cut128 with 128 rec frames under [truncated], $whole whole"
if [ "$deep" -ge 100 ] && [ $(( cut128 * 2 )) -ge "$deep" ] &&
	[ $(( (cut128 + whole) * 100 )) -ge $(( deep * 95 )) ]; then pass python_deep_truncated
else fail python_deep_truncated "$(grep 'rec (' "$TMP/deep.folded" | head -1 | cut -c1-300)"; fi

# 5. Threads: each thread's own stack, on-CPU and off-CPU; and frame-pointer mode.
T=$DIR/gt_threads.py
"$PY" $T 20 & P2=$!
sleep 1
timeout 60 "$GALATOP" record -p $P2 -F 499 -d 4 -o "$TMP/thr.folded" 2>"$TMP/thr.err"
timeout 60 "$GALATOP" record -p $P2 --type offcpu -d 3 -o "$TMP/off.folded" 2>"$TMP/off.err"
timeout 60 "$GALATOP" record -p $P2 --unwind fp -F 499 -d 3 -o "$TMP/fp.folded" 2>"$TMP/fp.err"
kill $P2 2>/dev/null
wait $P2 2>/dev/null
B=gt_threads.py
worker=$(sum "$TMP/thr.folded" ";Thread._bootstrap_inner ${LP}threading.py:[0-9]+$RP;Thread.run ${LP}threading.py:[0-9]+$RP;(.*;)?spin_worker $LP$B:[0-9]+$RP;busy $LP$B:")
worker_any=$(sum "$TMP/thr.folded" ";spin_worker $LP")
mainth=$(sum "$TMP/thr.folded" ";<module> $LP$B:[0-9]+$RP;spin_main $LP$B:[0-9]+$RP;busy $LP$B:")
main_any=$(sum "$TMP/thr.folded" ";spin_main $LP")
mixed=$(sum "$TMP/thr.folded" 'spin_main.*spin_worker|spin_worker.*spin_main|<module>.*spin_worker')
total=$(sum "$TMP/thr.folded" '.')
echo "  threads: $total samples, worker $worker of $worker_any, main $mainth of $main_any, $mixed mixed"
if [ "$worker" -ge $(( total / 5 )) ] && [ "$mainth" -ge $(( total / 5 )) ] &&
	[ $(( worker * 100 )) -ge $(( worker_any * 95 )) ] &&
	[ $(( mainth * 100 )) -ge $(( main_any * 95 )) ] && [ "$mixed" = 0 ]; then
	pass python_threads_own_stacks
else fail python_threads_own_stacks "$(sort -t' ' -k2 -nr "$TMP/thr.folded" | head -3 | cut -c1-400)"; fi
nap=$(sum "$TMP/off.folded" ";Thread.run ${LP}threading.py:[0-9]+$RP;(.*;)?napper $LP$B:$(( $(line $T 'def napper') + 2 ))$RP;")
echo "  off-CPU: $nap us under napper's time.sleep line"
if [ "$nap" -ge 1000000 ]; then pass python_offcpu_frames
else fail python_offcpu_frames "$(grep napper "$TMP/off.folded" | head -3 | cut -c1-400)"; fi
fp_total=$(sum "$TMP/fp.folded" '.')
fp_rooted=$(sum "$TMP/fp.folded" "(^|;)(<module> $LP$B:[0-9]+$RP;spin_main|Thread._bootstrap ${LP}threading.py:[0-9]+$RP;.*;spin_worker) $LP$B:")
echo "  frame pointers: $fp_rooted of $fp_total samples reach their thread's first Python frame"
if [ "$fp_total" -ge 100 ] && [ $(( fp_rooted * 100 )) -ge $(( fp_total * 95 )) ]; then pass python_fp_mode
else fail python_fp_mode "$fp_rooted of $fp_total: $(sort -t' ' -k2 -nr "$TMP/fp.folded" | head -2 | cut -c1-300)"; fi
no_gt_progs && pass python_no_leftovers || fail python_no_leftovers "$(gt_leftovers) programs left"
