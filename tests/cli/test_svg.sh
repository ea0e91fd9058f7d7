#!/bin/sh
# galatop svg from the command line: fixtures and hostile input stay valid XML, options change
# the drawing, errors are reported as the CLI conventions say.
. "$(dirname "$0")/../lib.sh"
G=$GALATOP
command -v xmllint >/dev/null 2>&1 || fail "xmllint" "not installed (make deps): XML validity cannot be checked"
valid() { # FILE: well-formed XML
	xmllint --noout "$1" 2>>"$TMP/xmllint.log"
}

# Every folded fixture of FlameGraph's test suite converts into valid, deterministic SVG.
res="$FIXTURES/flamegraph-tests/results"
if [ -d "$res" ]; then
	n=0; bad=""
	for f in "$res"/*.txt; do
		n=$((n + 1))
		"$G" svg "$f" >"$TMP/a.svg" 2>"$TMP/err" || { bad="$bad $(basename "$f")(exit)"; continue; }
		valid "$TMP/a.svg" || bad="$bad $(basename "$f")(xml)"
		"$G" svg "$f" >"$TMP/b.svg" 2>/dev/null
		cmp -s "$TMP/a.svg" "$TMP/b.svg" || bad="$bad $(basename "$f")(nondeterministic)"
		grep -q '<g><title>all (' "$TMP/a.svg" || bad="$bad $(basename "$f")(no root)"
	done
	if [ -z "$bad" ] && [ $n -gt 0 ]; then pass "fixtures: $n folded results valid and deterministic"
	else fail "fixtures" "$bad"; fi
	# Totals: the root's title counts every sample of the file.
	f="$res/perf-funcab-cmd-01-collapsed-pid.txt"
	total=$(awk '{ s += $NF } END { printf "%d", s }' "$f")
	"$G" svg "$f" | grep -q "<title>all ($(echo "$total" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta') samples, 100%)</title>"
	check "fixture total in root title ($total)" [ $? -eq 0 ]
else
	need_fixture fixtures "$res"
fi

# perf script input is recognized and drawn.
ps="$FIXTURES/perf-script-6.1/galatop-burn-fp.txt"
if [ -f "$ps" ]; then
	"$G" svg "$ps" >"$TMP/p.svg" 2>"$TMP/p.err"
	rc=$?
	if [ $rc = 0 ] && valid "$TMP/p.svg" && grep -q '<title>spin (' "$TMP/p.svg" &&
		grep -q '<title>main (' "$TMP/p.svg"; then pass "perf script input"
	else fail "perf script input" "exit $rc: $(head -2 "$TMP/p.err")"; fi
else
	need_fixture "perf script input" "$ps"
fi

# Hostile input: markup, CDATA end, quotes, control bytes, NUL, invalid UTF-8, a 64 KiB name.
{
	printf '<script>alert(1)</script>;x 10\n'
	printf ']]><script>alert(2)</script> 5\n'
	printf 'a&b;"q" '"'"'r'"'"' 3\n'
	printf 'esc\033[31m;nul\000byte;bad\377\376utf8;over\300\257 7\n'
	printf '%s' '<'; head -c 65536 /dev/zero | tr '\0' 'W'; printf '& 4\n'
	printf 'not a folded line\n'
} >"$TMP/hostile.folded"
"$G" svg --title '<b>&"'"'"']]>' --subtitle 'x<y' --notes 'a -- b <c> -' --nametype ']]>' \
	--countname '<n>' --fonttype 'V" onload="alert(3)' "$TMP/hostile.folded" >"$TMP/h.svg" 2>"$TMP/h.err"
rc=$?
check "hostile: exit 0" [ $rc = 0 ]
check "hostile: valid XML" valid "$TMP/h.svg"
check "hostile: no injected markup" sh -c "! grep -q '<script>alert\|onload=\"alert' '$TMP/h.svg'"
check "hostile: two CDATA ends only" [ "$(grep -o ']]>' "$TMP/h.svg" | wc -l)" -eq 2 ]
check "hostile: no NUL or ESC" sh -c "! tr -d '\n\t -~\200-\377' <'$TMP/h.svg' | grep -q ."
check "hostile: bad line reported as file:line" grep -q "hostile.folded:6:" "$TMP/h.err"

# Options change the drawing.
printf 'main;foo;bar 5\nmain;foo;baz 3\nmain;qux 2\nmain 1\n' >"$TMP/small.folded"
"$G" svg "$TMP/small.folded" >"$TMP/n.svg"
check "default: 6 frames" [ "$(grep -c '<g>' "$TMP/n.svg")" -eq 6 ]
check "default: title" grep -q '>Flame Graph</text>' "$TMP/n.svg"
"$G" svg --inverted "$TMP/small.folded" >"$TMP/i.svg"
check "--inverted: icicle title, root on top" sh -c "grep -q '>Icicle Graph</text>' '$TMP/i.svg' &&
	grep -q '<title>all (11 samples, 100%)</title><rect x=\"10.0\" y=\"36.0\"' '$TMP/i.svg'"
"$G" svg --reverse "$TMP/small.folded" >"$TMP/r.svg"
check "--reverse: leaves at the root" sh -c "grep -q '<title>bar (5 samples, 45.45%)</title><rect x=\"[0-9.]*\" y=\"69.0\"' '$TMP/r.svg'"
printf 'b;x 1\na 1\nb;y 2\n' >"$TMP/chart.folded"
"$G" svg --flamechart "$TMP/chart.folded" >"$TMP/c.svg"
check "--flamechart: title and time order" sh -c "grep -q '>Flame Chart</text>' '$TMP/c.svg' &&
	[ \$(grep -c '<title>b (' '$TMP/c.svg') -eq 2 ]"
"$G" svg --minwidth 250 "$TMP/small.folded" >"$TMP/m.svg"
"$G" svg --minwidth 20% "$TMP/small.folded" >"$TMP/m2.svg"
check "--minwidth px and %" sh -c "[ \$(grep -c '<g>' '$TMP/m.svg') -eq 5 ] && [ \$(grep -c '<g>' '$TMP/m2.svg') -eq 5 ] &&
	! grep -q '<title>qux' '$TMP/m.svg'"
printf 'a;b 1 3\na;c 4 1\na 2 2\n' >"$TMP/diff.folded"
"$G" svg "$TMP/diff.folded" >"$TMP/d.svg"
"$G" svg --negate "$TMP/diff.folded" >"$TMP/dn.svg"
check "differential: red growth, delta in title" grep -q '<title>b (3 samples, 50.00%; +33.33%)</title><rect [^>]*fill="rgb(255,70,70)"' "$TMP/d.svg"
check "--negate: blue, sign swapped" grep -q '<title>b (3 samples, 50.00%; -33.33%)</title><rect [^>]*fill="rgb(70,70,255)"' "$TMP/dn.svg"
"$G" svg --width 600 --height 20 --fontsize 10 --colors java --bgcolors '#102030' --hash \
	--countname bytes --title T "$TMP/small.folded" >"$TMP/o.svg"
check "sizes, colors, countname" sh -c "grep -q 'width=\"600\" height=\"140\"' '$TMP/o.svg' &&
	grep -q 'stop-color=\"#102030\"' '$TMP/o.svg' && grep -q '(11 bytes, 100%)' '$TMP/o.svg' && grep -q '>T</text>' '$TMP/o.svg'"
"$G" svg -o "$TMP/out.svg" "$TMP/small.folded" >"$TMP/stdout"
check "-o writes the file" sh -c "cmp -s '$TMP/out.svg' '$TMP/n.svg' && [ ! -s '$TMP/stdout' ]"
"$G" svg <"$TMP/small.folded" >"$TMP/stdin.svg"
check "standard input" cmp -s "$TMP/stdin.svg" "$TMP/n.svg"

# Empty input: flamegraph.pl's error image, exit 2.
: >"$TMP/empty"
"$G" svg "$TMP/empty" >"$TMP/e.svg" 2>"$TMP/e.err"
rc=$?
check "empty: exit 2, error SVG" sh -c "[ $rc = 2 ] && grep -q 'ERROR: No valid input provided' '$TMP/e.svg' && grep -q 'No stack counts' '$TMP/e.err'"
check "empty: valid XML" valid "$TMP/e.svg"

# CLI errors.
"$G" svg --bogus "$TMP/small.folded" >/dev/null 2>"$TMP/err"
rc=$?
check "unknown option: exit 2, named, hint" sh -c "[ $rc = 2 ] && grep -q \"unknown option '--bogus'\" '$TMP/err' &&
	grep -q \"Try 'galatop help svg'\" '$TMP/err'"
"$G" svg "$TMP/nonexistent" >/dev/null 2>"$TMP/err"
rc=$?
check "unreadable file: exit 1" sh -c "[ $rc = 1 ] && grep -q 'galatop: cannot open $TMP/nonexistent: No such file or directory' '$TMP/err'"
"$G" svg --colors rainbow "$TMP/small.folded" >/dev/null 2>"$TMP/err"
check "bad --colors: exit 2" [ $? = 2 ]
"$G" svg --bgcolors 'red"' "$TMP/small.folded" >/dev/null 2>"$TMP/err"
check "bad --bgcolors: exit 2" [ $? = 2 ]
"$G" svg --width abc "$TMP/small.folded" >/dev/null 2>"$TMP/err"
check "bad --width: exit 2" sh -c "[ $? = 2 ] && grep -q 'width' '$TMP/err'"
"$G" svg --minwidth 5%% "$TMP/small.folded" >/dev/null 2>"$TMP/err"
check "bad --minwidth: exit 2" [ $? = 2 ]
"$G" svg --title >/dev/null 2>"$TMP/err"
check "missing value: exit 2" sh -c "[ $? = 2 ] && grep -q 'needs a value' '$TMP/err'"
"$G" svg --help >"$TMP/help"
check "--help lists every option" sh -c "for o in title subtitle width height minwidth fonttype fontsize fontwidth \
	countname nametype colors bgcolors hash inverted reverse flamechart negate notes output; do
	grep -q -- \"--\$o\" '$TMP/help' || exit 1; done"
"$G" help svg | cmp -s - "$TMP/help"
check "galatop help svg" [ $? = 0 ]

if [ -s "$TMP/xmllint.log" ]; then echo "xmllint said:"; head -20 "$TMP/xmllint.log"; fi

# The embedded script parses (node comes with the test packages).
if command -v node >/dev/null 2>&1; then
	awk '/<script type/{f=1;next} /^\]\]><\/script>/{f=0} f' "$TMP/n.svg" >"$TMP/script.js"
	check "embedded script: valid JavaScript" node --check "$TMP/script.js"
else
	fail "embedded script" "node not installed (make deps)"
fi
