#!/bin/sh
# pprof and speedscope files from galatop record (needs root and BPF: runs in CI): the .pb.gz
# read back by galatop gives the stacks and totals of the .folded of the same recording, `go
# tool pprof -top` lists the hot functions with the flat and cumulative percentages the folded
# stacks give, and the .speedscope.json keeps speedscope's schema rules.
. tests/lib.sh
need_root_bpf pprof || exit 0
[ -x "$TOOLS/burn" ] || { fail pprof "test workloads not built (make tools)"; exit 0; }

# Debian's golang-go (DEB_PKGS), by absolute path: not a Go of the developer's own.
GO=
for g in /usr/bin/go /usr/lib/go/bin/go; do [ -x "$g" ] && { GO=$g; break; }; done
gopprof() { HOME="$TMP" GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOTOOLCHAIN=local \
	"$GO" tool pprof -top -nodefraction=0 -edgefraction=0 -nodecount=100000 "$@" 2>"$TMP/go.err"; }

# 1. On-CPU (60/30/10 over three leaves) and page faults in one recording: one file per type.
"$GALATOP" record --group process -F 499 --type oncpu,mem -o "$TMP/r.folded" -o "$TMP/r.pb.gz" \
	-o "$TMP/r.speedscope.json" -- "$TOOLS/burn" 3 2>"$TMP/r.err"
# 2. Off-CPU (sleeps of 300 and 100 ms).
"$GALATOP" record --type offcpu -o "$TMP/o.folded" -o "$TMP/o.pb.gz" -o "$TMP/o.speedscope.json" \
	-- "$TOOLS/sleeper" 2 2>"$TMP/o.err"

if [ -s "$TMP/r-oncpu.pb.gz" ] && [ -s "$TMP/r-mem.pb.gz" ] && [ -s "$TMP/r-oncpu.speedscope.json" ] &&
	[ -s "$TMP/r-mem.speedscope.json" ] && [ -s "$TMP/o.pb.gz" ]; then pass pprof_files_named_per_type
else fail pprof_files_named_per_type "$(ls "$TMP")"; cat "$TMP/r.err"; fi

# Round trip: `galatop fold` of the pprof file is `galatop fold` of the folded file, line for line.
for f in r-oncpu r-mem o; do
	"$GALATOP" fold "$TMP/$f.folded" >"$TMP/$f.want" 2>&1
	"$GALATOP" fold "$TMP/$f.pb.gz" >"$TMP/$f.got" 2>&1
	if [ -s "$TMP/$f.want" ] && cmp -s "$TMP/$f.want" "$TMP/$f.got"; then pass "pprof_round_trip_$f"
	else fail "pprof_round_trip_$f" "totals $(folded_total "$TMP/$f.want") vs $(folded_total "$TMP/$f.got")"
		diff "$TMP/$f.want" "$TMP/$f.got" | head -5; fi
done
# svg and view read it too, with the same total.
"$GALATOP" svg "$TMP/r-oncpu.pb.gz" >"$TMP/r.svg" 2>/dev/null
t=$(folded_total "$TMP/r-oncpu.folded")
if [ "$(svg_total "$TMP/r.svg")" = "$t" ]; then pass pprof_svg_total; else fail pprof_svg_total "svg $(svg_total "$TMP/r.svg"), folded $t"; fi
"$GALATOP" view --dump --size 100x10 "$TMP/r-oncpu.pb.gz" >"$TMP/view.txt" 2>&1
if [ "$(shown_total "$TMP/view.txt")" = "$t" ]; then pass pprof_view_total
else fail pprof_view_total "view shows '$(head -1 "$TMP/view.txt")', folded $t"; fi
# The cpu column: each sample worth 1/499 s, in nanoseconds.
c=$("$GALATOP" fold --type cpu "$TMP/r-oncpu.pb.gz" | folded_total -)
if [ "$c" = "$((t * 2004008))" ]; then pass pprof_cpu_column; else fail pprof_cpu_column "cpu $c ns for $t samples"; fi

