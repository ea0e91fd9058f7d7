#!/bin/sh
# galatop agent's loop (its servers on ports the kernel picks): periodic files of a known workload, SIGHUP re-reading --config (a
# family turned on in place; a broken file refused while the agent runs on), SIGTERM and
# SIGINT ending it cleanly with no probe left in the kernel.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/agent_lib.sh"
need_root_bpf agent || exit 0
[ -x "$TOOLS/burn" ] || { fail agent "test workloads not built (make tools)"; exit 0; }

# 1. A known workload: each period's folded file holds its 60/30/10 split.
"$TOOLS/burn" 30 >/dev/null & BURN=$!
mkdir -p "$TMP/out"
printf '{"cmd": {"probe": ["oncpu"]}}\n' >"$TMP/cfg.json"
if start_agent "$TMP/a.log" --period 2 --out-dir "$TMP/out" -p "$BURN" -F 499 \
	--config "$TMP/cfg.json" --metrics 127.0.0.1:0 --rest 127.0.0.1:0; then
	pass agent_starts
else
	fail agent_starts "$(tail -3 "$TMP/a.log")"
fi
wait_until 100 sh -c "ls '$TMP/out'/oncpu-*.folded >/dev/null 2>&1"
sleep 2.5 # a second period, fully inside the workload
f=$(ls "$TMP/out"/oncpu-*.folded 2>/dev/null | tail -n 1)
if [ -n "$f" ]; then
	a=$(share "$f" ";leaf_alpha;" ";mid;"); b=$(share "$f" ";leaf_beta;" ";mid;")
	n=$(awk '/;mid;/ { s += $NF } END { print s + 0 }' "$f")
	# 60/30 within 4 standard errors of the period's sample count.
	if awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN {
		if (n < 50) exit 1
		ea = 400 * sqrt(0.6 * 0.4 / n); eb = 400 * sqrt(0.3 * 0.7 / n)
		exit !((a - 60) ^ 2 <= ea ^ 2 && (b - 30) ^ 2 <= eb ^ 2) }'; then
		pass agent_period_files
	else
		fail agent_period_files "alpha $a% beta $b% of $n samples in $f"
	fi
else
	fail agent_period_files "no periodic folded file in $TMP/out"
fi
[ -n "$(ls "$TMP/out"/oncpu-*.svg 2>/dev/null)" ] && pass agent_period_svg || fail agent_period_svg

# 2. SIGHUP: the config now asks for offcpu too, turned on in place.
printf '{"cmd": {"probe": ["oncpu", "offcpu"]}}\n' >"$TMP/cfg.json"
kill -HUP "$AGENT"
if wait_until 100 grep -q 'offcpu started' "$TMP/a.log" &&
	wait_until 100 sh -c "ls '$TMP/out'/offcpu-*.folded >/dev/null 2>&1"; then
	pass agent_hup_applies
else
	fail agent_hup_applies "$(tail -5 "$TMP/a.log")"
fi
# A broken config is refused; the agent keeps running with what it had.
printf '{"cmd": {"probe": ["nonsense"]}}\n' >"$TMP/cfg.json"
kill -HUP "$AGENT"
if wait_until 100 grep -q 'keeps the running one' "$TMP/a.log" && kill -0 "$AGENT" 2>/dev/null &&
	grep -q 'nonsense' "$TMP/a.log"; then
	pass agent_hup_refuses_bad_config
else
	fail agent_hup_refuses_bad_config "$(tail -5 "$TMP/a.log")"
fi

# 3. SIGTERM: exit 0, every probe gone.
stop_agent TERM
if [ "$RC" = 0 ] && grep -q 'Terminated: stopping' "$TMP/a.log"; then
	pass agent_sigterm_exits
else
	fail agent_sigterm_exits "exit $RC: $(tail -3 "$TMP/a.log")"
fi
check agent_sigterm_no_probe_left no_gt_progs

# 4. SIGINT, with the default families (oncpu, l7, sli) on the whole system.
start_agent "$TMP/b.log" --period 1 --metrics 127.0.0.1:0 --rest off || fail agent_default_starts "$(tail -3 "$TMP/b.log")"
sleep 2
stop_agent INT
if [ "$RC" = 0 ] && grep -q 'Interrupt: stopping' "$TMP/b.log" &&
	! grep -q 'error:' "$TMP/b.log"; then
	pass agent_sigint_exits
else
	fail agent_sigint_exits "exit $RC: $(tail -3 "$TMP/b.log")"
fi
check agent_sigint_no_probe_left no_gt_progs

# 5. Options it does not take, said before any probe loads.
"$GALATOP" agent -o x.svg 2>"$TMP/c.err"; rc=$?
[ "$rc" = 2 ] && grep -q 'writes no files' "$TMP/c.err" && pass agent_rejects_output ||
	fail agent_rejects_output "exit $rc: $(cat "$TMP/c.err")"
"$GALATOP" agent --log-level loud 2>"$TMP/c.err"; rc=$?
[ "$rc" = 2 ] && grep -q 'log-level' "$TMP/c.err" && pass agent_rejects_log_level ||
	fail agent_rejects_log_level "exit $rc"

# 6. The systemd unit in the repository is one systemd takes, and every option of the agent's
# help is in docs/agent.md.
if command -v systemd-analyze >/dev/null 2>&1; then
	sed "s|/usr/local/bin/galatop|$GALATOP|" docs/galatop-agent.service >"$TMP/galatop-agent.service"
	systemd-analyze verify --man=no "$TMP/galatop-agent.service" >"$TMP/verify" 2>&1 &&
		[ ! -s "$TMP/verify" ] && pass agent_systemd_unit || fail agent_systemd_unit "$(head -3 "$TMP/verify")"
else
	skip agent_systemd_unit "systemd-analyze not installed (make deps)"
fi
missing=$("$GALATOP" help agent | grep -oE -- '--[a-z][a-z-]+' | sort -u | while read -r o; do
	grep -qF -- "$o" docs/agent.md || printf '%s ' "$o"; done)
[ -z "$missing" ] && pass agent_doc_flags || fail agent_doc_flags "not in docs/agent.md: $missing"
kill "$BURN" 2>/dev/null
wait "$BURN" 2>/dev/null
exit 0
