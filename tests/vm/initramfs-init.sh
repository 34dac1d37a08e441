#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
#
# /init of the guest rig's initramfs (busybox only).  Loads the virtio, 9p
# and overlay modules, mounts the host's / read-only (9p tag "hostroot")
# under a tmpfs overlay, mounts the repository read-write (9p tag "repo")
# at its host path, moves /proc, /sys and /dev over and hands over to
# tests/vm/guest/pid1.sh in the new root.

/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

fail() {
	echo "iser-vm-init: $*"
	echo "@@ FATAL initramfs: $*" >/dev/ttyS1
	echo o >/proc/sysrq-trigger
	while :; do sleep 1000; done
}

while read -r m; do
	insmod "/lib/modules/$m" || fail "insmod $m failed"
done </modules.order

repo=""
read -r cmdline </proc/cmdline
for arg in $cmdline; do
	case $arg in
	iser_vm.repo=*) repo=${arg#iser_vm.repo=} ;;
	esac
done
[ -n "$repo" ] || fail "no iser_vm.repo= on the kernel command line"

opts=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o "$opts,ro,cache=loose" hostroot /lower ||
	fail "cannot mount the host root (9p tag hostroot)"
mount -t tmpfs -o mode=0755 tmpfs /rw || fail "cannot mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work \
	overlay /newroot || fail "cannot mount the overlay root"
mount -t 9p -o "$opts,cache=none" repo "/newroot$repo" ||
	fail "cannot mount the repository (9p tag repo) at $repo"

mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev

exec switch_root /newroot /bin/bash "$repo/tests/vm/guest/pid1.sh"
