#!/bin/sh
# C++ inline frames from DWARF: two always-inlined functions (inner_alpha, inner_beta) with a
# known 70/30 split of the work, each running an inlined template method (gt::Acc<>::mix),
# inside gt::outer, built by Debian's g++ -O2 -g. galatop and perf record --call-graph dwarf
# profile the same process: the split between the inlined functions near the truth
# (tests/lib.sh near_truth), >= 95% of the samples reaching main, the inline frames and the
# demangled template the same as perf script's (--inline, its default). Root + BPF.
. tests/lib.sh
need_root_bpf cxx || exit 0
command -v g++ >/dev/null 2>&1 || { unable cxx "g++ is not installed (make deps)"; exit 0; }

atleast() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
if ! g++ -O2 -g -o "$TMP/inline" tests/record/langs/inline.cc 2>"$TMP/build.err"; then
	fail cxx_build "$(head -3 "$TMP/build.err")"; exit 0
fi
beside cxx 6 "$TMP/inline" 30
F=$TMP/cxx.folded P=$TMP/cxx.perf.folded
W=';gt::outer(unsigned long);inner_'
a=$(share "$F" "${W}alpha;" "$W") m=$(share "$F" ";main;gt::outer(" ";gt::outer(") n=$(samples "$F" "$W")
t=$(share "$F" "${W}alpha;gt::Acc<unsigned long>::mix(unsigned long)" "${W}alpha;")
echo "  cxx: galatop inner_alpha=$a% of $n (truth 70) reaching main=$m%, in the inlined mix=$t%; $(sed -n 's/galatop: \(unwound.*\)/\1/p' "$TMP/cxx.err")"
if near_truth "$a" "$n" 70 && atleast "$m" 95; then pass cxx_inline_split_and_main
else fail cxx_inline_split_and_main "inner_alpha=$a% main=$m%"; sort -t' ' -k2 -n "$F" | tail -3 | cut -c1-300; fi
if atleast "$t" 90; then pass cxx_inline_template_demangled
else fail cxx_inline_template_demangled "gt::Acc<unsigned long>::mix(unsigned long) in $t% of inner_alpha"; fi
if [ ! -s "$P" ]; then skip cxx_inline_as_perf "perf record --call-graph dwarf unavailable"; exit 0; fi
# perf's names have no parameters: compare each frame up to its first '<' or '('
pa=$(share "$P" ";gt::outer;inner_alpha;" ";gt::outer;inner_") pn=$(samples "$P" ";gt::outer;inner_")
gs=$(stack_to "$F" inner_alpha main 1) ps=$(stack_to "$P" inner_alpha main 1)
echo "  cxx: perf    inner_alpha=$pa% of $pn reaching main=$(share "$P" ";main;gt::outer;" ";gt::outer;")%"
echo "    galatop: $gs;{$(next_frames "$F" inner_alpha 10 1 | tr '\n' ',')}"
echo "    perf:    $ps;{$(next_frames "$P" inner_alpha 10 1 | tr '\n' ',')}"
if [ -n "$gs" ] && [ "$gs" = "$ps" ] && [ -n "$(next_frames "$F" inner_alpha 10 1)" ] &&
	same_next_frames "$F" "$P" inner_alpha 1 && near_counts "$a" "$n" "$pa" "$pn"; then pass cxx_inline_as_perf
else fail cxx_inline_as_perf "inner_alpha galatop=$a% perf=$pa%"; fi
