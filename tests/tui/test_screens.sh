#!/bin/sh
# Screen tests of `galatop view` in its no-display dump mode: each case runs a key script on a
# fixture and compares the final screen with tests/tui/golden/NAME.txt, and also checks one
# visible effect of the keys. GALATOP_UPDATE_GOLDEN=1 rewrites the goldens (review them!).
. "$(dirname "$0")/screen.sh"
BASIC=$HERE/basic.folded
DEEP=$HERE/deep.folded
JAVA=$FIXTURES/flamegraph-tests/results/perf-java-stacks-01-collapsed-jit.txt
PERF=$FIXTURES/perf-script-6.1/galatop-burn-fp.txt

S=100x16
# Start, orientation, colors, roles.
screen start            "all"                 "$BASIC" $S ""
assert start "root on the first view row" test "$(row start 3)" = "all"
screen start_roles      "frame_kernel"        "$BASIC" $S "" --dump-roles
screen start_8colors    "frame_kernel"        "$BASIC" $S "" --dump-roles --term xterm
screen flip_i           "root at the bottom"  "$BASIC" $S "i"
assert flip_i "root on the last view row" test "$(row flip_i 14)" = "all"
screen hash_colors_x    "by name hash"        "$BASIC" $S "x" --dump-roles
assert hash_colors_x "hash roles used" grep -q '^0 hash0\|^1 hash1\|^2 hash2\|^3 hash3\|^4 hash4\|^5 hash5' "$TMP/hash_colors_x.txt"
screen theme_T          "theme: mono"         "$BASIC" $S "T"
screen theme_TT         "theme: colorblind"   "$BASIC" $S "TT" --dump-roles
screen theme_hot        ""                    "$BASIC" $S "" --theme hot --dump-roles
screen no_color         ""                    "$BASIC" $S "" --no-color --dump-roles
screen ascii_top        "vSelf%"              "$BASIC" $S "2" --ascii
# CPython frames ("qualname (file.py:line)") have a family of their own: role frame_python,
# on 8 colors as on more; the native frames around them stay user and kernel.
screen python_roles     "Thread.run (threading.py:975)" "$HERE/python.folded" $S "" --dump-roles --term xterm
assert python_roles "Python frames in their role" sh -c "grep -q '^y frame_python' '$TMP/python_roles.txt' && grep -q '^u frame_user' '$TMP/python_roles.txt' && grep -q '^k frame_kernel' '$TMP/python_roles.txt'"
# Moving around.
screen nav_j            "ngx_http_handler  [user]"   "$BASIC" $S "jjjj"
screen nav_arrows       "processCommand  [user]"     "$BASIC" $S "<Down><Down><Down><Down><Right>"
screen nav_k            "ngx_process_events  [user]" "$BASIC" $S "jjjjk"
screen nav_up_at_root   "at the zoomed root"         "$BASIC" $S "<Up>"
screen nav_h            "epoll_wait  [user]"         "$BASIC" $S "jjjjh"
screen nav_l_left       "epoll_wait  [user]"         "$BASIC" $S "jjjjl<Left><Left>"
screen nav_home         "all  total 120"             "$BASIC" $S "jjj<Home>"
screen pgdn             ""                           "$DEEP" 60x12 "<PgDn>"
assert pgdn "scrolled past the root" test "$(row pgdn 3)" != "all"
screen pgup             "all"                        "$DEEP" 60x12 "<PgDn><PgUp>"
assert pgup "back at the root" test "$(row pgup 3)" = "all"
screen follow_deep      "a20  [user]"                "$DEEP" 60x12 "jjjjjjjjjjjjjjjjjjjjj"
# Zoom.
screen zoom_enter       "zoom depth 3"        "$BASIC" $S "jjj\\n"
assert zoom_enter "zoomed frame is the root line" test "$(row zoom_enter 3)" = "ngx_process_events"
screen zoom_enter_key   "zoom depth 3"        "$BASIC" $S "jjj<Enter>"
screen zoom_esc         "zoom depth 3"        "$BASIC" $S "jjjj\\n<Esc>"
assert zoom_esc "one level out" test "$(row zoom_esc 3)" = "ngx_process_events"
screen zoom_bs          "zoom depth 3"        "$BASIC" $S "jjjj\\n<BS>"
screen zoom_not         "not zoomed"          "$BASIC" $S "<Esc>"
screen reset_r          "all  total 120"      "$BASIC" $S "jjjj\\nr"
assert reset_r "root line back" test "$(row reset_r 3)" = "all"
# Search.
screen search           "Matched 39.17% /alpha"  "$BASIC" $S "/alpha\\n" --dump-roles
assert search "matches highlighted" grep -q '^M match' "$TMP/search.txt"
screen search_bad_regex "invalid regex:"         "$BASIC" $S "/al(pha\\n"
screen search_clear     ""                       "$BASIC" $S "/alpha\\n/\\n"
assert search_clear "no Matched" sh -c "! grep -q Matched '$TMP/search_clear.txt'"
screen search_esc       ""                       "$BASIC" $S "/alpha<Esc>"
assert search_esc "cancelled" sh -c "! grep -q Matched '$TMP/search_esc.txt'"
screen next_n           "alpha_parse  [user]"    "$BASIC" $S "/alpha\\nn"
screen next_nn          "alpha_lex  [user]"      "$BASIC" $S "/alpha\\nnn"
screen prev_N           "alpha_cmd  [user]"      "$BASIC" $S "/alpha\\nnN"
screen next_nosearch    "no search"              "$BASIC" $S "n"
screen same_name        "Matched 41.67% #ngx_http_handler" "$BASIC" $S "jjjj#"
screen same_name_root   "select a frame first"   "$BASIC" $S "#"
screen match_filter     "matches-only"           "$BASIC" $S "/alpha\\n\\\\"
assert match_filter "only matching stacks" sh -c "! grep -q epoll_wait '$TMP/match_filter.txt'"
screen match_filter_off "match filter off"       "$BASIC" $S "/alpha\\n\\\\\\\\"
screen match_filter_none "no search to filter by" "$BASIC" $S "\\\\"
# Filters.
screen kernel_K         "no-kernel"           "$BASIC" $S "K"
assert kernel_K "kernel frames gone" sh -c "! grep -q 'entry_SYSCALL' '$TMP/kernel_K.txt'"
screen kernel_KK        "kernel frames shown" "$BASIC" $S "KK"
screen threads_H        "roots: per process" "$BASIC" $S "H"
screen pid_bad          "rejected: a pid is digits only" "$BASIC" $S "p12x\\n"
screen pid_range        "rejected: a pid is 1..4194304"  "$BASIC" $S "p4194305\\n"
screen pid_zero         "rejected: a pid is 1..4194304"  "$BASIC" $S "p0\\n"
screen pid_ok           "pid=1234"            "$BASIC" $S "p1234\\n"
assert pid_ok "other processes gone" sh -c "! grep -q redis '$TMP/pid_ok.txt'"
screen pid_none         "no stacks match the filters" "$BASIC" $S "p42\\n"
screen pid_clear        ""                    "$BASIC" $S "p1234\\np\\n"
assert pid_clear "filter cleared" sh -c "! grep -q 'pid=' '$TMP/pid_clear.txt'"
screen comm_long        "rejected: a comm is 1..15 bytes" "$BASIC" $S "Cthis-is-too-long-for-comm\\n"
screen comm_ok          "comm=redis-server"   "$BASIC" $S "Credis-server\\n"
screen container_bad    "rejected: a container name is letters" "$BASIC" $S "cbad!name\\n"
screen container_short  "rejected: a container id has 12..64 hex digits" "$BASIC" $S "c0123ab\\n"
screen container_name   "container=web"       "$BASIC" $S "cweb\\n"
screen container_id     "PyEval_EvalFrame"    "$BASIC" $S "c0123456789ab\\n"
screen pod_name         "python3"             "$BASIC" $S "cshop\\n"
# Live-only keys on a file, freeze.
screen freeze_z         "FROZEN +0 pending"   "$BASIC" $S "z"
screen freeze_zz        "display follows the data again" "$BASIC" $S "zz"
screen mode_m           "update modes apply to live data" "$BASIC" $S "m"
screen ptype_o          "only oncpu data"     "$BASIC" $S "o"
screen type_offcpu      "offcpu"              "$BASIC" $S "" --type offcpu
# Views.
screen help_F1          "Everywhere"          "$BASIC" 120x40 "<F1>"
assert help_F1 "lists quit and search" sh -c "grep -q 'q F10' '$TMP/help_F1.txt' && grep -q 'search frames by regex' '$TMP/help_F1.txt'"
screen help_q           "Flame view"          "$BASIC" 120x40 "?"
screen help_closes      "all  total 120"      "$BASIC" $S "?x"
screen help_top         "Top view"            "$BASIC" 120x40 "2?"
screen top_2            "Self%"               "$BASIC" $S "2"
assert top_2 "heaviest self first" sh -c "sed -n 4p '$TMP/top_2.txt' | grep -q do_epoll_wait"
screen top_tab          "Self%"               "$BASIC" $S "\\t"
screen top_sort_gt      "▼Total%"             "$BASIC" $S "2>"
assert top_sort_gt "main before leaves" sh -c "sed -n 4p '$TMP/top_sort_gt.txt' | grep -q main"
screen top_sort_F6      "▼Function"           "$BASIC" $S "2<F6><F6>"
assert top_sort_F6 "names in order" sh -c "sed -n 4p '$TMP/top_sort_F6.txt' | grep -q '::bar_\[j\]'"
screen top_sort_lt      "▼Function"           "$BASIC" $S "2<"
screen top_recursion    "recurse"             "$BASIC" 100x40 "2<F6><F6>"
assert top_recursion "total of recurse counted once" sh -c "grep -E '^ +8\.33% +8\.33% +10 +10  recurse' '$TMP/top_recursion.txt' >/dev/null"
screen top_nav          "alpha_lex  [user]"   "$BASIC" $S "2j"
screen top_end_home     "do_epoll_wait_[k]  [kernel]" "$BASIC" $S "2<End><PgUp><PgDn><Home>"
# A sort from the last row: the cursor and the view back on the first row (the list helper).
screen top_sort_from_end "sorted by total"  "$BASIC" $S "2<End><F6>"
assert top_sort_from_end "cursor on the first row" sh -c "sed -n 4p '$TMP/top_sort_from_end.txt' | grep -q ' main\$' && tail -2 '$TMP/top_sort_from_end.txt' | grep -q '^main  \['"
screen top_wheel        "Self%"               "$BASIC" 100x10 "2<WheelDown:5,5>"
assert top_wheel "scrolled, the cursor on the first row shown" sh -c "sed -n 4p '$TMP/top_wheel.txt' | grep -q ' alpha_cmd\$' && tail -2 '$TMP/top_wheel.txt' | grep -q '^alpha_cmd  \['"
screen top_enter        "Matched 20.83% #alpha_lex" "$BASIC" $S "2j\\n"
assert top_enter "back in the flame view on it" grep -q '^alpha_lex  \[user\]' "$TMP/top_enter.txt"
screen flame_1          "all  total 120"      "$BASIC" $S "21"
screen redraw_C_l       "all  total 120"      "$BASIC" $S "<C-l>"
screen unbound          "does nothing here"   "$BASIC" $S "X"
screen quit_q           ""                    "$BASIC" $S "jq"
screen quit_F10         ""                    "$BASIC" $S "<F10>"
# Mouse.
screen click            "main  [user]"        "$BASIC" $S "<Click:85,4>"
screen dclick           "zoom depth 2"        "$BASIC" $S "<DClick:85,4>"
screen wheel            ""                    "$DEEP" 60x12 "<WheelDown:5,5>"
assert wheel "scrolled" test "$(row wheel 3)" != "root"
screen top_click        "beta_render  [user]" "$BASIC" $S "2<Click:10,5>"
# Resize and small terminals.
screen resize_small     "terminal too small"  "$BASIC" $S "<Resize:30x8>"
screen resize_back      "all  total 120"      "$BASIC" $S "<Resize:30x8><Resize:70x12>"
screen small_start      "need 40x10"          "$BASIC" 39x9 ""
# Other inputs.
need_fixture java_jit "$JAVA" && screen java_jit "" "$JAVA" $S "" --dump-roles
assert java_jit "JIT frames colored" grep -q '^j frame_jit' "$TMP/java_jit.txt"
need_fixture perf_script "$PERF" && screen perf_script "burn_fp-?" "$PERF" $S "j"
screen save_prompt      "Save as: galatop-19700101-000000" "$BASIC" $S "s"

