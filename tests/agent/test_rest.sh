#!/bin/sh
# galatop agent's REST control, gala-gopher's API (on ports the kernel picks), driven with curl:
# PUT /flamegraph, /tprofiling, /l7, /sli start, stop and reconfigure the families (their
# programs' links checked in the kernel, their periodic files on disk), GET says their state,
# bad bodies get gala-gopher's 400 {"result":"failed","message":...} and change nothing, 404
# and 405 as gala-gopher answers; other hosts only with --rest-allow-remote and a token.
. "$(dirname "$0")/../lib.sh"
need_root_bpf agent_rest || exit 0
for c in curl jq bpftool; do
	command -v $c >/dev/null 2>&1 || { skip agent_rest "$c not installed (make deps)"; exit 0; }
done
[ -x "$TOOLS/sleeper" ] || { fail agent_rest "test workloads not built (make tools)"; exit 0; }

# attached PID NAME: how many BPF links process PID holds on programs named NAME.
attached() {
	for f in /proc/$1/fdinfo/*; do
		grep -q '^link_type:' "$f" 2>/dev/null || continue
		sed -n 's/^prog_id:[[:space:]]*//p' "$f"
	done | while read -r id; do
		bpftool prog show id "$id" 2>/dev/null | head -n 1
	done | grep -c " name $2 "
}
# put PATH BODY: PUTs BODY; the status in $CODE, the answer in $TMP/ans.
put() {
	CODE=$(curl -s -o "$TMP/ans" -w '%{http_code}' -X PUT "$R$1" --data-binary "$2")
}
get() { curl -s "$R$1"; }
# refused NAME PATH BODY WANT: a 400 whose message contains WANT.
refused() {
	put "$2" "$3"
	if [ "$CODE" = 400 ] && [ "$(jq -r .result "$TMP/ans")" = failed ] &&
		jq -r .message "$TMP/ans" | grep -qF -- "$4"; then
		pass "$1"
	else
		fail "$1" "$CODE $(cat "$TMP/ans")"
	fi
}

"$TOOLS/sleeper" 120 & SLEEPER=$!
mkdir -p "$TMP/svg" "$TMP/fl"
# The REST control on a port the kernel picks (suites side by side cannot collide); the
# agent's working directory gets no file: periodic files go only where a request says.
mkdir -p "$TMP/cwd"
cd "$TMP/cwd" || exit 1
"$GALATOP" agent --type oncpu -p "$SLEEPER" --period 2 --metrics off --rest 127.0.0.1:0 \
	--log-level debug 2>"$TMP/agent.log" &
AGENT=$!
if ! wait_until 600 grep -qs 'running (pid' "$TMP/agent.log"; then
	fail agent_rest "the agent did not start: $(tail -3 "$TMP/agent.log")"
	kill $AGENT $SLEEPER; exit 0
fi
R=http://127.0.0.1:$(sed -n 's/.*REST control on .*, port \([0-9]*\).*/\1/p' "$TMP/agent.log")

# 1. GET: what runs, as gala-gopher's probe JSON.
[ "$(get /flamegraph | jq -c '[.cmd.probe, .state]')" = '[["oncpu"],"running"]' ] &&
	[ "$(get /l7 | jq -r .state)" = stopped ] && pass rest_get_state ||
	fail rest_get_state "$(get /flamegraph) $(get /l7)"
[ "$(attached $AGENT gt_oncpu)" -ge 1 ] && [ "$(attached $AGENT gt_offcpu)" = 0 ] &&
	pass rest_kernel_before || fail rest_kernel_before "oncpu $(attached $AGENT gt_oncpu) offcpu $(attached $AGENT gt_offcpu)"

# A request naming no directory: still no file (a period passes).
put /sli '{"state": "stopped"}'
sleep 2.5
[ "$CODE" = 200 ] && [ -z "$(ls "$TMP/cwd")" ] && pass rest_no_files_in_cwd ||
	fail rest_no_files_in_cwd "$CODE: $(ls "$TMP/cwd" | head -3)"

