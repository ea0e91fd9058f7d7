#!/bin/sh
# The leak probe (--type leak, docs/leak.md) on tests/tools/leaky: known leaks from known
# functions (small blocks, 1 MiB blocks through glibc's mmap path, realloc chains, aligned and
# calloc'ed blocks) while four threads churn blocks they free in each other. Both ways of
# seeing allocations are checked: the in-process sampler galatop preloads into -- CMD
# (libgalatop-leak.so, uprobes on its markers only) and uprobes on the allocator
# (--leak-uprobes, -p). With every allocation taken (--leak-sample 1) each function's
# outstanding bytes are exact and the churn leaves nothing; sampled by bytes each one is
# within 4.5 standard errors of the truth (the variance of the estimator over the blocks each
# function leaks); heaptrack (Debian's) finds the same totals on the same program; the sampler
# follows the command's children, passes the calls on to a user's preloaded jemalloc (which
# then gets uprobes) and, without galatop, changes nothing; a process already running is
# attached to with -p, the sampler injected into it (ptrace, GOT hooks: its GOT values read
# back before, while and after), also into redis-server under redis-benchmark, with a
# fallback to the allocator uprobes where it cannot be (traced, no safe point, the library
# not in its mount namespace), and in the
# live view `o` reaches leak and the top view counts its
# blocks, and the live view's -- CMD runs with the sampler; a static stripped program is
# named as not hooked; no BPF program is left behind. Needs root and BPF (CI).
. tests/lib.sh

need_root_bpf leak || exit 0
[ -x "$TOOLS/leaky" ] || { fail leak "test workloads not built (make tools)"; exit 0; }
PIDS=""
trap 'kill $PIDS 2>/dev/null; wait; tmux -L "$SOCK" kill-server 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM

# by_leaf FOLDED: "LEAF BYTES" per leaf frame (the function that called the allocator).
by_leaf() {
	awk '{ n = $NF; $NF = ""; sub(/ +$/, ""); k = split($0, f, ";"); s[f[k]] += n }
		END { for (l in s) printf "%s %.0f\n", l, s[l] }' "$1"
}
# leaf_bytes FILE LEAF: the bytes of LEAF in a by_leaf listing, 0 when absent.
leaf_bytes() { awk -v l="$2" '$1 == l { v = $2 } END { print v + 0 }' "$1"; }
LEAKS="leak_small leak_big leak_realloc leak_aligned leak_calloc"

# --- Every allocation taken: exact -----------------------------------------------------
# record_leaky NAME OPTIONS...: records leaky (two churn threads pausing 50 us per block: every
# call may be a record here, which the sanitized build must keep up with) until its leaks are
# 1.5 s old (the minimum age is 1 s), while it still runs (its exit would free everything; it
# is stopped with galatop): $TMP/NAME.folded, .out (leaky's), .err, .env (its LD_PRELOAD); the
# status is galatop's.
# LEAKY_ARGS: leaky's arguments after its duration (default: 2 churn threads, leaks at once).
record_leaky() {
	n=$1
	shift
	: >"$TMP/$n.out"
	"$GALATOP" record --type leak "$@" -o "$TMP/$n.folded" -- "$TOOLS/leaky" 300 \
		${LEAKY_ARGS:-2 0 50} >"$TMP/$n.out" 2>"$TMP/$n.err" &
	g=$!
	wait_until 600 grep -q ready "$TMP/$n.out"
	# the command's LD_PRELOAD, as galatop started it
	for c in $(pgrep -P $g); do
		tr '\0' '\n' <"/proc/$c/environ" | grep '^LD_PRELOAD='
	done >"$TMP/$n.env" 2>/dev/null
	sleep 1.5
	kill -INT $g
	wait $g
}
# exact_leaks NAME: "" when every function of $TMP/NAME.folded holds its truth (from
# $TMP/NAME.out) exactly, else what differs; the by-leaf listing in $TMP/NAME.leaf.
exact_leaks() {
	by_leaf "$TMP/$1.folded" >"$TMP/$1.leaf"
	for l in $LEAKS; do
		want=$(awk -v l=$l '$1 == "truth" && $2 == l { print $3 }' "$TMP/$1.out")
		got=$(leaf_bytes "$TMP/$1.leaf" $l)
		[ -n "$want" ] && [ "$got" = "$want" ] || printf ' %s %s (want %s);' $l "$got" "$want"
	done
}

# The in-process sampler (the default for -- CMD). Frame pointers: leaky is built with them,
# and the stacks end in its functions (the sampler's own frames are dropped).
record_leaky exact --leak-sample 1 --unwind fp
rc=$?
if [ $rc = 0 ] && [ -s "$TMP/exact.folded" ] && grep -q ready "$TMP/exact.out"; then
	pass leak_record
else
	fail leak_record "exit $rc: $(tail -5 "$TMP/exact.err")"; exit 0
fi
why=$(exact_leaks exact)
if [ -z "$why" ]; then pass leak_exact
else fail leak_exact "$why"; fi
churn=$(leaf_bytes "$TMP/exact.leaf" churn_alloc)
if [ "$churn" = 0 ]; then pass leak_churn_none
else fail leak_churn_none "churn_alloc holds $churn bytes (its blocks are all freed)"; fi
if grep -q 'leak: every allocation taken (--leak-sample 1): .* 0 dropped' "$TMP/exact.err"; then
	pass leak_summary
