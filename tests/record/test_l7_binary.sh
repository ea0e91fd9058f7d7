#!/bin/sh
# galatop record --type l7 against the clients of the binary protocols that pair by id, on
# loopback: kcat with librdkafka's mock cluster (Kafka), pymongo against a small wire-protocol
# server (tests/record/l7/mongo_server.py: Debian ships no MongoDB server), ali-ons against a
# small RocketMQ name server and broker (tests/record/l7/rocketmq_server.py). Servers listen on
# ports 18300-18399 (the mock cluster on one the kernel picks) and stop at exit. Counts and
# errors must equal the clients' own. Needs root and BPF.
. tests/lib.sh
need_root_bpf l7_binary || exit 0
for c in jq kcat; do
	command -v $c >/dev/null 2>&1 || { skip l7_binary "$c is missing (make deps installs it)"; exit 0; }
done
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
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

if no_gt_progs; then pass l7_binary_no_leftover_programs; else fail l7_binary_no_leftover_programs; fi
