#!/bin/sh
# galatop record --type l7 on Go's crypto/tls: an HTTPS server and client (tests/record/gotls,
# net/http and crypto/tls, no OpenSSL) built here by Debian's go, with symbols and DWARF and
# stripped of both (-ldflags "-s -w": the probes are found through .gopclntab, the fd offsets
# from the built-in table). The client's requests (its own count and errors), and the server's
# side of the same traffic, must be counted exactly, as TLS sessions (ssl = 1), the ciphertext
# never parsed as plaintext, and the medians ordered as the clocks are read (server <= galatop's
# client side <= the client's own). Then gRPC-Go (tests/record/gogrpc, built against Debian's
# golang-google-grpc-dev): calls and failed calls counted on both sides. Needs root and BPF.
. tests/lib.sh
. tests/record/l7_lib.sh
need_root_bpf l7_gotls || exit 0
GO=/usr/bin/go
[ -x $GO ] || { skip l7_gotls "Debian's golang-go is not installed (make deps)"; exit 0; }
for c in jq openssl; do
	command -v $c >/dev/null 2>&1 || { skip l7_gotls "$c is missing (make deps installs it)"; exit 0; }
done
mkdir -p "$TMP/src"
cp tests/record/gotls/gotls.go "$TMP/src/"
export HOME="$TMP" GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GO111MODULE=off GOFLAGS=
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 \
	-keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1
