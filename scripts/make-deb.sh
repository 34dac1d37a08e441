#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the iser-dkms binary package into build/deb/ (or DIR).
#   scripts/make-deb.sh [--out DIR]
#
# The tree is copied into a temporary directory first (without .git,
# build/ and tests/), so that dpkg-buildpackage writes nothing into the
# checkout and its results land in a directory of their own.

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/deb
case ${1:-} in
"") ;;
--out) out=${2:?make-deb: --out needs a directory} ;;
*) echo "usage: scripts/make-deb.sh [--out DIR]" >&2; exit 2 ;;
esac
ver=$(cat "$top/VERSION")
chver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
if [ "$ver" != "$chver" ]; then
	echo "make-deb: VERSION ($ver) and debian/changelog ($chver) differ" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/iser-$ver
mkdir -p "$src"
rsync -a --exclude=/.git --exclude=/build/ --exclude=/tests/ \
	--exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' \
	--exclude='.*.cmd' --exclude=modules.order --exclude=Module.symvers \
	"$top/" "$src/"

log=$tmp/build.log
echo "  DEB     iser-dkms $ver"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "make-deb: dpkg-buildpackage failed" >&2
	exit 1
fi

mkdir -p "$out"
rm -f "$out"/iser-dkms_*.deb "$out"/iser_*.changes "$out"/iser_*.buildinfo
cp "$tmp"/iser-dkms_"$ver"_all.deb "$tmp"/iser_"$ver"_*.changes \
	"$tmp"/iser_"$ver"_*.buildinfo "$out/"
cp "$log" "$out/build.log"
echo "  OK      $out/iser-dkms_${ver}_all.deb"
