#!/bin/sh
# galatop agent --pyroscope against a loopback stand-in for Pyroscope's /ingest that refuses
# what Pyroscope refuses (pyroscope_standin.py; Pyroscope has no Debian package): a known
# on-CPU workload (burn: 60/30/10 over three leaves) arrives as galatop.cpu{service_name=...,
# hostname=...,pid=...} with its hot function, Basic auth and the tenant header, and each
# period's sample count equal to the agent's own periodic folded file and to the CPU time the
# kernel counted; off-CPU time (sleeper) as block_duration in nanoseconds, page faults
# (faulter) as alloc_objects; 503s retried; a server down or hung costs the probes nothing
# and the agent still stops promptly.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/agent_lib.sh"
need_root_bpf pyroscope || exit 0
[ -x "$TOOLS/burn" ] && [ -x "$TOOLS/sleeper" ] ||
	{ fail pyroscope "test workloads not built (make tools)"; exit 0; }
PY=/usr/bin/python3 # Debian's (DEB_PKGS), not a developer's own
SI="$(dirname "$0")/pyroscope_standin.py"

# standin NAME [--fail N | --hang]: the stand-in, its port in $PORT, its pid in $SIPID, its
# log in $TMP/NAME.log.
standin() {
	n=$1; shift
	"$PY" "$SI" "$TMP/$n.port" "$TMP/$n.log" "$@" & SIPID=$!
	wait_file "$TMP/$n.port" 100
	PORT=$(cat "$TMP/$n.port")
}
# accepted LOG: requests the stand-in took; refused LOG: those it refused.
accepted() { grep -c '"name"' "$1"; }
refused() { grep -c '"refused"' "$1"; }

# 0. The stand-in holds Pyroscope's rules: gala-gopher's name (a pid after the last dot) and a
# fractional count are refused, a good request taken.
standin rules
post() { curl -s -o /dev/null -w '%{http_code}' --data-binary "$2" "http://127.0.0.1:$PORT/ingest?$1"; }
c1=$(post 'name=gala-gopher-oncpu-6b1f.4242&from=1&until=2' 'main;work 5')
c2=$(post 'name=galatop.cpu%7Bservice_name%3Da%7D&from=1&until=2' 'main;work 5.5')
c3=$(post 'name=galatop.cpu%7Bservice_name%3Da%7D&from=1&until=2' 'main;work 5')
if [ "$c1$c2$c3" = 400400200 ] && grep -q 'unknown profile type: 4242' "$TMP/rules.log"; then
	pass pyroscope_standin_rules
else
	fail pyroscope_standin_rules "codes $c1 $c2 $c3"
fi
kill "$SIPID"

# 1. On-CPU: burn, 2 s periods, Basic auth and a tenant. burn, under a name of its own
# (other tests may burn meanwhile), starts once the agent runs (--comm) and its shell reaps it,
# so that the shell's children's time is all of burn's CPU time: the sample count's truth.
standin cpu
cp "$TOOLS/burn" "$TMP/gtpyroburn"
printf 'alice:s3cr:et\n' >"$TMP/auth"
mkdir -p "$TMP/out"
if start_agent "$TMP/cpu.agent" $NOSERVE --type oncpu --comm gtpyroburn -F 499 --period 2 \
	--out-dir "$TMP/out" \
	--pyroscope "http://127.0.0.1:$PORT" --pyroscope-auth "$TMP/auth" \
	--pyroscope-tenant team-a; then
	sh -c '"$1" 5 >/dev/null & echo $! >"$2"; wait $!; awk "{ print \$16 + \$17 }" /proc/$$/stat >"$3"' \
		sh "$TMP/gtpyroburn" "$TMP/burn.pid" "$TMP/burn.ticks"
	sleep 2.5 # the period holding burn's end is sent
	stop_agent
else
	fail pyroscope_cpu_agent "$(tail -3 "$TMP/cpu.agent")"
fi
kill "$SIPID"
n=$(accepted "$TMP/cpu.log")
if [ "$n" -ge 2 ] && [ "$(refused "$TMP/cpu.log")" = 0 ] && [ "$RC" = 0 ]; then
	pass pyroscope_cpu_accepted
