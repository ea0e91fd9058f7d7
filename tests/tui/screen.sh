# Sourced by the screen tests of `galatop view --dump`: the environment that makes screens
# reproducible, and screen/row/assert (GALATOP_UPDATE_GOLDEN=1 rewrites the goldens).
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
GOLDEN=$HERE/golden
export GALATOP_THEMES="$HERE/../../themes"
export LC_ALL=C.UTF-8 SOURCE_DATE_EPOCH=0 TZ=UTC
unset NO_COLOR COLORTERM

# screen NAME EXPECT FILE SIZE KEYS [OPTIONS...]: dump, compare with the golden, grep EXPECT.
screen() {
	name=$1 expect=$2 file=$3 size=$4 keys=$5
	shift 5
	out=$TMP/$name.txt
	if ! "$GALATOP" view --dump --size "$size" --keys "$keys" "$@" "$file" >"$out" 2>"$TMP/$name.err"; then
		fail "$name" "exit status $? ($(head -c 300 "$TMP/$name.err"))"
		return
	fi
	if [ -s "$TMP/$name.err" ]; then
		fail "$name" "stderr: $(head -c 300 "$TMP/$name.err")"
		return
	fi
	if [ -n "$expect" ] && ! grep -qF -- "$expect" "$out"; then
		fail "$name" "screen lacks '$expect'"
		sed 's/^/    | /' "$out"
		return
	fi
	if [ "${GALATOP_UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$out" "$GOLDEN/$name.txt"
		pass "$name (golden updated)"
	elif [ ! -f "$GOLDEN/$name.txt" ]; then
		fail "$name" "no golden $GOLDEN/$name.txt (GALATOP_UPDATE_GOLDEN=1 makes it)"
	elif ! diff -u "$GOLDEN/$name.txt" "$out" >"$TMP/$name.diff"; then
		fail "$name" "screen differs from the golden"
		head -40 "$TMP/$name.diff" | sed 's/^/    /'
	else
		pass "$name"
	fi
}

# line N of the last screen
row() { sed -n "${2}p" "$TMP/$1.txt"; }
# assert NAME DESCRIPTION COMMAND...: a second check on a case's screen
assert() { n=$1 d=$2; shift 2; if "$@"; then pass "$n: $d"; else fail "$n: $d"; fi; }

