# Helpers of the L7 record tests (test_l7.sh, test_l7_h2.sh), sourced after tests/lib.sh: servers
# started here go in PIDS and are stopped at exit with $TMP removed.
PIDS=""
l7_cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap l7_cleanup EXIT INT TERM

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
		kill -0 $REC 2>/dev/null || return 1
		i=$((i + 1)); [ $i -gt 300 ] && return 1; sleep 0.1
	done
}
rec_stop() { kill -INT $REC; wait $REC; }
# ep FILE PROTO ROLE PATTERN FIELD: FIELD summed over endpoints of PROTO/ROLE whose name
# matches the jq regex PATTERN (case-insensitive).
ep() {
	jq -r --arg p "$2" --arg r "$3" --arg re "$4" --arg f "$5" \
		'[.endpoints[] | select(.protocol == $p and .l7_role == $r and (.endpoint | test($re; "i"))) | .[$f]] | add // 0' "$1"
}
eq() { # NAME GOT WANT [WHAT]
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got $2, want $3${4:+ ($4)}"; fi
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
