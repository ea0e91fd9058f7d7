#!/bin/sh
# Runs every benchmark script in tests/bench/ (figures, not pass/fail) with the -O2 binary.
. "$(dirname "$0")/env.sh"
echo "galatop benchmarks on $(nproc) CPUs, $(uname -r)"
for b in tests/bench/*.sh; do
	case $b in tests/bench/run.sh|tests/bench/env.sh) continue;; esac
	echo
	echo "== $(basename "$b" .sh)"
	sh "$b" || echo "(benchmark $(basename "$b") failed with exit $?)"
done