N=2000
port=18443
for v in "full:" "strip:-s -w"; do
	name=${v%%:*} ldflags=${v#*:}
	B=$TMP/gotls_$name
	if ! (cd "$TMP/src" && CGO_ENABLED=0 $GO build -ldflags "$ldflags" -o "$B" .) \
		>"$TMP/build.err" 2>&1; then
		fail "gotls_${name}_build" "$(head -3 "$TMP/build.err")"; continue
	fi
	if [ -n "$ldflags" ] && readelf -S "$B" | grep -Eq '\.symtab|\.debug_'; then
		fail "gotls_${name}_build" "symbols or DWARF left"; continue
	fi
	port=$((port + 1))
	"$B" server 127.0.0.1:$port "$TMP/cert.pem" "$TMP/key.pem" 2>"$TMP/server_$name.err" &
	SRV=$!
	PIDS="$PIDS $SRV"
	if ! wait_for "$B" client 127.0.0.1:$port 1 /ok; then
		fail "gotls_${name}_start" "$(head -3 "$TMP/server_$name.err")"; continue
	fi
	# The client: its own figures against galatop's; the server's side of the same requests
	# at once.
	rec_bg "$TMP/srv_$name.json" -p $SRV
	GT_CLIENT_TIMES=$TMP/cli_$name.times "$GALATOP" record --type l7 -o "$TMP/cli_$name.json" \
		-o "$TMP/cli_$name.jsonl" -- "$B" client 127.0.0.1:$port $N /ok /missing \
		>"$TMP/cli_$name.txt" 2>"$TMP/cli_$name.err"
	rec_stop
	c() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/cli_$name.txt"; }
	F=$TMP/cli_$name.json
	eq "gotls_${name}_client_count" "$(ep "$F" http client '^GET /ok$' req_count)" $N "the client sent $N"
	eq "gotls_${name}_client_all" "$(sess "$F" http client req_count)" "$(c requests)" "the client's count"
	eq "gotls_${name}_client_errors" "$(sess "$F" http client err_4xx)" "$(c errors)" "the client's 404s"
	eq "gotls_${name}_client_ssl" "$(jq -r '[.sessions[] | select(.protocol == "http")][0].ssl' "$F")" 1
	eq "gotls_${name}_not_plain" "$(jq '[.sessions[] | select(.ssl == 0)] | length' "$F")" 0
	# The medians in the order the clocks are read: the server's (its Read's result to its
	# Write's start) inside galatop's client-side one (the client's Write's start to its
	# Read's result) inside the client's own (its clock around the two calls). The client's
	# own is higher by its work around the calls and by the parts of the uprobes' traps
	# outside galatop's clock readings (about 1 us each side, both emulated jumps): bounded as
	# client_p50 does (tests/record/l7_lib.sh), and request by request (nested). The median
	# within 10% of the client's, as the issue asks, plainly too: client_p50's band is wide
	# when the client is preempted about once a request, as Go's client is here.
	got=$(ep "$F" http client '^GET /ok$' latency_p50) want=$(c p50_ns)
	p50_order "gotls_${name}_p50" "$(ep "$TMP/srv_$name.json" http server '^GET /ok$' latency_p50)" \
		"$got" "$want"
	client_p50 "gotls_${name}_client_p50" "$F" http client '^GET /ok$' "$want" 0 "$(c nivcsw)" $N \
		"$(awk -v t="$(c cpu_ns)" -v n="$(c requests)" 'BEGIN { printf "%d", t / n }')" 10
	if within "$got" "$want" 10; then pass "gotls_${name}_p50_within_10pct"
	else fail "gotls_${name}_p50_within_10pct" "galatop $got ns, the client's own $want ns"; fi
	nested "gotls_${name}_client_nested" "$TMP/cli_$name.jsonl" http '^GET /ok$' "$TMP/cli_$name.times"
	F=$TMP/srv_$name.json
	eq "gotls_${name}_server_count" "$(ep "$F" http server '^GET /ok$' req_count)" $N
	# (once seen: nothing on the server side, not reproduced since; its summary says why)
	[ "$(ep "$F" http server '^GET /ok$' req_count)" = $N ] ||
		{ echo "gotls_${name}: the server's recording said:"; cat "$F.err"; }
	eq "gotls_${name}_server_errors" "$(ep "$F" http server '^GET /missing$' err_4xx)" $N
	eq "gotls_${name}_server_ssl" "$(jq -r '[.sessions[] | select(.protocol == "http")][0].ssl' "$F")" 1
done
# --- gRPC-Go over crypto/tls (tests/record/gogrpc, Debian's golang-google-grpc-dev) --------
# The server's accepted connections come wrapped (x/net/netutil's LimitListener): its
# tls.Conn holds the wrapper, which the probes look through to the socket.
G=/usr/share/gocode/src/google.golang.org/grpc
if [ -d $G ]; then
	mkdir -p "$TMP/grpcsrc"
	cp tests/record/gogrpc/gogrpc.go "$TMP/grpcsrc/"
	B=$TMP/gogrpc
	if (cd "$TMP/grpcsrc" && GOPATH=/usr/share/gocode CGO_ENABLED=0 $GO build -o "$B" .) \
		>"$TMP/grpcbuild.err" 2>&1; then
		port=$((port + 1))
		"$B" server 127.0.0.1:$port "$TMP/cert.pem" "$TMP/key.pem" 2>"$TMP/grpcsrv.err" &
		SRV=$!
		PIDS="$PIDS $SRV"
		if wait_for "$B" client 127.0.0.1:$port 1 0; then
			rec_bg "$TMP/grpcsrv.json" -p $SRV
			GT_CLIENT_TIMES=$TMP/grpccli.times "$GALATOP" record --type l7 -o "$TMP/grpccli.json" \
				-o "$TMP/grpccli.jsonl" -- "$B" client 127.0.0.1:$port $N 25 \
				>"$TMP/grpccli.txt" 2>"$TMP/grpccli.err"
			rec_stop
			c() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/grpccli.txt"; }
			for side in client server; do
				F=$TMP/grpccli.json; [ $side = server ] && F=$TMP/grpcsrv.json
				eq "gogrpc_${side}_echo" "$(ep "$F" grpc $side '^/galatop.Test/Echo$' resp_count)" \
					$(($(c requests) - $(c errors))) "the client's answered calls"
				eq "gogrpc_${side}_echo_ok" "$(ep "$F" grpc $side '^/galatop.Test/Echo$' err_count)" 0
				eq "gogrpc_${side}_fail" "$(ep "$F" grpc $side '^/galatop.Test/Fail$' err_count)" \
					"$(c errors)" "the client's failed calls"
				eq "gogrpc_${side}_ssl" "$(jq -r '[.sessions[] | select(.protocol == "grpc") | .ssl] | unique | join(",")' "$F")" 1
				eq "gogrpc_${side}_not_plain" "$(jq '[.sessions[] | select(.ssl == 0)] | length' "$F")" 0
			done
			# The client times each call around grpc-go's Invoke, which hands the frames to
			# the connection's writer goroutine and gets the answer from its reader
			# goroutine: its figure holds galatop's client side (the TLS Write of the
			# HEADERS to the TLS Read of the trailers), which holds the server's; and each
			# call galatop saw lies within the client's clock readings of it.
			got=$(ep "$TMP/grpccli.json" grpc client '^/galatop.Test/Echo$' latency_p50)
			echo "gogrpc_client_p50: galatop $got ns, the client's own $(c p50_ns) ns:" \
				"$(awk -v a="$got" -v b="$(c p50_ns)" 'BEGIN { printf "%.1f%%", 100 * (b - a) / b }') lower"
			p50_order gogrpc_p50 "$(ep "$TMP/grpcsrv.json" grpc server '^/galatop.Test/Echo$' latency_p50)" \
				"$got" "$(c p50_ns)"
			nested gogrpc_nested "$TMP/grpccli.jsonl" grpc '^/galatop.Test/Echo$' "$TMP/grpccli.times"
		else
			fail gogrpc_start "$(head -3 "$TMP/grpcsrv.err")"
		fi
	else
		fail gogrpc_build "$(head -3 "$TMP/grpcbuild.err")"
	fi
else
	skip gogrpc "golang-google-grpc-dev is not installed (make deps)"
fi
if no_gt_progs; then pass l7_gotls_no_leftover_programs; else fail l7_gotls_no_leftover_programs; fi
