#!/bin/sh
# galatop record --type l7 against the clients of the binary protocols that pair by id, on
# loopback: kcat with librdkafka's mock cluster (Kafka), pymongo against a small wire-protocol
# server (tests/record/l7/mongo_server.py: Debian ships no MongoDB server), the RocketMQ producer
# of ali-ons (npm, installed by make deps into $O/npm) against a small name server and broker
# (tests/record/l7/rocketmq_server.py). Servers listen on ports 18300-18399 (the mock cluster on one the kernel picks) and stop at exit. Counts and
# errors must equal the clients' own. Needs root and BPF.
. tests/lib.sh
need_root_bpf l7_binary || exit 0
for c in jq kcat /usr/bin/python3; do
	command -v $c >/dev/null 2>&1 || { skip l7_binary "$c is missing (make deps installs it)"; exit 0; }
done
. tests/record/l7_lib.sh
# lines FILE RE: lines of FILE matching the extended regex RE.
lines() { grep -cE "$2" "$1"; }

# --- Kafka ---------------------------------------------------------------------------------
# The mock cluster lives in a kcat that produces from a FIFO held open; other kcats reach it at
# the address it logs. kcat -d protocol logs every request it sends and response it reads.
mkfifo "$TMP/mock.in"
sleep 100000 >"$TMP/mock.in" &
PIDS="$PIDS $!"
kcat -X test.mock.num.brokers=1 -b mock -P -t warm -d protocol <"$TMP/mock.in" 2>"$TMP/mock.log" &
MOCK=$!
PIDS="$PIDS $MOCK"
if wait_for grep -q 'replaced with' "$TMP/mock.log"; then
	BOOT=$(sed -n 's/.*replaced with \([0-9.:]*\).*/\1/p' "$TMP/mock.log" | head -1)
	seq 1 300 | sed 's/^/order-/' >"$TMP/orders"
	# Producer (traced as a command) and the mock broker (traced by pid) at once.
	rec_bg "$TMP/kmock.json" -p $MOCK
	"$GALATOP" record --type l7 -o "$TMP/kprod.json" -- kcat -b "$BOOT" -P -t orders \
		-X linger.ms=0 -d protocol -l "$TMP/orders" 2>"$TMP/kprod.log"
	rec_stop
	sent=$(lines "$TMP/kprod.log" 'Sent ProduceRequest')
	eq kafka_produce_count "$(ep "$TMP/kprod.json" kafka client '^Produce orders$' req_count)" \
		"$sent" "kcat's Sent ProduceRequest lines"
	eq kafka_produce_answered "$(ep "$TMP/kprod.json" kafka client '^Produce orders$' resp_count)" \
		"$(lines "$TMP/kprod.log" 'Received ProduceResponse')" "kcat's Received ProduceResponse lines"
	eq kafka_all_requests "$(sess "$TMP/kprod.json" kafka client req_count)" \
		"$(lines "$TMP/kprod.log" 'Sent [A-Za-z]+Request')" "kcat's Sent ...Request lines"
	eq kafka_produce_no_errors "$(sess "$TMP/kprod.json" kafka client err_count)" 0
	eq kafka_broker_side_count "$(ep "$TMP/kmock.json" kafka server '^Produce orders$' req_count)" \
		"$sent" "the mock broker reads what kcat sent"
	# Latency as the client measures it: tests/tools/kafkaclient sends Produce requests one at
	# a time, timing each right around its system calls (librdkafka's own rtt starts once its
	# send has returned: see kafkaclient.c); galatop's median within 10% of its own
	# (client_p50, tests/record/l7_lib.sh), each request within the client's clock readings
	# (nested). Then Produce requests to a partition the topic
	# does not have: each answered UNKNOWN_TOPIC_OR_PARTITION, as the client counts them.
	if [ -x "$TOOLS/kafkaclient" ]; then
		GT_CLIENT_TIMES=$TMP/kcli.times "$GALATOP" record --type l7 -o "$TMP/kcli.json" \
			-o "$TMP/kcli.jsonl" -- "$TOOLS/kafkaclient" "${BOOT%:*}" "${BOOT#*:}" latency 3000 \
			>"$TMP/kcli.txt" 2>&1
		kc() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/kcli.txt"; }
		eq kafkaclient_count "$(ep "$TMP/kcli.json" kafka client '^Produce latency$' resp_count)" \
			"$(kc requests)" "the client's count"
		eq kafkaclient_no_errors "$(ep "$TMP/kcli.json" kafka client '^Produce latency$' err_count)" \
			"$(kc errors)" "the client's errors"
		client_p50 kafkaclient_p50 "$TMP/kcli.json" kafka client '^Produce latency$' "$(kc p50_ns)" 0 \
			"$(kc nivcsw)" "$(kc requests)" \
			"$(awk -v c="$(kc cpu_ns)" -v n="$(kc requests)" 'BEGIN { printf "%d", c / n }')" 10
		nested kafkaclient_nested "$TMP/kcli.jsonl" kafka '^Produce latency$' "$TMP/kcli.times"
		"$GALATOP" record --type l7 -o "$TMP/kclierr.json" -- "$TOOLS/kafkaclient" "${BOOT%:*}" \
			"${BOOT#*:}" latency 50 99 >"$TMP/kclierr.txt" 2>&1
		ke=$(awk '$1 == "errors" { print $2 }' "$TMP/kclierr.txt")
		eq kafkaclient_errors_answered "$ke" 50 "UNKNOWN_TOPIC_OR_PARTITION for each"
		eq kafkaclient_errors "$(ep "$TMP/kclierr.json" kafka client '^Produce latency$' err_count)" \
			"$ke" "the client's errors"
	else
		fail kafkaclient "test workloads not built (make tools)"
	fi
	# Consumer: Fetch requests, and their responses with the records.
	"$GALATOP" record --type l7 -o "$TMP/kcons.json" -- kcat -b "$BOOT" -C -t orders \
		-o beginning -e -d protocol >"$TMP/kcons.out" 2>"$TMP/kcons.log"
	eq kafka_consumer_got_all "$(wc -l <"$TMP/kcons.out")" 300
	eq kafka_fetch_count "$(ep "$TMP/kcons.json" kafka client '^Fetch orders$' req_count)" \
		"$(lines "$TMP/kcons.log" 'Sent FetchRequest')" "kcat's Sent FetchRequest lines"
	eq kafka_fetch_answered "$(ep "$TMP/kcons.json" kafka client '^Fetch orders$' resp_count)" \
		"$(lines "$TMP/kcons.log" 'Received FetchResponse')" "kcat's Received FetchResponse lines"
	# Fetch errors: an offset past the end of partition 0 gets OFFSET_OUT_OF_RANGE (kcat then
	# resets to the end); kcat logs one backoff per errored partition of a response.
	"$GALATOP" record --type l7 -o "$TMP/kerr.json" -o "$TMP/kerr.jsonl" -- kcat -b "$BOOT" -C \
		-t orders -p 0 -o 100000 -e -d protocol,fetch >/dev/null 2>"$TMP/kerr.log"
	eq kafka_fetch_errors "$(ep "$TMP/kerr.json" kafka client '^Fetch orders$' err_count)" \
		"$(lines "$TMP/kerr.log" 'BACKOFF.*Offset out of range')" "kcat's out-of-range backoffs"
	eq kafka_fetch_error_text "$(jq -r 'select(.error) | .errmsg' "$TMP/kerr.jsonl" | sort -u)" \
		OFFSET_OUT_OF_RANGE
	# acks=0: the broker answers nothing; every Produce is counted, none answered.
	"$GALATOP" record --type l7 -o "$TMP/kacks0.json" -- kcat -b "$BOOT" -P -t orders \
		-X acks=0 -X linger.ms=0 -d protocol -l "$TMP/orders" 2>"$TMP/kacks0.log"
	eq kafka_acks0_count "$(ep "$TMP/kacks0.json" kafka client '^Produce orders$' req_count)" \
		"$(lines "$TMP/kacks0.log" 'Sent ProduceRequest')" "kcat's Sent ProduceRequest lines"
	eq kafka_acks0_unanswered "$(ep "$TMP/kacks0.json" kafka client '^Produce orders$' resp_count)" \
		"$(lines "$TMP/kacks0.log" 'Received ProduceResponse')"
	# A connection busy before the capture: a consumer long-polling every 100 ms. The capture
	# sees its connection mid-stream (no connect: the role comes from the first request) and
	# must count exactly the Fetch requests kcat logged from the first one it saw on.
	kcat -b "$BOOT" -C -t orders -p 0 -o end -u -X fetch.wait.max.ms=100 -d protocol \
		>"$TMP/kold.out" 2>"$TMP/kold.log" &
	OLD=$!
	PIDS="$PIDS $OLD"
	sleep 2
	rec_bg "$TMP/kold.json" -o "$TMP/kold.jsonl" -p $OLD
	sleep 0.5
	kcat -b "$BOOT" -P -t orders -p 0 -l "$TMP/orders" 2>/dev/null
	sleep 1
	rec_stop
	kill $OLD
	jq -r 'select(.endpoint == "Fetch orders") | .detail' "$TMP/kold.jsonl" |
		sed 's/.*correlation_id=\([0-9]*\).*/\1/' | sort -n >"$TMP/kold.got"
	lo=$(head -1 "$TMP/kold.got") hi=$(tail -1 "$TMP/kold.got")
	sed -n 's/.*Sent FetchRequest.*CorrId \([0-9]*\).*/\1/p' "$TMP/kold.log" |
		awk -v lo="${lo:-1}" -v hi="${hi:-0}" '$1 >= lo && $1 <= hi' | sort -n >"$TMP/kold.want"
	n=$(wc -l <"$TMP/kold.got")
	if [ "$n" -ge 10 ] && [ "$(head -1 "$TMP/kold.want")" -gt 1 ] &&
		cmp -s "$TMP/kold.got" "$TMP/kold.want"; then
		pass kafka_older_connection
	else
		fail kafka_older_connection "$n Fetch requests, correlation ids $lo-$hi; kcat's: $(wc -l <"$TMP/kold.want")"
	fi
	eq kafka_older_connection_role "$(jq -r '[.sessions[] | .l7_role] | unique | join(",")' "$TMP/kold.json")" client
	eq kafka_older_connection_fetched "$(wc -l <"$TMP/kold.out")" 300
