#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The root file system of the boot-from-SAN test (tests/vm/scenarios/sanboot.sh,
# Documentation/testing-vm.md "Boot from SAN"): a 64 MiB ext4 image with
# busybox, this directory's rootinit.sh as /sbin/init, and open-iscsi's
# iscsid and iscsiadm with their libraries (a booted system runs iscsid,
# which takes the root session over from the initramfs' iscsistart and
# reconnects it after a link loss). No kernel modules: everything the
# root needs is loaded by the initramfs.
#   mkroot.sh OUT.img INITIATOR-IQN
# Everything comes from the host (busybox-static, open-iscsi); the image
# has a fixed UUID, hash seed and time stamps, so the same inputs give the
# same image.

set -eu
out=$1
iqn=$2
here=$(cd "$(dirname "$0")" && pwd)
for f in /bin/busybox /sbin/iscsid /sbin/iscsiadm /etc/iscsi/iscsid.conf; do
	[ -e "$f" ] || { echo "mkroot: $f is missing (busybox-static, open-iscsi)" >&2; exit 1; }
done
command -v mke2fs >/dev/null || { echo "mkroot: mke2fs is missing (e2fsprogs)" >&2; exit 1; }
stage=$(mktemp -d "${TMPDIR:-/tmp}/iser-sanroot.XXXXXX")
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,etc/iscsi/nodes,etc/iscsi/send_targets,dev,proc,sys,run,tmp,root,mnt,var/lib/iser-san,var/lib/iscsi,var/lock}
chmod 1777 "$stage/tmp"
cp /bin/busybox "$stage/bin/busybox"
for a in $(/bin/busybox --list-full); do
	case $a in
	bin/busybox | sbin/init | linuxrc) continue ;;
	esac
	ln -sf /bin/busybox "$stage/$a"
done
install -m 755 "$here/rootinit.sh" "$stage/sbin/init"

# copy_exec FILE: FILE and the shared libraries it loads, at their paths
copy_exec() {
	local f
	for f in "$1" $(ldd "$1" | awk '/=> \//{ print $3 } /^\t\/lib/{ print $1 }'); do
		mkdir -p "$stage$(dirname "$f")"
		cp -L "$f" "$stage$f"
	done
}
copy_exec /sbin/iscsid
copy_exec /sbin/iscsiadm
cp /etc/iscsi/iscsid.conf "$stage/etc/iscsi/iscsid.conf"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
printf 'root:x:0:\n' >"$stage/etc/group"
printf '/dev/root / ext4 rw 0 1\n' >"$stage/etc/fstab"
echo iser-san >"$stage/etc/hostname"
echo "InitiatorName=$iqn" >"$stage/etc/iscsi/initiatorname.iscsi"
# the kernel log lines that fail a test: the rig's one list
mkdir -p "$stage/etc/iser-san"
sed -n "s/^VM_BAD_KLOG='\(.*\)'\$/\1/p" "$here/../guest/lib.sh" >"$stage/etc/iser-san/bad-klog"
[ -s "$stage/etc/iser-san/bad-klog" ] || { echo "mkroot: no VM_BAD_KLOG in guest/lib.sh" >&2; exit 1; }

find "$stage" -exec touch -h -d @1700000000 {} +
rm -f "$out.tmp"
E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -L iser-san-root \
	-U 6c0d2a3e-5a1b-4c7e-9d2f-15e0a1b2c3d4 \
	-E root_owner=0:0,hash_seed=0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9 \
	-d "$stage" "$out.tmp" 64M
mv "$out.tmp" "$out"
