#!/bin/sh
# galatop agent's GET /metrics (on a port the kernel picks) scraped by Debian's prometheus
# (ports 18502-18503 for it and redis): a known
# redis-benchmark run through the L7 probes reads back through Prometheus' query API as the
# exact request counts the benchmark sent, equal to the agent's own numbers; the stack samples
# follow the targets' CPU time at -F; the exposition is 0.0.4 with exactly its content type,
# no timestamps, and promtool check metrics finds nothing to say.
. "$(dirname "$0")/../lib.sh"
need_root_bpf agent_metrics || exit 0
for c in prometheus promtool redis-server redis-benchmark redis-cli curl jq; do
	command -v $c >/dev/null 2>&1 || { skip agent_metrics "$c not installed (make deps)"; exit 0; }
done
[ -x "$TOOLS/burn" ] || { fail agent_metrics "test workloads not built (make tools)"; exit 0; }
P=127.0.0.1:18502
RPORT=18503

# cpu_s PID: the CPU seconds (user + system) the process used so far.
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}
# q EXPR: the value of a PromQL expression (one series or a sum) now, "" when none.
q() {
	curl -s -G "http://$P/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty'
}
# agent_val NAME MATCH: the sum of the agent's own samples of NAME whose line contains MATCH.
agent_val() {
	curl -s "http://$M/metrics" | awk -v n="$1" -v m="$2" '
		index($0, n "{") == 1 && index($0, m) { s += $NF } END { printf "%.0f\n", s }'
}

redis-server --port $RPORT --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP" \
	--daemonize no >"$TMP/redis.log" 2>&1 &
REDIS=$!
wait_until 100 redis-cli -p $RPORT ping >/dev/null 2>&1 || { fail agent_metrics "redis did not start"; exit 0; }

# A CPU burner that waits for the agent (the same pid once it burns). The BPF statistics held
# on (--probe-stats on; by default they are sampled, 1 s in 10: tests/record/test_cost.sh), so
# that the programs' runs can be held against the samples.
mkfifo "$TMP/gate"
sh -c "read x <'$TMP/gate'; exec '$TOOLS/burn' 60" >/dev/null &
BURN=$!
T0=$(date +%s.%N)
"$GALATOP" agent --type l7,oncpu,sli -F 99 -p "$REDIS,$BURN" --period 2 --metrics 127.0.0.1:0 \
	--rest 127.0.0.1:0 --probe-stats on 2>"$TMP/agent.log" &
AGENT=$!
if ! wait_until 600 grep -qs 'running (pid' "$TMP/agent.log"; then
	fail agent_metrics "the agent did not start: $(tail -3 "$TMP/agent.log")"
	kill $AGENT $REDIS $BURN; exit 0
fi
M=127.0.0.1:$(sed -n 's/.*metrics on .*, port \([0-9]*\).*/\1/p' "$TMP/agent.log")
c0=$(awk -v a="$(cpu_s "$REDIS")" -v b="$(cpu_s "$BURN")" 'BEGIN { print a + b }')
echo go >"$TMP/gate"

cat >"$TMP/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: galatop
    static_configs:
      - targets: ['$M']
EOF
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address=$P >"$TMP/prom.log" 2>&1 &
PROM=$!
if wait_until 300 sh -c "[ \"\$(curl -s -G 'http://$P/api/v1/query' --data-urlencode 'query=up{job=\"galatop\"}' | jq -r '.data.result[0].value[1] // empty')\" = 1 ]"; then
	pass agent_metrics_scraped
else
	fail agent_metrics_scraped "$(tail -5 "$TMP/prom.log")"
fi

# A known workload: 3000 SET and 2000 GET, one connection, no pipelining.
redis-benchmark -p $RPORT -n 3000 -c 1 -t set -P 1 -q >/dev/null 2>&1
redis-benchmark -p $RPORT -n 2000 -c 1 -t get -P 1 -q >/dev/null 2>&1
sleep 3

