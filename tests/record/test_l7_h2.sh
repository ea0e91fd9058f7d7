#!/bin/sh
# galatop record --type l7 on HTTP/2 and gRPC against real clients and servers on loopback, each
# started here on ports 18200-18299 and stopped at exit: nghttpd with h2load (-m 8: eight
# streams at a time on each connection) and curl --http2-prior-knowledge; nginx with http2 over
# TLS (ALPN h2, through the OpenSSL probes) and curl --http2; python3-grpcio's server and client
# with generic handlers (tests/record/h2/grpc_pair.py), failing and cancelled calls included;
# and a capture begun on a connection already busy (mid-stream). Counts and errors must equal
# the clients' own. Needs root and BPF.
. tests/lib.sh
need_root_bpf l7_h2 || exit 0
PATH=/usr/bin:/usr/sbin:/bin:/sbin:$PATH # Debian's python3 with python3-grpcio
for c in jq nghttpd h2load curl nginx openssl python3; do
	command -v $c >/dev/null 2>&1 || { skip l7_h2 "$c is missing (make deps installs it)"; exit 0; }
done
[ -x "$TOOLS/h2client" ] || { fail l7_h2 "test workloads not built (make tools)"; exit 0; }
python3 -c 'import grpc' 2>/dev/null || { skip l7_h2 "python3-grpcio is missing (make deps installs it)"; exit 0; }
chmod 755 "$TMP"
. tests/record/l7_lib.sh

# only_names FILE PROTO RE: every endpoint of PROTO in FILE matches RE (no garbage names).
only_names() {
	jq -r --arg p "$2" '.endpoints[] | select(.protocol == $p) | .endpoint' "$1" | grep -Ev "$3"
}

