#!/bin/sh
# The L7 pane as a user meets it: `sudo galatop` (every process), key 4, on a box running a
# gRPC service and client (python3-grpcio), a Kafka client (tests/tools/kafkaclient against
# librdkafka's mock cluster), a MongoDB client (pymongo against tests/record/l7/mongo_server.py),
# local databases over Unix-domain sockets (redis-benchmark, pgbench, the mariadb client) and
# a Go HTTPS service and client (crypto/tls). Each client runs after the capture has started;
# the pane's rows, read off the screen, must show each client's own request count exactly,
# its errors, and a median (the Go and Kafka clients' within 10% of their own). q leaves no
# program behind.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/l7_lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
export GALATOP_THEMES="$HERE/../../themes"
need_root_bpf live_l7_mix || exit 0
GO=/usr/lib/go-1.19/bin/go
for c in tmux jq kcat /usr/bin/python3 redis-server redis-benchmark pgbench mariadbd mariadb openssl $GO; do
	command -v $c >/dev/null 2>&1 || { skip live_l7_mix "$c is missing (make deps installs it)"; exit 0; }
done
[ -x "$TOOLS/kafkaclient" ] || { skip live_l7_mix "test workloads not built (make tools)"; exit 0; }
trap 'tm kill-server 2>/dev/null; l7_cleanup' EXIT INT TERM
chmod 755 "$TMP" # PostgreSQL runs as postgres
pane() { pane_wait lv "$@"; } # TEXT [TENTHS]

# row PROTO NAME: "REQS ERR% P50" of the pane's row of endpoint NAME (as the pane writes it,
# " (client)" included) and protocol PROTO, from the last capture ($TMP/screen); "" if none.
row() {
	awk -v p="$1" -v n="$2" '{
		for (i = 9; i <= NF; i++) if ($i == p) {
			s = $(i + 1); for (j = i + 2; j <= NF; j++) s = s " " $j
			if (s == n) { print $(i - 8), $(i - 6), $(i - 5); exit }
		}
	}' "$TMP/screen"
}
# want_row NAME PROTO ENDPOINT REQS ERR%: polls the pane (10 s) until the row shows REQS
# requests (a count the client gave: never empty or 0), then checks its error share.
want_row() {
	case "$4" in ''|0|*[!0-9]*) fail "$1" "the client's own count is '$4'"; return;; esac
	i=0
	while :; do
		tm capture-pane -p -t lv >"$TMP/screen" 2>/dev/null
		r=$(row "$2" "$3")
		[ "${r%% *}" = "$4" ] || [ $i -ge 100 ] || { i=$((i + 1)); sleep 0.1; continue; }
		break
	done
	set -- "$@" $r
	if [ "$6" = "$4" ] && [ "$7" = "$5" ]; then pass "$1"
	else fail "$1" "row '$2 $3': '$r', want $4 requests, $5 errors"; fi
}
# ns DURATION: the pane's "315us", "1.2ms", "900ns" in ns.
ns() { echo "$1" | awk '{ v = $1 + 0; u = $1; sub(/^[0-9.]+/, "", u)
	print int(v * (u == "ns" ? 1 : u == "us" ? 1e3 : u == "ms" ? 1e6 : 1e9)) }'; }

# --- the servers --------------------------------------------------------------------------
GP=$HERE/../record/h2/grpc_pair.py
/usr/bin/python3 "$GP" server 18330 >"$TMP/grpcsrv.log" 2>&1 &
PIDS="$PIDS $!"
mkfifo "$TMP/mock.in"
sleep 100000 >"$TMP/mock.in" &
PIDS="$PIDS $!"
kcat -X test.mock.num.brokers=1 -b mock -P -t warm <"$TMP/mock.in" 2>"$TMP/mock.log" &
PIDS="$PIDS $!"
/usr/bin/python3 "$HERE/../record/l7/mongo_server.py" 18331 "$TMP/msrv.counts" >"$TMP/msrv.out" 2>&1 &
PIDS="$PIDS $!"
RSOCK=$TMP/redis.sock
redis-server --port 0 --unixsocket "$RSOCK" --save '' --appendonly no --dir "$TMP" >/dev/null 2>&1 &
PIDS="$PIDS $!"
pg_start -p 18332 -c listen_addresses= || { skip live_l7_mix "no PostgreSQL server binaries"; exit 0; }
my_start --skip-networking || { fail live_l7_mix "mariadb-install-db failed"; exit 0; }
MY="mariadb -S $TMP/my/sock -u root"
PGH="-h $TMP/pgsock -p 18332 -U postgres"
mkdir -p "$TMP/src"
cp "$HERE/../record/gotls/gotls.go" "$TMP/src/"
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 \
	-keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1
(cd "$TMP/src" && HOME="$TMP" GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GO111MODULE=off \
	GOFLAGS= CGO_ENABLED=0 $GO build -o "$TMP/gotls" .) >"$TMP/gobuild.err" 2>&1 ||
	{ fail live_l7_mix "go build: $(head -3 "$TMP/gobuild.err")"; exit 0; }
"$TMP/gotls" server 127.0.0.1:18333 "$TMP/cert.pem" "$TMP/key.pem" 2>"$TMP/gotls.err" &
PIDS="$PIDS $!"
ready=true
wait_for grep -q ready "$TMP/grpcsrv.log" || ready="gRPC server"
wait_for grep -q 'replaced with' "$TMP/mock.log" || ready="Kafka mock cluster"
wait_for grep -q ready "$TMP/msrv.out" || ready="MongoDB peer"
wait_for redis-cli -s "$RSOCK" ping || ready="redis-server"
wait_for "$PG_BIN/pg_isready" $PGH && "$PG_BIN/createdb" $PGH bench >/dev/null 2>&1 &&
	pgbench -i -s 1 $PGH bench >"$TMP/pginit.log" 2>&1 || ready="PostgreSQL"
