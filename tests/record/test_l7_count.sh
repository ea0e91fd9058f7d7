#!/bin/sh
# Requests counted in the kernel (bpf/l7_count.h): galatop tracing real servers (redis-server,
# nginx) counts a busy connection's plain exchanges in the kernel, and the tables must come out as
# when every message went to user space: counts equal to the clients' own, bytes equal to the
# server's own accounting (Redis's INFO), errors, slow answers, pipelined and bodied requests all
# still seen; --no-l7-count sends every message. Needs root and BPF.
. tests/lib.sh
need_root_bpf l7_count || exit 0
for c in jq nginx redis-server redis-benchmark redis-cli wrk curl python3 openssl; do
	command -v $c >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
	command -v $c >/dev/null 2>&1 || { skip l7_count "$c is missing (make deps installs it)"; exit 0; }
done
chmod 755 "$TMP"
. tests/record/l7_lib.sh

# counted FILE: requests the recording's summary says were counted in the kernel.
counted() { sed -n 's/.*(\([0-9]*\) counted in the kernel.*/\1/p' "$1.err" | tail -1; }
# slowest FILE PROTO ENDPOINT FIELD: FIELD of the slowest request of an endpoint.
slowest() {
	jq -r --arg p "$2" --arg e "$3" --arg f "$4" \
		'[.endpoints[] | select(.protocol == $p and .endpoint == $e) | .slowest[0][$f]][0] // ""' "$1"
}
info() { redis-cli -p 18301 info stats | tr -d '\r' | awk -F: -v k="$1" '$1 == k { print $2 }'; }

# --- Redis -------------------------------------------------------------------------------
redis-server --port 18301 --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP" \
	--enable-debug-command yes --daemonize no >"$TMP/redis.log" 2>&1 &
PIDS="$PIDS $!"
if wait_for redis-cli -p 18301 ping; then
	rp=$(redis-cli -p 18301 info server | tr -d '\r' | awk -F: '$1 == "process_id" { print $2 }')
	in0=$(info total_net_input_bytes); out0=$(info total_net_output_bytes)
	rec_bg "$TMP/r.json" -p "$rp"
	redis-benchmark -p 18301 -n 50000 -c 8 -t set,get -P 1 -q >/dev/null 2>&1
	rec_stop
	in1=$(info total_net_input_bytes); out1=$(info total_net_output_bytes)
	eq redis_count_set "$(ep "$TMP/r.json" redis server '^SET$' req_count)" 50000
	eq redis_count_get "$(ep "$TMP/r.json" redis server '^GET$' req_count)" 50000
	eq redis_count_errors "$(sess "$TMP/r.json" redis server err_count)" 0
	n=$(counted "$TMP/r.json")
	if [ "${n:-0}" -ge 80000 ]; then pass redis_counted_in_kernel; else
		fail redis_counted_in_kernel "${n:-none} of 100000 counted in the kernel: $(tail -2 "$TMP/r.json.err")"; fi
	# Redis's own byte counts, less the INFO calls around the recording (the first's reply
	# and the second's command fall outside it): within 1 KB.
	got=$(sess "$TMP/r.json" redis server bytes_recv)
	if near "$got" $((in1 - in0)) 1024; then pass redis_bytes_recv; else
		fail redis_bytes_recv "galatop $got, redis-server $((in1 - in0))"; fi
	got=$(sess "$TMP/r.json" redis server bytes_sent)
	if near "$got" $((out1 - out0)) 8192; then pass redis_bytes_sent; else
		fail redis_bytes_sent "galatop $got, redis-server $((out1 - out0))"; fi
	# Each request came in a TCP segment of its own at least, each answer left in one.
	segs=$(sess "$TMP/r.json" redis server segs_recv)
	if [ "${segs:-0}" -ge 100000 ] && [ "$segs" -le 101000 ]; then pass redis_count_segs; else
		fail redis_count_segs "segs_recv $segs for 100000 requests"; fi
	# (an answer may leave with the one before it when that one waited for an ACK)
	segs=$(sess "$TMP/r.json" redis server segs_sent)
	if [ "${segs:-0}" -ge 99000 ] && [ "$segs" -le 100100 ]; then pass redis_count_segs_sent; else
		fail redis_count_segs_sent "segs_sent $segs for 100000 answers"; fi
	lat=$(ep "$TMP/r.json" redis server '^GET$' latency_p50)
	if [ "${lat:-0}" -gt 0 ] && [ "$lat" -lt 5000000 ]; then pass redis_count_latency; else
		fail redis_count_latency "GET p50 $lat ns"; fi

	# One connection (redis-cli reading commands): errors, slow answers and a pipelined
	# burst in the middle of counted exchanges are all seen, each in its row.
	rec_bg "$TMP/c.json" -p "$rp"
	python3 - >"$TMP/cmds.py.out" 2>&1 <<'EOF'
import socket, sys, time
def cmd(*a):
    return b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a)
def reply(f):
    line = f.readline()
    if line[:1] == b"$":
        n = int(line[1:])
        if n >= 0: f.read(n + 2)
    return line
