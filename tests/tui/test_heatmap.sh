#!/bin/sh
# Time travel in the TUI on a snapshot with known phases (tests/tui/history.json: 20 s of
# `steady` at 200 samples/s, 10 per 50 ms, with a 3 s spike at 10-13 s where `spike` takes 350
# of 400 samples/s): the heatmap (key 6) shows the spike's seconds darkest; a range picked with
# the keys or the mouse makes every view show that range; `a` returns to all time; a baseline
# (b) turns the views into a comparison with the right deltas, per second of each side; side by
# side; ranges on the command line and in saved snapshots. Goldens: tests/tui/golden/heat_*.
. "$(dirname "$0")/screen.sh"
cd "$TMP" || exit 1 # files named in the screens are relative: the goldens stay the same
H=h.gtop
gzip -nc "$HERE/history.json" >"$H"
L=100x30
# From the newest second (19) back to 10, mark; on to the last row of second 12, mark: 10-13 s.
PICK='6hhhhhhhhh\nlllk\n'

screen heat_start "oncpu per 50 ms cell" "$H" $L "6"
screen heat_start_roles "" "$H" $L "6" --dump-roles
# Row 4 is the first 50 ms of every second: 4 columns a second from column 7. On 256 colors the
# cells are FlameScope's ramp: the spike's seconds the reddest (heat8, 'o' in the roles), the
# steady ones a pale yellow; the legend gives each color's values.
r4=$(sed -n 35p "$TMP/heat_start_roles.txt")
sp=$(printf '%s\n' "$r4" | awk '{ print substr($0, 7 + 4 * 10, 12) }')
st=$(printf '%s\n' "$r4" | awk '{ print substr($0, 7, 40) }')
if [ "$sp" = "oooooooooooo" ] && [ "$st" = "$(printf 'g%.0s' $(seq 40))" ]; then
	pass heat_spike_reddest
else
	fail heat_spike_reddest "spike cells '$sp', steady cells '$st'"
fi
assert heat_start "legend values up to the max" grep -q '^oncpu per 50 ms cell, up to:    2    5    8    10    12    15    18    20 (max)' "$TMP/heat_start.txt"
# On 8 colors (and mono, NO_COLOR) the glyph shades: the spike's seconds full blocks.
screen heat_8colors "oncpu per 50 ms cell, up to: ░5 ▒10 ▓15 █20 (max)" "$H" $L "6" --term xterm
r4=$(row heat_8colors 4)
sp=$(printf '%s\n' "$r4" | awk '{ print substr($0, 7 + 4 * 10, 12) }')
st=$(printf '%s\n' "$r4" | awk '{ print substr($0, 7, 40) }')
if [ "$sp" = "████████████" ] && ! printf '%s' "$st" | grep -q '█'; then
	pass heat_spike_darkest
else
	fail heat_spike_darkest "spike cells '$sp', steady cells '$st'"
fi
screen heat_no_color "█20 (max)" "$H" $L "6" --no-color
grep -q "^19.00-19.05 s (22:13:39.00)  10 samples" "$TMP/heat_start.txt" &&
	pass heat_cursor_starts_on_the_newest_second ||
	fail heat_cursor_starts_on_the_newest_second "$(tail -2 "$TMP/heat_start.txt" | head -1)"
# Moving: Home the first second, End the newest, PgUp a screen back (clamped at the start),
# Up from a second's first row to the previous second's last, Down back.
screen heat_home "0.00-0.05 s (22:13:20.00)" "$H" $L "6<Home>"
screen heat_end "19.00-19.05 s" "$H" $L "6<Home><End>"
screen heat_pgup "0.00-0.05 s" "$H" $L "6<PgUp>"
screen heat_pgdn "19.00-19.05 s" "$H" $L "6<Home><PgDn>"
screen heat_up "18.95-19.00 s" "$H" $L "6<Up>"
screen heat_down "19.00-19.05 s" "$H" $L "6<Up><Down>"
screen heat_space "start marked at 19.00 s" "$H" $L "6<Space>"
screen heat_ascii "#" "$H" $L "6" --ascii --term xterm

# Keyboard: the range is the spike: 1200 samples, spike 1050 of them.
screen heat_range "range 10.00-13.00 s (22:13:30-22:13:33)" "$H" $L "$PICK"
screen heat_range_top "87.50%" "$H" 100x12 "${PICK}2"
grep -q "87.50%  *87.50%  *1050  *1050  spike" "$TMP/heat_range_top.txt" &&
	grep -q "12.50%  *12.50%  *150  *150  steady" "$TMP/heat_range_top.txt" &&
	pass heat_range_shows_the_spike || fail heat_range_shows_the_spike "$(cat "$TMP/heat_range_top.txt")"