# --- nghttpd: h2load and curl, cleartext HTTP/2 (prior knowledge) ------------------------
mkdir -p "$TMP/www/users"
echo '{"id":42}' >"$TMP/www/users/42"
nghttpd --no-tls -d "$TMP/www" 18210 >"$TMP/nghttpd.log" 2>&1 &
NGHTTPD=$!
PIDS="$PIDS $NGHTTPD"
if wait_for curl -sf --http2-prior-knowledge http://127.0.0.1:18210/users/42; then
	# Client side: h2load's own counts and per-request log (microseconds); the server's side
	# of the same requests at once.
	rec_bg "$TMP/h2srv.json" -p $NGHTTPD
	"$GALATOP" record --type l7 -o "$TMP/h2load.json" -- "$TOOLS/cputime" h2load -n 4000 -c 2 -m 8 \
		--log-file="$TMP/h2load.log" http://127.0.0.1:18210/users/42 >"$TMP/h2load.txt" 2>"$TMP/h2load.err"
	rec_stop
	"$GALATOP" record --type l7 -o "$TMP/h2miss.json" -- h2load -n 600 -c 2 -m 8 \
		http://127.0.0.1:18210/missing >"$TMP/h2miss.txt" 2>&1
	# "requests: N total, N started, N done, N succeeded, ..."; "status codes: N 2xx, N 3xx, N 4xx"
	done_n=$(awk '/^requests:/ { print $6 }' "$TMP/h2load.txt")
	eq h2load_count "$(ep "$TMP/h2load.json" http2 client '^GET /users/\{id\}$' resp_count)" "$done_n" "h2load: $done_n done"
	eq h2load_2xx_no_errors "$(ep "$TMP/h2load.json" http2 client . err_count)" 0
	eq h2load_404_count "$(ep "$TMP/h2miss.json" http2 client '^GET /missing$' err_4xx)" \
		"$(awk '/^status codes:/ { print $7 }' "$TMP/h2miss.txt")" "h2load's 4xx"
	eq h2load_404_requests "$(ep "$TMP/h2miss.json" http2 client '^GET /missing$' req_count)" \
		"$(awk '/^requests:/ { print $6 }' "$TMP/h2miss.txt")"
	# Latency as the client measures it: tests/tools/h2client times each request with its
	# own clock right around its system calls (client_p50, tests/record/l7_lib.sh).
	GT_CLIENT_TIMES=$TMP/h2c.times "$GALATOP" record --type l7 -o "$TMP/h2c.json" -o "$TMP/h2c.jsonl" -- \
		"$TOOLS/h2client" 127.0.0.1 18210 /users/42 5000 >"$TMP/h2c.txt" 2>&1
	hc() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/h2c.txt"; }
	eq h2client_count "$(ep "$TMP/h2c.json" http2 client '^GET /users/\{id\}$' resp_count)" "$(hc requests)"
	client_p50 h2client_p50 "$TMP/h2c.json" http2 client '^GET /users/' "$(hc p50_ns)" 0 \
		"$(hc nivcsw)" "$(hc requests)" "$(awk -v c="$(hc cpu_ns)" -v n="$(hc requests)" 'BEGIN { printf "%d", c / n }')" 10
	nested h2client_nested "$TMP/h2c.jsonl" http2 '^GET /users/' "$TMP/h2c.times"
	# h2load one stream at a time (-m 1): its per-request log (us) against galatop's, bounded
	# by its CPU time and preemptions (tests/tools/cputime).
	"$GALATOP" record --type l7 -o "$TMP/h2m1.json" -- "$TOOLS/cputime" h2load -n 4000 -c 1 -m 1 \
		--log-file="$TMP/h2m1.log" http://127.0.0.1:18210/users/42 >"$TMP/h2m1.txt" 2>"$TMP/h2m1.err"
	n1=$(awk '/^requests:/ { print $6 }' "$TMP/h2m1.txt")
	eq h2load_m1_count "$(ep "$TMP/h2m1.json" http2 client '^GET /users/\{id\}$' resp_count)" "$n1"
	client_p50 h2load_m1_p50 "$TMP/h2m1.json" http2 client '^GET /users/' \
		"$(sort -n -k3 "$TMP/h2m1.log" | awk '{ v[NR] = $3 } END { print v[int((NR + 1) / 2)] * 1000 }')" 1000 \
		"$(sed -n 's/^nivcsw=//p' "$TMP/h2m1.err")" "$n1" \
		"$(awk -v c="$(sed -n 's/^cpu_ns=//p' "$TMP/h2m1.err")" -v n="$n1" 'BEGIN { printf "%d", c / n }')" 10
	eq h2load_server_count "$(ep "$TMP/h2srv.json" http2 server '^GET /users/\{id\}$' resp_count)" "$done_n"
	# h2load times a stream from the moment it serializes its HEADERS (its writev follows) to
	# its close, which it records while working through the read that brought the stream's
	# end: after the streams before it in that read, each closed with a line written to its
	# --log-file (a system call each). Its figure holds galatop's client-side one (the writev
	# to the read of the END_STREAM), which holds the server's (read of the HEADERS to the
	# write of the end). The difference is h2load's own work on one batch of at most 8 streams
	# of the connection: within 8 times its CPU time per request, bounded as client_p50 does.
	b=$(sort -n -k3 "$TMP/h2load.log" | awk '{ v[NR] = $3 } END { print v[int((NR + 1) / 2)] * 1000 }')
	p50_order h2load_p50 "$(ep "$TMP/h2srv.json" http2 server '^GET /users' latency_p50)" \
		"$(ep "$TMP/h2load.json" http2 client '^GET /users' latency_p50)" "$b"
	client_p50 h2load_m8_p50 "$TMP/h2load.json" http2 client '^GET /users/' "$b" 1000 \
		"$(sed -n 's/^nivcsw=//p' "$TMP/h2load.err")" "$done_n" \
		"$(awk -v c="$(sed -n 's/^cpu_ns=//p' "$TMP/h2load.err")" -v n="$done_n" 'BEGIN { printf "%d", 8 * c / n }')"
	# Server side: nghttpd's streams, from curl (one connection per request).
	rec_bg "$TMP/nghttpd.json" -p $NGHTTPD
	for i in $(seq 20) $(seq 20 | sed 's/.*/42/'); do
		curl -s -o /dev/null -w '%{http_version} %{http_code}\n' --http2-prior-knowledge \
			http://127.0.0.1:18210/users/$i
	done >"$TMP/curl_h2c.txt"
	rec_stop
	eq curl_h2c_server_count "$(ep "$TMP/nghttpd.json" http2 server '^GET /users/\{id\}$' resp_count)" \
		"$(grep -c '^2 ' "$TMP/curl_h2c.txt")" "curl's HTTP/2 responses"
	eq curl_h2c_server_404 "$(ep "$TMP/nghttpd.json" http2 server . err_4xx)" \
		"$(grep -c '^2 404$' "$TMP/curl_h2c.txt")" "curl's 404s"
	# Mid-stream: h2load's one connection is busy before the capture begins; its requests
	# refer to HPACK entries sent before: they are counted as "[undecoded]", never garbage.
	# It runs until stopped (a loaded machine takes 10 s and more to start a capture).
	h2load -D 600 -c 1 -m 4 http://127.0.0.1:18210/users/42 >"$TMP/h2mid.txt" 2>&1 &
	H2MID=$!
	PIDS="$PIDS $H2MID"
	sleep 2
	rec_bg "$TMP/h2mid.json" -p $NGHTTPD
	sleep 2
	rec_stop
	kill $H2MID
	wait $H2MID
	eq h2load_mid_stream_no_garbage "$(only_names "$TMP/h2mid.json" http2 '^(GET /users/\{id\}|\[undecoded\])$')" ""
	req=$(ep "$TMP/h2mid.json" http2 server . req_count)
	resp=$(ep "$TMP/h2mid.json" http2 server . resp_count)
	# at most the 4 streams open when the capture stopped are unanswered, and those whose
	# response records the ring buffer dropped
	drops=$(sed -n 's/.* \([0-9]*\) dropped (ring buffer full).*/\1/p' "$TMP/h2mid.json.err")
	if [ "$req" -gt 100 ] && [ "$resp" -ge $((req - 4 - ${drops:-0})) ]; then pass h2load_mid_stream_streams
	else fail h2load_mid_stream_streams "requests $req, answered $resp, ${drops:-?} records dropped"; fi
	u=$(jq '.undecoded_headers' "$TMP/h2mid.json")
	if [ "$u" -gt 0 ]; then pass h2load_mid_stream_undecoded; else fail h2load_mid_stream_undecoded "undecoded_headers $u"; fi
