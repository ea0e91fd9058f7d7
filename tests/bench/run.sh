#!/bin/sh
# Runs every benchmark script in tests/bench/ (figures, not pass/fail) with the -O2 binary.
cd "$(dirname "$0")/../.." || exit 1
O=${O:-build}; case $O in /*) ;; *) O="$PWD/$O";; esac
BIN=${BIN:-galatop}; case $BIN in /*) ;; *) BIN="$PWD/$BIN";; esac
export O GALATOP_OPT="$BIN" FIXTURES="${FIXTURES:-$PWD/../shared/fixtures}" TOOLS="$O/tools"
export BENCH_TMP="${BENCH_TMP:-$O/bench}"
mkdir -p "$BENCH_TMP"
echo "galatop benchmarks on $(nproc) CPUs, $(uname -r)"
for b in tests/bench/*.sh; do
	[ "$b" = tests/bench/run.sh ] && continue
	echo
	echo "== $(basename "$b" .sh)"
	sh "$b" || echo "(benchmark $(basename "$b") failed with exit $?)"
done