else
	fail leak_summary "$(grep 'leak:' "$TMP/exact.err")"
fi
if grep -q 'leak: pid [0-9]*: in-process sampler (libgalatop-leak.so preloaded' "$TMP/exact.err"; then
	pass leak_preload_path
else
	fail leak_preload_path "$(grep 'leak:' "$TMP/exact.err")"
fi

# Uprobes on the allocator (--leak-uprobes): the same exact outcome. This kernel (6.10 and
# later) has uprobe.session: the probes are session ones, which skip the return of calls that
# need none; --leak-uretprobe puts an entry uprobe and a uretprobe on every function instead.
record_leaky up --leak-sample 1 --unwind fp --leak-uprobes
why=$(exact_leaks up)
churn=$(leaf_bytes "$TMP/up.leaf" churn_alloc)
if [ -z "$why" ] && [ "$churn" = 0 ] &&
	grep -q 'leak: pid [0-9]*: uprobes on its allocator$' "$TMP/up.err"; then
	pass leak_uprobes_exact
else
	fail leak_uprobes_exact "$why churn $churn; $(grep 'leak:' "$TMP/up.err")"
fi
if grep -q 'allocator files probed (uprobe.session' "$TMP/up.err"; then
	pass leak_session_probes
else
	fail leak_session_probes "$(grep 'files probed' "$TMP/up.err")"
fi
record_leaky uret --leak-sample 1 --unwind fp --leak-uprobes --leak-uretprobe
by_leaf "$TMP/uret.folded" >"$TMP/uret.leaf"
ok=1
why=""
for l in $LEAKS churn_alloc; do
	want=$(leaf_bytes "$TMP/up.leaf" $l)
	got=$(leaf_bytes "$TMP/uret.leaf" $l)
	[ "$got" = "$want" ] || { ok=0; why="$why $l $got (session: $want);"; }
done
if [ $ok = 1 ] && grep -q 'files probed (an entry uprobe and a uretprobe' "$TMP/uret.err"; then
	pass leak_uretprobe_same
else
	fail leak_uretprobe_same "$why $(grep 'files probed' "$TMP/uret.err")"
fi

# The sampler is inherited: leaky started by a shell that forks it is seen from its first
# allocation (its leaks come at once), exactly. (Its churn pause, 52 us, tells it apart: the
# shell goes with galatop, leaky is stopped here.)
: >"$TMP/child.out"
"$GALATOP" record --type leak --leak-sample 1 --unwind fp -o "$TMP/child.folded" -- \
	sh -c "'$TOOLS/leaky' 300 2 0 52; true" >"$TMP/child.out" 2>"$TMP/child.err" &
g=$!
wait_until 600 grep -q ready "$TMP/child.out"
C=$(pgrep -f "$TOOLS/leaky 300 2 0 52")
PIDS="$PIDS $C"
sleep 1.5
kill -INT $g
wait $g
kill $C 2>/dev/null
why=$(exact_leaks child)
if [ -z "$why" ]; then pass leak_preload_child
else fail leak_preload_child "$why $(grep 'leak:' "$TMP/child.err")"; fi

# A user's LD_PRELOAD stays first: with jemalloc preloaded, jemalloc takes the calls, the
# sampler passes them on (it samples glibc's only) and jemalloc gets the uprobes, found once
# the program's libraries are mapped (leaky leaks 3 s after its start: time enough). galatop
# runs with that LD_PRELOAD too: its optimized build (the sanitized one wants its runtime
# first).
JEMALLOC=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 2>/dev/null)
if [ -n "$JEMALLOC" ]; then
	saved=$GALATOP
	GALATOP=$GALATOP_OPT
	LEAKY_ARGS="2 3 50"
	export LD_PRELOAD="$JEMALLOC"
	record_leaky jem --leak-sample 1 --unwind fp
	unset LD_PRELOAD LEAKY_ARGS
	GALATOP=$saved
	why=$(exact_leaks jem)
	if [ -z "$why" ] &&
		grep -q 'leak: pid [0-9]*: uprobes on its allocator (it brings its own' "$TMP/jem.err" &&
		grep -q "^LD_PRELOAD=$JEMALLOC:/.*/libgalatop-leak.so\$" "$TMP/jem.env"; then
		pass leak_preload_user_jemalloc
	else
		fail leak_preload_user_jemalloc "$why $(grep 'leak:' "$TMP/jem.err"; cat "$TMP/jem.env")"
	fi
else
	skip leak_preload_user_jemalloc "libjemalloc2 is missing (make deps)"
fi

# A command linked with ASan's runtime (galatop's sanitized build itself), which must come
# first in it: not preloaded (it would abort), its allocator gets the uprobes, and it runs.
"$GALATOP" record --type leak -d 1 -o "$TMP/asan.folded" -- "$GALATOP" --version \
	>"$TMP/asan.out" 2>"$TMP/asan.err"
if grep -q "links libasan.so, which must come first in it: the command's allocator gets uprobes" \
	"$TMP/asan.err" && grep -q '^galatop ' "$TMP/asan.out"; then
	pass leak_preload_not_asan