# The other way round (the end marked first): the range spans both marked cells; the heatmap
# highlights the range.
screen heat_range_back "range 10.95-13.00 s" "$H" $L '6hhhhhhk\nhh\n'
screen heat_marked "10.00-13.00 s" "$H" $L "${PICK}6" --dump-roles
screen heat_second "range 12.00-13.00 s" "$H" $L '6hhhhhhhS'
# The mouse: a click on second 10's first cell, another on second 12's last.
screen heat_click "range 10.00-13.00 s" "$H" $L '6<Click:46,3><Click:57,22>'
screen heat_esc "start mark cancelled" "$H" $L '6\n<Esc>'
# a: all time again.
screen heat_all_time_msg "all time shown" "$H" 100x12 "${PICK}a"
screen heat_all_time "4600 samples" "$H" 100x12 "${PICK}a2"
! grep -q "range" "$TMP/heat_all_time.txt" && pass heat_all_time_no_range ||
	fail heat_all_time_no_range "$(sed -n 2p "$TMP/heat_all_time.txt")"

# A baseline: the first 10 s (2000 steady) against the spike (3 s): per second, steady went
# from 200 to 50 a second (-450 over the 3 s) and spike from 0 to 350 (+1050).
screen heat_diff_top "vs baseline the first 10 s" "$H" 120x12 "b<C-u>first 10\n${PICK}2"
grep -q "+1050  *+1050  spike" "$TMP/heat_diff_top.txt" &&
	grep -q " -450  *-450  steady" "$TMP/heat_diff_top.txt" &&
	grep -q "scaled x0.3: per second" "$TMP/heat_diff_top.txt" &&
	pass heat_diff_deltas || fail heat_diff_deltas "$(cat "$TMP/heat_diff_top.txt")"
screen heat_diff_roles "" "$H" 120x12 "b<C-u>first 10\n${PICK}" --dump-roles
# Row 6 holds steady and spike; the roles are 12 rows further down, after "-- roles --".
names=$(sed -n 6p "$TMP/heat_diff_roles.txt") roles=$(sed -n 19p "$TMP/heat_diff_roles.txt")
role() { awk -v r="$roles" -v n="$names" -v w="$1" 'BEGIN { print substr(r, index(n, w), 1) }'; }
[ "$(role spike)" = R ] && [ "$(role steady)" = B ] && pass heat_diff_red_grew_blue_shrank ||
	fail heat_diff_red_grew_blue_shrank "spike=$(role spike) steady=$(role steady)"
# A baseline range typed as A-B, and the same one from the file (FILE@A-B).
screen heat_diff_range "vs baseline 0.00-10.00 s" "$H" 120x12 "b<C-u>0-10\n${PICK}2"
screen heat_diff_file "+1050" "$H" 120x12 "b<C-u>$H@0-10\n${PICK}2"
grep -q " -450  *-450  steady" "$TMP/heat_diff_file.txt" && pass heat_diff_file_same_deltas ||
	fail heat_diff_file_same_deltas "$(cat "$TMP/heat_diff_file.txt")"
# Side by side: before | after, both laid out, the selection in step.
screen heat_side "before (baseline)" "$H" 120x12 "b<C-u>first 10\n${PICK}|"
grep -q "│after" "$TMP/heat_side.txt" && pass heat_side_by_side ||
	fail heat_side_by_side "$(cat "$TMP/heat_side.txt")"
screen heat_side_select "self +1050" "$H" 120x12 "b<C-u>first 10\n${PICK}|jjj"
screen heat_side_needs_baseline "set a baseline with b first" "$H" 120x12 "|"
# Clearing the baseline and bad baselines (the prompt says why and stays open).
screen heat_diff_clear "baseline cleared" "$H" 120x12 "b<C-u>first 10\nb<C-u>\n"
screen heat_diff_bad_file "No such file" "$H" 120x12 "b<C-u>nosuch.gtop\n"
screen heat_diff_bad_range "no samples in 100.00-200.00 s" "$H" 120x12 "b<C-u>100-200\n"

# The command line and saved snapshots: --range opens on it, `a` shows all; `s` keeps it.
screen heat_cli_range "range 10.00-13.00 s" "$H" 100x12 "2" --range 10-13
grep -q "87.50%.*spike" "$TMP/heat_cli_range.txt" && pass heat_cli_range_spike ||
	fail heat_cli_range_spike "$(cat "$TMP/heat_cli_range.txt")"
screen heat_cli_range_all "4600 samples" "$H" 100x12 "a" --range 10-13
"$GALATOP" view --dump --keys "${PICK}s<C-u>saved.gtop\n" "$H" >/dev/null 2>&1
screen heat_saved_range "range 10.00-13.00 s" saved.gtop 100x12 "2"
# The folded and SVG files of a range (and a comparison) say so; the folded one holds the range.
"$GALATOP" view --dump --keys "b<C-u>first 10\n${PICK}s<C-u>cmp\n" "$H" >/dev/null 2>&1
if head -1 cmp.folded | grep -q "^# range 10.00-13.00 s .*compared with the first 10 s (scaled x0.3" &&
	grep -q "^work;main;spike 0 1050$" cmp.folded && grep -q "range 10.00-13.00 s" cmp.svg; then
	pass heat_saved_files_say_range
else
	fail heat_saved_files_say_range "$(head -3 cmp.folded)"
fi
# A file without history says so in the heatmap.
screen heat_no_history "no per-second history here" "$HERE/basic.folded" $L "6"