else
	fail nghttpd_start "nghttpd did not answer"; cat "$TMP/nghttpd.log"
fi

# --- nginx: HTTP/2 over TLS (ALPN h2) -------------------------------------------------------
nginx_run "127.0.0.1:18220 ssl http2"
if wait_for curl -skf --http2 https://127.0.0.1:18220/ok; then
	workers=$(pgrep -P $NGINX | paste -sd, -)
	rec_bg "$TMP/tls.json" -p "$NGINX,$workers"
	"$GALATOP" record --type l7 -o "$TMP/tlscli.json" -- curl -sk --http2 \
		-w '%{http_version} %{http_code}\n' -o /dev/null "https://127.0.0.1:18220/ok?[1-200]" \
		-o /dev/null "https://127.0.0.1:18220/missing?[1-30]" -o /dev/null \
		"https://127.0.0.1:18220/fail?[1-10]" >"$TMP/tlscli.txt" 2>"$TMP/tlscli.err"
	rec_stop
	c() { grep -c "^2 $1\$" "$TMP/tlscli.txt"; }
	eq tls_h2_server_count "$(ep "$TMP/tls.json" http2 server '^GET /ok$' req_count)" "$(c 200)" "curl's HTTP/2 200s"
	eq tls_h2_server_404 "$(ep "$TMP/tls.json" http2 server '^GET /missing$' err_4xx)" "$(c 404)"
	eq tls_h2_server_500 "$(ep "$TMP/tls.json" http2 server '^GET /fail$' err_5xx)" "$(c 500)"
	eq tls_h2_client_count "$(ep "$TMP/tlscli.json" http2 client . req_count)" 240
	eq tls_h2_client_errors "$(ep "$TMP/tlscli.json" http2 client . err_count)" $(($(c 404) + $(c 500)))
	eq tls_h2_session_ssl "$(jq -r '[.sessions[] | select(.protocol == "http2")][0].ssl' "$TMP/tls.json")" 1
	eq tls_h2_not_parsed_as_plain "$(jq '[.sessions[] | select(.ssl == 0)] | length' "$TMP/tls.json")" 0
else
	fail nginx_h2_start "nginx did not answer over HTTP/2"; cat "$TMP/nginx/error.log" "$TMP/nginx/out.log"
fi

