#!/bin/sh
# perf.data read directly: `galatop collapse FILE.data` against `perf script -i FILE.data |
# galatop collapse` on files recorded here with perf (the tests' workloads, frame pointers,
# DWARF, pipe mode, a system-wide capture); view, svg and fold of perf.data; truncated and
# foreign binary input. The differences of principle are those of docs/perfdata.md.
. "$(dirname "$0")/../lib.sh"
: "${TOOLS:=$(pwd)/build/tools}"

if ! command -v perf >/dev/null; then
	skip "perf.data tests" "perf not installed (make deps installs linux-perf)"; exit 0
fi
if [ "$(id -u)" != 0 ]; then
	skip "perf.data tests" "perf record needs root here"; exit 0
fi
rec() { # OUT ARGS...: perf record quietly, or FAIL
	out=$1; shift
	perf record -q -F 997 -o "$out" "$@" >/dev/null 2>"$TMP/rec.err" && [ -s "$out" ] && return 0
	fail "perf record $*" "$(head -2 "$TMP/rec.err")"; return 1
}
# perf's names of glibc's aliases are mapped to galatop's before comparing (docs/perfdata.md);
# galatop's too: where the aliases are all local (__GI___pthread_mutex_unlock_usercnt and
# __pthread_mutex_unlock_usercnt) it keeps the first in the table, the __GI_ one.
ALIASES="$(dirname "$0")/perf_aliases.sed"
# same NAME FILE [OPTS]: galatop reads FILE as perf script | galatop collapse does
sums() { # FILE: its stacks with counts summed per stack (after a rename), sorted
	awk '{ match($0, / [^ ]*$/); s[substr($0, 1, RSTART - 1)] += substr($0, RSTART + 1) }
		END { for (k in s) printf "%s %.0f\n", k, s[k] }' "$1" | LC_ALL=C sort
}
same() {
	name=$1 f=$2 o=$3
	perf script -i "$f" 2>/dev/null | "$GALATOP" collapse $o >"$TMP/want" 2>/dev/null
	"$GALATOP" collapse $o "$f" >"$TMP/got" 2>"$TMP/err"
	rc=$?
	sed -f "$ALIASES" "$TMP/want" >"$TMP/want.r"
	sums "$TMP/want.r" >"$TMP/want.n"
	sed -f "$ALIASES" "$TMP/got" >"$TMP/got.r"
	sums "$TMP/got.r" >"$TMP/got.n"
	if [ "$rc" = 0 ] && [ -s "$TMP/want" ] && cmp -s "$TMP/want.n" "$TMP/got.n"; then
		pass "$name: same as perf script | collapse ($(wc -l <"$TMP/got") stacks)"
	else
		# kept for a look at the stacks that differ (the temporary directory goes)
		keep=${O:+$O/test-logs/perfdata-$(basename "$f")}
		[ -n "$keep" ] && cp "$f" "$keep" 2>/dev/null || keep="not kept"
		fail "$name" "exit $rc ($keep); $(diff "$TMP/want.n" "$TMP/got.n" | head -4 | cut -c1-200)"
	fi
}

# Call chains that end in junk addresses: -g on a binary without frame pointers (its frame
# pointer register holds a loop's numbers, in no mapping). Without --addrs their frames are all
# [unknown]; with it each shows its own address (the reader parses an unknown frame once per
# module only without it).
if rec "$TMP/nofp.data" -g "$TOOLS/burn_nofp" 1; then
	for o in "" --addrs; do same "burn_nofp -g ${o:-default}" "$TMP/nofp.data" "$o"; done
fi

