#!/bin/sh
# Checks the Debian packages galatop needs; as root with apt, installs the missing ones.
missing=""
# A package whose command is already in /usr/bin from another source counts as there: npm
# comes with nodesource's nodejs, which Debian's npm cannot be installed over.
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || [ -x "/usr/bin/$p" ] ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
cmd="apt-get update && apt-get install -y$missing"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing:$missing"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null ||
		{ echo "deps: install failed; run: $cmd" >&2; exit 1; }
else
	echo "deps: missing packages:$missing" >&2
	echo "deps: run as root: $cmd" >&2
	exit 1
fi
