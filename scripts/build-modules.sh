#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the three modules for one kernel in build/<release>/.
#
#   scripts/build-modules.sh KDIR [--strict] [--sparse]
#
# Kbuild writes objects next to the sources, so each kernel gets its own
# copy of the sources under build/<release>/ (only changed files are
# copied, so rebuilds are incremental). --strict builds with W=1 and fails
# on any warning; --sparse runs sparse (C=2) on every file and fails on any
# sparse warning.

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: build-modules.sh KDIR [--strict] [--sparse]}
shift
strict=0
sparse=0
for a in "$@"; do
	case $a in
	--strict) strict=1 ;;
	--sparse) sparse=1 ;;
	*) echo "build-modules: unknown option $a" >&2; exit 2 ;;
	esac
done

uts=$kdir/include/generated/utsrelease.h
if [ ! -f "$kdir/Makefile" ] || [ ! -f "$uts" ]; then
	echo "build-modules: no kernel headers at $kdir (install linux-headers-<release>, or run scripts/deps.sh)" >&2
	exit 1
fi
krel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$uts")
out=$top/build/$krel
mkdir -p "$out"
# The sources (*.c, *.h, Kbuild) into $out, with plain coreutils: a file
# that did not change keeps its time stamp, so make rebuilds only what
# changed; a source gone from the tree goes from $out, with its object.
srcs() {
	find "$1/drivers" "$1/include" -type f \
		\( -name '*.c' -o -name '*.h' -o -name Kbuild \) 2>/dev/null
}
# (modpost's *.mod.c are Kbuild's own: removing one made the next build
# without a changed source fail, "No rule to make target ...mod.o")
srcs "$out" | grep -v '\.mod\.c$' | while IFS= read -r f; do
	rel=${f#"$out"/}
	[ -e "$top/$rel" ] || rm -f "$f" "${f%.c}.o"
done
srcs "$top" | while IFS= read -r f; do
	rel=${f#"$top"/}
	if ! cmp -s "$f" "$out/$rel"; then
		mkdir -p "$(dirname "$out/$rel")"
		cp -p "$f" "$out/$rel"
	fi
done
cp -p "$top/Kbuild" "$out/Kbuild"

log=$out/build.log
# every core: sparse and W=1 make each object slow to build
args=(-C "$kdir" "M=$out" -j"$(nproc)")
[ $strict = 1 ] && args+=(W=1)
if [ $sparse = 1 ]; then
	command -v sparse >/dev/null || { echo "build-modules: sparse is not installed" >&2; exit 1; }
	args+=(C=2)
	log=$out/sparse.log
fi

echo "  BUILD   $krel${strict:+}$( [ $strict = 1 ] && echo ' W=1')$( [ $sparse = 1 ] && echo ' C=2')"
if ! make "${args[@]}" modules >"$log" 2>&1; then
	grep -E 'error|warning' "$log" | head -n 40 >&2 || tail -n 40 "$log" >&2
	echo "build-modules: build for $krel failed (log: $log)" >&2
	exit 1
fi
# Warnings in our own files (W=1 or sparse) fail the build.
if [ $strict = 1 ] || [ $sparse = 1 ]; then
	if grep -E "^$out/.*: (warning|error):|^(drivers|include)/.*: (warning|error):" "$log" >&2; then
		echo "build-modules: warnings for $krel (log: $log)" >&2
		exit 1
	fi
fi
for m in drivers/core/iser_dm.ko drivers/initiator/ib_iser.ko drivers/target/ib_isert.ko; do
	[ -f "$out/$m" ] || { echo "build-modules: $m was not built" >&2; exit 1; }
done
echo "  OK      $out"