# Frame pointers: with every option.
if rec "$TMP/fp.data" -g "$TOOLS/burn" 1; then
	for o in "" --kernel --addrs --samples --all; do same "burn -g ${o:-default}" "$TMP/fp.data" "$o"; done
	# --tid: perf prints the TID alone (the script's burn-?/TID), galatop the real PID.
	"$GALATOP" collapse --tid "$TMP/fp.data" >"$TMP/tid" 2>/dev/null
	pid=$(perf script -i "$TMP/fp.data" -F pid 2>/dev/null | head -1 | tr -d ' ')
	check "burn -g --tid: root frame burn-PID/TID with the real PID" \
		grep -q "^burn-$pid/$pid;" "$TMP/tid"
	# The workload's split, from galatop alone: 60/30/10 over the leaves (+-8 points).
	awk '/leaf_alpha/ { a += $NF } /leaf_beta/ { b += $NF } /leaf_gamma/ { g += $NF }
		END { t = a + b + g; if (!t) exit 1; a = 100 * a / t; b = 100 * b / t
		      exit !(a > 52 && a < 68 && b > 22 && b < 38) }' "$TMP/got"
	check "burn -g: the 60/30/10 split" [ $? = 0 ]

	# Kernel frames named from perf's copy of kallsyms, never from /proc/kallsyms. burn
	# spends its time in user space (0-4 kernel samples a second), so a workload that
	# lives in the kernel is recorded for this: dd between /dev/zero and /dev/null.
	if ! command -v strace >/dev/null; then
		skip "kernel frames: kallsyms read from perf's copy" "strace missing (make deps installs it)"
	elif rec "$TMP/k.data" -g dd if=/dev/zero of=/dev/null bs=4k count=1500000; then
		kf=$(perf script -i "$TMP/k.data" -F ip,dso 2>/dev/null | grep -c 'kernel.kallsyms')
		strace -f -e trace=open,openat -o "$TMP/k.strace" "$GALATOP" collapse --kernel \
			"$TMP/k.data" >"$TMP/k.folded" 2>/dev/null
		check "kernel frames ($kf in perf script): kallsyms read from perf's copy, not /proc" sh -c \
			"[ $kf -gt 100 ] && grep -q 'kernel.kallsyms.*/kallsyms' '$TMP/k.strace' &&
			 ! grep -q /proc/kallsyms '$TMP/k.strace'"
		check "kernel frames: named (vfs_read_[k] or vfs_write_[k])" \
			grep -q 'vfs_\(read\|write\)_\[k\]' "$TMP/k.folded"
	fi

	# The other commands read it too.
	"$GALATOP" collapse "$TMP/fp.data" >"$TMP/got" 2>/dev/null
	"$GALATOP" fold "$TMP/fp.data" >"$TMP/fold" 2>"$TMP/err"
	check "fold perf.data: the same stacks as collapse" cmp -s "$TMP/fold" "$TMP/got"
	"$GALATOP" svg "$TMP/fp.data" >"$TMP/fp.svg" 2>"$TMP/err"
	check "svg perf.data: exit 0, valid XML" sh -c "[ -s '$TMP/fp.svg' ] && xmllint --noout '$TMP/fp.svg'"
	check "svg perf.data: shows the leaves" grep -q 'leaf_alpha' "$TMP/fp.svg"
	"$GALATOP" view --dump --size 120x30 "$TMP/fp.data" >"$TMP/screen" 2>"$TMP/err"
	check "view perf.data: the flame shows mid and leaf_alpha" \
		sh -c "grep -q 'leaf_alpha' '$TMP/screen' && grep -q ' mid ' '$TMP/screen' || grep -q '^mid' '$TMP/screen'"

	# Truncated copies (in the header, the attributes, the data section): one line,
	# non-zero, nothing drawn or printed.
	data=$(perf report -i "$TMP/fp.data" --header-only 2>/dev/null |
		awk '/# data offset/ { o = $NF } /# data size/ { s = $NF } END { print o + int(s / 2) }')
	for cut in 50 200 "$data"; do
		head -c "$cut" "$TMP/fp.data" >"$TMP/cut.data"
		for cmd in collapse fold svg view; do
			"$GALATOP" $cmd "$TMP/cut.data" >"$TMP/out" 2>"$TMP/err"
			rc=$?
			check "truncated at $cut: $cmd fails in one line, no output" \
				sh -c "[ $rc != 0 ] && [ ! -s '$TMP/out' ] && [ \$(wc -l <'$TMP/err') = 1 ] &&
					grep -q 'cut.data: truncated perf.data' '$TMP/err'"
		done
	done
fi

# Foreign binary files: any format that is mostly invalid fails.
for cmd in collapse fold svg view; do
	"$GALATOP" $cmd "$TOOLS/burn" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	check "an ELF file: $cmd fails in one line, no output" \
		sh -c "[ $rc != 0 ] && [ ! -s '$TMP/out' ] && [ \$(wc -l <'$TMP/err') = 1 ]"
done

