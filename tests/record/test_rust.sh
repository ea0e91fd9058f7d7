#!/bin/sh
# Rust stacks built by Debian's rustc: two hot functions with a known 70/30 split of the work,
# called from main through std::rt::lang_start. For each build (-O -g; linked by lld, as
# rustc >= 1.90 links by default; release without debug info, .eh_frame only; v0 mangling),
# galatop and perf record --call-graph dwarf profile the same process: the split near the
# truth (tests/lib.sh near_truth), >= 95% of the samples reaching main, the same stack as
# perf's (from main to hot_rust_beta, and the functions inlined in it: perf script --inline),
# and a split that agrees with perf's within sampling error. Root + BPF.
. tests/lib.sh
need_root_bpf rust || exit 0
RUSTC=/usr/bin/rustc
[ -x $RUSTC ] || { skip rust "Debian's rustc is not installed (make deps)"; exit 0; }

# atleast A B: A >= B
atleast() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
hot=tests/record/langs/hot.rs
for v in "g:-O -g" "lld:-O -g -C link-arg=-fuse-ld=lld" "release:-O -C strip=debuginfo" \
	"v0:-O -C strip=debuginfo -C symbol-mangling-version=v0"; do
	name=${v%%:*} flags=${v#*:}
	# shellcheck disable=SC2086
	if ! $RUSTC $flags -o "$TMP/hot_$name" $hot 2>"$TMP/rustc.err"; then
		fail "rust_${name}_build" "$(head -3 "$TMP/rustc.err")"; continue
	fi
	if [ "$name" = release ] && readelf -S "$TMP/hot_$name" | grep -q '\.debug_'; then
		fail rust_release_build "debug sections left"; continue
	fi
	beside "$name" 6 "$TMP/hot_$name" 30
	F=$TMP/$name.folded P=$TMP/$name.perf.folded
	a=$(share "$F" ";hot::hot_rust_alpha" ";hot::hot_rust_") m=$(share "$F" ";main;std::rt::lang_start")
	n=$(samples "$F" ";hot::hot_rust_")
	echo "  rust $name: galatop alpha=$a% of $n (truth 70) reaching main=$m%; $(sed -n 's/galatop: \(unwound.*\)/\1/p' "$TMP/$name.err")"
	if near_truth "$a" "$n" 70 && atleast "$m" 95; then pass "rust_${name}_split_and_main"
	else fail "rust_${name}_split_and_main" "alpha=$a% main=$m%"; sort -t' ' -k2 -n "$F" | tail -3 | cut -c1-300; fi
	if [ ! -s "$P" ]; then skip "rust_${name}_as_perf" "perf record --call-graph dwarf unavailable"; continue; fi
	pa=$(share "$P" ";hot::hot_rust_alpha" ";hot::hot_rust_") pm=$(share "$P" ";main;std::rt::lang_start")
	pn=$(samples "$P" ";hot::hot_rust_")
	# perf script's v0 names lose their generic parameters in collapse: compare without them.
	short=; [ "$name" = v0 ] && short=1
	gs=$(stack_to "$F" hot::hot_rust_beta main $short) ps=$(stack_to "$P" hot::hot_rust_beta main $short)
	echo "  rust $name: perf    alpha=$pa% of $pn reaching main=$pm%"
	echo "    galatop: $gs;{$(next_frames "$F" hot::hot_rust_beta 10 $short | tr '\n' ',')}"
	echo "    perf:    $ps;{$(next_frames "$P" hot::hot_rust_beta 10 $short | tr '\n' ',')}"
	if [ -n "$gs" ] && [ "$gs" = "$ps" ] && same_next_frames "$F" "$P" hot::hot_rust_beta $short &&
		near_counts "$a" "$n" "$pa" "$pn"; then pass "rust_${name}_as_perf"
	else fail "rust_${name}_as_perf" "alpha galatop=$a% perf=$pa%"; fi
done