else
	fail kafka_mock_start "kcat's mock cluster did not start"; cat "$TMP/mock.log"
fi

# --- MongoDB -------------------------------------------------------------------------------
# pymongo 3.11 against tests/record/l7/mongo_server.py, plain and zlib-compressed (OP_COMPRESSED),
# client and server traced. The client counts what it started per command (pymongo's command
# monitoring) and its errors; the server what it received per opcode and command.
# mongo_count FILE ROLE RE: requests of endpoints matching RE.
mcount() { ep "$1" mongo "$2" "$3" req_count; }
mongo_run() { # MODE (plain or zlib) PORT
	/usr/bin/python3 tests/record/l7/mongo_server.py "$2" "$TMP/msrv-$1.counts" >"$TMP/msrv-$1.out" 2>&1 &
	MS=$!
	PIDS="$PIDS $MS"
	wait_for grep -q ready "$TMP/msrv-$1.out" || { fail "mongo_${1}_start" "$(cat "$TMP/msrv-$1.out")"; return; }
	rec_bg "$TMP/msrv-$1.json" -p $MS
	"$GALATOP" record --type l7 -o "$TMP/mcli-$1.json" -o "$TMP/mcli-$1.jsonl" -- /usr/bin/python3 \
		tests/record/l7/mongo_client.py "$2" $([ "$1" = zlib ] && echo zlib) >"$TMP/mcli-$1.out" 2>&1
	rec_stop
	kill $MS; wait $MS
	c() { awk -v k="$1" '$1 == "started" && $2 == k { print $3 }' "$TMP/mcli-$1.out"; }
	srv() { awk -F'\t' -v k="$1" '$1 ~ k { n += $2 } END { print n + 0 }' "$TMP/msrv-$1.counts"; }
	m=$1
	for cmd in insert update delete ping endSessions nosuchcmd; do
		for side in client server; do
			f=$TMP/mcli-$m.json; [ $side = server ] && f=$TMP/msrv-$m.json
			eq "mongo_${m}_${side}_$cmd" "$(mcount "$f" $side "^$cmd ")" \
				"$(awk -v k=$cmd '$1 == "started" && $2 == k { print $3 }' "$TMP/mcli-$m.out")" \
				"pymongo's started $cmd events"
		done
	done
	# find commands and the exhaust cursor's legacy OP_QUERY (pymongo reports that one as a
	# find and its 9 further batches as getMores: on the wire they are one request whose
	# reply comes in 10 OP_REPLYs)
	eq "mongo_${m}_find" "$(mcount "$TMP/mcli-$m.json" client '^(find|query) shop[.]orders$')" \
		"$(awk '$1 == "started" && $2 == "find" { print $3 }' "$TMP/mcli-$m.out")" "pymongo's started find events"
	eq "mongo_${m}_exhaust" "$(ep "$TMP/mcli-$m.json" mongo client '^query shop[.]orders$' resp_count)" \
		"$(awk -F'\t' '$1 ~ /query exhaust/ { print $2 }' "$TMP/msrv-$m.counts")" "exhaust queries the server got"
	eq "mongo_${m}_ismaster" "$(mcount "$TMP/mcli-$m.json" client '^ismaster admin$')" \
		"$(awk -F'\t' 'tolower($1) ~ / ismaster$/ { n += $2 } END { print n + 0 }' "$TMP/msrv-$m.counts")" "isMaster handshakes and heartbeats the server got"
	# w: 0 inserts (OP_MSG moreToCome) get no reply
	eq "mongo_${m}_unacknowledged" "$(ep "$TMP/mcli-$m.json" mongo client '^insert ' resp_count)" \
		$(( $(awk '$1 == "started" && $2 == "insert" { print $3 }' "$TMP/mcli-$m.out") - \
			$(awk -F'\t' '$1 ~ /insert moreToCome/ { print $2 }' "$TMP/msrv-$m.counts") ))
	eq "mongo_${m}_errors" "$(sess "$TMP/mcli-$m.json" mongo client err_count)" \
		"$(awk '$1 == "errors" { print $2 }' "$TMP/mcli-$m.out")" "pymongo's failed commands and write errors"
	eq "mongo_${m}_error_texts" "$(jq -r 'select(.error) | "\(.status) \(.endpoint)"' "$TMP/mcli-$m.jsonl" | sort | paste -sd, -)" \
		"100 update shop.orders,11000 insert shop.orders,59 nosuchcmd shop"
}
mongo_run plain 18311
mongo_run zlib 18312
eq mongo_zlib_all_inflated "$(jq '[.endpoints[] | select(.endpoint == "OP_COMPRESSED")] | length' "$TMP/mcli-zlib.json")" 0