else
	fail pyroscope_cpu_accepted "$n accepted, $(refused "$TMP/cpu.log") refused, exit $RC: $(head -c 300 "$TMP/cpu.log")"
fi
# The periodic files of the periods with samples, in order, one total a line.
for f in "$TMP/out"/oncpu-*.folded; do folded_total "$f"; done | grep -v '^0$' >"$TMP/files.tot"
auth=$(printf 'alice:s3cr:et' | base64)
pycheck "$TMP/cpu.log" "$(cat "$TMP/burn.pid")" "$(hostname)" "Basic $auth" "$TMP/files.tot" \
	"$(cat "$TMP/burn.ticks")" "$(getconf CLK_TCK)" <<'EOF'
import math, sys
from results import res, standin_log
log, pid, host, auth, files, ticks, hz = sys.argv[1:]
reqs, _, tots = standin_log(log, files)
want = {"service_name": "gtpyroburn", "hostname": host, "pid": pid}
bad = [r["name"] for r in reqs if r["app"] != "galatop" or r["type"] != "cpu" or r["labels"] != want]
res("pyroscope_cpu_name", not bad, "names %s" % bad[:2])
p = [r["params"] for r in reqs]
res("pyroscope_cpu_params", all(x.get("units") == "samples" and x.get("sampleRate") == "499"
    and x.get("aggregationType") == "sum" and x.get("spyName") == "ebpfspy" for x in p), p[:1])
res("pyroscope_auth_tenant", all(r["auth"] == auth and r["tenant"] == "team-a" for r in reqs),
    "%s %s" % (reqs[0]["auth"], reqs[0]["tenant"]))
# Windows of 2 s (4 with from rounded down, until up; the first may be late a little), each
# starting where the last ended.
w = [(int(x["from"]), int(x["until"])) for x in p]
ok = all(2 <= u - f <= 4 for f, u in w) and all(w[i + 1][0] in (w[i][1] - 1, w[i][1])
                                                for i in range(len(w) - 1))
res("pyroscope_cpu_periods", ok, w)
# Each period's body holds the samples its periodic file holds (periods without samples send
# nothing).
got = [r["total"] for r in reqs]
res("pyroscope_totals_match_period_files", len(tots) >= 2 and got == tots,
    "requests %s, files %s" % (got, tots))
# The hot function: leaf_alpha 60% and leaf_beta 30% of the samples under mid (every request's
# bodies), within 4 standard errors of the count.
stacks = [sc for r in reqs for sc in r["stacks"]]
mid = sum(c for s, c in stacks if ";mid;" in s + ";")
a = sum(c for s, c in stacks if ";leaf_alpha;" in s + ";")
b = sum(c for s, c in stacks if ";leaf_beta;" in s + ";")
ok = mid >= 50 and abs(100 * a / mid - 60) <= 400 * math.sqrt(.24 / mid) and \
    abs(100 * b / mid - 30) <= 400 * math.sqrt(.21 / mid)
res("pyroscope_cpu_hot_function", ok, "leaf_alpha %d, leaf_beta %d of %d samples under mid" %
    (a, b, mid))
# Samples at 499 Hz of burn's CPU time as the kernel counted it: within 10%, or 50 ms of CPU.
cpu_s = int(ticks) / int(hz)
n = sum(got)
res("pyroscope_samples_match_cpu_time",
    cpu_s >= 0.3 and abs(n - 499 * cpu_s) <= max(0.1 * 499 * cpu_s, 0.05 * 499),
    "%d samples for %.2f s of CPU at 499 Hz" % (n, cpu_s))
EOF

# 2. Off-CPU: sleeper's 300/100 ms naps as block_duration in nanoseconds.
standin off
rm -rf "$TMP/out"; mkdir -p "$TMP/out"
"$TOOLS/sleeper" 60 & SLEEPER=$!
if start_agent "$TMP/off.agent" $NOSERVE --type offcpu -p "$SLEEPER" --period 2 \
	--out-dir "$TMP/out" \
	--pyroscope "127.0.0.1:$PORT"; then
	wait_until 150 sh -c "[ \$(grep -c '\"name\"' '$TMP/off.log') -ge 3 ]"
	stop_agent
else
	fail pyroscope_offcpu_agent "$(tail -3 "$TMP/off.agent")"
