#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build and install the debug guest kernel: Debian's 6.1 source
# (linux-source-6.1) with KASAN, lockdep (PROVE_LOCKING), kmemleak,
# DEBUG_LIST, atomic-sleep and hung-task checks, for make check-debug.
#
#   scripts/debug-kernel.sh          build if needed, print the release
#
# The source is unpacked and built under /var/cache/iser/debug-kernel
# (ISER_DEBUG_KERNEL_DIR; outside the clone, so that a new clone reuses
# it; about 25 minutes on 2 cores the first time). The kernel is installed as
# /boot/vmlinuz-<release> with its modules in /lib/modules/<release>/, the
# places the guest rig boots from; /lib/modules/<release>/build points at
# the build tree so that our modules can be built for it. The release ends
# in -iser-debug; nothing else on the host changes, and the boot loader is
# not touched. A stamp (source version + configuration) skips the build
# when nothing changed. Progress goes to stderr, the release to stdout.

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tarball=/usr/src/linux-source-6.1.tar.xz
frag=$top/tests/vm/debug/debug.config
work=${ISER_DEBUG_KERNEL_DIR:-/var/cache/iser/debug-kernel}
src=$work/linux-source-6.1
obj=$work/obj
suffix=-iser-debug

die() {
	echo "debug-kernel: $*" >&2
	exit 1
}

[ -r "$tarball" ] || die "$tarball is missing: install linux-source-6.1 (scripts/deps.sh)"
for t in flex bison bc cpio; do
	command -v "$t" >/dev/null || die "$t is missing (scripts/deps.sh)"
done
[ -r /usr/include/libelf.h ] || die "libelf-dev is missing (scripts/deps.sh)"
[ -r /usr/include/openssl/ssl.h ] || die "libssl-dev is missing (scripts/deps.sh)"

mkdir -p "$work"
srckey=$(stat -c '%s %Y' "$tarball")
if [ "$(cat "$work/src.key" 2>/dev/null)" != "$srckey" ]; then
	echo "debug-kernel: unpacking $tarball" >&2
	rm -rf "$src" "$obj"
	tar -C "$work" -xJf "$tarball"
	echo "$srckey" >"$work/src.key"
fi

key=$( { echo "$srckey"; cat "$frag"; } | sha256sum | cut -d' ' -f1)
ver=$(make -s -C "$src" kernelversion)
rel=$ver$suffix
if [ "$(cat "$work/build.key" 2>/dev/null)" = "$key" ] &&
	[ -r "/boot/vmlinuz-$rel" ] && [ -r "/lib/modules/$rel/modules.dep" ] &&
	[ -e "/lib/modules/$rel/build/Module.symvers" ]; then
	echo "$rel"
	exit 0
fi

mkdir -p "$obj"
kmake() {
	make -s -C "$src" O="$obj" LOCALVERSION="$suffix" "$@"
}
echo "debug-kernel: configuring $rel" >&2
kmake x86_64_defconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
	"$src/kernel/configs/kvm_guest.config" "$frag" >/dev/null
kmake olddefconfig >/dev/null
# every option the fragment sets must have survived olddefconfig
bad=
while IFS= read -r line; do
	case $line in
	CONFIG_*=n) opt=${line%%=*}
		grep -q "^$opt=" "$obj/.config" && bad="$bad $line" ;;
	CONFIG_*) grep -qx "$line" "$obj/.config" || bad="$bad $line" ;;
	esac
done <"$frag"
[ -z "$bad" ] || die "the configuration lost:$bad"

echo "debug-kernel: building $rel (log: $work/build.log)" >&2
if ! kmake -j"$(nproc)" bzImage modules >"$work/build.log" 2>&1; then
	tail -n 30 "$work/build.log" >&2
	die "the kernel build failed (log: $work/build.log)"
fi
kmake modules_install INSTALL_MOD_STRIP=1 >/dev/null
install -m 644 "$obj/arch/x86/boot/bzImage" "/boot/vmlinuz-$rel"
install -m 644 "$obj/System.map" "/boot/System.map-$rel"
install -m 644 "$obj/.config" "/boot/config-$rel"
rm -f "/lib/modules/$rel/build" "/lib/modules/$rel/source"
ln -s "$obj" "/lib/modules/$rel/build"
depmod -a "$rel"
echo "$key" >"$work/build.key"
echo "$rel"