# Saving: all formats built in, the default name, and a zoomed save.
if (cd "$TMP" && "$GALATOP" view --dump --keys 's\n' "$BASIC" >/dev/null 2>&1) &&
	[ -f "$TMP/galatop-19700101-000000.folded" ]; then
	sort "$BASIC" | cmp -s - "$TMP/galatop-19700101-000000.folded" && pass "save folded" ||
		fail "save folded" "written stacks differ from the input"
else
	fail "save folded" "no galatop-19700101-000000.folded"
fi
# The SVG's root and the snapshot read back hold the total the view showed (the start screen),
# the snapshot every stack of the input.
shown=$(shown_total "$TMP/start.txt")
got=$(svg_total "$TMP/galatop-19700101-000000.svg")
if [ -n "$shown" ] && [ "$got" = "$shown" ]; then pass "save svg"
else fail "save svg" "root total '$got', the view showed '$shown'"; fi
got=$(gtop_total "$TMP/galatop-19700101-000000.gtop")
if [ -n "$shown" ] && [ "$got" = "$shown" ] &&
	"$GALATOP" fold "$TMP/galatop-19700101-000000.gtop" | cmp -s - "$TMP/galatop-19700101-000000.folded"
then pass "save gtop"
else fail "save gtop" "fold total '$got', the view showed '$shown'"; fi
if command -v xmllint >/dev/null 2>&1; then
	check "save svg is XML" xmllint --noout "$TMP/galatop-19700101-000000.svg"