SETQ='sum(galatop_l7_endpoint_req_count_total{protocol="redis",l7_role="server",endpoint=~"SET.*"})'
GETQ='sum(galatop_l7_endpoint_req_count_total{protocol="redis",l7_role="server",endpoint=~"GET.*"})'
# Prometheus has the counts once a scrape after the benchmark landed.
wait_until 150 sh -c "[ \"\$(curl -s -G 'http://$P/api/v1/query' --data-urlencode 'query=$SETQ' | jq -r '.data.result[0].value[1] // empty')\" = 3000 ]"
set_p=$(q "$SETQ"); get_p=$(q "$GETQ")
set_a=$(agent_val galatop_l7_endpoint_req_count_total '"SET'); get_a=$(agent_val galatop_l7_endpoint_req_count_total '"GET')
lost=$(agent_val galatop_agent_lost_total 'family="l7"')
[ "$set_p" = 3000 ] && [ "$get_p" = 2000 ] && pass agent_metrics_redis_counts ||
	fail agent_metrics_redis_counts "prometheus SET $set_p GET $get_p, want 3000 2000 (agent SET $set_a GET $get_a, l7 lost $lost)"
[ "$set_p" = "$set_a" ] && [ "$get_p" = "$get_a" ] && pass agent_metrics_equal_agent ||
	fail agent_metrics_equal_agent "prometheus SET $set_p GET $get_p, agent SET $set_a GET $get_a"
# gala-gopher's per-session rows count the same requests.
sess=$(q 'sum(gala_gopher_l7_req_count_total{protocol="redis",l7_role="server"})')
[ "${sess:-0}" -ge 5000 ] && pass agent_metrics_session_rows ||
	fail agent_metrics_session_rows "gala_gopher_l7_req_count_total summed $sess, want >= 5000"
# Labels: hostname on every series, container and pod on the session rows.
h=$(q "count(galatop_l7_endpoint_req_count_total{hostname=\"$(hostname)\"})")
c=$(curl -s "http://$M/metrics" | grep -c '^gala_gopher_l7_req_count_total{.*container="[^"]*",pod="[^"]*"')
[ "${h:-0}" -ge 2 ] && [ "$c" -ge 1 ] && pass agent_metrics_labels ||
	fail agent_metrics_labels "hostname series $h, session rows with container/pod $c"

# Samples at -F 99 follow the targets' CPU time since the agent started (the burner stopped,
# then a scrape): within 15% (the period is redrawn within +-25% at random; 300 or more).
kill -STOP "$BURN"
c1=$(awk -v a="$(cpu_s "$REDIS")" -v b="$(cpu_s "$BURN")" 'BEGIN { print a + b }')
sleep 2.5 # a scrape more
smp=$(q 'galatop_agent_samples_total')
if awk -v s="$smp" -v c0="$c0" -v c1="$c1" 'BEGIN { e = 99 * (c1 - c0); exit !(e > 100 && s > 0.85 * e && s < 1.15 * e) }'; then
	pass agent_metrics_samples
else
	fail agent_metrics_samples "prometheus says $smp samples; the targets used $(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }') CPU s (99/s expected)"
fi
kill -KILL "$BURN"
# The kernel ran the stack program at least once per sample it delivered, for some time.
runs=$(q 'galatop_agent_probe_runs_total{family="stacks"}')
pt=$(q 'galatop_agent_probe_seconds_total{family="stacks"}')
awk -v r="$runs" -v s="$smp" -v t="$pt" 'BEGIN { exit !(r >= s && t > 0) }' && pass agent_metrics_probe_time ||
	fail agent_metrics_probe_time "runs $runs, samples $smp, seconds $pt"
# Held on, the statistics counted from the agent's start to the last scrape: more than the
# time since the burner started, less than the time since the agent did.
on=$(q 'galatop_agent_probe_stats_seconds_total')
el=$(awk -v t0="$T0" -v t1="$(date +%s.%N)" 'BEGIN { print t1 - t0 }')
awk -v o="$on" -v e="$el" 'BEGIN { exit !(o > 2 && o <= e) }' && pass agent_metrics_probe_stats_seconds ||
	fail agent_metrics_probe_stats_seconds "statistics on ${on:-none} s, agent started $el s ago"
