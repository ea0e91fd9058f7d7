#!/bin/sh
# galatop record --type l7 over Unix-domain sockets: redis-server, PostgreSQL, MariaDB and
# nginx started here listening on socket paths under $TMP only (no TCP), driven by their own
# clients (redis-benchmark, pgbench, the mariadb client, tests/tools/httpclient). Counts must
# equal the clients' own, errors too, latencies agree with what the clients measure, and each
# session names the socket path and the peer's pid. Needs root and BPF.
. tests/lib.sh
. tests/record/l7_lib.sh
need_root_bpf l7_uds || exit 0
for c in jq socat nginx redis-server redis-benchmark redis-cli pgbench mariadbd mariadb; do
	command -v $c >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
	command -v $c >/dev/null 2>&1 || { skip l7_uds "$c is missing (make deps installs it)"; exit 0; }
done
[ -x "$TOOLS/cputime" ] && [ -x "$TOOLS/httpclient" ] ||
	{ fail l7_uds "test workloads not built (make tools)"; exit 0; }
chmod 755 "$TMP"
# uds_session NAME FILE PROTO ROLE PATH PEER_PID: the first session of PROTO/ROLE is a
# Unix-domain one at PATH whose peer is PEER_PID.
uds_session() {
	got=$(jq -r --arg p "$3" --arg r "$4" \
		'[.sessions[] | select(.protocol == $p and .l7_role == $r)][0] | "\(.l4_role) \(.path) \(.peer_pid)"' "$2")
	eq "$1" "$got" "unix $5 $6"
}

# --- Redis ---------------------------------------------------------------------------------
last_cpu=$(($(nproc) - 1))
RSOCK=$TMP/redis.sock
taskset -c $last_cpu redis-server --port 0 --unixsocket "$RSOCK" --save '' --appendonly no \
	--dir "$TMP" --daemonize no >"$TMP/redis.log" 2>&1 &
RPID=$!
PIDS="$PIDS $RPID"
if wait_for redis-cli -s "$RSOCK" ping; then
	"$GALATOP" record --type l7 -o "$TMP/redis.json" -- taskset -c 0 "$TOOLS/cputime" \
		redis-benchmark -s "$RSOCK" -n 20000 -c 8 -t set,get -P 1 --csv \
		>"$TMP/redis.csv" 2>"$TMP/redis.err"
	for t in SET GET; do
		eq "uds_redis_${t}_count" "$(ep "$TMP/redis.json" redis client "^$t" req_count)" 20000 \
			"redis-benchmark sent 20000"
	done
	eq uds_redis_no_errors "$(sess "$TMP/redis.json" redis client err_count)" 0
	# redis-benchmark's percentiles come from an HDR histogram whose lowest value is 10 us:
	# its unit is 8 us (2^3) up to 16 ms, and it reports a bucket's top (39, 47, 55 us...):
	# its median is known to 8 us (R).
	b=$(awk -F'"' '$2 == "GET" { print $10 * 1000000 }' "$TMP/redis.csv")
	nv=$(sed -n 's/^nivcsw=//p' "$TMP/redis.err")
	d=$(awk -v c="$(sed -n 's/^cpu_ns=//p' "$TMP/redis.err")" 'BEGIN { printf "%d", c / 40000 }')
	client_p50 uds_redis_p50 "$TMP/redis.json" redis client '^GET' "$b" 8000 "$nv" 20000 "$d"
	# One connection: redis-benchmark reads its clock right before its write and before its
	# read, with no other connection's events in between: within 10% of galatop's, to its
	# histogram's 8 us. (With 8, one event loop serves them all and its figure ran 4-13% above
	# galatop's.)
	"$GALATOP" record --type l7 -o "$TMP/redis1.json" -- taskset -c 0 "$TOOLS/cputime" \
		redis-benchmark -s "$RSOCK" -n 20000 -c 1 -t get -P 1 --csv \
		>"$TMP/redis1.csv" 2>"$TMP/redis1.err"
	eq uds_redis_c1_count "$(ep "$TMP/redis1.json" redis client '^GET' req_count)" 20000
	client_p50 uds_redis_c1_p50 "$TMP/redis1.json" redis client '^GET' \
		"$(awk -F'"' '$2 == "GET" { print $10 * 1000000 }' "$TMP/redis1.csv")" 8000 \
		"$(sed -n 's/^nivcsw=//p' "$TMP/redis1.err")" 20000 \
		"$(awk -v c="$(sed -n 's/^cpu_ns=//p' "$TMP/redis1.err")" 'BEGIN { printf "%d", c / 20000 }')" 10
	uds_session uds_redis_session "$TMP/redis.json" redis client "$RSOCK" "$RPID"
	"$GALATOP" record --type l7 -o "$TMP/rediserr.json" -- redis-cli -s "$RSOCK" NOSUCHCMD x \
		>/dev/null 2>&1
	eq uds_redis_error_reply "$(sess "$TMP/rediserr.json" redis client err_count)" 1
	# The server's side: its peer is the client process.
	rec_bg "$TMP/redsrv.json" -p "$RPID"
	redis-benchmark -s "$RSOCK" -n 5000 -c 1 -t set -P 1 -q >/dev/null 2>&1 &
	BPID=$!
	wait $BPID
	rec_stop
	eq uds_redis_server_count "$(ep "$TMP/redsrv.json" redis server '^SET' req_count)" 5000
	uds_session uds_redis_server_session "$TMP/redsrv.json" redis server "$RSOCK" "$BPID"