else
	fail leak_preload_not_asan "$(cat "$TMP/asan.out"; grep 'leak\|rror' "$TMP/asan.err")"
fi

# Without galatop (no GALATOP_LEAK_SAMPLE) the library only passes the calls on: leaky runs
# as ever and says the same truths.
LD_PRELOAD="$O/libgalatop-leak.so" "$TOOLS/leaky" 1 2 0 >"$TMP/inert.out" 2>&1
if [ "$(grep truth "$TMP/inert.out")" = "$(grep truth "$TMP/exact.out")" ] &&
	grep -q '^churned [1-9]' "$TMP/inert.out"; then
	pass leak_preload_inert
else
	fail leak_preload_inert "$(tail -3 "$TMP/inert.out")"
fi

# --- Sampled by bytes: within the sampling error ---------------------------------------------
# At 16 KiB a churned block is sampled every few calls, each record with a stack copy to unwind.
R=16384
record_leaky s --leak-sample $R -o "$TMP/s.gtop" -o "$TMP/s.svg"
record_leaky su --leak-sample $R --leak-uprobes
# The snapshot holds the same outstanding bytes (its history's slices add up to them), the
# SVG says what its bytes are and how they were sampled.
"$GALATOP" fold --type leak "$TMP/s.gtop" >"$TMP/s_gtop.folded" 2>/dev/null
if [ "$(folded_total "$TMP/s_gtop.folded")" = "$(folded_total "$TMP/s.folded")" ] &&
	[ "$(folded_total "$TMP/s.folded")" -gt 0 ]; then
	pass leak_gtop_same_total
else
	fail leak_gtop_same_total "gtop $(folded_total "$TMP/s_gtop.folded"), folded $(folded_total "$TMP/s.folded")"
fi
if grep -q "Memory Leak Flame Graph" "$TMP/s.svg" &&
	grep -q "allocated 1 s or more before it; one allocation sampled per $R bytes" "$TMP/s.svg"; then
	pass leak_svg_titled
else
	fail leak_svg_titled "$(grep -o '<text[^>]*>[^<]*</text>' "$TMP/s.svg" | head -3)"
fi
# Each function's blocks as COUNT x SIZE (leaky.c); a block of size s is taken with
# p = 1 - exp(-s/R) and weighted 1/p, so the estimate's variance is the sum of s^2 (1-p)/p.
blocks() {
	case $1 in
	leak_small) echo "100000 64" ;;
	leak_big) echo "8 1048576" ;;
	leak_realloc) echo "4 2097152" ;;
	leak_aligned) echo "256 4096 64 16384 1024 1024 128 8192" ;;
	leak_calloc) echo "2048 1024" ;;
	esac
}
# sampled NAME SUFFIX: each function of $TMP/NAME.folded within 4.5 standard errors of its
# truth (leak_sampledSUFFIX), the churn under 1% of the leaks (leak_sampled_churnSUFFIX).
sampled() {
	by_leaf "$TMP/$1.folded" >"$TMP/$1.leaf"
	ok=1
	why=""
	for l in $LEAKS; do
		want=$(awk -v l=$l '$1 == "truth" && $2 == l { print $3 }' "$TMP/$1.out")
		got=$(leaf_bytes "$TMP/$1.leaf" $l)
		verdict=$(blocks $l | awk -v r=$R -v got="$got" -v want="$want" '{
			for (i = 1; i < NF; i += 2) {
				n = $i; s = $(i + 1); p = 1 - exp(-s / r)
				v += n * s * s * (1 - p) / p
			}
			sd = sqrt(v); d = got - want; if (d < 0) d = -d
			printf "%s %.0f", (d <= 4.5 * sd + 1) ? "ok" : "off", sd }')
		case $verdict in
		ok*) ;;
		*) ok=0 ;;
		esac
		why="$why $l $got (truth $want, sd ${verdict#* });"
	done
	if [ $ok = 1 ]; then pass leak_sampled$2
	else fail leak_sampled$2 "$why"; fi
	echo "  sampled at $R bytes ($1):$why"
	churn=$(leaf_bytes "$TMP/$1.leaf" churn_alloc)
	total=0
	for l in $LEAKS; do total=$((total + $(leaf_bytes "$TMP/$1.leaf" $l))); done
	if [ "$churn" -le $((total / 100)) ]; then pass leak_sampled_churn$2
	else fail leak_sampled_churn$2 "churn_alloc holds $churn bytes of $total"; fi
}
sampled s ""
sampled su _uprobes

