#!/bin/sh
# Soak: galatop's memory over a long run with a churning workload (new processes all the time,
# page faults, sleeps). Runs `galatop record --period 10` and the live view in decay and window
# modes side by side at 999 Hz with oncpu,offcpu,mem for SOAK_MIN minutes (default 12), samples
# their RSS every 10 s and prints the slope after SOAK_WARMUP seconds (default 300: the
# live view's frame table fills and is first renewed in the first minutes) of warm-up,
# the growth it projects over an hour, and pass or FAIL against the bound of 10% (the exit
# status is 1 when one fails). The full test is SOAK_MIN=60 (see docs/probes.md). Needs root.
# SOAK_SYSTEM=1 samples the whole system instead of each galatop's own churn.
cd "$(dirname "$0")/.." || exit 1
O=${O:-build}; case $O in /*) ;; *) O="$PWD/$O";; esac
BIN=${BIN:-galatop}; case $BIN in /*) ;; *) BIN="$PWD/$BIN";; esac
TOOLS=$O/tools
MIN=${SOAK_MIN:-12}
WARM=${SOAK_WARMUP:-300}
BOUND=10 # % of RSS an hour may add
[ "$(id -u)" = 0 ] || { echo "soak: needs root"; exit 1; }
command -v tmux >/dev/null 2>&1 || { echo "soak: needs tmux"; exit 1; }
T=$(mktemp -d /tmp/galatop-soak.XXXXXX)
SOCK=galatop-soak-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
cleanup() { tm kill-server 2>/dev/null; kill $W1 $REC 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT INT TERM
secs=$((MIN * 60))

# The churn: new processes (5 ms of CPU each), a fault storm, a sleeper. Each galatop runs its
# own churn as its command (and follows it), so that what other users of the machine run
# (new binaries being built, say) does not blur the figures; SOAK_SYSTEM=1 runs one churn
# and samples the whole system.
churn="'$TOOLS/forkstorm' 35 $((secs + 30)) '$TOOLS/shortlived' 5 & '$TOOLS/faulter' $((secs + 30)) 5 &
	'$TOOLS/sleeper' $((secs + 30)) >/dev/null & wait"
if [ -n "${SOAK_SYSTEM:-}" ]; then
	sh -c "$churn" & W1=$!
	CMD=
	what="the whole system, one churn of 35 processes/s"
else
	CMD="-- sh -c \"$churn\""
	what="each its own churn of 35 processes/s"
fi

mkdir -p "$T/periodic"
eval "'$BIN' record --type oncpu,offcpu,mem -F 999 --period 10 --out-dir '$T/periodic' $CMD" 2>"$T/rec.err" & REC=$!
tm new-session -d -s decay -x 160 -y 40 "'$BIN' --type oncpu,offcpu,mem -F 999 $CMD"
tm new-session -d -s window -x 160 -y 40 "'$BIN' --type oncpu,offcpu,mem -F 999 $CMD"
sleep 3
tm send-keys -t decay m m   # accumulate -> window -> decay
tm send-keys -t window m
pid_of() { # the galatop in tmux session $1
	p=$(tm display -p -t "$1" '#{pane_pid}')
	[ "$(cat /proc/$p/comm 2>/dev/null)" = galatop ] && echo "$p" || pgrep -P "$p" galatop
}
D=$(pid_of decay); WIN=$(pid_of window)
[ "$(cat /proc/$REC/comm 2>/dev/null)" = galatop ] || REC=$(pgrep -P "$REC" -x galatop)
rss() { # RSS and its anonymous part (the heap; file pages are the page cache of mapped ELFs)
	awk '/^VmRSS/ { r = $2 } /^RssAnon/ { a = $2 } END { print r + 0, a + 0 }' "/proc/$1/status" 2>/dev/null || echo 0 0
}
echo "soak: $MIN min at 999 Hz with oncpu,offcpu,mem; page faults, sleeps and $what"
t=0
while [ $t -le $secs ]; do
	echo "$t $(rss $REC) $(rss $D) $(rss $WIN)" >>"$T/rss"
	sleep 10
	t=$((t + 10))
done
# slope (kB/min) by least squares over t >= WARM, the growth it projects over an hour, and for
# the RSS itself (not its anonymous part, shown for diagnosis) pass or FAIL against BOUND
fails=0
report() { # column name bounded
	awk -v c="$1" -v name="$2" -v bounded="$3" -v w="$WARM" -v bound="$BOUND" '
		$c == 0 { dead = 1 }
		$1 >= w { n++; x = $1 / 60; y = $c; sx += x; sy += y; sxx += x * x; sxy += x * y
			if (!first) first = y; last = y }
		END {
			if (dead) { print name ": EXITED during the soak (FAIL)"; exit 1 }
			if (n < 2) { print name ": too short"; exit 0 }
			b = (n * sxy - sx * sy) / (n * sxx - sx * sx); a = (sy - b * sx) / n
			g = 100 * b * 60 / (a + b * w / 60)
			v = !bounded ? "" : (g <= bound && g >= -bound ? "  pass" : "  FAIL")
			printf "%-24s RSS %6.1f -> %6.1f MB, slope %+7.1f kB/min, projected over 1 h: %+5.1f%%%s\n",
				name, first / 1024, last / 1024, b, g, v
			exit v == "  FAIL"
		}' "$T/rss" || fails=$((fails + 1))
}
echo "slopes after ${WARM} s of warm-up; bound: RSS within ${BOUND}% over an hour"
report 2 "record --period 10" 1
report 3 "  of which anonymous" 0
report 4 "live view, decay mode" 1
report 5 "  of which anonymous" 0
report 6 "live view, window mode" 1
report 7 "  of which anonymous" 0
tail -n 4 "$T/rec.err" 2>/dev/null | grep -v recording
[ $fails = 0 ] || { echo "soak: $fails over the bound"; exit 1; }
echo "soak: pass"
