# Shared helpers for shell tests: PASS/FAIL/SKIP/N/A lines that tests/run.sh counts. A case
# that did not run never prints PASS, and never vanishes: it prints SKIP (skip) or N/A (na).
# Source it; $GALATOP is the sanitized binary, $FIXTURES the shared fixtures.
: "${GALATOP:=$(pwd)/build/asan/galatop}"
: "${FIXTURES:=$(pwd)/../shared/fixtures}"
TMP=$(mktemp -d /tmp/galatop-test.XXXXXX)
trap 'tmux -L "$SOCK" kill-server 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+: $2}"; }
# check NAME CMD...: PASS if the command succeeds.
check() { n=$1; shift; if "$@"; then pass "$n"; else fail "$n"; fi; }
# ci: true when CI is set (to anything but "", 0 or false): a test that cannot run there fails.
ci() { case "${CI:-}" in ""|0|false) return 1;; esac; return 0; }
# skip NAME WHY: a case that cannot run here (a missing tool, privilege or resource): SKIP, or
# FAIL under CI (make deps installs every tool, so CI cannot go green by skipping). Returns 1.
skip() { if ci; then fail "$1" "cannot run under CI: $2"; else echo "SKIP: $1: $2"; fi; return 1; }
unable() { skip "$@"; } # its former name, for tests written before
# na NAME WHY: a case that does not apply to this machine by nature (a cgroup-v1 case on a
# cgroup-v2 machine): "N/A: NAME: WHY", neither a pass nor a failure. WHY says why.
na() { echo "N/A: $1: $2"; }
need_root_bpf() { # NAME: root and BTF, or skip (so a CI run that cannot exercise BPF fails)
	if [ "$(id -u)" != 0 ]; then
		skip "$1" "needs root and BPF"; return 1
	fi
	if [ ! -r /sys/kernel/btf/vmlinux ]; then
		skip "$1" "needs a kernel with BTF (/sys/kernel/btf/vmlinux)"; return 1
	fi
	return 0
}
# need_fixture NAME PATH: the shared fixture exists, or FAIL (fixtures ship with the tests).
need_fixture() {
	[ -e "$2" ] && return 0
	fail "$1" "fixture $2 missing"; return 1
}
# wait_until TENTHS CMD...: polls CMD every 0.1 s until it succeeds; 1 if it never did.
wait_until() {
	_n=$1; shift
	while [ "$_n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1; _n=$((_n - 1))
	done
	"$@"
}
# wait_file FILE [TENTHS]: waits (default 10 s) until FILE exists and is not empty.
wait_file() { wait_until "${2:-100}" test -s "$1"; }
# tmux on a server of the test's own; pane_wait TARGET TEXT [TENTHS]: polls the pane (default
# 10 s) until it shows TEXT, leaving the last capture in $TMP/screen. The server outlives its
# last session (exit-empty off), so a new session right after a kill-session cannot meet a
# server that is shutting down ("server exited unexpectedly"); tests kill-server on exit.
SOCK=galatop-$(basename "$0" .sh)-$$
printf 'set -g exit-empty off\n' >"$TMP/tmux.conf"
tm() { tmux -L "$SOCK" -f "$TMP/tmux.conf" "$@"; }
pane_has() { tm capture-pane -p -t "$1" >"$TMP/screen" 2>/dev/null && grep -qF -- "$2" "$TMP/screen"; }
pane_wait() { wait_until "${3:-100}" pane_has "$1" "$2"; }
# tty_sane: the terminal modes a pane command saved in $TMP/stty (stty -a) are cooked again.
tty_sane() { grep -q ' icanon' "$TMP/stty" && grep -q ' echo ' "$TMP/stty" && ! grep -q -- '-icanon' "$TMP/stty"; }
# no_gt_progs: no galatop BPF program is left behind. Tests call it once their own galatop is
# gone; programs held open by another live galatop (a second suite or a user's session on the
# same machine) are not theirs. A program held by nobody (pinned) or by any other process is a
# leftover. The kernel frees programs shortly after their last fd goes, hence the short wait.
gt_leftovers() {
	held=$(for d in /proc/[0-9]*; do
		[ "$(cat "$d/comm" 2>/dev/null)" = galatop ] && cat "$d"/fdinfo/* 2>/dev/null
	done | awk '/^prog_id:/ { printf " %s ", $2 }')
	bpftool prog show 2>/dev/null | awk -v held=" $held " '
		/^[0-9]+: .* name gt_/ { id = $1; sub(/:/, "", id); if (!index(held, " " id " ")) n++ }
		END { print n + 0 }'
}
no_gt_progs() { wait_until 30 gt_none_left; }
gt_none_left() { [ "$(gt_leftovers)" = 0 ]; }
# Folded-stack shares for workload tests:
# share FILE PATTERN [WITHIN]: percent of the counts of lines containing WITHIN (default all)
# that also contain PATTERN.
share() {
	awk -v p="$2" -v w="${3:-}" '{ n = $NF; if (w == "" || index($0, w)) { t += n; if (index($0, p)) m += n } }
		END { if (t == 0) print "0"; else printf "%.1f\n", 100 * m / t }' "$1"
}
# Totals of saved files, to check that a save holds what the view showed:
# folded_total FILE: the sum of the counts of a folded file ('-': standard input).
folded_total() { awk '!/^#/ { s += $NF } END { printf "%d\n", s }' "$1"; }
# frame_bytes FOLDED NAME: the sum of the counts of the stacks through frame NAME.
frame_bytes() {
	awk -v f="$2" '!/^#/ { n = $NF; $NF = ""; if (index(";" $0 ";", ";" f ";")) s += n }
		END { printf "%.0f\n", s }' "$1"
}
# heat_levels GTOP TYPE: for a type whose values go down (leak, growth), "T LEVEL" at the end
# of each heat bucket of the snapshot's TYPE profile (seconds from its start): the running sum
# of the buckets' changes from heat_base.
heat_levels() {
	/usr/bin/python3 -c '
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
h = [p for p in d["profiles"] if p["type"] == sys.argv[2]][0]["history"]
lv = h.get("heat_base", 0)
for i, v in enumerate(h["heat"]):
    lv += v
    print("%.2f %.0f" % ((h["heat_first"] + i + 1) * h["bucket_s"], lv))' "$1" "$2"
}
# svg_total FILE: the count in a flame graph's root title ("all (1,234 samples, 100%)").
svg_total() { sed -n 's/.*<title>all (\([0-9,.]*\) .*/\1/p' "$1" | head -n 1 | tr -d ,; }
# gtop_total FILE [TYPE]: the total of a snapshot's profile, as `galatop fold` reads it back.
gtop_total() { "$GALATOP" fold ${2:+--type "$2"} "$1" 2>/dev/null | folded_total -; }
# shown_total FILE: the total a dumped or captured screen's header shows ("  123 samples").
shown_total() { sed -n '1s/.*  \([0-9][0-9]*\) samples.*/\1/p' "$1"; }
# near A B TOL: |A - B| <= TOL
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
# near_counts A NA B NB: the percentages A (of NA samples) and B (of NB samples) of two
# independent samplings of the same process agree within 4 standard errors of their
# difference, and at least 3 points.
near_counts() {
	awk -v a="$1" -v na="$2" -v b="$3" -v nb="$4" 'BEGIN {
		p = (a + b) / 200; if (na < 1 || nb < 1) exit 1
		t = 400 * sqrt(p * (1 - p) * (1 / na + 1 / nb)); if (t < 3) t = 3
		d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}
# next_frames FILE FRAME PCT [SHORT]: the frames right after FRAME (its callees or inlined
# functions) in at least PCT% of the samples through FRAME, one a line, sorted (SHORT as in
# stack_to).
next_frames() {
	awk -v want="$2" -v pct="$3" -v short="${4:-}" '{
		n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
		if (short) for (i = 1; i <= k; i++) sub(/[<(].*/, "", f[i])
		for (i = 1; i < k && f[i] != want; i++) ;
		if (f[i] != want) next
		t += n; if (i < k) c[f[i + 1]] += n
	} END { for (x in c) if (100 * c[x] >= pct * t) print x }' "$1" | sort
}
# same_next_frames GALATOP_FILE PERF_FILE FRAME [SHORT]: every frame after FRAME in >= 10% of
# galatop's samples through it is after it in >= 2% of perf's (and the other way round).
same_next_frames() {
	next_frames "$1" "$3" 10 "${4:-}" >"$TMP/next.g"; next_frames "$2" "$3" 2 "${4:-}" >"$TMP/next.p2"
	next_frames "$2" "$3" 10 "${4:-}" >"$TMP/next.p"; next_frames "$1" "$3" 2 "${4:-}" >"$TMP/next.g2"
	[ -z "$(comm -23 "$TMP/next.g" "$TMP/next.p2")" ] && [ -z "$(comm -23 "$TMP/next.p" "$TMP/next.g2")" ]
}
# near_truth A N TRUTH: the percentage A measured over N samples is within 3 points of TRUTH,
# or within 4 standard errors when a loaded machine left too few samples for 3 points to be
# 4 of them (fewer than ~3700 at a 70/30 split); the test prints N.
near_truth() {
	awk -v a="$1" -v n="$2" -v p="$3" 'BEGIN {
		if (n < 1) exit 1; t = 400 * sqrt(p / 100 * (1 - p / 100) / n); if (t < 3) t = 3
		d = a - p; if (d < 0) d = -d; exit !(d <= t) }'
}
# samples FILE [WITHIN]: the samples of FILE's lines containing WITHIN (default all).
samples() { awk -v w="${2:-}" 'w == "" || index($0, w) { t += $NF } END { print t + 0 }' "$1"; }
# beside NAME SECONDS CMD...: runs CMD (which must run longer than SECONDS + 1) and profiles it
# at 997 Hz for SECONDS with galatop record -p and, at the same time, perf record --call-graph
# dwarf -p; leaves $TMP/NAME.folded (galatop) and $TMP/NAME.perf.folded (perf script, inline
# frames included, through galatop collapse --samples; empty without perf), galatop's
# messages in $TMP/NAME.err.
beside() {
	_n=$1 _s=$2; shift 2
	"$@" >/dev/null & _w=$!
	sleep 0.5
	"$GALATOP" record -F 997 -p $_w -d "$_s" -o "$TMP/$_n.folded" 2>"$TMP/$_n.err" & _g=$!
	: >"$TMP/$_n.perf.folded"
	if command -v perf >/dev/null 2>&1 &&
		perf record -q -F 997 --call-graph dwarf -p $_w -o "$TMP/$_n.data" -- sleep "$_s" >/dev/null 2>&1; then
		perf script -i "$TMP/$_n.data" 2>/dev/null | "$GALATOP" collapse --samples >"$TMP/$_n.perf.folded"
		rm -f "$TMP/$_n.data"
	fi
	wait $_g; kill $_w 2>/dev/null; wait $_w 2>/dev/null
}
# stack_to FILE FRAME [FROM [SHORT]]: the most sampled path of FILE from its frame FROM
# (default main) to the frame FRAME, frames separated by ';'; with SHORT, each frame cut
# before its first '<' or '(' (perf script's Rust v0 and C++ template names lose their
# parameters in collapse).
stack_to() {
	awk -v want="$2" -v from="${3:-main}" -v short="${4:-}" '{
		n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
		if (short) for (i = 1; i <= k; i++) sub(/[<(].*/, "", f[i])
		for (i = 1; i <= k && f[i] != want; i++) ;
		if (i > k) next
		k = i
		for (i = 1; i <= k && f[i] != from; i++) ;
		if (i > k) next
		t = f[i]; for (j = i + 1; j <= k; j++) t = t ";" f[j]
		c[t] += n
	} END { for (t in c) if (c[t] > m) { m = c[t]; b = t }; print b }' "$1"
}