s = socket.create_connection(("127.0.0.1", 18301))
f = s.makefile("rb")
def one(*a):
    s.sendall(cmd(*a)); return reply(f)
time.sleep(0.3)
one(b"SET", b"k", b"v"); one(b"SET", b"str", b"abc")
for i in range(20): one(b"GET", b"k")
time.sleep(0.5)  # galatop has read them: the connection is named, GET's key too
for i in range(20): one(b"GET", b"k")
time.sleep(0.5)  # and the kernel has GET's slowness bound
# The bound is the eighth slowest answer so far: from 40 answers, about the median. Answers
# above it come as records and raise it, though only as fast as galatop reads them (100 ms),
# so 200 more and a pause settle it near the slowest; what follows is counted steadily.
for i in range(200): one(b"GET", b"k")
time.sleep(0.5)
for i in range(260): one(b"GET", b"k")
e1 = one(b"NOSUCHCMD", b"x")
for i in range(300): one(b"GET", b"k")
e2 = one(b"INCR", b"str")
for i in range(50): one(b"EVAL", b"return 1", b"0")
one(b"EVAL", b"local i = 0 while i < 3000000 do i = i + 1 end return 1", b"0")
for i in range(50): one(b"EVAL", b"return 1", b"0")
time.sleep(0.3)  # the kernel's slowness bound has moved to the slowest list's
for i in range(50): one(b"GET", b"k")
one(b"DEBUG", b"SLEEP", b"0")
s.sendall(cmd(b"GET", b"k") * 10)  # pipelined: one read, ten commands
for i in range(10): reply(f)
for i in range(100): one(b"GET", b"k")
print(e1.strip().decode(), e2.strip().decode(), file=sys.stderr)
s.close()
EOF
	sleep 0.3
	rec_stop
	eq redis_conn_get "$(ep "$TMP/c.json" redis server '^GET$' req_count)" 960
	eq redis_conn_get_errors "$(ep "$TMP/c.json" redis server '^GET$' err_count)" 0
	eq redis_conn_unknown_cmd "$(ep "$TMP/c.json" redis server '^NOSUCHCMD$' err_count)" 1
	eq redis_conn_incr_error "$(ep "$TMP/c.json" redis server '^INCR$' err_count)" 1
	eq redis_conn_eval "$(ep "$TMP/c.json" redis server '^EVAL$' req_count)" 101
	n=$(counted "$TMP/c.json")
	# More than the 500 GETs before the first error: counting resumed after it.
	if [ "${n:-0}" -ge 600 ]; then pass redis_conn_counted; else
		fail redis_conn_counted "${n:-none} counted in the kernel: $(cat "$TMP/cmds.py.out")"; fi
	# The loop's answer came as records: it heads EVAL's slowest list, with its script.
	lat=$(slowest "$TMP/c.json" redis EVAL latency)
	det=$(slowest "$TMP/c.json" redis EVAL detail)
	case "$det" in *while*) ok=1 ;; *) ok=0 ;; esac
	if [ "$ok" = 1 ] && [ "${lat:-0}" -ge 5000000 ]; then pass redis_conn_slow_seen; else
		fail redis_conn_slow_seen "EVAL's slowest: $lat ns, $det"; fi
	# The client's side: redis-benchmark's connections counted in the kernel too.
	"$GALATOP" record --type l7 -o "$TMP/cl.json" -- redis-benchmark -p 18301 -n 50000 -c 4 \
		-t get -P 1 -q >/dev/null 2>"$TMP/cl.json.err"
	eq redis_client_count "$(ep "$TMP/cl.json" redis client '^GET$' req_count)" 50000
	eq redis_client_errors "$(sess "$TMP/cl.json" redis client err_count)" 0
	n=$(counted "$TMP/cl.json")
	if [ "${n:-0}" -ge 40000 ]; then pass redis_client_counted; else
		fail redis_client_counted "${n:-none} of 50000 counted in the kernel"; fi
	got=$(sess "$TMP/cl.json" redis client bytes_sent)
	eq redis_client_bytes_sent "$got" $((50000 * 36 + $(ep "$TMP/cl.json" redis client '^CONFIG$' bytes_sent)))
	# The same client with every message sent: the same counts.
	rec_bg "$TMP/n.json" -p "$rp" --no-l7-count
	python3 - >/dev/null 2>&1 <<'EOF'
