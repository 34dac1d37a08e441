#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The dracut initramfs of the boot-from-SAN test (sanboot --dracut): dracut
# (Debian's dracut-core and dracut-network, installed beside
# initramfs-tools) with the package's module 95iser, taken from the .deb
# that scripts/make-deb.sh builds. Nothing on the host changes:
#   - dracut runs with a scratch dracutbasedir, a tree of links to
#     /usr/lib/dracut plus modules.d/95iser from the unpacked package;
#   - the kernel modules come from a scratch tree of links to
#     /lib/modules/RELEASE with our iser_dm.ko and ib_iser.ko in
#     updates/iser/ (what DKMS would have installed), depmod'ed there
#     (dracut --kmoddir);
#   - no host configuration (--conf /dev/null, an empty --confdir),
#     --no-hostonly, the modules of dracut's shell init (no systemd in the
#     initramfs): base, network-legacy, iscsi, iser, rootfs-block,
#     kernel-modules.
#   mkdracut.sh RELEASE OUT MODDIR
# The initiator name and the target come from the kernel command line
# (rd.iscsi.initiator=, netroot=iscsi:...; host.sh vm_san_boot).

set -eu
rel=$1
out=$2
moddir=$3
top=$(cd "$(dirname "$0")/../../.." && pwd)
for f in "$moddir/drivers/core/iser_dm.ko" "$moddir/drivers/initiator/ib_iser.ko"; do
	[ -f "$f" ] || { echo "mkdracut: $f is missing (scripts/build-modules.sh for $rel)" >&2; exit 1; }
done
[ -x /usr/bin/dracut ] && [ -d /usr/lib/dracut/modules.d/95iscsi ] ||
	{ echo "mkdracut: dracut is not installed: apt-get install --no-install-recommends dracut-core dracut-network" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/iser-sanboot-dracut.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$top/scripts/make-deb.sh" >"$tmp/make-deb.log" 2>&1 ||
	{ cat "$tmp/make-deb.log" >&2; echo "mkdracut: make-deb.sh failed" >&2; exit 1; }
deb=$(ls "$top"/build/deb/iser-dkms_*_all.deb)
dpkg-deb -x "$deb" "$tmp/root"
[ -f "$tmp/root/usr/lib/dracut/modules.d/95iser/module-setup.sh" ] ||
	{ echo "mkdracut: $deb has no /usr/lib/dracut/modules.d/95iser" >&2; exit 1; }

mkdir -p "$tmp/dracut"
cp -rs /usr/lib/dracut/. "$tmp/dracut/"
cp -r "$tmp/root/usr/lib/dracut/modules.d/95iser" "$tmp/dracut/modules.d/95iser"

k=$tmp/kmod/lib/modules/$rel
mkdir -p "$tmp/kmod/lib/modules"
cp -rs "/lib/modules/$rel" "$tmp/kmod/lib/modules/"
rm -f "$k"/modules.*
cp "/lib/modules/$rel"/modules.order "/lib/modules/$rel"/modules.builtin* "$k/"
mkdir -p "$k/updates/iser"
cp "$moddir/drivers/core/iser_dm.ko" "$moddir/drivers/initiator/ib_iser.ko" "$k/updates/iser/"
depmod -b "$tmp/kmod" "$rel"

mkdir -p "$tmp/confdir"
dracutbasedir=$tmp/dracut TMPDIR=$tmp dracut --no-hostonly --conf /dev/null \
	--confdir "$tmp/confdir" --kmoddir "$k" \
	-m "base network-legacy iscsi iser rootfs-block kernel-modules" \
	--add-drivers "virtio_net virtio_pci sd_mod ext4" \
	--force "$out.tmp" "$rel" >"$tmp/dracut.log" 2>&1 ||
	{ cat "$tmp/dracut.log" >&2; echo "mkdracut: dracut failed" >&2; exit 1; }
cat "$tmp/dracut.log"
lsinitramfs "$out.tmp" >"$out.list"
for f in updates/iser/ib_iser.ko updates/iser/iser_dm.ko /rdma_rxe.ko hooks/cmdline/89-parse-iser.sh \
	hooks/initqueue/online/50-iser-online.sh usr/lib/iser-lib.sh sbin/iscsiadm; do
	grep -q "$f" "$out.list" || { echo "mkdracut: the image has no $f" >&2; exit 1; }
done
mv "$out.tmp" "$out"