# 2. PUT /flamegraph: offcpu on, periodic SVGs into svg_dir and folded into flame_dir, per
# process (gala-gopher's json= form).
put /flamegraph "json={\"cmd\": {\"probe\": [\"oncpu\", \"offcpu\"]}, \"params\": {\"svg_dir\": \"$TMP/svg\", \"flame_dir\": \"$TMP/fl\", \"multi_instance\": 1}, \"state\": \"running\"}"
[ "$CODE" = 200 ] && [ "$(jq -c . "$TMP/ans")" = '{"result":"success","message":"New config takes effect"}' ] &&
	pass rest_put_flamegraph || fail rest_put_flamegraph "$CODE $(cat "$TMP/ans")"
[ "$(get /flamegraph | jq -c '.cmd.probe')" = '["oncpu","offcpu"]' ] && pass rest_get_after_put ||
	fail rest_get_after_put "$(get /flamegraph)"
[ "$(attached $AGENT gt_offcpu)" -ge 1 ] && pass rest_offcpu_attached ||
	fail rest_offcpu_attached "no gt_offcpu link held by the agent"
# The sleeper blocks 300 ms in sleep_long and 100 ms in sleep_short: 75% of its off-CPU time.
wait_until 100 sh -c "ls '$TMP/fl'/offcpu-*sleeper*.folded >/dev/null 2>&1"
sleep 2.2
f=$(ls "$TMP/fl"/offcpu-*sleeper*.folded 2>/dev/null | tail -n 1)
if [ -n "$f" ] && [ -n "$(ls "$TMP/svg"/offcpu-*sleeper*.svg 2>/dev/null)" ]; then
	l=$(share "$f" ";sleep_long;" "sleeper")
	awk -v l="$l" 'BEGIN { exit !(l > 65 && l < 85) }' && pass rest_periodic_files ||
		fail rest_periodic_files "sleep_long $l% of the off-CPU time in $f"
else
	fail rest_periodic_files "no offcpu files in $TMP/svg and $TMP/fl: $(ls "$TMP/svg" "$TMP/fl" | head)"
fi

# 3. Stopped: the stack probes leave the kernel, no more files; running again: back.
put /flamegraph '{"state": "stopped"}'
if [ "$CODE" = 200 ] && [ "$(get /flamegraph | jq -r .state)" = stopped ] &&
	[ "$(attached $AGENT gt_oncpu)" = 0 ] && [ "$(attached $AGENT gt_offcpu)" = 0 ]; then
	pass rest_stop_detaches
else
	fail rest_stop_detaches "$CODE $(get /flamegraph); oncpu links $(attached $AGENT gt_oncpu)"
fi
sleep 2.5 # a period without files
n1=$(ls "$TMP/fl" | wc -l); sleep 2.5; n2=$(ls "$TMP/fl" | wc -l)
[ "$n1" = "$n2" ] && pass rest_stop_no_files || fail rest_stop_no_files "$n1 then $n2 files"
put /flamegraph '{"state": "running"}'
[ "$CODE" = 200 ] && [ "$(attached $AGENT gt_oncpu)" -ge 1 ] && [ "$(attached $AGENT gt_offcpu)" -ge 1 ] &&
	[ "$(get /flamegraph | jq -c '[.cmd.probe, .state, .params.svg_dir == "'"$TMP/svg"'"]')" = '[["oncpu","offcpu"],"running",true]' ] &&
	pass rest_restart || fail rest_restart "$CODE $(get /flamegraph)"

# 4. The other families: started and stopped by their paths.
put /tprofiling '{"cmd": {"probe": ["oncpu", "syscall_file"]}, "params": {"min_exec_dur": 100}, "state": "running"}'
c1=$CODE; s1=$(get /tprofiling | jq -r .state); t1=$(attached $AGENT gt_tl_switch)
put /tprofiling '{"state": "stopped"}'
c2=$CODE; s2=$(get /tprofiling | jq -r .state); t2=$(attached $AGENT gt_tl_switch)
[ "$c1 $s1 $c2 $s2" = "200 running 200 stopped" ] && [ "$t1" -ge 1 ] && [ "$t2" = 0 ] &&
	pass rest_tprofiling || fail rest_tprofiling "$c1 $s1 $c2 $s2 (thread links $t1 then $t2)"
