#!/bin/sh
# Go stacks built by Debian's go: two hot functions with a known 70/30 split of the work
# (their loop body, main.mix, inlined), called from main.main. Builds: stripped of symbols and
# DWARF (-ldflags "-s -w": names and inline frames from .gopclntab, frames stepped with its
# pc-to-SP tables), the same position-independent (-buildmode=pie), unstripped, and with cgo (a C function, hot_c, called from Go: its stack
# through libc-built C code ends at runtime.asmcgocall, the switch to the system stack). The
# split near the truth (tests/lib.sh near_truth), >= 95% of the samples reaching main.main
# from runtime.main, the inlined main.mix named; perf record --call-graph dwarf beside on the
# same process (printed; it cannot name a stripped binary, and skips main.main, the caller of
# a frameless leaf, with Go's .debug_frame), the cgo C stack the same as perf's. Root + BPF.
. tests/lib.sh
need_root_bpf go || exit 0
GO=/usr/bin/go
[ -x $GO ] || { unable go "Debian's golang-go is not installed (make deps)"; exit 0; }

atleast() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
mkdir -p "$TMP/src"
cp tests/record/langs/*.go "$TMP/src/"
export HOME="$TMP" GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GO111MODULE=off GOFLAGS=
for v in "strip:0:exe:-s -w" "pie:0:pie:-s -w" "full:0:exe:" "cgo:1:exe:"; do
	name=${v%%:*} rest=${v#*:}; cgo=${rest%%:*} rest=${rest#*:}; mode=${rest%%:*} ldflags=${rest#*:}
	if ! (cd "$TMP/src" && CGO_ENABLED=$cgo $GO build -buildmode=$mode -ldflags "$ldflags" \
		-o "$TMP/hot_$name" .) >"$TMP/build.err" 2>&1; then
		fail "go_${name}_build" "$(head -3 "$TMP/build.err")"; continue
	fi
	if [ -n "$ldflags" ] && readelf -S "$TMP/hot_$name" | grep -Eq '\.symtab|\.debug_'; then
		fail "go_${name}_build" "symbols or DWARF left"; continue
	fi
	beside "$name" 6 "$TMP/hot_$name" 30
	F=$TMP/$name.folded P=$TMP/$name.perf.folded
	a=$(share "$F" ";main.hotGoAlpha" ";main.hotGo") m=$(share "$F" ";runtime.main;main.main;main.hotGo" ";main.hotGo")
	i=$(share "$F" ";main.hotGo" ";main.hotGo") n=$(samples "$F" ";main.hotGo")
	inl=$(share "$F" ";main.mix" ";main.hotGo") bad=$(grep ';main.mix' "$F" | grep -cv ';main.hotGo[A-Za-z]*;main.mix')
	echo "  go $name: galatop alpha=$a% of $n (truth 70) reaching main.main=$m% in main.mix (inlined)=$inl%; $(sed -n 's/galatop: \(unwound.*\)/\1/p' "$TMP/$name.err")"
	if near_truth "$a" "$n" 70 && atleast "$m" 95; then pass "go_${name}_split_and_main"
	else fail "go_${name}_split_and_main" "alpha=$a% main.main=$m%"; sort -t' ' -k2 -n "$F" | tail -3 | cut -c1-300; fi
	if atleast "$inl" 20 && [ "$bad" = 0 ]; then pass "go_${name}_inline_frames"
	else fail "go_${name}_inline_frames" "main.mix in $inl%, $bad stacks with main.mix elsewhere"; fi
	if [ -s "$P" ]; then
		pa=$(share "$P" ";main.hotGoAlpha" ";main.hotGo") pm=$(share "$P" ";runtime.main;main.main;main.hotGo" ";main.hotGo")
		echo "  go $name: perf    alpha=$pa% of $(samples "$P" ";main.hotGo") reaching main.main=$pm%"
	fi
	[ "$name" = cgo ] || continue
	gs=$(stack_to "$F" hot_c runtime.asmcgocall.abi0)
	echo "    galatop: $gs"
	if ! echo "$gs" | grep -Eq '^runtime\.asmcgocall\.abi0;_cgo_[0-9a-f]+_Cfunc_hot_c;hot_c$'; then
		fail go_cgo_c_stack "$gs"
	elif [ ! -s "$P" ]; then
		skip go_cgo_c_stack_as_perf "perf record --call-graph dwarf unavailable"
	else
		ps=$(stack_to "$P" hot_c runtime.asmcgocall.abi0)
		echo "    perf:    $ps"
		check go_cgo_c_stack_as_perf [ "$gs" = "$ps" ]
	fi
done
