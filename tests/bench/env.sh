# Sourced first by every benchmark script: the environment `make bench` (tests/bench/run.sh)
# gives them, so that each one also runs by itself (`sh tests/bench/threads.sh`, from any
# directory): the repository root as working directory, the -O2 binary ($GALATOP_OPT) and the
# test workloads ($TOOLS) built and up to date, the shared fixtures and a scratch directory
# ($BENCH_TMP).
cd "$(dirname "$0")/../.." || exit 1
O=${O:-build}; case $O in /*) ;; *) O="$PWD/$O";; esac
BIN=${BIN:-galatop}; case $BIN in /*) ;; *) BIN="$PWD/$BIN";; esac
: "${GALATOP_OPT:=$BIN}" "${FIXTURES:=$PWD/../shared/fixtures}" "${TOOLS:=$O/tools}"
: "${BENCH_TMP:=$O/bench}"
export O BIN GALATOP_OPT FIXTURES TOOLS BENCH_TMP
mkdir -p "$BENCH_TMP" || exit 1
# Under `make bench` both are built already; by itself, a stale binary would mislead.
if [ -z "${MAKELEVEL:-}" ] && [ -z "${BENCH_BUILT:-}" ]; then
	make --no-print-directory -j2 O="$O" BIN="$BIN" "$BIN" tools >"$BENCH_TMP/build.log" 2>&1 ||
		{ cat "$BENCH_TMP/build.log" >&2; echo "bench: build failed" >&2; exit 1; }
	BENCH_BUILT=1; export BENCH_BUILT
fi
