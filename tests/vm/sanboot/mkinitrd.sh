#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The initramfs of the boot-from-SAN test, made the way an installed
# iser-dkms package makes it: mkinitramfs with the package's hook and
# scripts (taken from the .deb that scripts/make-deb.sh builds, unpacked
# into a scratch root), Debian's own hooks (open-iscsi's among them),
# MODULES=most, and an /etc/iscsi/iscsi.initramfs that selects iSER and
# soft-RoCE on eth0.
#   mkinitrd.sh RELEASE OUT MODDIR INITIATOR-IQN [norxe]
# norxe: iscsi.initramfs holds ISCSI_TRANSPORT=iser only, without
# ISER_RXE_NETDEV, so the image has neither rdma_rxe nor rdma and no RDMA
# device comes up in the boot (the "no RDMA device" case of sanboot --bad).
# MODDIR is build/<release>: our iser_dm.ko and ib_iser.ko come from
# there (the hook's ISER_MODULES_FROM, in place of the modules DKMS
# would have built for RELEASE; the hook puts them in updates/).
# The scratch configuration directory is passed with mkinitramfs -d, so
# nothing on the host changes.

set -eu
rel=$1
out=$2
moddir=$3
iqn=$4
variant=${5:-rxe}
case $variant in
rxe | norxe) ;;
*) echo "mkinitrd: unknown variant '$variant' (rxe or norxe)" >&2; exit 1 ;;
esac
top=$(cd "$(dirname "$0")/../../.." && pwd)
for f in "$moddir/drivers/core/iser_dm.ko" "$moddir/drivers/initiator/ib_iser.ko"; do
	[ -f "$f" ] || { echo "mkinitrd: $f is missing (scripts/build-modules.sh for $rel)" >&2; exit 1; }
done
command -v mkinitramfs >/dev/null || { echo "mkinitrd: mkinitramfs is missing (initramfs-tools)" >&2; exit 1; }
[ -x /sbin/iscsistart ] || { echo "mkinitrd: /sbin/iscsistart is missing (open-iscsi)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/iser-sanboot-initrd.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# the package, as apt would unpack it
"$top/scripts/make-deb.sh" >"$tmp/make-deb.log" 2>&1 ||
	{ cat "$tmp/make-deb.log" >&2; echo "mkinitrd: make-deb.sh failed" >&2; exit 1; }
deb=$(ls "$top"/build/deb/iser-dkms_*_all.deb)
dpkg-deb -x "$deb" "$tmp/root"
pkg=$tmp/root/usr/share/initramfs-tools
for f in hooks/iser scripts/init-premount/iser scripts/local-bottom/iser scripts/iser-functions; do
	[ -f "$pkg/$f" ] || { echo "mkinitrd: $deb has no /usr/share/initramfs-tools/$f" >&2; exit 1; }
done

# /etc/initramfs-tools as an administrator would have it: Debian's
# initramfs.conf, and the package's files where the package puts them
# (mkinitramfs reads hooks and scripts from the configuration directory
# as well as from /usr/share/initramfs-tools)
cd_=$tmp/conf
mkdir -p "$cd_/hooks" "$cd_/scripts/init-premount" "$cd_/scripts/local-bottom" "$cd_/conf.d"
cp /usr/share/initramfs-tools/conf.d/* "$cd_/conf.d/" 2>/dev/null || :
cat >"$cd_/initramfs.conf" <<-EOC
	MODULES=most
	BUSYBOX=auto
	KEYMAP=n
	COMPRESS=zstd
	DEVICE=
	NFSROOT=auto
	RUNSIZE=10%
	FSTYPE=auto
EOC
: >"$cd_/modules"
cp -p "$pkg/hooks/iser" "$cd_/hooks/iser"
cp -p "$pkg/scripts/init-premount/iser" "$cd_/scripts/init-premount/iser"
cp -p "$pkg/scripts/local-bottom/iser" "$cd_/scripts/local-bottom/iser"
cp -p "$pkg/scripts/iser-functions" "$cd_/scripts/iser-functions"

# /etc/iscsi/iscsi.initramfs and the initiator name; the target comes
# from root=iscsi:... on the kernel command line (host.sh vm_san_boot)
echo "ISCSI_TRANSPORT=iser" >"$tmp/iscsi.initramfs"
[ "$variant" = norxe ] || echo "ISER_RXE_NETDEV=eth0" >>"$tmp/iscsi.initramfs"
echo "InitiatorName=$iqn" >"$tmp/initiatorname.iscsi"
mkdir -p "$tmp/mods"
cp "$moddir/drivers/core/iser_dm.ko" "$moddir/drivers/initiator/ib_iser.ko" "$tmp/mods/"

ISER_MODULES_FROM=$tmp/mods ISER_ISCSI_CONF=$tmp/iscsi.initramfs \
	ISER_INITIATORNAME=$tmp/initiatorname.iscsi TMPDIR=$tmp \
	mkinitramfs -d "$cd_" -o "$out.tmp" "$rel" >"$tmp/mkinitramfs.log" 2>&1 ||
	{ cat "$tmp/mkinitramfs.log" >&2; echo "mkinitrd: mkinitramfs failed" >&2; exit 1; }
# what went in, for the log
lsinitramfs "$out.tmp" >"$out.list"
cat "$tmp/mkinitramfs.log"
must="updates/iser/ib_iser.ko updates/iser/iser_dm.ko scripts/init-premount/iser scripts/local-bottom/iser etc/iscsi.initramfs sbin/iscsistart"
if [ "$variant" = norxe ]; then
	for f in /rdma_rxe.ko sbin/rdma; do
		! grep -q "$f" "$out.list" || { echo "mkinitrd: the norxe image has $f" >&2; exit 1; }
	done
else
	must="$must /rdma_rxe.ko"
fi
for f in $must; do
	grep -q "$f" "$out.list" || { echo "mkinitrd: the image has no $f" >&2; exit 1; }
done
mv "$out.tmp" "$out"
