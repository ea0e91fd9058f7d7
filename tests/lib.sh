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
# Folded-stack shares for workload tests:
# share FILE PATTERN [WITHIN]: percent of the counts of lines containing WITHIN (default all)
# that also contain PATTERN.
share() {
	awk -v p="$2" -v w="${3:-}" '{ n = $NF; if (w == "" || index($0, w)) { t += n; if (index($0, p)) m += n } }
		END { if (t == 0) print "0"; else printf "%.1f\n", 100 * m / t }' "$1"
}
# near A B TOL: |A - B| <= TOL
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