wait_for $MY -e 'SELECT 1' || ready="MariaDB"
wait_for "$TMP/gotls" client 127.0.0.1:18333 1 /ok || ready="Go HTTPS server"
[ "$ready" = true ] || { fail live_l7_mix "$ready did not start"; exit 0; }
BOOT=$(sed -n 's/.*replaced with \([0-9.:]*\).*/\1/p' "$TMP/mock.log" | head -1)
my_queries "$TMP/my/q.sql" "SELECT * FROM l7_no_such_table;"

# --- the view, every process ----------------------------------------------------------------
tm new-session -d -s lv -x 220 -y 80 "'$GALATOP'; echo \$? > '$TMP/rc'; sleep 30"
pane "samples" 40
tm send-keys -t lv 4
if ! pane "L7 by endpoint" 100; then
	fail live_l7_mix_pane "no L7 pane: $(head -4 "$TMP/screen"; tail -2 "$TMP/screen")"
	exit 0
fi
pane "recording" 30 || sleep 2 # the capture's first message on the status line, if any

# --- the clients, one after the other, each with its own counts ------------------------------
/usr/bin/python3 "$GP" client 18330 300 10 2 >"$TMP/grpccli.txt" 2>&1
g() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$TMP/grpccli.txt"; }
"$TOOLS/kafkaclient" "${BOOT%:*}" "${BOOT#*:}" latency 300 >"$TMP/kc.txt" 2>&1
/usr/bin/python3 "$HERE/../record/l7/mongo_client.py" 18331 >"$TMP/mcli.out" 2>&1
redis-benchmark -s "$RSOCK" -n 2000 -c 1 -t set -q >/dev/null 2>&1
pgbench -n -S -M simple -t 1000 -c 1 $PGH bench >"$TMP/pgb.txt" 2>&1
$MY --force l7db <"$TMP/my/q.sql" >/dev/null 2>"$TMP/my/client.err"
"$TMP/gotls" client 127.0.0.1:18333 1000 /ok >"$TMP/goc.txt" 2>&1
"$TMP/gotls" client 127.0.0.1:18333 200 /missing >"$TMP/gom.txt" 2>&1
c() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

want_row live_l7_mix_grpc_echo grpc "/galatop.Test/Echo (client)" "$(g ok)" 0.00%
want_row live_l7_mix_grpc_fail grpc "/galatop.Test/Fail (client)" 10 100.00%
want_row live_l7_mix_grpc_deadline grpc "/galatop.Test/Slow (client)" 2 100.00%
want_row live_l7_mix_grpc_server grpc "/galatop.Test/Echo" "$(g ok)" 0.00%
want_row live_l7_mix_kafka kafka "Produce latency (client)" "$(c requests "$TMP/kc.txt")" 0.00%
want_row live_l7_mix_kafka_broker kafka "Produce latency" "$(c requests "$TMP/kc.txt")" 0.00%
ins=$(awk '$1 == "started" && $2 == "insert" { print $3 }' "$TMP/mcli.out")
want_row live_l7_mix_mongo_insert mongo "insert shop.orders (client)" "$ins" \
	"$(awk -v n="$ins" 'BEGIN { printf "%.2f%%", 100 / n }')" # one duplicate key
want_row live_l7_mix_redis_uds redis "SET (client)" 2000 0.00%
n=$(awk -F'[:/ ]+' '/number of transactions actually processed/ { print $6 }' "$TMP/pgb.txt")
want_row live_l7_mix_pgsql_uds pgsql "SELECT pgbench_accounts (client)" "$n" 0.00%
want_row live_l7_mix_mysql_uds mysql "SELECT l7t (client)" 2000 0.00%
want_row live_l7_mix_mysql_error mysql "SELECT l7_no_such_table (client)" \
	"$(grep -c '^ERROR' "$TMP/my/client.err")" 100.00%
want_row live_l7_mix_gotls_ok http "GET /ok (client)" "$(c requests "$TMP/goc.txt")" 0.00%
want_row live_l7_mix_gotls_missing http "GET /missing (client)" "$(c requests "$TMP/gom.txt")" 100.00%
want_row live_l7_mix_gotls_server http "GET /ok" "$(c requests "$TMP/goc.txt")" 0.00%

# The medians the pane shows against the clients' own (both time tightly around their calls).
tm capture-pane -p -t lv >"$TMP/screen"
for l in "kafka|Produce latency (client)|$TMP/kc.txt" "http|GET /ok (client)|$TMP/goc.txt"; do
	p=${l%%|*} rest=${l#*|}; name=${rest%|*} f=${rest#*|}
	got=$(ns "$(row "$p" "$name" | cut -d' ' -f3)") want=$(c p50_ns "$f")
	if within "$got" "$want" 10; then pass "live_l7_mix_p50_$p"
	else fail "live_l7_mix_p50_$p" "pane's P50 $got ns, the client's own $want ns"; fi
done
cp "$TMP/screen" "$TMP/screen.all"
sed -n '1,60p' "$TMP/screen.all"

tm send-keys -t lv q
i=0; while [ $i -lt 50 ] && [ ! -s "$TMP/rc" ]; do sleep 0.1; i=$((i + 1)); done
[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass live_l7_mix_q_exits_0 || fail live_l7_mix_q_exits_0
check live_l7_mix_no_bpf_left no_gt_progs