# DWARF: the user stack unwound by galatop.
# User samples only: kallsyms is not read at all (neither perf's copy nor /proc/kallsyms).
if rec "$TMP/user.data" -g -e cpu-clock:u "$TOOLS/burn" 1; then
	same "burn -g, user samples only" "$TMP/user.data" ""
	if command -v strace >/dev/null; then
		strace -f -e trace=open,openat -o "$TMP/user.strace" "$GALATOP" collapse \
			"$TMP/user.data" >/dev/null 2>&1
		check "user samples only: kallsyms not read" sh -c \
			"[ -s '$TMP/user.strace' ] && ! grep -q kallsyms '$TMP/user.strace'"
	else
		skip "user samples only: kallsyms not read" "strace missing (make deps installs it)"
	fi
fi

if rec "$TMP/dw.data" --call-graph dwarf "$TOOLS/burn_nofp" 1; then
	# stacks met again are passed on by their unwound frames: the counts must stay perf's
	# (the default last: the checks below read its output)
	for o in --samples --addrs --kernel ""; do
		same "burn_nofp --call-graph dwarf ${o:-default}" "$TMP/dw.data" "$o"
	done
	check "dwarf: complete stacks from _start to the leaves" grep -q '^burn_nofp;_start;.*;main;mid;leaf_alpha;spin ' "$TMP/got"
fi

# DWARF in pipe mode: the stacks unwound as from a file.
if perf record -q -F 997 --call-graph dwarf -o - "$TOOLS/burn_nofp" 1 >"$TMP/dwpipe.data" 2>/dev/null &&
	[ -s "$TMP/dwpipe.data" ]; then
	same "burn_nofp --call-graph dwarf, pipe mode" "$TMP/dwpipe.data" ""
	check "dwarf, pipe mode: complete stacks from _start to the leaves" \
		grep -q '^burn_nofp;_start;.*;main;mid;leaf_alpha;spin ' "$TMP/got"
else
	fail "perf record --call-graph dwarf -o -"
fi

# Pipe mode: a file and standard input.
if perf record -q -F 997 -g -o - "$TOOLS/burn" 1 >"$TMP/pipe.data" 2>/dev/null && [ -s "$TMP/pipe.data" ]; then
	same "pipe mode" "$TMP/pipe.data" ""
	"$GALATOP" collapse - <"$TMP/pipe.data" >"$TMP/stdin" 2>"$TMP/err"
	check "pipe mode on standard input" cmp -s "$TMP/stdin" "$TMP/got"
else
	fail "perf record -o -"
fi

# System-wide: the same samples of the same threads with the same periods (per comm), and the
# workload's own stacks (from main down) identical; elsewhere names differ only as documented
# (the loader's and libc's aliases, C++ return types).
if rec "$TMP/sys.data" -a -g -- "$TOOLS/burn" 1; then
	perf script -i "$TMP/sys.data" 2>/dev/null | "$GALATOP" collapse --samples >"$TMP/want" 2>/dev/null
	"$GALATOP" collapse --samples "$TMP/sys.data" >"$TMP/got" 2>"$TMP/err"
	check "system-wide: exit 0" [ $? = 0 ]
	per_comm() { LC_ALL=C tr '\000-\011\013-\037\177' '?' <"$1" |
		awk '{ n = $NF; sub(/;.*/, ""); sub(/ [0-9]+$/, ""); s[$0] += n }
			END { for (k in s) print k, s[k] }' | sort; }
	per_comm "$TMP/want" >"$TMP/want.c"; per_comm "$TMP/got" >"$TMP/got.c"
	if cmp -s "$TMP/want.c" "$TMP/got.c"; then
		pass "system-wide: samples per comm as perf script ($(wc -l <"$TMP/got.c") comms)"
	else
		fail "system-wide: samples per comm as perf script" \
			"$(diff "$TMP/want.c" "$TMP/got.c" | head -6 | cut -c1-160 | tr '\n' '|')"
	fi
	sed -f "$ALIASES" "$TMP/want" | grep '^burn;.*;main;mid;' >"$TMP/want.b"
	grep '^burn;.*;main;mid;' "$TMP/got" >"$TMP/got.b"
	if [ -s "$TMP/got.b" ] && cmp -s "$TMP/want.b" "$TMP/got.b"; then
		pass "system-wide: the workload's stacks identical"
	else
		fail "system-wide: the workload's stacks identical" \
			"$(diff "$TMP/want.b" "$TMP/got.b" | head -4 | cut -c1-240)"
	fi
fi