# --- The same totals as heaptrack's ----------------------------------------------------------
if command -v heaptrack >/dev/null 2>&1 && command -v heaptrack_print >/dev/null 2>&1; then
	heaptrack -o "$TMP/ht" "$TOOLS/leaky" 1 >"$TMP/ht.out" 2>&1
	# heaptrack compresses with zstd when it finds it, else gzip.
	for ht in "$TMP/ht.zst" "$TMP/ht.gz"; do [ -f "$ht" ] && break; done
	heaptrack_print -f "$ht" -F "$TMP/ht.folded" --flamegraph-cost-type leaked \
		>/dev/null 2>&1
	# heaptrack's lines end "leaf (file.c); BYTES": the leaf's name without the file.
	sed 's/ ([^)]*)//g; s/; \([0-9]*\)$/ \1/' "$TMP/ht.folded" >"$TMP/ht.clean"
	by_leaf "$TMP/ht.clean" >"$TMP/ht.leaf"
	for way in exact up; do
		ok=1
		why=""
		for l in $LEAKS; do
			h=$(leaf_bytes "$TMP/ht.leaf" $l)
			g=$(leaf_bytes "$TMP/$way.leaf" $l)
			# heaptrack 1.4 does not hook memalign: leak_aligned's 1024 blocks of 1 KiB
			# from it are missing from its totals.
			[ $l = leak_aligned ] && h=$((h + 1048576))
			[ "$h" = "$g" ] || ok=0
			why="$why $l galatop $g heaptrack $h;"
		done
		name=leak_heaptrack$([ $way = up ] && echo _uprobes)
		if [ $ok = 1 ]; then pass $name
		else fail $name "$why"; fi
	done
else
	skip leak_heaptrack "heaptrack is missing (make deps)"
fi

# --- History: the heat map's level and ranges show what grew when ----------------------------
# grower leaks 1 MiB from leak_early, then 4 s later 3 MiB from leak_late (every allocation
# taken): the heat map's level (the running sum of its changes) ends at the outstanding total
# and sits at leak_early's MiB between the phases; a range of each phase holds its function's
# growth alone, and diff between the two moments shows leak_late's.
: >"$TMP/g.out"
"$GALATOP" record --type leak --leak-sample 1 --unwind fp -o "$TMP/g.gtop" -o "$TMP/g.folded" \
	-- "$TOOLS/grower" 4 >"$TMP/g.out" 2>"$TMP/g.err" &
g=$!
wait_until 600 grep -q ready "$TMP/g.out"
sleep 1.5
kill -INT $g
wait $g
heat_levels "$TMP/g.gtop" leak >"$TMP/g.levels" 2>"$TMP/g.perr"
total=$(folded_total "$TMP/g.folded")
early=$(awk '$1 == "truth" && $2 == "leak_early" { print $3 }' "$TMP/g.out")
late=$(awk '$1 == "truth" && $2 == "leak_late" { print $3 }' "$TMP/g.out")
# When the level first holds leak_early's bytes, and leak_late's too.
t_e=$(awk -v b="$early" '$2 >= b { print $1; exit }' "$TMP/g.levels")
t_l=$(awk -v b="$((early + late))" '$2 >= b { print $1; exit }' "$TMP/g.levels")
mid=$(awk -v a="$t_e" -v b="$t_l" 'BEGIN { printf "%.2f", (a + b) / 2 }')
mid_lv=$(awk -v m="$mid" '$1 <= m { v = $2 } END { print v + 0 }' "$TMP/g.levels")
end_lv=$(tail -1 "$TMP/g.levels" | awk '{ print $2 }')
# Between the phases the level is leak_early's plus what else the process holds (stdio's
# buffers: a few KiB); at the end the folded file's total.
if [ -n "$t_e" ] && [ -n "$t_l" ] && near "$(awk -v a="$t_l" -v b="$t_e" 'BEGIN { print a - b }')" 4 1 &&
	[ "$mid_lv" -ge "$early" ] && [ "$mid_lv" -lt $((early + 65536)) ] && [ "$end_lv" = "$total" ]; then
	pass leak_heat_level
else
	fail leak_heat_level "early at ${t_e}s late at ${t_l}s, level $mid_lv at ${mid}s (early $early), $end_lv at the end (total $total) $(head -2 "$TMP/g.perr")"
fi
end=$(awk -v t="$t_l" 'BEGIN { printf "%.2f", t + 10 }')
"$GALATOP" fold --type leak --range "0-$mid" "$TMP/g.gtop" 2>"$TMP/g.rerr" | grep -v '^#' >"$TMP/g1.folded"
"$GALATOP" fold --type leak --range "$mid-$end" "$TMP/g.gtop" 2>>"$TMP/g.rerr" | grep -v '^#' >"$TMP/g2.folded"
r1e=$(frame_bytes "$TMP/g1.folded" leak_early)
r1l=$(frame_bytes "$TMP/g1.folded" leak_late)
r2e=$(frame_bytes "$TMP/g2.folded" leak_early)
r2l=$(frame_bytes "$TMP/g2.folded" leak_late)
if [ "$r1e" = "$early" ] && [ "$r1l" = 0 ] && [ "$r2l" = "$late" ] && [ "$r2e" = 0 ]; then
	pass leak_history_ranges
else
	fail leak_history_ranges "0-$mid: leak_early $r1e leak_late $r1l; $mid-$end: leak_early $r2e leak_late $r2l (truth $early, $late) $(head -2 "$TMP/g.rerr")"
fi
# diff FILE@A-B FILE@B-C: leak_late's growth is the second moment's only.
"$GALATOP" diff --type leak "$TMP/g.gtop@0-$mid" "$TMP/g.gtop@$mid-$end" >"$TMP/gd.folded" 2>"$TMP/gd.err"
if awk -v e="$early" -v l="$late" '/leak_late/ { b2 += $(NF-1); a2 += $NF } /leak_early/ { b1 += $(NF-1); a1 += $NF }
	END { exit !(b2 == 0 && a2 == l && b1 == e && a1 == 0) }' "$TMP/gd.folded"; then
	pass leak_history_diff