else
	skip "save svg is XML" "xmllint is not installed (make deps)"
fi
"$GALATOP" view --dump --size $S "$TMP/galatop-19700101-000000.gtop" 2>&1 | sed 1d >"$TMP/gtop.txt"
sed 1d "$GOLDEN/start.txt" | cmp -s - "$TMP/gtop.txt" && pass "save gtop opens as it was saved" ||
	fail "save gtop opens as it was saved"
"$GALATOP" view --dump --keys "jjj\\ns<C-u>$TMP/zoom.folded\\n" "$BASIC" >"$TMP/save_zoom.txt" 2>&1
if [ -f "$TMP/zoom.folded" ] && ! grep -qv '^\[1234\]nginx;main;ngx_process_events;' "$TMP/zoom.folded" &&
	[ "$(wc -l <"$TMP/zoom.folded")" -eq 4 ]; then
	pass "save zoomed"
else
	fail "save zoomed" "$(cat "$TMP/save_zoom.txt" | sed -n 2p)"
fi
# pprof and speedscope only when the name asks for them; both hold what the view showed.
"$GALATOP" view --dump --keys "s<C-u>$TMP/saved.pb.gz\\n" "$BASIC" >/dev/null 2>&1
"$GALATOP" view --dump --keys "s<C-u>$TMP/saved.speedscope.json\\n" "$BASIC" >/dev/null 2>&1
if ! ls "$TMP"/galatop-19700101-000000.pb.gz "$TMP"/galatop-19700101-000000.speedscope.json \
	>/dev/null 2>&1 && "$GALATOP" fold "$TMP/saved.pb.gz" 2>&1 | cmp -s - "$TMP/galatop-19700101-000000.folded" &&
	[ "$(jq '.profiles[0].endValue' "$TMP/saved.speedscope.json" 2>/dev/null)" = "$shown" ]; then
	pass "save pprof and speedscope"