fi
kill "$SIPID" "$SLEEPER"
for f in "$TMP/out"/offcpu-*.folded; do folded_total "$f"; done >"$TMP/files.tot"
pycheck "$TMP/off.log" "$SLEEPER" "$TMP/files.tot" <<'EOF'
import sys
from results import res, standin_log
log, pid, files = sys.argv[1:]
reqs, refused, tots = standin_log(log, files)
ok = reqs and not refused and all(r["type"] == "block_duration" and r["labels"].get("pid") == pid
    and r["params"].get("units") == "lock_nanoseconds" and "sampleRate" not in r["params"]
    for r in reqs)
res("pyroscope_offcpu_name", ok, refused[:1] or [r["name"] for r in reqs[:1]])
# The periodic files count microseconds; the bodies nanoseconds.
got = [r["total"] for r in reqs]
res("pyroscope_offcpu_nanoseconds", len(tots) >= 2 and got[:len(tots)] == [1000 * t for t in tots],
    "requests %s, files (us) %s" % (got, tots))
# sleep_long's 300 ms of every 400: 75%, less the wait for a CPU after each wake-up, which
# both naps add to their time off-CPU alike (d ms: (300 + d) / (400 + 2d); a loaded machine
# with d up to 100 ms gives 67%); 5 points above for a period's partial rounds.
stacks = [sc for r in reqs for sc in r["stacks"]]
lng = sum(c for s, c in stacks if "sleep_long" in s)
sht = sum(c for s, c in stacks if "sleep_short" in s)
share = 100 * lng / max(lng + sht, 1)
res("pyroscope_offcpu_split", lng + sht > 2e9 and 66 <= share <= 80,
    "sleep_long %.0f ms, sleep_short %.0f ms: %.1f%%" % (lng / 1e6, sht / 1e6, share))
EOF

# 2b. Page faults: faulter's 3 pages in fault_big for every one in fault_small, as
# alloc_objects (a fault is a page allocated) counting faults.
standin mem
rm -rf "$TMP/out"; mkdir -p "$TMP/out"
"$TOOLS/faulter" 60 & FAULTER=$!
if start_agent "$TMP/mem.agent" $NOSERVE --type mem -p "$FAULTER" --period 2 --out-dir "$TMP/out" \
	--pyroscope "http://127.0.0.1:$PORT"; then
	wait_until 150 sh -c "[ \$(grep -c '\"name\"' '$TMP/mem.log') -ge 3 ]"
	stop_agent
else
	fail pyroscope_mem_agent "$(tail -3 "$TMP/mem.agent")"
fi
kill "$SIPID" "$FAULTER"
for f in "$TMP/out"/mem-*.folded; do folded_total "$f"; done | grep -v '^0$' >"$TMP/files.tot"
pycheck "$TMP/mem.log" "$FAULTER" "$TMP/files.tot" <<'EOF'
import sys
from results import res, standin_log
log, pid, files = sys.argv[1:]
reqs, refused, tots = standin_log(log, files)
ok = reqs and not refused and all(r["type"] == "alloc_objects" and r["labels"].get("pid") == pid
    and r["params"].get("units") == "objects" and r["params"].get("aggregationType") == "sum"
    for r in reqs)
res("pyroscope_mem_name", ok, refused[:1] or [r["name"] for r in reqs[:1]])
got = [r["total"] for r in reqs]
res("pyroscope_mem_totals_match_period_files", len(tots) >= 2 and got[:len(tots)] == tots,
    "requests %s, files %s" % (got, tots))
stacks = [sc for r in reqs for sc in r["stacks"]]
big = sum(c for s, c in stacks if ";fault_big;" in s + ";")
small = sum(c for s, c in stacks if ";fault_small;" in s + ";")
share = 100 * big / max(big + small, 1)
res("pyroscope_mem_split", big + small >= 100 and abs(share - 75) <= 5,
    "fault_big %d, fault_small %d faults: %.1f%%" % (big, small, share))
EOF

"$TOOLS/burn" 60 >/dev/null & BURN=$!

