#!/bin/sh
# The L7 capture's cost: redis-benchmark and wrk throughput with `galatop record --type l7`
# tracing the server vs not (target: at most 5% fewer requests per second), and galatop's own
# CPU per request, also as % of one core at 10k requests/s (target <= 3%). Servers run on
# loopback ports 18190-18191 from a temporary directory. Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "l7: skipped (needs root)"; exit 0; }
for c in redis-server redis-benchmark nginx wrk; do
	command -v $c >/dev/null 2>&1 || { echo "l7: skipped (no $c; make deps)"; exit 0; }
done
N=${BENCH_L7_REQUESTS:-200000}
SECS=${BENCH_SECS:-5}
T=$(mktemp -d "$BENCH_TMP/l7.XXXXXX")
hz=$(getconf CLK_TCK)
cpu_of() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"; }
pids=""
trap 'kill $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT INT TERM

redis-server --port 18190 --bind 127.0.0.1 --save '' --appendonly no --dir "$T" >/dev/null 2>&1 &
RS=$!; pids="$pids $RS"
mkdir -p "$T/nginx"
cat >"$T/nginx/nginx.conf" <<EOF
daemon off; worker_processes 1; pid $T/nginx/pid; error_log $T/nginx/error.log;
events { worker_connections 256; }
http { access_log off; keepalive_requests 1000000;
	client_body_temp_path $T/nginx/b; proxy_temp_path $T/nginx/p; fastcgi_temp_path $T/nginx/f;
	uwsgi_temp_path $T/nginx/u; scgi_temp_path $T/nginx/s;
	server { listen 127.0.0.1:18191; location / { return 200 "ok\n"; } } }
EOF
nginx -c "$T/nginx/nginx.conf" -p "$T/nginx" >/dev/null 2>&1 &
NG=$!; pids="$pids $NG"
for i in $(seq 50); do redis-cli -p 18190 ping >/dev/null 2>&1 && break; sleep 0.1; done
sleep 0.5
NGW=$(pgrep -P $NG | paste -sd, -)

redis_rps() { redis-benchmark -p 18190 -n "$N" -c 16 -t get -P 1 --csv 2>/dev/null | awk -F'"' '$2 == "GET" { print $4 }'; }
wrk_rps() { wrk -t1 -c8 -d"${SECS}s" http://127.0.0.1:18191/ 2>/dev/null | awk '/^Requests\/sec/ { print $2 }'; }
# with TARGET CMD: runs the client while galatop traces TARGET; prints "rps cpu_s requests".
with() {
	target=$1; shift
	"$GALATOP_OPT" record --type l7 -p "$target" -o "$T/out.json" 2>"$T/err" &
	g=$!
	until grep -q 'recording L7' "$T/err" 2>/dev/null; do kill -0 $g 2>/dev/null || return; sleep 0.1; done
	c0=$(cpu_of $g)
	r=$("$@")
	c1=$(cpu_of $g)
	kill -INT $g; wait $g
	[ -n "$BENCH_VERBOSE" ] && tail -1 "$T/err" >&2
	n=$(awk '/recorded [0-9]+ L7 requests/ { print $3 }' "$T/err")
	echo "$r $(echo "$c1 $c0" | awk '{ print $1 - $2 }') $n"
}
report() { # NAME OFF "ON CPU N"
	echo "$2 $3" | awk -v name="$1" '{ loss = 100 * ($1 - $2) / $1;
		per = $4 > 0 ? $3 / $4 : 0;
		printf "%s: %.0f req/s without galatop, %.0f with (%.1f%% loss, target <= 5%%); galatop CPU %.2f us per request = %.2f%% of one core at 10k req/s (target <= 3%%), %d requests seen\n",
			name, $1, $2, loss, per * 1e6, per * 1e4 * 100, $4 }'
}

off=$(redis_rps); on=$(with $RS redis_rps)
report "redis-benchmark GET -P 1 -c 16" "$off" "$on"
off=$(wrk_rps); on=$(with "$NG,$NGW" wrk_rps)
report "wrk nginx keep-alive -c 8" "$off" "$on"