else
	fail uds_redis_start "redis-server did not answer"; cat "$TMP/redis.log"
fi

# --- PostgreSQL: pgbench's per-transaction log gives its own median --------------------------
if pg_start -p 18432 -c listen_addresses=; then
	PGH="-h $TMP/pgsock -p 18432 -U postgres"
	if wait_for "$PG_BIN/pg_isready" $PGH &&
		"$PG_BIN/createdb" $PGH bench >/dev/null 2>&1 &&
		pgbench -i -s 1 $PGH bench >"$TMP/pg/init2.log" 2>&1; then
		(cd "$TMP/pg" && "$GALATOP" record --type l7 -o "$TMP/pg.json" -- "$TOOLS/cputime" \
			pgbench -n -S -M simple -t 3000 -c 1 -l --log-prefix=tx $PGH bench \
			>"$TMP/pg.txt" 2>"$TMP/pg.err")
		n=$(awk -F'[:/ ]+' '/number of transactions actually processed/ { print $6 }' "$TMP/pg.txt")
		eq uds_pgsql_count "$(ep "$TMP/pg.json" pgsql client '^SELECT pgbench_accounts' req_count)" "$n" \
			"pgbench: $n transactions"
		# The log's third column is each transaction's latency in us (one SELECT each): the
		# client's median, against galatop's as client_p50 bounds it (pgbench's CPU time per
		# transaction and its preemptions).
		want=$(cat "$TMP"/pg/tx.* | awk '{ print $3 }' | sort -n |
			awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] * 1000 }')
		d=$(awk -v c="$(sed -n 's/^cpu_ns=//p' "$TMP/pg.err")" -v n="$n" 'BEGIN { printf "%d", c / n }')
		client_p50 uds_pgsql_p50 "$TMP/pg.json" pgsql client '^SELECT pgbench_accounts' "$want" 1000 \
			"$(sed -n 's/^nivcsw=//p' "$TMP/pg.err")" "$n" "$d" 10
		# The peer is the postmaster (it listened; runuser is its parent).
		uds_session uds_pgsql_session "$TMP/pg.json" pgsql client "$TMP/pgsock/.s.PGSQL.18432" \
			"$(head -1 "$TMP/pg/data/postmaster.pid")"
		"$GALATOP" record --type l7 -o "$TMP/pg-err.json" -- "$PG_BIN/psql" $PGH \
			-c 'SELECT * FROM l7_no_such_table' bench >/dev/null 2>&1
		eq uds_pgsql_error "$(sess "$TMP/pg-err.json" pgsql client err_count)" 1
	else
		fail uds_pgsql_start "PostgreSQL did not start"; tail -5 "$TMP/pg/server.log" "$TMP/pg/init.log"
	fi
else
	skip uds_pgsql "no PostgreSQL server binaries"
fi

# --- MariaDB -------------------------------------------------------------------------------
if my_start --skip-networking; then
	MY="mariadb -S $TMP/my/sock -u root"
	if wait_for $MY -e 'SELECT 1'; then
		my_queries "$TMP/my/q.sql" "SELECT * FROM l7_no_such_table;
