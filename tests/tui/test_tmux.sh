#!/bin/sh
# galatop view in a real terminal (tmux): keys reach it, resizing re-lays out, a too-small
# window says so, and q or a fatal signal gives the shell its terminal back (echo, icanon).
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
BASIC=$HERE/basic.folded
export GALATOP_THEMES="$HERE/../../themes"

command -v tmux >/dev/null 2>&1 || { fail tmux "tmux is not installed (make deps)"; exit 0; }
trap 'tm kill-server 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
wait_for() { pane_wait "$T" "$1"; }

# The pane runs galatop, then records its exit status and the terminal modes it left.
# Each run gets its own session name: a killed session may linger for a moment.
N=0
start() { # NAME EXTRA-ENV
	rm -f "$TMP/rc" "$TMP/stty"
	N=$((N + 1))
	T=t$N
	tm new-session -d -s $T -x 120 -y 40 \
		"env LC_ALL=C.UTF-8 TERM=xterm-256color $2 $GALATOP view $BASIC; echo \$? >$TMP/rc; stty -a >$TMP/stty; sleep 30"
}

start keys ""
if wait_for "F1 Help"; then pass "tmux: starts"; else fail "tmux: starts"; cat "$TMP/screen"; exit 0; fi
tm send-keys -t $T j j j Enter
wait_for "zoom depth 3" && [ "$(sed -n 3p "$TMP/screen" | sed 's/ *$//')" = "ngx_process_events" ] &&
	pass "tmux: zoom with Enter" || fail "tmux: zoom with Enter"
tm send-keys -t $T / 'alpha' Enter
wait_for "Matched" && pass "tmux: search" || fail "tmux: search"
tm send-keys -t $T F1
wait_for "Everywhere" && pass "tmux: F1 help" || fail "tmux: F1 help"
tm send-keys -t $T Escape
tm send-keys -t $T Tab
wait_for "Self%" && pass "tmux: Tab to top view" || fail "tmux: Tab to top view"
tm resize-window -t $T -x 30 -y 8
wait_for "terminal too small" && pass "tmux: too small" || fail "tmux: too small"
tm resize-window -t $T -x 100 -y 30
wait_for "F1 Help" && [ "$(tm display -p -t $T '#{pane_width}')" = 100 ] &&
	! grep -q "too small" "$TMP/screen" && pass "tmux: resize re-lays out" || fail "tmux: resize re-lays out"
tm send-keys -t $T q
if wait_file "$TMP/rc" && [ "$(cat "$TMP/rc")" = 0 ]; then pass "tmux: q exits 0"; else fail "tmux: q exits 0" "rc=$(cat "$TMP/rc" 2>/dev/null)"; fi
wait_file "$TMP/stty" && tty_sane && pass "tmux: terminal restored after q" || fail "tmux: terminal restored after q"
tm kill-session -t $T

# Frame colors on 256 colors: each family on its own ramp, the hue varied per name, so that
# neighbours of one family read apart (epoll_wait | ngx_http_handler, both user frames); a theme
# with hues off, and 8 colors, keep one color per family. The background codes come from
# tmux's escapes (capture-pane -e).
bgs() { # SESSION ROW: the background codes of the frames on that screen row, in order
	tm capture-pane -p -e -t "$1" | sed -n "${2}p" | grep -o '48;5;[0-9]*m[^ ]' | sed 's/m.*//'
}
hues() { # NAME THEME TERM
	N=$((N + 1))
	T=t$N
	tm new-session -d -s $T -x 120 -y 40 \
		"env LC_ALL=C.UTF-8 TERM=$3 $GALATOP view --theme $2 $BASIC; sleep 30"
	wait_for "F1 Help" || return 1
	# Row 7: epoll_wait, ngx_http_handler, processCommand, LFoo, PyEval_EvalFrame.
	bgs $T 7 >"$TMP/$1.bg"
	# q, not a hang-up: the sanitized build's leak check at exit once hung there (its tracer
	# waiting on a thread that never stopped: see the hang-up test below), leaving a view
	# spinning behind the test.
	tm send-keys -t $T q
	sleep 0.3
	tm kill-session -t $T
}
if hues hue256 default xterm-256color && hues flat colorblind xterm-256color; then
	n=$(sort -u "$TMP/hue256.bg" | wc -l) first=$(sed -n 1p "$TMP/hue256.bg") second=$(sed -n 2p "$TMP/hue256.bg")
	if [ "$n" -ge 2 ] && [ "$first" != "$second" ] && [ "$(sort -u "$TMP/flat.bg" | wc -l)" = 1 ]; then
		pass "tmux: a hue per name on 256 colors ($n on the row), one with hues off"
	else
		fail "tmux: hues per name" "default: $(tr '\n' ' ' <"$TMP/hue256.bg"), colorblind: $(tr '\n' ' ' <"$TMP/flat.bg")"
	fi
	# The families stay apart: the kernel frames' codes are not the user frames'.
	N=$((N + 1)); T=t$N
	tm new-session -d -s $T -x 120 -y 40 "env LC_ALL=C.UTF-8 TERM=xterm-256color $GALATOP view $BASIC; sleep 30"
	wait_for "F1 Help"
	k=$(bgs $T 9 | sed -n 1p) u=$(sort -u "$TMP/hue256.bg" | tr '\n' ' ')
	case " $u" in *" $k "*) fail "tmux: kernel frames apart from user frames" "kernel $k, user $u" ;;
	*) [ -n "$k" ] && pass "tmux: kernel frames apart from user frames" || fail "tmux: kernel frames apart" "no kernel frame" ;; esac
	tm send-keys -t $T q
	sleep 0.3
	tm kill-session -t $T