# --- RocketMQ ------------------------------------------------------------------------------
# ali-ons's producer: a route lookup per topic at the name server, 200 SEND_MESSAGE_V2 to the
# broker, a topic the name server does not know (TOPIC_NOT_EXIST), one the broker fails
# (SYSTEM_ERROR), UNREGISTER_CLIENT at close. It counts the requests it made per code and the
# responses with an error code; the name server and the broker are traced too.
NODE_MODULES=$(cd "${O:-build}" 2>/dev/null && pwd)/npm/node_modules
if [ ! -d "$NODE_MODULES/ali-ons" ] || ! command -v node >/dev/null 2>&1; then
	skip rocketmq "ali-ons or node is missing (make deps installs them)"
else
	/usr/bin/python3 tests/record/l7/rocketmq_server.py 18321 18322 >"$TMP/rmq-srv.out" 2>&1 &
	RS=$!
	PIDS="$PIDS $RS"
	if wait_for grep -q ready "$TMP/rmq-srv.out"; then
		rec_bg "$TMP/rmq-srv.json" -p $RS
		"$GALATOP" record --type l7 -o "$TMP/rmq.json" -o "$TMP/rmq.jsonl" -- node \
			tests/record/l7/rocketmq_client.js "$NODE_MODULES" 18321 >"$TMP/rmq.out" 2>"$TMP/rmq.err"
		rec_stop
		req() { awk -v k="$1" '$1 == "requests" && $2 == k { print $3 }' "$TMP/rmq.out"; }
		eq rocketmq_client_sent "$(awk '$1 == "sent" { print $2 }' "$TMP/rmq.out")" 200 "$(tail -3 "$TMP/rmq.err")"
		for side in client server; do
			f=$TMP/rmq.json; [ $side = server ] && f=$TMP/rmq-srv.json
			eq "rocketmq_${side}_route" "$(ep "$f" rocketmq $side '^GET_ROUTEINFO_BY_TOPIC ' req_count)" \
				"$(req 105)" "ali-ons's GET_ROUTEINFO_BY_TOPIC requests"
			eq "rocketmq_${side}_send" "$(ep "$f" rocketmq $side '^SEND_MESSAGE_V2 ' req_count)" \
				"$(req 310)" "ali-ons's SEND_MESSAGE_V2 requests"
			eq "rocketmq_${side}_send_orders" "$(ep "$f" rocketmq $side '^SEND_MESSAGE_V2 orders$' resp_count)" 200
			eq "rocketmq_${side}_all" "$(sess "$f" rocketmq $side req_count)" \
				"$(awk '$1 == "requests" { n += $3 } END { print n + 0 }' "$TMP/rmq.out")" "all of ali-ons's requests"
			eq "rocketmq_${side}_errors" "$(sess "$f" rocketmq $side err_count)" \
				"$(awk '$1 == "errors" { print $2 }' "$TMP/rmq.out")" "ali-ons's responses with an error code"
		done
		eq rocketmq_error_texts "$(jq -r 'select(.error) | "\(.status) \(.endpoint)"' "$TMP/rmq.jsonl" | sort | paste -sd, -)" \
			"1 SEND_MESSAGE_V2 broken,17 GET_ROUTEINFO_BY_TOPIC nosuch"
	else
		fail rocketmq_start "$(cat "$TMP/rmq-srv.out")"
	fi
fi

if no_gt_progs; then pass l7_binary_no_leftover_programs; else fail l7_binary_no_leftover_programs; fi