else
	fail leak_history_diff "$(grep leak_ "$TMP/gd.folded" | head -3; head -1 "$TMP/gd.err")"
fi
# The heatmap pane draws the level and says so.
"$GALATOP" view --type leak --dump --size 150x30 --keys '6' "$TMP/g.gtop" >"$TMP/gv.txt" 2>"$TMP/gv.err"
if grep -q "^leak outstanding at each 50 ms cell's end, up to:" "$TMP/gv.txt" &&
	grep -q "outstanding" "$TMP/gv.txt"; then
	pass leak_heatmap_pane
else
	fail leak_heatmap_pane "$(tail -3 "$TMP/gv.txt"; head -1 "$TMP/gv.err")"
fi

# --- A process already running (-p): the sampler injected ------------------------------------
# start_leaky NAME: leaky, churning from its start (two threads pausing 50 us per block) and
# leaking once told (SIGUSR1), its output in $TMP/NAME.out, its pid in $L.
start_leaky() {
	"$TOOLS/leaky" 300 2 -1 50 >"$TMP/$1.out" &
	L=$!
	PIDS="$PIDS $L"
	sleep 0.5
}
# attach_start NAME OPTIONS...: galatop record --type leak -p $L OPTIONS -o $TMP/NAME.folded,
# its messages in $TMP/NAME.err, its pid in $G, once it records.
attach_start() {
	n=$1
	shift
	"$GALATOP" record --type leak "$@" -p $L -o "$TMP/$n.folded" 2>"$TMP/$n.err" &
	G=$!
	wait_until 300 grep -q recording "$TMP/$n.err"
}
# attach_stop NAME: leaky leaks, galatop stops once the leaks are 1.5 s old.
attach_stop() {
	kill -USR1 $L
	wait_until 600 grep -q ready "$TMP/$1.out"
	sleep 1.5
	kill -INT $G
	wait $G
}

# got_now [PID]: the GOT allocator entries of PID (default $L) now (tests/record/leak_got.py).
got_now() { /usr/bin/python3 tests/record/leak_got.py ${1:-$L}; }
# got_same BEFORE AFTER: every entry of BEFORE as it was in AFTER (an entry not bound yet in
# BEFORE may have been bound since by the program: to the same definition as the others);
# what differs on standard output.
got_same() { /usr/bin/python3 tests/record/leak_got.py --same "$1" "$2"; }