else
	fail "tmux: hues per name" "did not start"
fi

# Fatal signals: the handler ends curses before the process dies.
for sig in TERM INT HUP SEGV; do
	start "sig$sig" ""
	if ! wait_for "F1 Help"; then fail "tmux: SIG$sig restores the terminal" "did not start"; continue; fi
	pid=$(pgrep -n -f "view $BASIC" 2>/dev/null)
	[ -n "$pid" ] && kill -s "$sig" "$pid"
	if wait_file "$TMP/stty" && tty_sane && [ "$(cat "$TMP/rc")" != 0 ]; then
		pass "tmux: SIG$sig restores the terminal"
	else
		fail "tmux: SIG$sig restores the terminal" "rc=$(cat "$TMP/rc" 2>/dev/null)"
	fi
	tm kill-session -t $T
done

# Hostile frame names: no escape sequence reaches the terminal (the pane title stays).
printf 'evil\033]2;PWNED\007;x\033[2J\033[31m 5\nbad\377utf8 3\n' >"$TMP/evil.folded"
N=$((N + 1))
T=t$N
tm new-session -d -s $T -x 120 -y 40 "env LC_ALL=C.UTF-8 $GALATOP view $TMP/evil.folded; sleep 30"
tm select-pane -t $T -T clean
if wait_for "F1 Help"; then
	tm send-keys -t $T j j 2
	wait_for "Self%"
	title=$(tm display -p -t $T '#{pane_title}')
	if [ "$title" = clean ] && grep -q 'PWNED' "$TMP/screen"; then
		pass "tmux: hostile names are inert"
	else
		fail "tmux: hostile names are inert" "title '$title'"
	fi
	tm send-keys -t $T q
else
	fail "tmux: hostile names are inert" "did not start"
fi

# A terminal that hangs up without a SIGHUP reaching galatop (its shell ignores SIGHUP, the
# terminal's server is killed; the shell stays, so it is the one the kernel tells): galatop leaves
# instead of spinning on a read that fails at once. Without the sanitizer's leak check: a
# terminal's hang-up sends SIGCONT after SIGHUP, and LeakSanitizer's stop-the-world at exit can
# then wait forever for a thread whose SIGSTOP the SIGCONT discarded (a view left spinning).
T=hup
tm new-session -d -s $T -x 120 -y 40 \
	"trap '' HUP; ASAN_OPTIONS=detect_leaks=0 $GALATOP view $BASIC; true >/dev/null"
if wait_for "F1 Help"; then
	# This pane's galatop: the shell's child (an earlier test's may still be exiting: the
	# SEGV one runs ASan's report).
	gp=$(pgrep -P "$(tm display -p -t $T '#{pane_pid}')" -f "view $BASIC" | head -n 1)
	kill -9 "$(tm display -p -t $T '#{pid}')"
	gone=0
	for i in $(seq 150); do kill -0 "$gp" 2>/dev/null || { gone=1; break; }; sleep 0.1; done
	if [ -z "$gp" ]; then fail "tmux: a hung-up terminal ends the view" "its galatop not found"
	elif [ "$gone" = 1 ]; then pass "tmux: a hung-up terminal ends the view"
	else fail "tmux: a hung-up terminal ends the view" "pid $gp still runs"; kill -9 "$gp"; fi
else
	fail "tmux: a hung-up terminal ends the view" "did not start"
fi