# 3. 503 twice: the first period's request is tried again and taken.
standin retry --fail 2
if start_agent "$TMP/retry.agent" $NOSERVE --type oncpu -p "$BURN" --period 1 \
	--pyroscope "http://127.0.0.1:$PORT"; then
	wait_until 100 sh -c "[ \$(grep -c '\"name\"' '$TMP/retry.log') -ge 2 ]"
	stop_agent
fi
kill "$SIPID"
if [ "$(accepted "$TMP/retry.log")" -ge 2 ] && grep -q ' 0 failed, 2 tries again' "$TMP/retry.agent"; then
	pass pyroscope_retries_503
else
	fail pyroscope_retries_503 "$(grep 'pyroscope:' "$TMP/retry.agent" | tail -2)"
fi

# 4. A server down (a port of this test's range nobody listens on) and a hung one: the
# periodic files keep their pace, failures are logged, SIGTERM ends the agent promptly.
for kind in down hung; do
	rm -rf "$TMP/out"; mkdir -p "$TMP/out"
	if [ $kind = down ]; then
		url=http://127.0.0.1:18601
		curl -s -m 1 "$url" >/dev/null && { fail pyroscope_server_down "port 18601 is taken"; continue; }
	else
		standin hung --hang; url="http://127.0.0.1:$PORT"
	fi
	start_agent "$TMP/$kind.agent" $NOSERVE --type oncpu -p "$BURN" --period 1 \
		--out-dir "$TMP/out" \
		--pyroscope "$url" --pyroscope-retries 2 --pyroscope-timeout 3
	sleep 4.5
	nfiles=$(ls "$TMP/out"/oncpu-*.folded 2>/dev/null | wc -l)
	s=$(date +%s.%N); stop_agent; e=$(date +%s.%N)
	[ $kind = hung ] && kill "$SIPID"
	secs=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.1f", e - s }')
	if [ "$nfiles" -ge 3 ] && [ "$RC" = 0 ] && awk -v t="$secs" 'BEGIN { exit !(t < 15) }' &&
		grep -q 'warning: pyroscope: .* series not sent this period' "$TMP/$kind.agent"; then
		pass "pyroscope_server_${kind}_no_stall"
	else
		fail "pyroscope_server_${kind}_no_stall" "$nfiles periodic files in 4.5 s, exit $RC after ${secs}s: $(grep pyroscope "$TMP/$kind.agent" | tail -2)"
	fi
done
grep -q "Couldn't connect" "$TMP/down.agent" && pass pyroscope_down_reason ||
	fail pyroscope_down_reason "$(grep pyroscope "$TMP/down.agent" | tail -1)"

# 5. gala-gopher's way: a REST request's pyroscope_server (no --pyroscope) starts posting the
# flame graphs there; the family stopped, nothing more is posted.
standin rest
start_agent "$TMP/rest.agent" --metrics off --rest 127.0.0.1:0 --type oncpu -p "$BURN" --period 1
R=http://127.0.0.1:$(sed -n 's/.*REST control on .*, port \([0-9]*\).*/\1/p' "$TMP/rest.agent")
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$R/flamegraph" -d "json={\"cmd\": {\"probe\": [\"oncpu\"]}, \"params\": {\"pyroscope_server\": \"127.0.0.1:$PORT\"}, \"state\": \"running\"}")
sleep 3.5
n1=$(accepted "$TMP/rest.log")
code2=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$R/flamegraph" -d 'json={"state": "stopped"}')
sleep 1.5 # the period under way when the family stopped may still go
n2=$(accepted "$TMP/rest.log")
sleep 2.5
n3=$(accepted "$TMP/rest.log")
stop_agent
kill "$SIPID"
if [ "$code$code2" = 200200 ] && [ "$n1" -ge 2 ] && [ "$n3" = "$n2" ] && [ "$(refused "$TMP/rest.log")" = 0 ] &&
	grep -q '"type": "cpu"' "$TMP/rest.log"; then
	pass "pyroscope_server_from_rest ($n1 posts while running, none after the stop)"
else
	fail pyroscope_server_from_rest "PUT $code/$code2, $n1 posts, then $n2 -> $n3: $(grep -i pyroscope "$TMP/rest.agent" | tail -3)"
fi
check pyroscope_no_probe_left no_gt_progs
kill "$BURN" 2>/dev/null
wait 2>/dev/null
exit 0
