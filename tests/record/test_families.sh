#!/bin/sh
# Every probe family in one `galatop record`: oncpu, offcpu, threads, l7 and sli over known
# workloads (burn's 60/30/10 split, sleeper's 300/100 ms naps, a redis-benchmark of a known
# request count) write one snapshot that holds each family's data, and `galatop view` opens
# each pane with it. INT, TERM and HUP end the one loop with everything gathered written; each
# family's own formats still work beside the others. Needs root and BPF (runs in CI).
. tests/lib.sh

# Outputs no family or several families write are refused, without root.
"$GALATOP" record --type sli,l7 -o "$TMP/x.json" -d 1 2>"$TMP/e1.txt"
if [ $? = 2 ] && grep -q 'sli or l7 each write this format' "$TMP/e1.txt"; then pass families_ambiguous_output
else fail families_ambiguous_output "$(cat "$TMP/e1.txt")"; fi
"$GALATOP" record --type sli,threads -d 1 2>"$TMP/e2.txt"
if [ $? = 2 ] && grep -q 'one .gtop holds every type' "$TMP/e2.txt"; then pass families_stdout_one_type
else fail families_stdout_one_type "$(cat "$TMP/e2.txt")"; fi

need_root_bpf families || exit 0
for c in jq redis-server redis-benchmark redis-cli; do
	command -v $c >/dev/null 2>&1 || { unable families "$c is missing (make deps)"; exit 0; }
done
for t in burn sleeper; do
	[ -x "$TOOLS/$t" ] || { fail families "test workloads not built (make tools)"; exit 0; }
done
# The workloads and the server started below go at exit.
PIDS=""
trap 'kill $PIDS 2>/dev/null; wait; rm -rf "$TMP"' EXIT INT TERM

redis-server --port 18191 --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP" \
	--daemonize no >"$TMP/redis.log" 2>&1 &
PIDS="$PIDS $!"
if ! wait_until 200 redis-cli -p 18191 ping >/dev/null 2>&1; then
	fail families "redis-server did not answer: $(tail -3 "$TMP/redis.log")"; exit 0
fi
RP=$(redis-cli -p 18191 info server | awk -F: '/^process_id/ { print $2 + 0 }')
"$TOOLS/burn" 300 >/dev/null & B=$!
"$TOOLS/sleeper" 300 & S=$!
PIDS="$PIDS $B $S"

# --- Every family at once -----------------------------------------------------------------
N=3000
# --event-rate 0: redis's many switches would otherwise have the kernel sample off-CPU events,
# and sleeper's few naps (5 a second) with them.
"$GALATOP" record --type oncpu,offcpu,threads,l7,sli -F 199 --event-rate 0 -p $B -p $S -p $RP \
	-o "$TMP/all.gtop" -- sh -c "redis-benchmark -p 18191 -n $N -c 2 -t set -P 1 -q; sleep 3" \
	>"$TMP/all.out" 2>"$TMP/all.err"
rc=$?
if [ $rc = 0 ] && [ -s "$TMP/all.gtop" ]; then pass families_record
else fail families_record "exit $rc: $(tail -5 "$TMP/all.err")"; exit 0; fi
zcat "$TMP/all.gtop" >"$TMP/all.json"

# Stacks: burn's leaves in its 60/30/10 split (on-CPU), sleeper's naps 3:1 (off-CPU).
"$GALATOP" fold --type oncpu "$TMP/all.gtop" >"$TMP/on.folded"
"$GALATOP" fold --type offcpu "$TMP/all.gtop" >"$TMP/off.folded"
a=$(share "$TMP/on.folded" leaf_alpha leaf_); b=$(share "$TMP/on.folded" leaf_beta leaf_)
if near "$a" 60 10 && near "$b" 30 10; then pass families_oncpu_split
else fail families_oncpu_split "leaf_alpha $a%, leaf_beta $b% (want 60, 30)"; fi
l=$(share "$TMP/off.folded" sleep_long sleep_)
if near "$l" 75 10; then pass families_offcpu_split
else fail families_offcpu_split "sleep_long $l% of the naps (want 75)"; fi

