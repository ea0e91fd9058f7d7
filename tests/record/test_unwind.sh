#!/bin/sh
# DWARF unwinding of user stacks (--unwind) against no-frame-pointer workloads of known
# behaviour, some compared with perf record --call-graph dwarf. Needs root and BPF.
. tests/lib.sh
need_root_bpf unwind || exit 0
[ -x "$TOOLS/burn_nofp" ] || { fail unwind "test workloads not built (make tools)"; exit 0; }

# atleast A B: A >= B
atleast() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
# count FILE PATTERN: samples of the lines containing PATTERN
count() { awk -v p="$2" 'index($0, p) { t += $NF } END { print t + 0 }' "$1"; }

# 1. The 60/30/10 burn without frame pointers: the leaves and their caller come back.
"$GALATOP" record -F 499 -o "$TMP/burn.folded" -- "$TOOLS/burn_nofp" 4 2>"$TMP/burn.err"
a=$(share "$TMP/burn.folded" ";leaf_alpha;" ";mid;"); b=$(share "$TMP/burn.folded" ";leaf_beta;" ";mid;")
g=$(share "$TMP/burn.folded" ";leaf_gamma;" ";mid;")
if near "$a" 60 2 && near "$b" 30 2 && near "$g" 10 2; then pass nofp_split_60_30_10
else fail nofp_split_60_30_10 "alpha=$a beta=$b gamma=$g"; cat "$TMP/burn.err"; sort -t' ' -k2 -n "$TMP/burn.folded" | tail -5; fi
for f in leaf_alpha leaf_beta leaf_gamma; do
	check "nofp_full_stack_$f" grep -q ";main;mid;$f;spin" "$TMP/burn.folded"
done
m=$(share "$TMP/burn.folded" ";main;")
if atleast "$m" 99; then pass nofp_reaches_main; else fail nofp_reaches_main "$m% reach main"; fi

# 2. Summary line with the unwinding counts.
check unwind_summary grep -Eq 'unwound [0-9]+ user stacks .*: [0-9]+ \[truncated\] .*, [0-9]+ \[unwind error\]' "$TMP/burn.err"

# 3. libz (no frame pointers, dlopen'ed after a first phase) from two callers, 70/30: stacks
# reach main, and the split agrees with perf record --call-graph dwarf on the same process.
"$TOOLS/zlib_nofp" 5 & zp=$!
sleep 0.5
"$GALATOP" record -F 499 -p $zp -d 3.5 -o "$TMP/z.folded" 2>"$TMP/z.err" &
gp=$!
if command -v perf >/dev/null 2>&1; then
	perf record -q -F 499 --call-graph dwarf -p $zp -o "$TMP/z.data" -- sleep 3.5 >/dev/null 2>&1
fi
wait $gp $zp
zm=$(share "$TMP/z.folded" ";main;" "zlib_nofp;")
zc=$(count "$TMP/z.folded" ";compress2;")
if atleast "$zm" 95 && [ "$zc" -gt 100 ]; then pass libz_reaches_main
else fail libz_reaches_main "main=$zm% compress2 samples=$zc"; cat "$TMP/z.err"; sort -t' ' -k2 -n "$TMP/z.folded" | tail -3; fi
ga=$(share "$TMP/z.folded" ";caller_a;squeeze;compress2;" ";squeeze;compress2;")
gn=$(samples "$TMP/z.folded" ";squeeze;compress2;")
if near_truth "$ga" "$gn" 70; then pass libz_split_70_30; else fail libz_split_70_30 "caller_a=$ga of $gn samples"; fi
if [ -s "$TMP/z.data" ]; then
	perf script -i "$TMP/z.data" 2>/dev/null | "$GALATOP" collapse > "$TMP/pz.folded"
	pa=$(share "$TMP/pz.folded" ";caller_a;squeeze;compress2;" ";squeeze;compress2;")
	if near_counts "$ga" "$gn" "$pa" "$(samples "$TMP/pz.folded" ";squeeze;compress2;")"; then
		pass libz_agrees_with_perf_dwarf
	else fail libz_agrees_with_perf_dwarf "caller_a galatop=$ga perf=$pa"; fi
else
	skip libz_agrees_with_perf_dwarf "perf record --call-graph dwarf unavailable"
fi

# 4. Many threads: each thread's stacks go back to start_thread, same split.
"$GALATOP" record -F 499 -o "$TMP/zt.folded" -- "$TOOLS/zlib_nofp" 3 4 2>/dev/null
ts=$(share "$TMP/zt.folded" ";start_thread;work;" ";compress2;")
ta=$(share "$TMP/zt.folded" ";caller_a;squeeze;compress2;" ";squeeze;compress2;")
tn=$(samples "$TMP/zt.folded" ";squeeze;compress2;")
if atleast "$ts" 95 && near_truth "$ta" "$tn" 70; then pass threads_reach_start_thread
else fail threads_reach_start_thread "start_thread=$ts% caller_a=$ta of $tn samples"; fi

# 5. Off-CPU through libc's nanosleep -> clock_nanosleep reaches the caller (300/100 ms).
"$GALATOP" record --type offcpu -o "$TMP/off.folded" -- "$TOOLS/sleeper_nofp" 4 2>/dev/null
l=$(share "$TMP/off.folded" ";main;sleep_long;nap;" ";clock_nanosleep;")
s=$(share "$TMP/off.folded" ";main;sleep_short;nap;" ";clock_nanosleep;")
if near "$l" 75 5 && near "$s" 25 5; then pass offcpu_nofp_reaches_caller
else fail offcpu_nofp_reaches_caller "long=$l short=$s"; cut -c1-200 "$TMP/off.folded" | head -5; fi