# galatop loads its sampler into leaky (dlopen through ptrace) and points its GOT entries at
# the hooks; leaky's GOTs (read here through /proc/PID/mem, relocations from readelf) point into
# the library while galatop runs and hold their old values again once it has gone, and leaky
# runs on to its normal end (SIGUSR2) with its output.
start_leaky p
got_now >"$TMP/got.before"
attach_start p --leak-sample 1 --unwind fp
got_now >"$TMP/got.during"
attach_stop p
why=$(exact_leaks p)
churn=$(leaf_bytes "$TMP/p.leaf" churn_alloc)
if [ -z "$why" ] && [ "$churn" = 0 ]; then pass leak_attach_running
else fail leak_attach_running "$why churn $churn $(tail -3 "$TMP/p.err")"; fi
if grep -q "leak: pid $L: in-process sampler (injected: libgalatop-leak.so, [1-9][0-9]* entries in [1-9][0-9]* modules" "$TMP/p.err"
then pass leak_inject_path_p
else fail leak_inject_path_p "$(grep 'leak:' "$TMP/p.err")"; fi
got_now >"$TMP/got.after"
# While attached: leaky's own malloc and free entries no longer hold their old values; after:
# every entry as before.
moved=$(awk -v exe="$(readlink "/proc/$L/exe")" 'NR == FNR { v[$1 " " $2] = $4; next }
	$1 == exe && ($2 == "malloc" || $2 == "free") && v[$1 " " $2] != $4 { n++ }
	END { print n + 0 }' "$TMP/got.before" "$TMP/got.during")
if [ "$moved" = 2 ] && [ -s "$TMP/got.before" ] && got_same "$TMP/got.before" "$TMP/got.after" >"$TMP/got.diff"; then
	pass leak_inject_got_restored
else
	fail leak_inject_got_restored "moved $moved; $(head -3 "$TMP/got.diff")"
fi
kill -USR2 $L
wait $L
rc=$?
if [ $rc = 0 ] && grep -q '^churned [1-9]' "$TMP/p.out"; then pass leak_inject_process_runs_on
else fail leak_inject_process_runs_on "rc=$rc $(tail -2 "$TMP/p.out")"; fi

# Sampled by bytes, injected: each function within its sampling error, the churn ~0.
R=16384
start_leaky pi
attach_start pi --leak-sample $R
attach_stop pi
sampled pi _injected
kill $L 2>/dev/null
wait $L 2>/dev/null

# jemalloc behind malloc (preloaded into leaky by its user): the hooks call jemalloc's
# entries and sample them in the process too, exact.
if [ -n "$JEMALLOC" ]; then
	LD_PRELOAD="$JEMALLOC" "$TOOLS/leaky" 300 2 -1 50 >"$TMP/pj.out" &
	L=$!
	PIDS="$PIDS $L"
	sleep 0.5
	attach_start pj --leak-sample 1 --unwind fp
	attach_stop pj
	why=$(exact_leaks pj)
	if [ -z "$why" ] && grep -q 'libjemalloc' "/proc/$L/maps" &&
		grep -q "leak: pid $L: in-process sampler (injected" "$TMP/pj.err"; then
		pass leak_inject_jemalloc_exact
	else
		fail leak_inject_jemalloc_exact "$why $(grep 'leak:' "$TMP/pj.err")"
	fi
	kill $L 2>/dev/null
	wait $L 2>/dev/null
else
	skip leak_inject_jemalloc_exact "libjemalloc2 is missing (make deps)"
fi

# A galatop stopped by SIGTERM takes its hooks out too; a second galatop finds the library
# loaded and attaches again: exact again.
start_leaky pa
got_now >"$TMP/gotpa.before"
attach_start pa0 --leak-sample 1 --unwind fp
kill -TERM $G
wait $G
got_now >"$TMP/gotpa.after"
attach_start pa --leak-sample 1 --unwind fp
attach_stop pa
why=$(exact_leaks pa)
if [ -z "$why" ] && [ "$(grep -c 'libgalatop-leak.so$' "/proc/$L/maps")" -ge 1 ] &&
	got_same "$TMP/gotpa.before" "$TMP/gotpa.after" >"$TMP/gotpa.diff" &&
	grep -q "leak: pid $L: in-process sampler (injected" "$TMP/pa.err"; then
	pass leak_inject_again
else
	fail leak_inject_again "$why $(head -3 "$TMP/gotpa.diff"; grep 'leak:' "$TMP/pa.err")"
fi
kill $L 2>/dev/null
wait $L 2>/dev/null

# A galatop killed (SIGKILL) cannot take its hooks out: the process runs on with them
# (sampling for nobody); the next galatop takes them over, and its exit restores the GOTs.
start_leaky pk
got_now >"$TMP/gotpk.before"
attach_start pk0 --leak-sample 1 --unwind fp
kill -KILL $G
wait $G
got_now >"$TMP/gotpk.killed"
"$GALATOP" record --type leak -p $L -d 1 -o "$TMP/pk.folded" 2>"$TMP/pk.err"
got_now >"$TMP/gotpk.after"
kill -USR1 $L
wait_until 600 grep -q ready "$TMP/pk.out"
kill -USR2 $L
wait $L
rc=$?
if ! got_same "$TMP/gotpk.before" "$TMP/gotpk.killed" >/dev/null &&
	got_same "$TMP/gotpk.before" "$TMP/gotpk.after" >"$TMP/gotpk.diff" &&
	grep -q "leak: pid $L: in-process sampler (injected" "$TMP/pk.err" && [ $rc = 0 ] &&
	grep -q '^churned [1-9]' "$TMP/pk.out"; then
	pass leak_inject_killed_galatop
else
	fail leak_inject_killed_galatop "rc=$rc $(head -3 "$TMP/gotpk.diff"; grep 'leak:' "$TMP/pk.err")"
fi

# A target that execs loses the hooks with its old program: the new one gets the allocator
# uprobes at its exec, and its leaks (made 3 s after the exec) are exact. The target is a
# shell, injected while it waits for its sleeps, that execs leaky once told (SIGUSR1).
sh -c "trap \"exec '$TOOLS/leaky' 300 2 3 50\" USR1; while :; do sleep 0.1; done" \
	>"$TMP/px.out" &
L=$!
PIDS="$PIDS $L"
sleep 0.3
attach_start px --leak-sample 1 --unwind fp
inj=$(grep -c "libgalatop-leak.so$" "/proc/$L/maps")
kill -USR1 $L
wait_until 600 grep -q ready "$TMP/px.out"
sleep 1.5
kill -INT $G
wait $G
why=$(exact_leaks px)
if [ -z "$why" ] && [ "$inj" -ge 1 ] && grep -q "leak: pid $L: uprobes on its allocator" "$TMP/px.err"
then pass leak_inject_exec
else fail leak_inject_exec "mapped $inj $why $(grep 'leak:' "$TMP/px.err")"; fi
kill $L 2>/dev/null
wait $L 2>/dev/null

# --leak-uprobes: a running process gets the allocator uprobes (no injection), exact too.
start_leaky pu
attach_start pu --leak-sample 1 --unwind fp --leak-uprobes
attach_stop pu
why=$(exact_leaks pu)
if [ -z "$why" ] && grep -q "leak: pid $L: uprobes on its allocator\$" "$TMP/pu.err" &&
	! grep -q libgalatop-leak "/proc/$L/maps"; then
	pass leak_uprobe_path_p
else
	fail leak_uprobe_path_p "$why $(grep 'leak:' "$TMP/pu.err")"
fi
kill $L 2>/dev/null
wait $L 2>/dev/null

# A process galatop cannot call into falls back to the allocator uprobes and says why: one
# traced by strace already (a second tracer is refused), one that never stops in a system
# call (a busy loop: no safe point).
if command -v strace >/dev/null 2>&1; then
	start_leaky ps
	strace -f -p $L -o /dev/null 2>/dev/null &
	ST=$!
	PIDS="$PIDS $ST"
	wait_until 100 grep -q "TracerPid:[[:space:]]*$ST" "/proc/$L/status"
	attach_start ps --leak-sample 1 --unwind fp
	attach_stop ps
	why=$(exact_leaks ps)
	if [ -z "$why" ] && grep -q "leak: pid $L: uprobes on its allocator (not injected: it is traced by pid $ST already)" "$TMP/ps.err"
	then pass leak_inject_traced_falls_back
	else fail leak_inject_traced_falls_back "$why $(grep 'leak:' "$TMP/ps.err")"; fi
	kill $ST 2>/dev/null
	wait $ST 2>/dev/null
	kill $L 2>/dev/null
	wait $L 2>/dev/null
else
	skip leak_inject_traced_falls_back "strace is missing (make deps)"
fi
# A process in another mount namespace where galatop's library is not at its path (a
# container without it: here a tmpfs over galatop's build directory, leaky run from a copy):
# not injected, with the reason; the uprobes see its leaks, exact.
cp "$TOOLS/leaky" "$TMP/leaky_ns"
unshare -m --propagation private sh -c "mount -t tmpfs none '$O' && exec '$TMP/leaky_ns' 300 2 -1 50" \
	>"$TMP/pn.out" 2>&1 &
L=$!
PIDS="$PIDS $L"
wait_until 100 grep -q leaky_ns "/proc/$L/cmdline"
sleep 0.5
attach_start pn --leak-sample 1 --unwind fp
attach_stop pn
why=$(exact_leaks pn)
if [ -z "$why" ] && grep -q "leak: pid $L: uprobes on its allocator (not injected: .*libgalatop-leak.so is not visible at that path in its mount namespace)" "$TMP/pn.err"
then pass leak_inject_other_mount_ns
else fail leak_inject_other_mount_ns "$why $(grep 'leak:' "$TMP/pn.err"; head -2 "$TMP/pn.out")"; fi
kill $L 2>/dev/null
wait $L 2>/dev/null

"$TOOLS/burn" 30 >/dev/null 2>&1 &
B=$!
PIDS="$PIDS $B"
sleep 0.3
"$GALATOP" record --type leak -p $B -d 1 -o "$TMP/pb.folded" 2>"$TMP/pb.err"
if grep -q "leak: pid $B: uprobes on its allocator (not injected: no thread stopped in a system call where it is safe" "$TMP/pb.err" &&
	kill -0 $B 2>/dev/null; then
	pass leak_inject_no_safe_point
else
	fail leak_inject_no_safe_point "$(grep 'leak:' "$TMP/pb.err")"
fi
kill $B 2>/dev/null
wait $B 2>/dev/null

# --- redis-server (Debian's, jemalloc) under redis-benchmark, the sampler injected -----------
# redis-server started here is attached to with -p while redis-benchmark loads it: the sampler
# goes in (jemalloc's malloc sampled through the GOT hooks), redis answers right while and
# after, a 2 MiB value stored while recording shows as outstanding (sampled unless the
# Poisson gap past it is longer than 32 means: e^-32), and its GOTs hold their old values after.
RPORT=18960
if command -v redis-server >/dev/null 2>&1 && command -v redis-benchmark >/dev/null 2>&1 &&
	command -v redis-cli >/dev/null 2>&1; then
	rcli() { redis-cli -p $RPORT "$@" 2>&1; }
	redis-server --port $RPORT --bind 127.0.0.1 --save '' --appendonly no \
		>"$TMP/redis.log" 2>&1 &
	RS=$!
	PIDS="$PIDS $RS"
	wait_until 100 sh -c "redis-cli -p $RPORT ping 2>/dev/null | grep -q PONG"
	kill -0 $RS 2>/dev/null || fail leak_inject_redis "redis-server did not start (port $RPORT taken?)"
	got_now $RS >"$TMP/rgot.before"
	redis-benchmark -p $RPORT -t set,get,lpush,lpop -n 100000000 -c 8 -q >/dev/null 2>&1 &
	RB=$!
	PIDS="$PIDS $RB"
	sleep 0.5
	"$GALATOP" record --type leak --leak-sample 65536 -p $RS -o "$TMP/rs.folded" 2>"$TMP/rs.err" &
	G=$!
	wait_until 300 grep -q recording "$TMP/rs.err"
	head -c 2097152 /dev/zero | tr '\0' x | redis-cli -p $RPORT -x set galatop_big >/dev/null 2>&1
	during="$(rcli set galatop_k v42) $(rcli get galatop_k) $(rcli strlen galatop_big)"
	sleep 1.5
	kill -INT $G
	wait $G
	kill $RB 2>/dev/null
	wait $RB 2>/dev/null
	after="$(rcli ping) $(rcli get galatop_k) $(rcli strlen galatop_big)"
	info=$(rcli info memory | grep -c '^used_memory:[1-9]')
	got_now $RS >"$TMP/rgot.after"
	if grep -q "leak: pid $RS: in-process sampler (injected: libgalatop-leak.so" "$TMP/rs.err" &&
		[ "$during" = "OK v42 2097152" ] && [ "$after" = "PONG v42 2097152" ] && [ "$info" = 1 ]
	then
		pass leak_inject_redis
	else
		fail leak_inject_redis "during '$during' after '$after' info $info $(grep 'leak:' "$TMP/rs.err")"
	fi
	if [ "$(folded_total "$TMP/rs.folded")" -ge 2097152 ] && [ -s "$TMP/rgot.before" ] &&
		got_same "$TMP/rgot.before" "$TMP/rgot.after" >"$TMP/rgot.diff"; then
		pass leak_inject_redis_leak_got
	else
		fail leak_inject_redis_leak_got "total $(folded_total "$TMP/rs.folded"); $(head -3 "$TMP/rgot.diff")"
	fi
	kill $RS 2>/dev/null
	wait $RS 2>/dev/null
else
	skip leak_inject_redis "redis-server, redis-benchmark or redis-cli is missing (make deps)"
fi

# --- The live view on a running process: o to leak, then the top view --------------------------
# Every allocation taken, frame pointers: small records the sanitized view keeps up with.
if command -v tmux >/dev/null 2>&1; then
	"$TOOLS/leaky" 300 2 -1 50 >"$TMP/lv.out" &
	L=$!
	PIDS="$PIDS $L"
	tm new-session -d -s lk -x 200 -y 40 "'$GALATOP' --leak-sample 1 --unwind fp -p $L; echo \$? > '$TMP/rc'; sleep 30"
	pane_wait lk samples 200
	for want in offcpu mem leak; do
		tm send-keys -t lk o
		pane_wait lk "profile: $want" 100 || break
	done
	if pane_has lk "profile: leak (probe attached now"; then pass leak_live_o
	else fail leak_live_o "$(sed -n 2p "$TMP/screen"; tail -1 "$TMP/screen")"; fi
	# The running process got the sampler injected at that o (its maps show the library).
	if grep -q '/libgalatop-leak.so$' "/proc/$L/maps"; then pass leak_live_o_injected
	else fail leak_live_o_injected "$(grep -c . "/proc/$L/maps") mappings, none of the library"; fi
	kill -USR1 $L
	# The 1 MiB blocks show once 1 s old; the top view counts them with their age.
	wait_until 600 grep -q ready "$TMP/lv.out"
	if pane_wait lk leak_big 300; then pass leak_live_shows_leaks
	else fail leak_live_shows_leaks "$(head -12 "$TMP/screen")"; fi
	tm send-keys -t lk 2
	# The row of leak_big: Self% Total% Self Total Count Oldest Function.
	top_big() {
		pane_has lk Oldest && awk '$NF == "leak_big" && $(NF - 2) == 8 { f = 1 } END { exit !f }' \
			"$TMP/screen"
	}
	if wait_until 100 top_big; then
		pass leak_live_top_count
	else
		fail leak_live_top_count "$(head -14 "$TMP/screen")"
	fi
	tm send-keys -t lk q
	wait_file "$TMP/rc" 100
	[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass leak_live_q_exits_0 ||
		fail leak_live_q_exits_0 "rc=$(cat "$TMP/rc" 2>/dev/null)"
	kill $L 2>/dev/null
	wait $L 2>/dev/null
	tm kill-session -t lk 2>/dev/null
	# The live view's -- CMD with --type leak: the command runs with the sampler (its maps
	# show the library) and its leaks show (leaky's churn pause, 51 us, tells it apart).
	tm new-session -d -s lc -x 200 -y 40 "'$GALATOP' --type leak --leak-sample 1 --unwind fp -- sh -c \"exec '$TOOLS/leaky' 300 2 0 51 >'$TMP/lc.out'\"; sleep 30"
	pane_wait lc leak_big 600
	C=$(pgrep -f "$TOOLS/leaky 300 2 0 51" | head -1)
	if pane_has lc leak_big && [ -n "$C" ] && grep -q '/libgalatop-leak.so$' "/proc/$C/maps"; then
		pass leak_live_command_preload
	else
		fail leak_live_command_preload "pid '$C' $(head -12 "$TMP/screen")"
	fi
	tm send-keys -t lc q
else
	skip leak_live_o "tmux is missing (make deps)"
fi

# --- A process whose allocator cannot be hooked ----------------------------------------------
printf 'int main(void){ for (;;) { volatile int x = 0; (void)x; } }\n' >"$TMP/spin.c"
if cc -static -s -o "$TMP/spin" "$TMP/spin.c" 2>/dev/null; then
	"$TMP/spin" &
	S=$!
	PIDS="$PIDS $S"
	"$GALATOP" record --type leak -p $S -p $$ -d 1 -o "$TMP/none.folded" 2>"$TMP/none.err"
	if grep -q "leak: pid $S not hooked: .*static and stripped" "$TMP/none.err"; then
		pass leak_unhooked_named
	else
		fail leak_unhooked_named "$(grep leak "$TMP/none.err")"
	fi
	kill $S 2>/dev/null
else
	skip leak_unhooked_named "cannot link a static program (libc6-dev)"
fi

check leak_no_leftovers no_gt_progs
