#!/bin/sh
# Probes that fail to attach while the live view runs: the engine returns the warning or error,
# the view says it (the status line; the L7 and SLI panes also in their body), and nothing is
# written to the terminal curses owns. The failures are real: galatop's open-file limit is
# lowered (prlimit) while it runs, so that a family attaches in part (warnings) or cannot load
# (errors). Root + BPF.
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
export GALATOP_THEMES="$HERE/../../themes"
need_root_bpf live_attach || exit 0
command -v tmux >/dev/null 2>&1 || { unable live_attach "tmux is not installed (make deps)"; exit 0; }
command -v prlimit >/dev/null 2>&1 || { unable live_attach "prlimit is missing (util-linux)"; exit 0; }

# start_view SESSION: the view in tmux, its stderr in $TMP/SESSION.err (whatever galatop writes
# there would otherwise land on the screen); sets g (its pid) and n (its open files) once it
# shows its first frame.
start_view() {
	tm new-session -d -s "$1" -x 200 -y 30 \
		"'$GALATOP' -p 1 2>'$TMP/$1.err'; echo \$? >'$TMP/$1.rc'; sleep 30"
	pane_wait "$1" "99 Hz" 300 || { fail live_attach "the view did not start: $(head -3 "$TMP/screen")"; exit 0; }
	g=$(pgrep -P "$(tm display -p -t "$1" '#{pane_pid}')" -x galatop)
	n=$(ls "/proc/$g/fd" | wc -l)
}
# quit_view SESSION NAME: q, then the view exits 0 with no BPF program left.
quit_view() {
	tm send-keys -t "$1" q
	wait_file "$TMP/$1.rc" 100
	rc=$(cat "$TMP/$1.rc" 2>/dev/null)
	[ "$rc" = 0 ] && pass "$2" || fail "$2" "exit $rc: $(cat "$TMP/$1.err")"
}

# --- A warning: the SLI probes attach in part. How many files they hold is measured first;
# two fewer lets them load and attach all but their last hooks.
start_view full
n0=$n
tm send-keys -t full 5
pane_wait full "host" 100 || fail live_attach_sli_measure "$(grep -v '^ *$' "$TMP/screen" | head -3)"
need=$(( $(ls "/proc/$g/fd" | wc -l) - n0 ))
quit_view full live_attach_measure_quits
start_view part
prlimit --pid "$g" --nofile=$((n + need - 2)):$((n + need - 2)) ||
	{ fail live_attach "prlimit refused on pid $g"; exit 0; }
tm send-keys -t part 5
if pane_wait part "cannot attach: Too many open files" 100 &&
	sed -n 2p "$TMP/screen" | grep -q "cannot attach: Too many open files" &&
	grep -q '^host' "$TMP/screen"; then
	pass live_attach_warning_in_status_line
else
	fail live_attach_warning_in_status_line "$(grep -v '^ *$' "$TMP/screen" | head -4)"
fi
if [ ! -s "$TMP/part.err" ]; then pass live_attach_warning_nothing_over_screen
else fail live_attach_warning_nothing_over_screen "stderr: $(head -3 "$TMP/part.err")"; fi
quit_view part live_attach_warning_quits

# --- Errors: one descriptor to spare, so the thread probes, the L7 capture and the SLI probes
# cannot load at all.
start_view la
prlimit --pid "$g" --nofile=$((n + 1)):$((n + 1)) ||
	{ fail live_attach "prlimit refused on pid $g"; exit 0; }
tm send-keys -t la 3
if pane_wait la "threads: cannot" 100 && sed -n 2p "$TMP/screen" | grep -q "Too many open files"; then
	pass live_attach_error_in_status_line
else
	fail live_attach_error_in_status_line "$(sed -n 1,3p "$TMP/screen")"
fi
tm send-keys -t la 4
pane_wait la "l7: cannot" 100 && pass live_attach_l7_error_in_pane ||
	fail live_attach_l7_error_in_pane "$(grep -v '^ *$' "$TMP/screen" | head -4)"
tm send-keys -t la 5
pane_wait la "cannot load the SLI probes" 100 && pass live_attach_sli_error_in_pane ||
	fail live_attach_sli_error_in_pane "$(grep -v '^ *$' "$TMP/screen" | head -4)"
# Nothing reached the terminal while curses owned it.
if [ ! -s "$TMP/la.err" ]; then pass live_attach_nothing_over_screen
else fail live_attach_nothing_over_screen "stderr: $(head -3 "$TMP/la.err")"; fi
quit_view la live_attach_quits_cleanly
no_gt_progs && pass live_attach_no_leftover || fail live_attach_no_leftover "$(gt_leftovers) programs left"