SELECT * FROM l7_nor_this;"
		"$GALATOP" record --type l7 -o "$TMP/my.json" -- $MY --force l7db \
			<"$TMP/my/q.sql" >/dev/null 2>"$TMP/my/client.err"
		eq uds_mysql_count "$(ep "$TMP/my.json" mysql client '^SELECT l7t' req_count)" 2000
		eq uds_mysql_error "$(sess "$TMP/my.json" mysql client err_count)" \
			"$(grep -c '^ERROR' "$TMP/my/client.err")" "the client's ERROR lines"
		uds_session uds_mysql_session "$TMP/my.json" mysql client "$TMP/my/sock" "$MY_PID"
	else
		fail uds_mysql_start "MariaDB did not answer"; tail -5 "$TMP/my/server.log"
	fi
else
	fail uds_mysql_start "mariadb-install-db failed"; tail -5 "$TMP/my/init.log"
fi

# --- nginx on unix: -------------------------------------------------------------------------
NSOCK=$TMP/nginx/http.sock
nginx_run "unix:$NSOCK"
if wait_for curl -sf --unix-socket "$NSOCK" http://l7/ok; then
	workers=$(pgrep -P $NGINX | paste -sd, -)
	rec_bg "$TMP/http.json" -p "$NGINX,$workers"
	curl -s -o /dev/null --unix-socket "$NSOCK" "http://l7/ok?[1-300]"
	curl -s -o /dev/null -w '%{http_code}\n' --unix-socket "$NSOCK" "http://l7/missing?[1-50]" \
		>"$TMP/curl404.txt"
	rec_stop
	eq uds_http_server_count "$(ep "$TMP/http.json" http server '^GET /ok$' req_count)" 300 \
		"curl sent 300"
	eq uds_http_server_404 "$(ep "$TMP/http.json" http server '^GET /missing$' err_4xx)" \
		"$(grep -c '^404$' "$TMP/curl404.txt")" "curl's 404s"
	eq uds_http_server_session "$(jq -r '[.sessions[] | select(.protocol == "http")][0] | "\(.l4_role) \(.path)"' "$TMP/http.json")" \
		"unix $NSOCK"
	# A round trip of some 12 us: galatop's clock runs from within the send (the peer told of
	# the data) to within the read (the data moved), and the two system calls' entry and exit
	# around it (2 us here) are the client's own, beyond 10%: bounded by its CPU time only.
	GT_CLIENT_TIMES=$TMP/hc.times "$GALATOP" record --type l7 -o "$TMP/hc.json" -o "$TMP/hc.jsonl" \
		-- taskset -c 0 "$TOOLS/httpclient" "unix:$NSOCK" 0 /ok 5000 >"$TMP/hc.txt" 2>&1
	hc() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/hc.txt"; }
	eq uds_http_client_count "$(ep "$TMP/hc.json" http client '^GET /ok$' req_count)" "$(hc requests)"
	client_p50 uds_http_client_p50 "$TMP/hc.json" http client '^GET /ok$' "$(hc p50_ns)" 0 \
		"$(hc nivcsw)" "$(hc requests)" "$(awk -v c="$(hc cpu_ns)" -v n="$(hc requests)" 'BEGIN { printf "%d", c / n }')"
	nested uds_http_client_nested "$TMP/hc.jsonl" http '^GET /ok$' "$TMP/hc.times"
	uds_session uds_http_client_session "$TMP/hc.json" http client "$NSOCK" "$NGINX"
else
	fail uds_nginx_start "nginx did not answer"; cat "$TMP/nginx/error.log" "$TMP/nginx/out.log"