put /l7 '{"cmd": {"probe": ["l7_rpc_metrics"]}, "params": {"l7_protocol": ["redis", "http"], "support_ssl": 0}, "state": "running"}'
c1=$CODE; s1=$(get /l7 | jq -r .state); l1=$(attached $AGENT gt_l7_send)
put /l7 '{"state": "stopped"}'
l2=$(attached $AGENT gt_l7_send)
[ "$c1 $s1 $CODE $(get /l7 | jq -r .state)" = "200 running 200 stopped" ] && [ "$l1" -ge 1 ] &&
	[ "$l2" = 0 ] && pass rest_l7 || fail rest_l7 "$c1 $s1 $CODE $(cat "$TMP/ans") (l7 links $l1 then $l2)"
put /sli '{"cmd": {"probe": ["cpu"]}, "state": "running"}'
c1=$CODE; s1=$(get /sli | jq -r .state); l1=$(attached $AGENT gt_sli_switch)
put /sli '{"cmd": {"probe": ["cpu", "mem"]}}' # other families: the SLI probes open again
c2=$CODE; p2=$(get /sli | jq -c '[.cmd.probe, .state]'); l2=$(attached $AGENT gt_sli_switch)
put /sli '{"state": "stopped"}'
l3=$(attached $AGENT gt_sli_switch)
[ "$c1 $s1 $c2 $p2 $CODE $(get /sli | jq -r .state)" = '200 running 200 [["cpu","mem"],"running"] 200 stopped' ] &&
	[ "$l1" -ge 1 ] && [ "$l2" -ge 1 ] && [ "$l3" = 0 ] && pass rest_sli ||
	fail rest_sli "$c1 $s1 $c2 $p2 $CODE $(cat "$TMP/ans") (sli links $l1 $l2 $l3)"

# 5. Bad bodies: 400 with the reason, and nothing changes.
before=$(get /flamegraph)
refused rest_bad_json /flamegraph 'json={"cmd": ' 'flamegraph:'
refused rest_bad_key /flamegraph '{"cmd": {"probes": ["oncpu"]}}' 'cmd.probes: unknown key'
refused rest_bad_range /flamegraph '{"params": {"svg_period": 5}}' 'params.svg_period'
refused rest_bad_type /flamegraph '{"params": {"multi_instance": "yes"}}' 'params.multi_instance'
refused rest_bad_probe /flamegraph '{"cmd": {"probe": ["oncpu", "nosuch"]}}' 'nosuch'
refused rest_bad_state /flamegraph '{"state": "paused"}' 'paused'
refused rest_bad_root /flamegraph '[1, 2]' 'an array'
refused rest_empty_body /flamegraph '' 'flamegraph:'
refused rest_l7_not_flame /l7 '{"cmd": {"probe": ["oncpu"]}}' 'unknown l7 probe'
refused rest_sli_not_flame /sli '{"params": {"svg_dir": "/tmp"}}' 'flamegraph parameter'
head -c 70000 /dev/zero | tr '\0' ' ' >"$TMP/big"
CODE=$(curl -s -o "$TMP/ans" -w '%{http_code}' -X PUT "$R/flamegraph" --data-binary @"$TMP/big")
[ "$CODE" = 400 ] && jq -r .message "$TMP/ans" | grep -q 'exceeds 65536' && pass rest_body_capped ||
	fail rest_body_capped "$CODE $(cat "$TMP/ans")"
[ "$(get /flamegraph)" = "$before" ] && [ "$(attached $AGENT gt_offcpu)" -ge 1 ] &&
	pass rest_bad_changes_nothing || fail rest_bad_changes_nothing "$(get /flamegraph)"
CODE=$(curl -s -o "$TMP/ans" -w '%{http_code}' -X POST "$R/flamegraph" -d '{}')
c2=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$R/l7")
[ "$CODE $c2" = "405 405" ] && [ "$(jq -c . "$TMP/ans")" = '{"result":"failed","message":"method not allowed"}' ] &&
	pass rest_405 || fail rest_405 "$CODE $c2 $(cat "$TMP/ans")"
