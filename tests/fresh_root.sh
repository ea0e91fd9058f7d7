#!/bin/bash
# Runs the CI entry point (.ci/run) on a minimal Debian 12 root, as on a fresh machine:
# debootstrap --variant=minbase, then only make and git, then `CI=true bash .ci/run` in a chroot.
# Usage (root): tests/fresh_root.sh [ROOT_DIR]   (default /var/tmp/galatop-fresh-root; never inside
# the git tree). The pristine root is cached as ROOT_DIR.tar so a rerun starts from the same state;
# FRESH=1 rebuilds it. REV=<commit> picks what to test (default HEAD). Not run by `make test`.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-/var/tmp/galatop-fresh-root}
mirror=${MIRROR:-http://deb.debian.org/debian}
rev=$(git -C "$src" rev-parse "${REV:-HEAD}")
[ "$(id -u)" = 0 ] || { echo "fresh_root: run as root" >&2; exit 1; }
case "$root/" in "$src"/*) echo "fresh_root: $root is inside the git tree" >&2; exit 1;; esac
command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }

cleanup() { umount -R "$root" 2>/dev/null || true; }
trap cleanup EXIT INT TERM

if awk -v r="$root/" 'index($2 "/", r) == 1 { f = 1 } END { exit !f }' /proc/mounts; then
	echo "fresh_root: something is mounted under $root; umount -R it first" >&2; exit 1
fi
rm -rf "$root"
if [ -f "$root.tar" ] && [ "${FRESH:-0}" != 1 ]; then
	echo "fresh_root: unpacking the pristine root $root.tar"
	mkdir -p "$root" && tar -C "$root" -xf "$root.tar"
else
	echo "fresh_root: debootstrap --variant=minbase bookworm $root"
	debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	chroot "$root" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make git >/dev/null'
	tar -C "$root" -cf "$root.tar" .
fi

# The root is a mount point of its own, as / is on a machine (`unshare -m --propagation private`,
# which test_java's private-/tmp JVM uses, refuses a root that is not); private, so that what is
# mounted under it stays here.
mount --bind "$root" "$root"
mount --make-private "$root"
# The kernel's views: rbind brings /sys/kernel/{btf,debug,tracing}, /sys/fs/{bpf,cgroup}, /dev/pts;
# rslave keeps our unmounts from reaching the host.
mount -t proc proc "$root/proc"
for d in sys dev; do mount --rbind "/$d" "$root/$d"; mount --make-rslave "$root/$d"; done
# A fresh boot may have neither tracefs nor debugfs mounted (galatop mounts tracefs when it needs
# it): the root's copies go, the host's stay.
for m in kernel/debug/tracing kernel/debug kernel/tracing; do
	if mountpoint -q "$root/sys/$m"; then umount "$root/sys/$m"; fi
done

git clone -q --bare "$src" "$root/tmp/galatop.git"
# The shared test fixtures sit next to the clone, as in the developers' layout (../shared).
[ -d "$src/../shared" ] && cp -rL "$src/../shared" "$root/root/shared"
chroot "$root" sh -c "git clone -q /tmp/galatop.git /root/galatop && cd /root/galatop && git checkout -q $rev"
# The workplace's own certificate authorities (an egress proxy's, in
# /usr/local/share/ca-certificates), which every machine of it trusts: npm reaches its registry
# through them. They are the machine's, not the project's set-up.
extra=""
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
	cat /usr/local/share/ca-certificates/*.crt >"$root/root/workplace-ca.crt"
	extra="NODE_EXTRA_CA_CERTS=/root/workplace-ca.crt"
fi
echo "fresh_root: CI=true bash .ci/run at $rev"
chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=xterm CI=true $extra \
	bash -c 'cd /root/galatop && bash .ci/run'
