# Helpers of the L7 record tests (tests/record/test_l7*.sh), sourced after tests/lib.sh: servers
# started here go in PIDS and are stopped at exit with $TMP removed; reading counts out of a
# recording's JSON, comparing latencies with a client's own figures.
PIDS=""
l7_cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap l7_cleanup EXIT INT TERM
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1)

# wait_for CMD...: polls CMD for up to 20 s.
wait_for() {
	i=0
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -gt 200 ] && return 1; sleep 0.1
	done
}
# rec_bg OUT ARGS...: starts record --type l7 -o OUT ARGS in the background; returns once it
# records. rec_stop ends it (SIGINT) and waits for its files.
rec_bg() {
	out=$1; shift
	"$GALATOP" record --type l7 -o "$out" "$@" 2>"$out.err" &
	REC=$!
	i=0
	until grep -q 'recording L7' "$out.err" 2>/dev/null; do
		why="exited"; kill -0 $REC 2>/dev/null || break
		i=$((i + 1)); why="not ready in 30 s"; [ $i -gt 300 ] && break; sleep 0.1
	done
	grep -q 'recording L7' "$out.err" 2>/dev/null && return 0
	# The checks on its output fail next; the log says why.
	echo "rec_bg $out: the recording $why: $(tail -3 "$out.err" | tr '\n' ' ')"
	return 1
}
rec_stop() { kill -INT $REC; wait $REC; }
# ep FILE PROTO ROLE PATTERN FIELD: FIELD summed over endpoints of PROTO/ROLE whose name
# matches the jq regex PATTERN (case-insensitive).
ep() {
	jq -r --arg p "$2" --arg r "$3" --arg re "$4" --arg f "$5" \
		'[.endpoints[] | select(.protocol == $p and .l7_role == $r and (.endpoint | test($re; "i"))) | .[$f]] | add // 0' "$1"
}
# sess FILE PROTO ROLE FIELD: FIELD summed over sessions.
sess() {
	jq -r --arg p "$2" --arg r "$3" --arg f "$4" \
		'[.sessions[] | select(.protocol == $p and .l7_role == $r) | .[$f]] | add // 0' "$1"
}
eq() { # NAME GOT WANT [WHAT]
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got $2, want $3${4:+ ($4)}"; fi
}
# client_p50 NAME FILE PROTO ROLE RE B R NIVCSW N D [PCT]: the client's own median latency B (ns,
# rounded to R ns) of N requests against galatop's latencies of the same requests (the first
# endpoint of PROTO/ROLE matching RE). The two clocks differ, request by request, only by the
# client's own work around its two system calls: between its clock and the send, and the
# send itself (galatop starts once the send has moved its bytes), and between its clock and
# the exit of the read that moved the response's end (galatop ends there; redis-benchmark reads its clock at
# the start of the read handler, tests/tools/httpclient after the read). That work is at
# most D, the client's CPU time per send/read cycle, unless the client was preempted in it:
# then the waits for the CPU count too, which galatop cannot see. At most NIVCSW requests
# (the client's involuntary context switches), a share f = NIVCSW/N, are so preempted; for
# the others the two differ by D at most. So the client's median lies between galatop's
# latencies at quantiles 0.5 - f and 0.5 + f (the outer edges of their buckets), widened by
# D, R and 0.2% (redis-benchmark's 3-digit histogram). On a quiet machine f is tiny and the
# bounds are tight; under load they widen by exactly the preemptions counted. With PCT, galatop's
# median must also be within PCT% of the client's (a latency between those quantiles, widened
# by R only): the target figure, tighter than D where the client's CPU time per request is a
# large share of its latency.
client_p50() {
	[ -n "$8" ] || { fail "$1" "the client's preemptions are unknown"; return; }
	sel='[.endpoints[] | select(.protocol == $p and .l7_role == $r and (.endpoint | test($re; "i")))][0]'
	# at QUANTILE EDGE: galatop's latency at QUANTILE, the lower (0) or upper (1) edge of its bucket
	at() {
		jq -r --arg p "$3" --arg r "$4" --arg re "$5" --argjson q "$q" --argjson e "$edge" "$sel.latency_hist as \$h |
			reduce \$h.buckets[] as \$b ({ c: 0, v: null }; if .v == null then .c += \$b[2] |
				(if .c >= \$h.count * \$q then .v = \$b[\$e] else . end) else . end) | .v // 0" "$2"
	}
	f=$(awk -v n="$8" -v t="$9" 'BEGIN { print n / t }')
	q=$(awk -v f="$f" 'BEGIN { q = 0.5 - f; print (q < 0 ? 0 : q) }') edge=0; lo=$(at "$@")
	q=$(awk -v f="$f" 'BEGIN { q = 0.5 + f; print (q > 1 ? 1 : q) }') edge=1; hi=$(at "$@")
	g=$(jq -r --arg p "$3" --arg r "$4" --arg re "$5" "$sel.latency_p50" "$2")
	why="client p50 $6 ns; galatop p50 $g ns ($(awk -v b="$6" -v g="$g" 'BEGIN { printf "%+.1f%%", (b > 0 ? 100 * (g - b) / b : 0) }')), $lo-$hi ns at p50 -/+ $f (client preempted $8 times in $9 requests), D=${10} ns${11:+, within ${11}%} (load $(cut -d' ' -f1-3 /proc/loadavg))"
	echo "$1: $why"
	if awk -v b="$6" -v lo="$lo" -v hi="$hi" -v r="$7" -v d="${10}" -v p="${11:-}" \
		'BEGIN { exit !(b > 0 && hi > 0 && b >= (lo - d) * 0.998 - r && b <= (hi + d) * 1.002 + r &&
			(p == "" || (lo - r <= b * (1 + p / 100) && hi + r >= b * (1 - p / 100)))) }'
	then pass "$1"
	else fail "$1" "$why"; fi
}
# nested NAME JSONL PROTO RE TIMES: request by request, galatop's clock readings lie within the
# client's own. TIMES has a line "T0 T1" per request, in order, the client's CLOCK_MONOTONIC
# (galatop's clock) before its first system call for the request and after its last (the
# tools write it where $GT_CLIENT_TIMES says); they are paired with the answered requests of
# PROTO whose endpoint matches RE (case-insensitive) in JSONL, in the order they began. Each
# must have T0 <= req_start_ns <= resp_end_ns <= T1: the same count, and no request of
# galatop's starting before the client's clock or ending after it, whatever the load. Prints
# the medians of the two parts the client's clock has beyond galatop's: where the difference
# between their figures goes.
nested() {
	jq -r --arg p "$3" --arg re "$4" 'select(.protocol == $p and (.endpoint | test($re; "i")) and
		(.no_response | not)) | "\(.req_start_ns) \(.resp_end_ns)"' "$2" | sort -n >"$2.pairs"
	n=$(wc -l <"$5") got=$(wc -l <"$2.pairs")
	if [ "$n" != "$got" ] || [ "$n" -eq 0 ]; then
		fail "$1" "the client timed $n requests, galatop has $got"; return
	fi
	nest=$2.nest
	paste -d' ' "$5" "$2.pairs" >"$nest"
	bad=$(awk '!($1 <= $3 && $3 <= $4 && $4 <= $2) { print "request " NR ": client " $1 "-" $2 ", galatop " $3 "-" $4; exit }' "$nest")
	med() { awk "{ print $1 }" "$nest" | sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] / 1000 }'; }
	why="$n requests; the client's clock to galatop's start: median $(med '$3 - $1') us, galatop's end to the client's clock: $(med '$2 - $4') us (load $(cut -d' ' -f1-3 /proc/loadavg))"
	echo "$1: $why"
	if [ -z "$bad" ]; then pass "$1"; else fail "$1" "$bad; $why"; fi
}
# nginx_run LISTEN...: nginx serving /ok (200), /missing (404), /fail (500) and $TMP/www's
# /static/ on each LISTEN ("127.0.0.1:18180", "127.0.0.1:18143 ssl http2"), with a
# self-signed certificate, from $TMP/nginx; started in the background, its pid in NGINX.
nginx_run() {
	mkdir -p "$TMP/nginx/logs" "$TMP/www/static"
	openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 \
		-keyout "$TMP/nginx/key.pem" -out "$TMP/nginx/cert.pem" >/dev/null 2>&1
	{
		cat <<EOF2
daemon off;
worker_processes 1;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $TMP/nginx/body;
	proxy_temp_path $TMP/nginx/proxy;
	fastcgi_temp_path $TMP/nginx/fcgi;
	uwsgi_temp_path $TMP/nginx/uwsgi;
	scgi_temp_path $TMP/nginx/scgi;
	keepalive_requests 100000;
	server {
EOF2
		for l in "$@"; do printf '\t\tlisten %s;\n' "$l"; done
		cat <<EOF2
		ssl_certificate $TMP/nginx/cert.pem;
		ssl_certificate_key $TMP/nginx/key.pem;
		location = /ok { return 200 "ok\n"; }
		location = /missing { return 404; }
		location = /fail { return 500; }
		location /static/ { root $TMP/www; }
	}
}
EOF2
	} >"$TMP/nginx/nginx.conf"
	nginx -c "$TMP/nginx/nginx.conf" -p "$TMP/nginx" >"$TMP/nginx/out.log" 2>&1 &
	NGINX=$!
	PIDS="$PIDS $NGINX"
}
# sess FILE PROTO ROLE FIELD: FIELD summed over sessions.
sess() {
	jq -r --arg p "$2" --arg r "$3" --arg f "$4" \
		'[.sessions[] | select(.protocol == $p and .l7_role == $r) | .[$f]] | add // 0' "$1"
}
# within A B PCT [ABS]: |A - B| <= PCT% of B (+ ABS)
within() { awk -v a="$1" -v b="$2" -v p="$3" -v e="${4:-0}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100 + e) }'; }
# p50_order NAME SERVER CLIENT OWN: the medians (ns) galatop saw on the server's side and on the
# client's, and the client's own: each holds the one before it.
p50_order() {
	why="p50 server $2 ns <= galatop client $3 ns <= the client's own $4 ns (load $(cut -d' ' -f1-3 /proc/loadavg))"
	echo "$1: $why"
	if [ "$2" -gt 0 ] && [ "$2" -le "$3" ] && [ "$3" -le "$4" ]; then pass "$1"; else fail "$1" "$why"; fi
}
# pg_start ARGS...: a private PostgreSQL (trust authentication, user postgres) under $TMP/pg,
# its socket in $TMP/pgsock, started with ARGS (-p PORT, listen_addresses...) in the
# background (PIDS). False without PostgreSQL or the postgres user.
pg_start() {
	[ -n "$PG_BIN" ] && id postgres >/dev/null 2>&1 || return 1
	mkdir -p "$TMP/pg" "$TMP/pgsock"
	chown postgres "$TMP/pg" "$TMP/pgsock"
	runuser -u postgres -- "$PG_BIN/initdb" -D "$TMP/pg/data" -A trust -U postgres >"$TMP/pg/init.log" 2>&1
	runuser -u postgres -- "$PG_BIN/postgres" -D "$TMP/pg/data" -k "$TMP/pgsock" -c fsync=off \
		"$@" >"$TMP/pg/server.log" 2>&1 &
	PIDS="$PIDS $!"
}
# my_start ARGS...: a private MariaDB under $TMP/my (no grant tables), its socket at
# $TMP/my/sock, started with ARGS (networking) in the background (PIDS, MY_PID); false when
# its data directory cannot be made.
my_start() {
	mkdir -p "$TMP/my"
	mariadb-install-db --no-defaults --datadir="$TMP/my/data" --user=root --skip-test-db \
		--auth-root-authentication-method=normal >"$TMP/my/init.log" 2>&1 || return 1
	mariadbd --no-defaults --datadir="$TMP/my/data" "$@" \
		--socket="$TMP/my/sock" --user=root --skip-grant-tables --skip-log-bin \
		--innodb-buffer-pool-size=16M --pid-file="$TMP/my/pid" >"$TMP/my/server.log" 2>&1 &
	MY_PID=$!
	PIDS="$PIDS $!"
}
# my_queries FILE: makes l7db.l7t (3 rows) through $MY and writes to FILE 2000 SELECTs of it
# and the statements ERRORS (one per line) after them.
my_queries() {
	$MY -e 'CREATE DATABASE l7db; CREATE TABLE l7db.l7t (id INT PRIMARY KEY, v INT);
		INSERT INTO l7db.l7t VALUES (1, 10), (2, 20), (3, 30)'
	awk 'BEGIN { for (i = 0; i < 2000; i++) printf "SELECT v FROM l7t WHERE id = %d;\n", i % 3 + 1 }' >"$1"
	printf '%s\n' "$2" >>"$1"
}