cpu=$(q 'sum(galatop_agent_cpu_seconds_total)')
awk -v c="$cpu" 'BEGIN { exit !(c > 0) }' && pass agent_metrics_own_cpu || fail agent_metrics_own_cpu "cpu $cpu"

# The exposition itself.
curl -s -D "$TMP/headers" -o "$TMP/metrics.txt" "http://$M/metrics"
ct=$(awk -F': ' 'tolower($1) == "content-type" { sub(/\r$/, "", $2); print $2 }' "$TMP/headers")
[ "$ct" = "text/plain; version=0.0.4; charset=utf-8" ] && pass agent_metrics_content_type ||
	fail agent_metrics_content_type "content type '$ct'"
if promtool check metrics <"$TMP/metrics.txt" >"$TMP/promtool.out" 2>&1 && [ ! -s "$TMP/promtool.out" ]; then
	pass agent_metrics_promtool
else
	fail agent_metrics_promtool "$(head -5 "$TMP/promtool.out")"
fi
# Sample lines are NAME{LABELS} VALUE: no timestamp (label values may hold spaces and braces).
bad=$(grep -v '^#' "$TMP/metrics.txt" | sed -E 's/"([^"\\]|\\.)*"/""/g' |
	grep -cvE '^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [^ ]+$')
[ "$bad" = 0 ] && pass agent_metrics_no_timestamps || fail agent_metrics_no_timestamps "$bad lines"
# Counters are cumulative since the start: a scrape later never reads less.
s1=$(agent_val galatop_l7_endpoint_req_count_total '"SET')
sleep 2.5
s2=$(agent_val galatop_l7_endpoint_req_count_total '"SET')
[ "$s1" = 3000 ] && [ "$s2" = 3000 ] && pass agent_metrics_cumulative ||
	fail agent_metrics_cumulative "SET $s1 then $s2 across a period"
# ... also across a restart of the probes (new L7 settings through the REST control): the
# counts go on from where they were, and new requests add to them.
W='galatop_sli_cpu_wait_seconds_count'
w1=$(agent_val $W 'group="host"')
R=127.0.0.1:$(sed -n 's/.*REST control on .*, port \([0-9]*\).*/\1/p' "$TMP/agent.log")
rc=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "http://$R/l7" \
	-d 'json={"params": {"l7_protocol": ["redis"]}, "state": "running"}')
wait_until 300 grep -qs 'the probes restart' "$TMP/agent.log"
sleep 1
redis-benchmark -p $RPORT -n 500 -c 1 -t set -P 1 -q >/dev/null 2>&1
sleep 1
s3=$(agent_val galatop_l7_endpoint_req_count_total '"SET')
[ "$rc" = 200 ] && [ "$s3" = 3500 ] && pass agent_metrics_cumulative_across_restart ||
	fail agent_metrics_cumulative_across_restart "PUT $rc; SET $s3 after 3000 + 500 across the restart"
w2=$(agent_val $W 'group="host"')
[ "${w1:-0}" -gt 0 ] && [ "${w2:-0}" -ge "$w1" ] && pass agent_metrics_sli_across_restart ||
	fail agent_metrics_sli_across_restart "host cpu_wait delays $w1 before the restart, $w2 after"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$M/nope")
code2=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "http://$M/metrics")
[ "$code" = 404 ] && [ "$code2" = 405 ] && pass agent_metrics_404_405 || fail agent_metrics_404_405 "$code $code2"

kill $PROM
kill -TERM $AGENT
wait $AGENT; rc=$?
[ "$rc" = 0 ] && pass agent_metrics_stops || fail agent_metrics_stops "exit $rc: $(tail -3 "$TMP/agent.log")"
check agent_metrics_no_probe_left no_gt_progs
kill $REDIS
wait $PROM $REDIS 2>/dev/null
exit 0
