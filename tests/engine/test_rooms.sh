#!/bin/sh
# The rooms' rules (docs/architecture.md), checked on the sources: nothing below the engine
# reaches up, the engine reaches neither cli/, tui/ nor curses, and no engine code writes to a
# terminal (its warnings and errors are messages its caller says).
. tests/lib.sh

# includes FILES...: the quoted and angled headers the files include, as "file: header".
includes() { grep -H -E '^[[:space:]]*#[[:space:]]*include' "$@" 2>/dev/null; }

up=$(includes bpf/*.[ch] model/*.[ch] model/*/*.[ch] symbols/*.[ch] util/*.[ch] |
	grep -E '"(\.\./)?(engine|cli|tui)/')
if [ -z "$up" ]; then pass rooms_below_engine_do_not_reach_up
else fail rooms_below_engine_do_not_reach_up "$(echo "$up" | head -3)"; fi

up=$(includes engine/*.[ch] | grep -E '"(\.\./)?(cli|tui|export)/|curses')
if [ -z "$up" ]; then pass rooms_engine_reaches_no_view
else fail rooms_engine_reaches_no_view "$(echo "$up" | head -3)"; fi

# Writing to the terminal: stdio on stdout/stderr, perror, or the fds 1 and 2 themselves.
says=$(grep -n -E '\b(printf|puts|putchar|perror|vprintf)[[:space:]]*\(|std(err|out)\b|\bwrite[[:space:]]*\([[:space:]]*[12][[:space:]]*,' \
	engine/*.c | grep -v -E 'snprintf|vsnprintf')
if [ -z "$says" ]; then pass rooms_engine_never_prints
else fail rooms_engine_never_prints "$(echo "$says" | head -3)"; fi

# The Makefile builds the engine.
if grep -q 'engine/\*\.c' Makefile; then pass rooms_engine_built
else fail rooms_engine_built "LIB_SRCS does not name engine/*.c"; fi