fi
# --- HTTP over datagram and seqpacket sockets ------------------------------------------------
# No Debian server speaks these protocols over a datagram or seqpacket socket: the test's own
# server (tests/record/l7/uds_http_server.py: a request per message, its answer to the
# sender) against httpclient (a connected socket) and socat (an unconnected datagram socket
# bound to a path of its own, sendto: one request per run), each counting its own.
for kind in dgram seqpacket; do
	S=$TMP/http_$kind.sock
	/usr/bin/python3 tests/record/l7/uds_http_server.py $kind "$S" "$TMP/srv_$kind.counts" \
		>"$TMP/srv_$kind.log" 2>&1 &
	SRV=$!
	PIDS="$PIDS $SRV"
	if ! wait_for grep -q ready "$TMP/srv_$kind.log"; then
		fail "uds_${kind}_start" "$(cat "$TMP/srv_$kind.log")"; continue
	fi
	l4=unix; [ $kind = dgram ] && l4=unix_dgram
	rec_bg "$TMP/srv_$kind.json" -p $SRV
	mode=unixseq; [ $kind = dgram ] && mode=unixdgram
	GT_CLIENT_TIMES=$TMP/hc_$kind.times "$GALATOP" record --type l7 -o "$TMP/hc_$kind.json" \
		-o "$TMP/hc_$kind.jsonl" -- taskset -c 0 "$TOOLS/httpclient" "$mode:$S" 0 /ok 5000 \
		>"$TMP/hc_$kind.txt" 2>&1
	"$GALATOP" record --type l7 -o "$TMP/hc404_$kind.json" -- \
		"$TOOLS/httpclient" "$mode:$S" 0 /missing 40 >/dev/null 2>&1
	if [ $kind = dgram ]; then
		S=$S TMP=$TMP "$GALATOP" record --type l7 -o "$TMP/socat.json" -- sh -c '
			for i in 1 2 3 4 5 6 7 8 9 10; do
				printf "GET /ok HTTP/1.1\r\nHost: l7\r\n\r\n" |
					socat -t 0.5 - "UNIX-SENDTO:$S,bind=$TMP/socat$i.sock"
			done' >"$TMP/socat.txt" 2>"$TMP/socat.err"
		eq uds_dgram_socat_count "$(ep "$TMP/socat.json" http client '^GET /ok$' resp_count)" \
			"$(grep -c '^HTTP/1.1 200' "$TMP/socat.txt")" "socat's answers"
		# Its peer is the path it sent to, not its own.
		eq uds_dgram_socat_session "$(jq -r '[.sessions[] | "\(.l4_role) \(.l7_role) \(.path)"] | unique | join(",")' "$TMP/socat.json")" \
			"unix_dgram client $S"
	fi
	rec_stop
	# The round trips are as short as httpclient's against nginx above: the same bound.
	hc() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/hc_$kind.txt"; }
	F=$TMP/hc_$kind.json
	eq "uds_${kind}_client_count" "$(ep "$F" http client '^GET /ok$' req_count)" "$(hc requests)" \
		"httpclient's count"
	eq "uds_${kind}_client_404" "$(ep "$TMP/hc404_$kind.json" http client '^GET /missing$' err_4xx)" 40
	client_p50 "uds_${kind}_client_p50" "$F" http client '^GET /ok$' "$(hc p50_ns)" 0 \
		"$(hc nivcsw)" "$(hc requests)" "$(awk -v c="$(hc cpu_ns)" -v n="$(hc requests)" 'BEGIN { printf "%d", c / n }')"
	nested "uds_${kind}_client_nested" "$TMP/hc_$kind.jsonl" http '^GET /ok$' "$TMP/hc_$kind.times"
	# A connected datagram socket has no SO_PEERCRED: its peer pid is 0.
	peer=$SRV; [ $kind = dgram ] && peer=0
	got=$(jq -r '[.sessions[] | select(.protocol == "http")][0] | "\(.l4_role) \(.l7_role) \(.path) \(.peer_pid)"' "$F")
	eq "uds_${kind}_client_session" "$got" "$l4 client $S $peer"
	kill $SRV; wait $SRV 2>/dev/null
	sc() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/srv_$kind.counts"; }
	F=$TMP/srv_$kind.json
	eq "uds_${kind}_server_count" "$(ep "$F" http server . req_count)" "$(sc requests)" "the server's count"
	eq "uds_${kind}_server_404" "$(ep "$F" http server '^GET /missing$' err_4xx)" "$(sc errors)"
	got=$(jq -r '[.sessions[] | select(.protocol == "http")] | map("\(.l4_role) \(.l7_role) \(.path)") | unique | join(",")' "$F")
	eq "uds_${kind}_server_session" "$got" "$l4 server $S"
done
if no_gt_progs; then pass l7_uds_no_leftover_programs; else fail l7_uds_no_leftover_programs; fi