import socket, time
s = socket.create_connection(("127.0.0.1", 18301)); f = s.makefile("rb")
time.sleep(0.3)
for i in range(500):
    s.sendall(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"); f.readline(); f.readline()
EOF
	sleep 0.3
	rec_stop
	eq redis_no_count_get "$(ep "$TMP/n.json" redis server '^GET$' req_count)" 500
	eq redis_no_count_counted "$(counted "$TMP/n.json")" 0
else
	fail redis_start "redis-server did not answer"; cat "$TMP/redis.log"
fi

# --- nginx -------------------------------------------------------------------------------
nginx_run 127.0.0.1:18380
if wait_for curl -sf http://127.0.0.1:18380/ok; then
	np=$(pgrep -d, -P "$NGINX" nginx)
	rec_bg "$TMP/w.json" -p "$np"
	wrk -t1 -c4 -d2s http://127.0.0.1:18380/ok >"$TMP/wrk.txt" 2>&1
	rec_stop
	n=$(awk '/requests in/ { print $1 }' "$TMP/wrk.txt")
	got=$(ep "$TMP/w.json" http server '^GET /ok$' req_count)
	# wrk counts the answers it read; up to one request per connection was in flight.
	if [ "${got:-0}" -ge "${n:-1}" ] && near "$got" "$n" 4; then pass http_wrk_count; else
		fail http_wrk_count "galatop $got, wrk $n"; fi
	c=$(counted "$TMP/w.json")
	if [ "${c:-0}" -ge $((n * 9 / 10)) ]; then pass http_counted_in_kernel; else
		fail http_counted_in_kernel "${c:-none} of $n counted in the kernel"; fi
	eq http_wrk_errors "$(sess "$TMP/w.json" http server err_count)" 0
	# wrk's side (the client's), counted in the kernel as well.
	"$GALATOP" record --type l7 -o "$TMP/wc.json" -- wrk -t1 -c4 -d2s \
		http://127.0.0.1:18380/ok >"$TMP/wrkc.txt" 2>"$TMP/wc.json.err"
	cn=$(awk '/requests in/ { print $1 }' "$TMP/wrkc.txt")
	cg=$(ep "$TMP/wc.json" http client '^GET /ok$' resp_count)
	if [ "${cg:-0}" -ge "${cn:-1}" ] && near "$cg" "$cn" 4; then pass http_wrk_client_count; else
		fail http_wrk_client_count "galatop $cg, wrk $cn"; fi
	c=$(counted "$TMP/wc.json")
	if [ "${c:-0}" -ge $((cn * 9 / 10)) ]; then pass http_client_counted; else
		fail http_client_counted "${c:-none} of $cn counted in the kernel"; fi
	bytes=$(ep "$TMP/w.json" http server '^GET /ok$' bytes_sent)
	per=$(curl -s -D - -o /dev/null http://127.0.0.1:18380/ok | wc -c)
	if near "$bytes" $((got * (per + 3))) $((got / 100)); then pass http_bytes_sent; else
		fail http_bytes_sent "galatop $bytes for $got answers of $((per + 3)) bytes"; fi

	# One keep-alive connection: 404 and 500 answers, a request with a body, two pipelined
	# requests in one write, a query string, between counted exchanges.
	rec_bg "$TMP/k.json" -p "$np"
	python3 - >"$TMP/http.py.out" 2>&1 <<'EOF'
import socket, time
s = socket.create_connection(("127.0.0.1", 18380)); f = s.makefile("rb")
def get(path, body=None):
    if body is None:
        return b"GET %s HTTP/1.1\r\nHost: t\r\n\r\n" % path
    return b"POST %s HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n%s" % (path, len(body), body)
def answer():
    n = 0
    while True:
        line = f.readline()
        if not line: raise EOFError("the server closed the connection")
        if line.lower().startswith(b"content-length:"): n = int(line.split(b":")[1])
        if line == b"\r\n": break
    f.read(n)
time.sleep(0.3)
for i in range(20): s.sendall(get(b"/ok")); answer()
time.sleep(0.5)  # galatop has read them: the connection is named, the key too
for i in range(20): s.sendall(get(b"/ok")); answer()
time.sleep(0.5)  # and the kernel has its slowness bound
for i in range(200): s.sendall(get(b"/ok")); answer()  # which settles (as for Redis)
time.sleep(0.5)
for i in range(160): s.sendall(get(b"/ok")); answer()
s.sendall(get(b"/missing")); answer()
for i in range(200): s.sendall(get(b"/ok?i=%d" % i)); answer()
s.sendall(get(b"/ok", b"x" * 100)); answer()
s.sendall(get(b"/ok") + get(b"/ok")); answer(); answer()
for i in range(100): s.sendall(get(b"/ok")); answer()
s.sendall(get(b"/fail")); answer()  # last: nginx closes the connection after a 500
s.close()
EOF
	sleep 0.3
	rec_stop
	eq http_conn_get "$(ep "$TMP/k.json" http server '^GET /ok$' req_count)" 702
	eq http_conn_post "$(ep "$TMP/k.json" http server '^POST /ok$' req_count)" 1
	eq http_conn_404 "$(ep "$TMP/k.json" http server '^GET /missing$' err_4xx)" 1
	eq http_conn_500 "$(ep "$TMP/k.json" http server '^GET /fail$' err_5xx)" 1
	eq http_conn_errors "$(sess "$TMP/k.json" http server err_count)" 2
	c=$(counted "$TMP/k.json")
	# More than the 380 requests before the 404: counting resumed after it.
	if [ "${c:-0}" -ge 450 ]; then pass http_conn_counted; else
		fail http_conn_counted "${c:-none} counted in the kernel: $(cat "$TMP/http.py.out")"; fi
else
	fail nginx_start "nginx did not answer"; cat "$TMP/nginx/error.log" "$TMP/nginx/out.log"
fi
