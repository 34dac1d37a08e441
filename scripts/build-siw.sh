#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build soft-iWARP (siw.ko) out of tree for one or more Debian kernels.
#
#   scripts/build-siw.sh [KREL...]     (default: the 6.1 and the 6.12 kernel
#                                       of scripts/kernels.sh)
#
# Debian's kernels are built without CONFIG_RDMA_SIW, so the guest rig
# (tests/vm, ISER_VM_RDMA=siw) uses this module to run iSER over iWARP.
# Only drivers/infiniband/sw/siw is taken from Debian's kernel source
# (/usr/src/linux-source-MAJOR.MINOR.tar.xz, package linux-source-MAJOR.MINOR
# in scripts/packages.txt), unpacked once per tarball into
# build/siw-src/MAJOR.MINOR/, and built against
# /usr/src/linux-headers-KREL with CONFIG_RDMA_SIW=m into
# build/KREL/siw/siw.ko.  It is not our code: it is built without W=1 and
# sparse, and its warnings do not fail the build.  The module's vermagic
# must be KREL's.
#
# The source package need not be the headers' exact version: for 6.12 it
# is 6.12.117 while the kernel is 6.12.107.  That does not matter for siw:
# the module is compiled against the 6.12.107 headers, so every structure
# it shares with ib_core (struct ib_device_ops and the rest) has the
# running kernel's layout, and modversions checks each symbol it imports
# from ib_core, ib_uverbs and libcrc32c against 6.12.107's CRCs at load
# time.  What the newer source adds is siw's own stable fixes up to
# 6.12.117 (Debian's changelog: "RDMA/siw: Fix use-after-free in
# siw_accept()", "Bound fragmented header copies by the remaining
# length", ...); none of them uses an ib_core interface that 6.12.107
# lacks (the new pre_destroy_cq/post_destroy_cq ops are not used by siw),
# and a source that did would not compile against these headers.

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=kernels.sh
. "$top/scripts/kernels.sh"

die() {
	echo "build-siw: $*" >&2
	exit 1
}

# unpack KREL's siw sources, if the tarball changed; prints the directory
siw_source() {
	local krel=$1 series tarball dir key
	series=$(echo "$krel" | sed -n 's/^\([0-9]*\.[0-9]*\)[.-].*/\1/p')
	[ -n "$series" ] || die "cannot tell the kernel series of '$krel'"
	tarball=/usr/src/linux-source-$series.tar.xz
	[ -r "$tarball" ] ||
		die "$tarball is missing: install linux-source-$series (scripts/deps.sh)"
	dir=$top/build/siw-src/$series
	key=$(stat -c '%s %Y' "$tarball")
	if [ "$(cat "$dir/key" 2>/dev/null)" != "$key" ] ||
		[ ! -f "$dir/siw/Makefile" ]; then
		echo "  UNPACK  $tarball: drivers/infiniband/sw/siw" >&2
		rm -rf "$dir"
		mkdir -p "$dir/tmp"
		tar -C "$dir/tmp" -xJf "$tarball" --wildcards \
			"linux-source-$series/drivers/infiniband/sw/siw/*" ||
			die "cannot unpack siw from $tarball"
		mv "$dir/tmp/linux-source-$series/drivers/infiniband/sw/siw" "$dir/siw"
		rm -rf "$dir/tmp"
		echo "$key" >"$dir/key"
	fi
	echo "$dir/siw"
}

build_one() {
	local krel=$1 kdir=/usr/src/linux-headers-$1 src out log vm
	[ -f "$kdir/Makefile" ] ||
		die "no kernel headers at $kdir (install linux-headers-$krel, or run scripts/deps.sh)"
	src=$(siw_source "$krel")
	out=$top/build/$krel/siw
	mkdir -p "$out"
	rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod*' \
		--exclude='.*.cmd' --exclude='modules.order' \
		--exclude='Module.symvers' --exclude='build.log' "$src/" "$out/"
	log=$out/build.log
	echo "  BUILD   siw $krel"
	if ! make -C "$kdir" M="$out" CONFIG_RDMA_SIW=m modules >"$log" 2>&1; then
		grep -E 'error' "$log" | head -n 40 >&2 || tail -n 40 "$log" >&2
		die "build for $krel failed (log: $log)"
	fi
	[ -f "$out/siw.ko" ] || die "siw.ko was not built for $krel (log: $log)"
	vm=$(modinfo -F vermagic "$out/siw.ko" | awk '{ print $1 }')
	[ "$vm" = "$krel" ] ||
		die "$out/siw.ko has vermagic '$vm', not '$krel'"
	echo "  OK      $out/siw.ko"
}

[ $# -gt 0 ] || set -- "$KREL_61" "$KREL_612"
for krel in "$@"; do
	[ -n "$krel" ] || die "no 6.1 kernel headers are installed (scripts/deps.sh)"
	build_one "$krel"
done
