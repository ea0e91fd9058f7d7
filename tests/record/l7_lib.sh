# Shared by the L7 record tests (tests/record/test_l7*.sh), sourced after tests/lib.sh.
# The servers a test starts (PIDS) are stopped at exit, and its files removed.
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
# wait_for CMD...: polls CMD for up to 20 s.
wait_for() {
	i=0
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -gt 200 ] && return 1; sleep 0.1
	done
}
# rec_bg OUT ARGS...: starts record --type l7 -o OUT ARGS in the background; returns once it
# records. rec_stop ends it (SIGINT) and waits for its files.
rec_bg() {
	out=$1; shift
	"$GALATOP" record --type l7 -o "$out" "$@" 2>"$out.err" &
	REC=$!
	i=0
	until grep -q 'recording L7' "$out.err" 2>/dev/null; do
		kill -0 $REC 2>/dev/null || return 1
		i=$((i + 1)); [ $i -gt 300 ] && return 1; sleep 0.1
	done
}
rec_stop() { kill -INT $REC; wait $REC; }
# ep FILE PROTO ROLE PATTERN FIELD: FIELD summed over endpoints of PROTO/ROLE whose name
# matches the jq regex PATTERN (case-insensitive).
ep() {
	jq -r --arg p "$2" --arg r "$3" --arg re "$4" --arg f "$5" \
		'[.endpoints[] | select(.protocol == $p and .l7_role == $r and (.endpoint | test($re; "i"))) | .[$f]] | add // 0' "$1"
}
# sess FILE PROTO ROLE FIELD: FIELD summed over sessions.
sess() {
	jq -r --arg p "$2" --arg r "$3" --arg f "$4" \
		'[.sessions[] | select(.protocol == $p and .l7_role == $r) | .[$f]] | add // 0' "$1"
}
eq() { # NAME GOT WANT [WHAT]
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got $2, want $3${4:+ ($4)}"; fi
}