CODE=$(curl -s -o "$TMP/ans" -w '%{http_code}' "$R/tcp")
[ "$CODE" = 404 ] && [ "$(jq -r .message "$TMP/ans")" = "url not found" ] && pass rest_404 ||
	fail rest_404 "$CODE $(cat "$TMP/ans")"
ct=$(curl -s -D - -o /dev/null "$R/flamegraph" | awk -F': ' 'tolower($1) == "content-type" { sub(/\r$/, "", $2); print $2 }')
[ "$ct" = application/json ] && pass rest_content_type || fail rest_content_type "'$ct'"

# 6. New targets (snoopers) restart the probes on them; GET shows them.
"$TOOLS/sleeper" 60 & S2=$!
put /flamegraph "{\"snoopers\": {\"proc_id\": [$S2]}}"
[ "$CODE" = 200 ] && [ "$(get /flamegraph | jq -c .snoopers.proc_id)" = "[$S2]" ] &&
	grep -q 'probes restart' "$TMP/agent.log" && [ "$(attached $AGENT gt_offcpu)" -ge 1 ] &&
	pass rest_snoopers || fail rest_snoopers "$CODE $(cat "$TMP/ans") $(get /flamegraph)"
kill $S2

kill -TERM $AGENT
wait $AGENT; rc=$?
[ "$rc" = 0 ] && pass rest_agent_stops || fail rest_agent_stops "exit $rc: $(tail -3 "$TMP/agent.log")"
check rest_no_probe_left no_gt_progs

# 7. Other hosts: refused without --rest-allow-remote and a token; with them, the token is
# asked of every request.
"$GALATOP" agent --type oncpu --metrics off --rest 0.0.0.0:18531 2>"$TMP/r1.log"; r1=$?
"$GALATOP" agent --type oncpu --metrics off --rest 0.0.0.0:18531 --rest-allow-remote 2>"$TMP/r2.log"; r2=$?
printf 'short\n' >"$TMP/short"
"$GALATOP" agent --type oncpu --metrics off --rest 0.0.0.0:18531 --rest-allow-remote \
	--rest-token "$TMP/short" 2>"$TMP/r3.log"; r3=$?
[ "$r1 $r2 $r3" = "1 1 1" ] && grep -q 'not a loopback address' "$TMP/r1.log" &&
	grep -q 'needs --rest-token' "$TMP/r2.log" && grep -q 'at least 16' "$TMP/r3.log" &&
	pass rest_remote_needs_token || fail rest_remote_needs_token "$r1 $r2 $r3: $(cat "$TMP/r1.log" "$TMP/r2.log" "$TMP/r3.log" | tail -3)"
TOKEN=tok-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$TOKEN" >"$TMP/token"
"$GALATOP" agent --type oncpu --metrics off --rest 0.0.0.0:0 --rest-allow-remote \
	--rest-token "$TMP/token" 2>"$TMP/r4.log" &
AGENT=$!
if wait_until 600 grep -qs 'running (pid' "$TMP/r4.log"; then
	port=$(sed -n 's/.*REST control on .*, port \([0-9]*\).*/\1/p' "$TMP/r4.log")
	a=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$port/flamegraph)
	b=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${TOKEN}x" http://127.0.0.1:$port/flamegraph)
	c=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" http://127.0.0.1:$port/flamegraph)
	[ "$a $b $c" = "401 401 200" ] && pass rest_token || fail rest_token "$a $b $c"
	ip=$(hostname -I 2>/dev/null | awk '{ print $1 }')
	if [ -n "$ip" ]; then
		d=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "http://$ip:$port/flamegraph")
		[ "$d" = 200 ] && pass rest_remote_with_token || fail rest_remote_with_token "$d from $ip"
	else
		na rest_remote_with_token "no address but loopback on this machine"
	fi
else
	fail rest_token "the agent did not start: $(tail -3 "$TMP/r4.log")"
fi
kill -TERM $AGENT; wait $AGENT
kill $SLEEPER; wait $SLEEPER 2>/dev/null
check rest_token_agent_no_probe_left no_gt_progs
exit 0
