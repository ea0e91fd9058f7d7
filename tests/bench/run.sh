#!/bin/sh
# Runs every benchmark script in tests/bench/ (figures, not pass/fail) with the -O2 binary; the
# cost benchmarks (l7, sli, threads) first, as one table.
. "$(dirname "$0")/env.sh"
echo "galatop benchmarks on $(nproc) CPUs, $(uname -r)"
echo
echo "== cost: what galatop costs a workload, per family"
. tests/bench/cost.lib
cost_cleanup
cost_header
COST_TABLE_HEADER_DONE=1; export COST_TABLE_HEADER_DONE
for b in l7 sli threads; do
	sh "tests/bench/$b.sh" || echo "(benchmark $b failed with exit $?)"
done
cost_footer
unset COST_TABLE_HEADER_DONE
for b in tests/bench/*.sh; do
	case $b in tests/bench/run.sh|tests/bench/env.sh|tests/bench/l7.sh|tests/bench/sli.sh|\
		tests/bench/threads.sh) continue;; esac
	echo
	echo "== $(basename "$b" .sh)"
	sh "$b" || echo "(benchmark $(basename "$b") failed with exit $?)"
done