# 6. Page faults of a no-frame-pointer program reach main too.
"$GALATOP" record --type mem -o "$TMP/mem.folded" -- "$TOOLS/zlib_nofp" 1 2>/dev/null
mm=$(share "$TMP/mem.folded" ";main;" ";work;")
if atleast "$mm" 95 && [ "$(count "$TMP/mem.folded" ";work;")" -gt 0 ]; then pass mem_nofp_reaches_main
else fail mem_nofp_reaches_main "main=$mm%"; fi

# 7. C++ through libstdc++ (std::string::find) and inlined std::sort, -fomit-frame-pointer:
# complete and demangled.
if command -v g++ >/dev/null 2>&1; then
	cat > "$TMP/cxx.cc" <<'CXX'
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>
namespace galatop_test {
static volatile unsigned long sink;
__attribute__((noinline)) void sort_work(std::vector<int> &v) {
	for (size_t i = 0; i < v.size(); i++) v[i] = (int)((i * 2654435761u) >> 7);
	std::sort(v.begin(), v.end());
	sink += v[v.size() / 2];
}
__attribute__((noinline)) void string_work(const std::string &hay) {
	for (int i = 0; i < 200; i++) sink += hay.find("needle-not-there", i);
}
}
int main(int argc, char **argv) {
	std::vector<int> v(1 << 18);
	std::string hay(1 << 16, 'n');
	time_t end = time(nullptr) + (argc > 1 ? atoi(argv[1]) : 2);
	while (time(nullptr) < end) { galatop_test::sort_work(v); galatop_test::string_work(hay); }
}
CXX
	g++ -O2 -fomit-frame-pointer -o "$TMP/cxx" "$TMP/cxx.cc"
	"$GALATOP" record -F 499 -o "$TMP/cxx.folded" -- "$TMP/cxx" 3 2>/dev/null
	cm=$(share "$TMP/cxx.folded" ";main;" "cxx;")
	if atleast "$cm" 95 &&
		grep -q ';main;galatop_test::string_work(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&);std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::find(char const\*, unsigned long, unsigned long) const' "$TMP/cxx.folded" &&
		grep -q ';main;galatop_test::sort_work(std::vector<int, std::allocator<int> >&);.*std::__' "$TMP/cxx.folded"; then
		pass cxx_libstdcxx_complete_demangled
	else
		fail cxx_libstdcxx_complete_demangled "main=$cm%"; sort -t' ' -k2 -n "$TMP/cxx.folded" | tail -3 | cut -c1-300
	fi
else
	skip cxx_libstdcxx_complete_demangled "g++ not installed"
fi

# 8. A stack deeper than the copy ends in [truncated] at its outer end (and is counted); a
# bigger --stack-size brings main back.
"$GALATOP" record -F 499 -o "$TMP/deep.folded" -- "$TOOLS/deep_nofp" 2 2>"$TMP/deep.err"
dt=$(share "$TMP/deep.folded" "deep_nofp;[truncated];descend;descend;" "deep_nofp;")
if atleast "$dt" 95 && grep -Eq ': [1-9][0-9]* \[truncated\]' "$TMP/deep.err"; then pass truncated_marker_and_count
else fail truncated_marker_and_count "truncated=$dt%"; cat "$TMP/deep.err"; fi
"$GALATOP" record -F 499 --stack-size 16384 -o "$TMP/deep2.folded" -- "$TOOLS/deep_nofp" 2 2>/dev/null
d2=$(share "$TMP/deep2.folded" ";main;descend;" "deep_nofp;")
if atleast "$d2" 95; then pass stack_size_16k_reaches_main; else fail stack_size_16k_reaches_main "main=$d2%"; fi

# 9. --unwind fp behaves as before: frame-pointer stacks (which stop one frame above main in
# Debian's libc), no stack copies, no unwinding line, no markers.
"$GALATOP" record --unwind fp -F 499 -o "$TMP/fp.folded" -- "$TOOLS/burn" 2 2>"$TMP/fp.err"
if grep -q ';main;mid;leaf_alpha;spin' "$TMP/fp.folded" && ! grep -q 'unwound' "$TMP/fp.err" &&
	! grep -q '__libc_start_main;' "$TMP/fp.folded" && ! grep -Fq '[unwind error]' "$TMP/fp.folded"; then
	pass unwind_fp_as_before
else fail unwind_fp_as_before "$(cat "$TMP/fp.err")"; fi
"$GALATOP" record --unwind fp -F 499 -o "$TMP/fpn.folded" -- "$TOOLS/burn_nofp" 1 2>/dev/null
if ! grep -q ';mid;leaf_alpha;spin' "$TMP/fpn.folded"; then pass unwind_fp_loses_frameless_callers
else fail unwind_fp_loses_frameless_callers "frame pointers found mid without frame pointers?"; fi

# 10. Bad values are refused.
"$GALATOP" record --unwind bogus -d 1 2>"$TMP/bad.err"; rc=$?
if [ $rc = 2 ] && grep -q "unwind: bad value 'bogus'" "$TMP/bad.err"; then pass unwind_bad_value
else fail unwind_bad_value "exit $rc: $(cat "$TMP/bad.err")"; fi
