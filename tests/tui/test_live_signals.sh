#!/bin/sh
# Signals in the live view: SIGTERM, SIGHUP and SIGINT end `galatop -- CMD` through its normal
# exit path: exit status 128 + signal, the command is sent SIGTERM and reaped, no probe is left,
# the terminal is given back. Needs root + BPF.
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
export GALATOP_THEMES="$HERE/../../themes"
need_root_bpf live_signals || exit 0
command -v tmux >/dev/null 2>&1 || { fail live_signals "tmux is not installed"; exit 0; }
[ -x "$TOOLS/burn" ] || { fail live_signals "test workloads not built (make tools)"; exit 0; }

trap 'tm kill-server 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM

started() { pgrep -f "^$TMP/burn_$1 120" >/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }
# signal_ends NAME SIG NUMBER
signal_ends() {
	rm -f "$TMP/rc" "$TMP/stty"
	# A copy under a name of our own, so that only this test's command is looked for.
	cp "$TOOLS/burn" "$TMP/burn_$1"
	tm new-session -d -s "$1" -x 120 -y 40 \
		"'$GALATOP' -- '$TMP/burn_$1' 120; echo \$? > '$TMP/rc'; stty -a > '$TMP/stty'; sleep 30"
	gp='' cp_=''
	wait_until 200 started "$1"
	cp_=$(pgrep -f "^$TMP/burn_$1 120" | head -1)
	gp=$([ -n "$cp_" ] && ps -o ppid= -p "$cp_" | tr -d ' ')
	if [ -z "$gp" ] || [ "$(cat /proc/"$gp"/comm 2>/dev/null)" != galatop ]; then
		fail "live_${1}_ends_session" "no galatop with its command running (gp=$gp child=$cp_)"
		return
	fi
	# Wait until the view draws (the probes are attached by then).
	pane_wait "$1" samples 200
	kill -"$2" "$gp"
	wait_file "$TMP/rc"
	rc=$(cat "$TMP/rc" 2>/dev/null)
	[ "$rc" = "$3" ] && pass "live_${1}_ends_session" || fail "live_${1}_ends_session" "exit status '$rc', expected $3"
	# The command is gone (reaped, not left behind as an orphan or a zombie).
	if ! wait_until 50 gone "$cp_"; then fail "live_${1}_command_reaped" "$(ps -o pid,ppid,stat,comm -p "$cp_" | tail -1)"
	else pass "live_${1}_command_reaped"; fi
	if wait_file "$TMP/stty" 20 && tty_sane; then pass "live_${1}_terminal_restored"
	else fail "live_${1}_terminal_restored" "$(head -c 300 "$TMP/stty" 2>/dev/null)"; fi
	check "live_${1}_no_probe_left" no_gt_progs
}
signal_ends sigterm TERM 143
signal_ends sighup HUP 129
signal_ends sigint INT 130
