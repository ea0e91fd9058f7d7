#!/bin/sh
# Files a profiled process controls cannot hang or bloat galatop: a perf map that is a FIFO or a
# symlink to /dev/zero ends a 2 s recording in time, with one warning naming the file; the
# process's own stacks are still recorded. Needs root + BPF.
. tests/lib.sh
need_root_bpf hostile_files || exit 0
[ -x "$TOOLS/burn" ] || { fail hostile_files "test workloads not built (make tools)"; exit 0; }

# hostile NAME SETUP: runs burn with /tmp/perf-PID.map made by SETUP (given the path), records
# it for 2 s with a 20 s limit, and checks the exit, the time, the warning and the samples.
hostile() {
	"$TOOLS/burn" 30 >/dev/null & w=$!
	map=/tmp/perf-$w.map
	rm -f "$map"
	$2 "$map"
	t0=$(date +%s)
	timeout 20 "$GALATOP" record -p $w -d 2 -o "$TMP/$1.folded" 2>"$TMP/$1.err"
	rc=$?
	t=$(($(date +%s) - t0))
	kill $w 2>/dev/null; wait $w 2>/dev/null
	rm -f "$map"
	if [ $rc -eq 0 ] && [ $t -le 12 ]; then pass "${1}_perf_map_ends_in_time"
	else fail "${1}_perf_map_ends_in_time" "exit $rc after ${t}s: $(tail -3 "$TMP/$1.err")"; fi
	if [ "$(grep -c "warning: skipped /proc/$w/root$map: $3" "$TMP/$1.err")" = 1 ]; then pass "${1}_perf_map_one_warning"
	else fail "${1}_perf_map_one_warning" "$(cat "$TMP/$1.err")"; fi
	check "${1}_perf_map_stacks_still_recorded" grep -q ';main;mid;leaf_alpha' "$TMP/$1.folded"
}
mkfifo_at() { mkfifo "$1"; }
zero_at() { ln -s /dev/zero "$1"; }
hostile fifo mkfifo_at "not a regular file"
hostile devzero zero_at "a symbolic link"

# A huge sparse file is refused by its size before a byte is read.
big_at() { truncate -s 300G "$1"; }
hostile sparse big_at "larger than 256 MiB"