# A truncated file fails in one line, exit 1.
head -c 200 "$TMP/r-oncpu.pb.gz" >"$TMP/cut.pb.gz"
"$GALATOP" fold "$TMP/cut.pb.gz" >"$TMP/cut.out" 2>"$TMP/cut.err"; rc=$?
if [ $rc = 1 ] && [ ! -s "$TMP/cut.out" ] && [ "$(wc -l <"$TMP/cut.err")" = 1 ] &&
	grep -q "cut.pb.gz: not a valid pprof profile: truncated gzip data" "$TMP/cut.err"; then pass pprof_truncated_one_line
else fail pprof_truncated_one_line "exit $rc: $(cat "$TMP/cut.err")"; fi

# go tool pprof: the percentages the folded stacks give (flat: the function is the leaf; cum:
# it is on the stack), to its two decimals.
flat() { awk -v f="$2" '{ n = $NF; t += n; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, a, ";"); if (a[k] == f) m += n }
	END { printf "%.2f\n", 100 * m / t }' "$1"; }
cum() { awk -v f="$2" '{ n = $NF; t += n; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, a, ";"); for (i = 1; i <= k; i++) if (a[i] == f) { m += n; break } }
	END { printf "%.2f\n", 100 * m / t }' "$1"; }
gocol() { awk -v f="$2" -v c="$3" '$6 == f { sub(/%/, "", $c); print $c; exit }' "$1"; }
if [ -z "$GO" ]; then
	skip pprof_go_tool_top "Debian's golang-go is not installed (make deps)"
else
	gopprof -sample_index=samples "$TMP/r-oncpu.pb.gz" >"$TMP/top.txt"
	ok=1; why=
	for fn in spin leaf_alpha leaf_beta leaf_gamma main; do
		wf=$(flat "$TMP/r-oncpu.folded" "$fn"); gf=$(gocol "$TMP/top.txt" "$fn" 2)
		wc=$(cum "$TMP/r-oncpu.folded" "$fn"); gc=$(gocol "$TMP/top.txt" "$fn" 5)
		near "${gf:-x}" "$wf" 0.01 && near "${gc:-x}" "$wc" 0.01 || { ok=0; why="$why $fn flat $gf/$wf cum $gc/$wc"; }
	done
	if [ $ok = 1 ] && grep -q "^Type: samples" "$TMP/top.txt"; then pass pprof_go_tool_top
	else fail pprof_go_tool_top "go/folded:$why"; head -12 "$TMP/top.txt"; cat "$TMP/go.err"; fi
	a=$(gocol "$TMP/top.txt" leaf_alpha 5)
	if near "${a:-0}" 60 5; then pass pprof_go_hot_function_share; else fail pprof_go_hot_function_share "leaf_alpha cum $a%"; fi
	# Off-CPU: nanoseconds, 1000 times the folded microseconds.
	gopprof "$TMP/o.pb.gz" >"$TMP/otop.txt"
	wl=$(cum "$TMP/o.folded" sleep_long); gl=$(gocol "$TMP/otop.txt" sleep_long 5)
	if grep -q "^Type: offcpu" "$TMP/otop.txt" && near "${gl:-x}" "$wl" 0.01; then pass pprof_go_tool_offcpu
	else fail pprof_go_tool_offcpu "sleep_long cum $gl% vs $wl%"; head -8 "$TMP/otop.txt"; cat "$TMP/go.err"; fi
fi

# speedscope: the schema URL, one sampled profile, frame indexes in range, as many weights as
# samples, weights summing to endValue and to the folded total.
for f in r-oncpu o; do
	if jq -e --argjson tot "$(folded_total "$TMP/$f.folded")" '
		(."$schema" == "https://www.speedscope.app/file-format-schema.json") and
		(.shared.frames | length) as $nf |
		(.profiles | length == 1) and
		(.profiles[0] | .type == "sampled" and (.samples | length) == (.weights | length) and
			([.samples[][] | select(. < 0 or . >= $nf)] | length == 0) and
			(.startValue == 0) and ((.weights | add) == .endValue) and (.endValue | round) == $tot)
		' "$TMP/$f.speedscope.json" >/dev/null; then pass "speedscope_schema_rules_$f"
	else fail "speedscope_schema_rules_$f"; head -c 300 "$TMP/$f.speedscope.json"; fi
done
u=$(jq -r '.profiles[0].unit' "$TMP/o.speedscope.json")
if [ "$u" = microseconds ]; then pass speedscope_offcpu_unit; else fail speedscope_offcpu_unit "unit $u"; fi
