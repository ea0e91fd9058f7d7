# Shared helpers for shell tests: pass/fail/skip lines that tests/run.sh counts.
# Source it; $GALATOP is the sanitized binary, $FIXTURES the shared fixtures.
: "${GALATOP:=$(pwd)/build/asan/galatop}"
: "${FIXTURES:=$(pwd)/../shared/fixtures}"
TMP=$(mktemp -d /tmp/galatop-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT INT TERM
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+: $2}"; }
skip() { echo "SKIP: $1: $2"; }
# check NAME CMD...: PASS if the command succeeds.
check() { n=$1; shift; if "$@"; then pass "$n"; else fail "$n"; fi; }
need_root_bpf() { # NAME: skips outside CI when not root
	if [ "$(id -u)" != 0 ]; then
		skip "$1" "needs root and BPF"; return 1
	fi
	return 0
}