# --- gRPC (python3-grpcio) ------------------------------------------------------------------
GP=tests/record/h2/grpc_pair.py
python3 $GP server 18230 >"$TMP/grpcsrv.log" 2>&1 &
GSRV=$!
PIDS="$PIDS $GSRV"
if wait_for grep -q ready "$TMP/grpcsrv.log"; then
	rec_bg "$TMP/grpcsrv.json" -p $GSRV
	GT_CLIENT_TIMES=$TMP/grpccli.times "$GALATOP" record --type l7 -o "$TMP/grpccli.json" \
		-o "$TMP/grpccli.jsonl" -- python3 $GP client 18230 500 20 3 >"$TMP/grpccli.txt" 2>&1
	sleep 1 # the server reads the client's last RST_STREAM after the client is gone
	rec_stop
	cat "$TMP/grpccli.txt"
	g() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$TMP/grpccli.txt"; }
	for side in client server; do
		f=$TMP/grpccli.json; [ $side = server ] && f=$TMP/grpcsrv.json
		eq grpc_${side}_echo "$(ep "$f" grpc $side '^/galatop.Test/Echo$' resp_count)" "$(g ok)"
		eq grpc_${side}_echo_ok "$(ep "$f" grpc $side '^/galatop.Test/Echo$' err_count)" 0
		eq grpc_${side}_fail "$(ep "$f" grpc $side '^/galatop.Test/Fail$' err_count)" 20 "INVALID_ARGUMENT"
		eq grpc_${side}_cancelled "$(ep "$f" grpc $side '^/galatop.Test/Slow$' err_count)" 3 "DEADLINE_EXCEEDED"
		eq grpc_${side}_errors "$(ep "$f" grpc $side . err_count)" "$(g err)"
		eq grpc_${side}_no_http2_rows "$(jq '[.sessions[] | select(.protocol == "http2")] | length' "$f")" 0
	done
	eq grpc_status_text "$(jq -r '[.endpoints[] | select(.endpoint == "/galatop.Test/Fail")][0].slowest[0].errmsg' "$TMP/grpccli.json")" \
		"INVALID_ARGUMENT: bad request"
	# tests/tools/h2client's gRPC calls time each one right around its system calls: galatop's
	# median within 10% of its own.
	GT_CLIENT_TIMES=$TMP/grpch2c.times "$GALATOP" record --type l7 -o "$TMP/grpch2c.json" \
		-o "$TMP/grpch2c.jsonl" -- "$TOOLS/h2client" 127.0.0.1 18230 /galatop.Test/Echo 3000 grpc \
		>"$TMP/grpch2c.txt" 2>&1
	hc() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/grpch2c.txt"; }
	eq grpc_h2client_count "$(ep "$TMP/grpch2c.json" grpc client '^/galatop.Test/Echo$' resp_count)" "$(hc requests)"
	eq grpc_h2client_ok "$(ep "$TMP/grpch2c.json" grpc client '^/galatop.Test/Echo$' err_count)" 0
	client_p50 grpc_h2client_p50 "$TMP/grpch2c.json" grpc client '^/galatop.Test/Echo$' "$(hc p50_ns)" 0 \
		"$(hc nivcsw)" "$(hc requests)" "$(awk -v c="$(hc cpu_ns)" -v n="$(hc requests)" 'BEGIN { printf "%d", c / n }')" 10
	nested grpc_h2client_nested "$TMP/grpch2c.jsonl" grpc '^/galatop.Test/Echo$' "$TMP/grpch2c.times"
	# The Python client times each call around grpcio's C core; galatop sees the calls'
	# system calls inside that, and the server's time inside those: each call's figure within
	# the client's clock readings (the rest is Python's and the C core's work before the first
	# byte and after the last: docs/l7.md).
	p50_order grpc_p50 "$(ep "$TMP/grpcsrv.json" grpc server '^/galatop.Test/Echo$' latency_p50)" \
		"$(ep "$TMP/grpccli.json" grpc client '^/galatop.Test/Echo$' latency_p50)" \
		"$(awk -v u="$(g p50_us)" 'BEGIN { printf "%d", u * 1000 }')"
	nested grpc_python_nested "$TMP/grpccli.jsonl" grpc '^/galatop.Test/Echo$' "$TMP/grpccli.times"

	# --- mid-stream: the capture begins on a channel already busy --------------------------
	python3 $GP client 18230 100 0 0 "$TMP/go" 300 10 >"$TMP/mid.txt" 2>&1 &
	MID=$!
	PIDS="$PIDS $MID"
	wait_for grep -q phase1 "$TMP/mid.txt"
	rec_bg "$TMP/mid.json" -p $GSRV
	touch "$TMP/go"
	wait $MID
	sleep 1
	rec_stop
	cat "$TMP/mid.txt"
	n=$(jq '[.endpoints[] | .req_count] | add // 0' "$TMP/mid.json")
	eq grpc_mid_stream_count "$n" 310 "the calls made after the capture began"
	bad=$(only_names "$TMP/mid.json" grpc '^(/galatop\.Test/(Echo|Fail)|\[undecoded\])$';
	      only_names "$TMP/mid.json" http2 '^\[undecoded\]$')
	eq grpc_mid_stream_no_garbage "$bad" ""
	u=$(jq '.undecoded_headers' "$TMP/mid.json")
	if [ "$u" -gt 0 ] && grep -q "$u HTTP/2 header blocks not decoded" "$TMP/mid.json.err"; then
		pass grpc_mid_stream_undecoded_counted
	else
		fail grpc_mid_stream_undecoded_counted "undecoded_headers $u; $(grep recorded "$TMP/mid.json.err")"
	fi
else
	fail grpc_start "the gRPC server did not start"; cat "$TMP/grpcsrv.log"
fi