else
	fail "save pprof and speedscope" "$("$GALATOP" fold "$TMP/saved.pb.gz" 2>&1 | head -2)"
fi
"$GALATOP" view --dump --out-dir "$TMP/outdir" --keys 's\n' "$BASIC" >"$TMP/save_bad.txt" 2>&1
assert "save error" "reported in the status line" grep -q "cannot write $TMP/outdir/galatop-19700101-000000" "$TMP/save_bad.txt"

# The SVG saved is drawn in the palette shown, the very colors of `galatop svg --colors NAME`:
# by kind (the default), then flamegraph.pl's hot after `x x` (kind -> name hash -> hot).
fills() { grep -o '<title>[^<]*</title><rect [^>]*fill="[^"]*"' "$1" | sed 's/<rect .*fill=/ /' | sort; }
for case in "kind:" "hot:xx"; do
	pal=${case%%:*} keys=${case#*:}
	"$GALATOP" view --dump --keys "${keys}s<C-u>$TMP/saved-$pal.svg\n" "$BASIC" >/dev/null 2>&1
	"$GALATOP" svg --colors "$pal" "$BASIC" >"$TMP/cli-$pal.svg" 2>/dev/null
	fills "$TMP/saved-$pal.svg" >"$TMP/saved-$pal.fills"
	fills "$TMP/cli-$pal.svg" >"$TMP/cli-$pal.fills"
	if [ -s "$TMP/cli-$pal.fills" ] && cmp -s "$TMP/saved-$pal.fills" "$TMP/cli-$pal.fills"; then
		pass "save svg in the $pal palette shown"
	else
		fail "save svg in the $pal palette shown" "$(diff "$TMP/saved-$pal.fills" "$TMP/cli-$pal.fills" | head -4)"
	fi
done

# Hostile frame names: terminal escapes, C1 controls and invalid UTF-8 never reach the screen.
printf 'evil\033]2;PWNED\007;x\033[2J\033[31m 5\nbad\377\376utf8;\302\233c1;tab\there 3\n' >"$TMP/evil.folded"
for opt in "" "--ascii"; do
	n="hostile_names${opt:+_ascii}"
	if "$GALATOP" view --dump --size 100x16 --keys '2' $opt "$TMP/evil.folded" >"$TMP/$n.txt" 2>&1 &&
		"$GALATOP" view --dump --size 100x16 --keys 'jjj' $opt "$TMP/evil.folded" >>"$TMP/$n.txt" 2>&1 &&
		! tr -d '\n' <"$TMP/$n.txt" | LC_ALL=C grep -q '[[:cntrl:]]' &&
		{ [ -z "$opt" ] || ! LC_ALL=C grep -q '[^ -~]' "$TMP/$n.txt"; } && grep -q 'PWNED' "$TMP/$n.txt"; then
		pass "$n"
	else
		fail "$n" "control bytes or non-ASCII on the screen"
	fi
done

# The Threads pane on a timeline fixture (tests/model/test_timeline.c --fixture): a deadlocked
# pair, a contended pair, file, net, sleep, run queue and D-state threads, a CPU hog, and
# short-lived processes that ended (three dpkg-deb, a tar).
TL=$TMP/threads.gtop
if "$O/asan/tests/model/test_timeline" --fixture "$TL" 2>"$TMP/tl.err"; then
	T=150x24
	screen threads_start    "! deadlock: threads DeadThd1 (tid 101) and DeadThd2 (tid 102)" "$TL" $T ""
	assert threads_start "opens in the Threads pane" grep -q '3 Threads' "$TMP/threads_start.txt"
	assert threads_start "contention hint names the holder" grep -q 'held by CompeteThd1 (tid 201)' "$TMP/threads_start.txt"
	assert threads_start "legend" grep -q 'D D-state' "$TMP/threads_start.txt"
	# By activity in the window: the deadlocked app (its lock waits count), db, the hog, then
	# the ended commands, one row each; the cursor on the first row, whose summary is shown.
	assert threads_start "busiest first, ended last" test "$(sed -n '6p;12p;15p;16p;17p' "$TMP/threads_start.txt" | cut -c1-22 | tr -s ' ' | tr '\n' '|')" = "▾ 100 app (5) |▾ 200 db (2) | 500 hog |▸ ended dpkg-deb x3 |▸ ended tar x1 |"
	assert threads_start "cursor on the first row" grep -q '^app pid 100: 5 threads: oncpu' "$TMP/threads_start.txt"
	screen threads_ended_open "dpkg-deb: 3 processes ended, 3 threads" "$TL" $T "<End><Up><Enter>"
	assert threads_ended_open "the three processes listed" test "$(sed -n '17,19p' "$TMP/threads_ended_open.txt" | cut -c1-20 | tr -s ' ' | tr '\n' '|')" = " 401 dpkg-deb | 402 dpkg-deb | 403 dpkg-deb |"
	screen threads_ended_closed "dpkg-deb: 3 processes ended" "$TL" $T "<End><Up><Enter><Enter>"
	assert threads_ended_closed "folded again" sh -c "! grep -q '  401 dpkg-deb' '$TMP/threads_ended_closed.txt'"
	screen threads_fold_proc "app pid 100: 5 threads" "$TL" $T "<Enter>"
	assert threads_fold_proc "app's threads folded" sh -c "! grep -q 'DeadThd1  ' '$TMP/threads_fold_proc.txt' && grep -q '^▸   100 app (5)' '$TMP/threads_fold_proc.txt'"
	screen threads_home     "app pid 100: 5 threads" "$TL" $T "<End><Home>"
	screen threads_end      "tar: 1 process ended, 1 thread" "$TL" $T "<End>"
	screen threads_zoom     "slot 12.5ms" "$TL" $T "+++"
	screen threads_inspect  "Inspector" "$TL" $T "jjj+++<Left><Left><Enter>"
	assert threads_inspect "slot events with path and stack" grep -q '/var/log/app.log' "$TMP/threads_inspect.txt"
	screen threads_lock     "lock    futex" "$TL" $T "jjjjjjjj<Enter>"
	assert threads_lock "owner shown" grep -q 'owner tid 201' "$TMP/threads_lock.txt"
	screen threads_sort     "sort lock time" "$TL" $T "<F6><F6>"
	assert threads_sort "the waiter before the holder" test "$(sed -n 13p "$TMP/threads_sort.txt" | cut -c1-20)" = "    202  CompeteThd2"
	# After a sort from the last row, the cursor and the view are back on the first row.
	screen threads_sort_cpu "sort CPU time" "$TL" $T "<End><F6>"
	assert threads_sort_cpu "the hog first, selected" sh -c "sed -n 6p '$TMP/threads_sort_cpu.txt' | grep -q '^    500 hog' && grep -q '^hog tid 500 pid 500: oncpu' '$TMP/threads_sort_cpu.txt'"
	screen threads_sort_prev "sort pid/tid" "$TL" $T "<"
	screen threads_wheel    "Worker tid 103" "$TL" 150x14 "<WheelDown:5,8>"
	assert threads_wheel "scrolled three rows, the cursor along" test "$(sed -n 6p "$TMP/threads_wheel.txt" | cut -c1-20)" = "    103  Worker     "
	screen threads_click    "NetThd tid 104" "$TL" $T "<Click:10,10>"
	screen threads_proc_flame "flame graph of pid 100" "$TL" $T "f"
	screen threads_ended_flame "flame graph of command dpkg-deb" "$TL" $T "<End><Up>f"
	screen threads_pid      "CompeteThd1" "$TL" $T "p200\n"
	assert threads_pid "other processes hidden" sh -c "! grep -q '^    101  DeadThd1' '$TMP/threads_pid.txt'"
	screen threads_search   "NetThd" "$TL" $T "/Net\n"
	assert threads_search "only matching threads" sh -c "! grep -q 'Worker' '$TMP/threads_search.txt'"
	screen threads_ascii    "#" "$TL" $T "" --ascii
	assert threads_ascii "ASCII only" sh -c "! LC_ALL=C grep -q '[^ -~]' '$TMP/threads_ascii.txt'"
	screen threads_tab      "Threads" "$TL" $T "\t\t\t\t"
else
	fail "threads fixture" "$(cat "$TMP/tl.err")"
fi

# Errors and usage.
printf 'frame_user black yelow\n' >"$TMP/bad.theme"
"$GALATOP" view --dump --theme "$TMP/bad.theme" "$BASIC" >/dev/null 2>"$TMP/bad_theme.err"
[ $? -eq 1 ] && grep -q "bad.theme:1: bad color or attribute 'yelow'" "$TMP/bad_theme.err" &&
	[ "$(wc -l <"$TMP/bad_theme.err")" -eq 1 ] && pass "bad theme file:line" || fail "bad theme file:line" "$(cat "$TMP/bad_theme.err")"
"$GALATOP" view --dump --theme nosuch "$BASIC" >/dev/null 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "unknown theme 'nosuch'" "$TMP/err" && pass "unknown theme" || fail "unknown theme"
"$GALATOP" view --dump --size 12 "$BASIC" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q -- "--size" "$TMP/err" && pass "bad --size" || fail "bad --size"
"$GALATOP" view --dump --keys '\q' "$BASIC" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "bad escape" "$TMP/err" && pass "bad key script" || fail "bad key script"
"$GALATOP" view --dump /nonexistent/file >/dev/null 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "cannot open /nonexistent/file" "$TMP/err" && pass "missing file" || fail "missing file"
printf '\n' >"$TMP/empty.folded"
"$GALATOP" view --dump "$TMP/empty.folded" >/dev/null 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "no stacks" "$TMP/err" && pass "empty file" || fail "empty file"
"$GALATOP" view "$BASIC" </dev/null >/dev/null 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "needs a terminal" "$TMP/err" && pass "no terminal" || fail "no terminal"
NO_COLOR=1 "$GALATOP" view --dump --dump-roles --size $S "$BASIC" >"$TMP/nocolor_env.txt" 2>&1
cmp -s "$TMP/nocolor_env.txt" "$GOLDEN/no_color.txt" && pass "NO_COLOR env" || fail "NO_COLOR env"

# The L7 view over the tables of `record --type l7 -o x.json` (tests/tui/l7.json).
L7=$HERE/l7.json
L=120x20
screen l7_endpoints     "GET /users/{id}"     "$L7" $L ""
assert l7_endpoints "sorted by requests, busiest first" test "$(row l7_endpoints 5 | awk '{ print $1 }')" = 3000
screen l7_conns         "Connections of GET /users/{id}" "$L7" $L "<Enter>"
assert l7_conns "no segments for a connection's part under an endpoint" sh -c "grep -q ' bytes' '$TMP/l7_conns.txt' && ! grep -q 'segs' '$TMP/l7_conns.txt'"
screen l7_requests      "Slowest requests"    "$L7" $L "<Enter><Enter>"
screen l7_detail        "ngx_http_write_filter" "$L7" $L "<Enter><Enter><Enter>"
assert l7_detail "latency split" grep -q "Latency   458us = request 0ns + wait 438us + response 20.0us" "$TMP/l7_detail.txt"
screen l7_back          "L7 by endpoint"      "$L7" $L "<Enter><Enter><BS><BS>"
screen l7_by_process    "1201/nginx"          "$L7" $L "gg"
screen l7_by_conn       "1302/app -> 10.0.0.9:5432" "$L7" $L "g"
assert l7_by_conn "a whole connection's segments" grep -q "bytes  segs 3100/3050" "$TMP/l7_by_conn.txt"
screen l7_proto_pgsql   "SELECT accounts"     "$L7" $L "PPP"
assert l7_proto_pgsql "http rows hidden" sh -c "! grep -q 'GET /users' '$TMP/l7_proto_pgsql.txt'"
screen l7_sort_p99      "P99"                 "$L7" $L ">>>>>"
assert l7_sort_p99 "slowest p99 first" sh -c "row() { sed -n \"\$1p\" '$TMP/l7_sort_p99.txt'; }; row 5 | grep -q 'POST /api/orders'"
screen l7_flame_needs_pid "select one first"  "$L7" $L "f"
screen l7_key4_no_tables "no L7 tables"       "$BASIC" 100x12 "4"
screen l7_container     "SELECT accounts"     "$L7" $L "cshop-app<Enter>"
assert l7_container "other containers hidden" sh -c "! grep -q 'GET /users' '$TMP/l7_container.txt'"
# HTTP/2 and gRPC rows, and header blocks a capture begun mid-connection could not decode: the
# title says how many; P reaches the grpc rows.
jq '.undecoded_headers = 12 | .endpoints[2].protocol = "grpc" | .endpoints[2].endpoint = "/shop.Orders/Create"
	| .endpoints[1].protocol = "http2" | .endpoints[1].endpoint = "[undecoded]"' "$L7" >"$TMP/l7_h2.json"
screen l7_h2_undecoded  "12 HTTP/2 header blocks not decoded" "$TMP/l7_h2.json" 140x20 ""
screen l7_proto_grpc    "/shop.Orders/Create" "$TMP/l7_h2.json" 140x20 "PPPPPPP"
assert l7_proto_grpc "only grpc" sh -c "grep -q 'only grpc' '$TMP/l7_proto_grpc.txt' && ! grep -q 'GET /users' '$TMP/l7_proto_grpc.txt'"
# The Containers pane (key 5) on a saved SLI snapshot: opens first when the snapshot has no
# stacks; sorting, a group's page with its histogram and threads, the flame drill-down, ASCII.
gzip -nc "$HERE/sli.json" >"$TMP/sli.gtop"
screen sli_table "[Con]web" "$TMP/sli.gtop" 150x14 ""
screen sli_sort_sleep "sorted by cpu_sleep" "$TMP/sli.gtop" 150x14 ">>"
screen sli_group "cpu_sleep histogram, last interval: 200 delays" "$TMP/sli.gtop" 150x30 "<Enter><Down><Down>"
screen sli_group_since_start "since the start" "$TMP/sli.gtop" 150x30 "<Enter>a"
screen sli_to_flame "oncpu of [Con]web" "$TMP/sli.gtop" 120x10 "<Enter>f"
screen sli_back "IOp99" "$TMP/sli.gtop" 150x12 "<Enter><Esc>"
screen sli_ascii_narrow "Recl%" "$TMP/sli.gtop" 80x12 "" --ascii
screen sli_no_data "no SLI data in this source" "$BASIC" 100x12 "5"
screen sli_end "/system.slice/backup.service [service]" "$TMP/sli.gtop" 150x10 "<End>"
screen sli_end_home "[Con]web [container]" "$TMP/sli.gtop" 150x10 "<End><Home>"
screen sli_to_threads "thread timeline of [Con]web" "$TMP/sli.gtop" 120x10 "<Enter>t"
screen l7_to_threads    "threads of pid 1201" "$L7" $L "<Enter><Enter><Enter>t"

# Differential view: two files compared, frames as wide as in AFTER, colored by the change.
DB=$HERE/diff_before.folded
DA=$HERE/diff_after.folded
screen diff_flame "diff_before.folded -> diff_after.folded" "$DA" 120x12 "" --diff "$DB"
screen diff_roles "diff_shrink" "$DA" 120x12 "" --diff "$DB" --dump-roles
# alpha shrank 60 -> 20 (blue), beta grew 30 -> 70 and gamma appeared (red), idle stayed.
# The screen is 12 rows, then a "-- roles --" line and the 12 rows of roles.
roles_row=$(sed -n 19p "$TMP/diff_roles.txt") names_row=$(sed -n 6p "$TMP/diff_flame.txt")
role_at() { # NAME: the role letter under the first letter of NAME on the frames row
	awk -v r="$roles_row" -v n="$names_row" -v w="$1" 'BEGIN { i = index(n, w); print substr(r, i, 1) }'
}
if [ "$(role_at alpha)" = B ] && [ "$(role_at beta)" = R ] && [ "$(role_at gamma)" = R ] &&
	[ "$(sed -n 18p "$TMP/diff_roles.txt" | cut -c1)" = n ]; then
	pass diff_colors_follow_the_change
else
	fail diff_colors_follow_the_change "alpha=$(role_at alpha) beta=$(role_at beta) gamma=$(role_at gamma)"
fi
screen diff_top "+40" "$DA" 120x12 "2" --diff "$DB"
if grep -q " -40 .* -40  alpha" "$TMP/diff_top.txt" && grep -q " +15 .* +15  gamma" "$TMP/diff_top.txt"; then
	pass diff_top_deltas
else
	fail diff_top_deltas "$(cat "$TMP/diff_top.txt")"
fi
# Filters keep both columns: with kernel frames hidden the deltas are the same.
screen diff_top_filtered "+40" "$DA" 120x12 "K2" --diff "$DB"
if grep -q " -40 .* -40  alpha" "$TMP/diff_top_filtered.txt" &&
	grep -q " +15 .* +15  gamma" "$TMP/diff_top_filtered.txt"; then
	pass diff_filters_keep_both_columns
else
	fail diff_filters_keep_both_columns "$(cat "$TMP/diff_top_filtered.txt")"
fi
screen diff_detail "before: total 30" "$DA" 120x12 "<Down><Down><Down>" --diff "$DB"
if "$GALATOP" view --dump --diff "$DB" 2>"$TMP/d1.err" >/dev/null; then fail diff_needs_two_files
else grep -q "two files" "$TMP/d1.err" && pass diff_needs_two_files || fail diff_needs_two_files "$(cat "$TMP/d1.err")"; fi