# Threads: sleeper's thread is in the timeline with its naps as intervals.
nt=$(jq --argjson s "$S" '[.timeline.threads[] | select(.tid == $s)] | length' "$TMP/all.json")
if [ "$nt" = 1 ]; then pass families_threads
else fail families_threads "sleeper's thread $S in the timeline: $nt"; fi

# L7: the server side counted every SET redis-benchmark sent, exactly.
sets=$(jq -r '[.l7.endpoints[] | select(.protocol == "redis" and .l7_role == "server" and
	(.endpoint | test("^SET"; "i"))) | .req_count] | add // 0' "$TMP/all.json")
if [ "$sets" = "$N" ]; then pass families_l7_count
else fail families_l7_count "got $sets SET, redis-benchmark sent $N"; fi

# SLI: the host group holds sleeper's naps (at least 2 per 0.4 s round over 3 s).
sleeps=$(jq -r '[.sli.groups[] | select(.kind == "host") | .cpu_sleep_count] | add // 0' "$TMP/all.json")
if [ "$sleeps" -ge 14 ]; then pass families_sli
else fail families_sli "host cpu_sleep_count $sleeps (sleeper naps 5 times a second)"; fi

# The snapshot says every family it holds, and each pane opens with its data.
probes=$(jq -r '[.meta.probes[].type] | join(",")' "$TMP/all.json")
if [ "$probes" = "oncpu,offcpu,threads,l7,sli" ]; then pass families_meta
else fail families_meta "probes $probes"; fi
view() { "$GALATOP" view --dump --size 160x40 --keys "$1" "$TMP/all.gtop" 2>&1; }
view 1 | grep -q leaf_alpha && pass families_view_flame || fail families_view_flame "$(view 1 | head -5)"
view "p$S<Enter>3" | grep -q sleeper && pass families_view_threads ||
	fail families_view_threads "$(view "p$S<Enter>3" | head -6)"
view 4 | grep -qi 'set' && pass families_view_l7 || fail families_view_l7 "$(view 4 | head -6)"
view 5 | grep -q '^host' && pass families_view_sli || fail families_view_sli "$(view 5 | head -6)"

# --- One signal path: INT, TERM and HUP each end the loop and write what was gathered -----
for sig in INT TERM HUP; do
	"$GALATOP" record --type oncpu,threads,l7,sli -p $B -p $S -o "$TMP/$sig.gtop" \
		2>"$TMP/$sig.err" &
	g=$!
	wait_until 300 grep -q 'recording' "$TMP/$sig.err"
	sleep 2
	kill -$sig $g
	wait $g
	rc=$?
	got=$(zcat "$TMP/$sig.gtop" 2>/dev/null | jq -r '[(.profiles | length > 0), (.timeline.threads |
		length > 0), (.l7 != null), (.sli.groups | length > 0)] | all')
	if [ $rc = 0 ] && [ "$got" = true ]; then pass "families_sig$sig"
	else fail "families_sig$sig" "exit $rc, sections present: $got; $(tail -2 "$TMP/$sig.err")"; fi
done

# --- Each family's own formats beside the others -----------------------------------------
"$GALATOP" record --type oncpu,threads,sli -p $B -p $S -d 2 -o "$TMP/f.svg" -o "$TMP/t.jsonl" \
	-o "$TMP/s.prom" 2>"$TMP/f.err"
if grep -q leaf_alpha "$TMP/f.svg" 2>/dev/null && [ -s "$TMP/t.jsonl" ] &&
	jq -e . "$TMP/t.jsonl" >/dev/null 2>&1 && grep -q '^galatop_sli_' "$TMP/s.prom" 2>/dev/null; then
	pass families_own_formats
else
	fail families_own_formats "$(tail -3 "$TMP/f.err"); prom: $(head -2 "$TMP/s.prom" 2>/dev/null)"
fi
no_gt_progs && pass families_no_leftover || fail families_no_leftover "$(gt_leftovers) programs left"
