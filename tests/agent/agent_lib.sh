# Helpers of the agent tests (tests/agent/test_*.sh source it after tests/lib.sh).
# start_agent LOG ARGS...: runs the agent in the background, its pid in $AGENT; true once it
# says it runs.
start_agent() {
	log=$1; shift
	: >"$log"
	"$GALATOP" agent --log-level debug "$@" 2>"$log" &
	AGENT=$!
	wait_until 300 grep -qs 'running (pid' "$log"
}
# stop_agent [SIGNAL]: signals the agent (TERM), waits for it; its exit status in $RC.
stop_agent() {
	kill -"${1:-TERM}" "$AGENT"
	wait "$AGENT"; RC=$?
}
# The agent's servers off (their default ports are for one agent on a box, not for tests
# running side by side): start_agent LOG $NOSERVE ARGS...
NOSERVE="--metrics off --rest off"
# pycheck ARGS... <<'EOF': a check written in Python, run by Debian's python3 (DEB_PKGS, not a
# developer's own) with tests/agent/results.py importable and no bytecode left in the tree.
pycheck() { PYTHONPATH="$(dirname "$0")" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 - "$@"; }
