#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
#
# /init of the guest rig's initramfs (busybox only).  Loads the virtio, 9p
# and overlay modules, mounts the host's / read-only (9p tag "hostroot")
# under a tmpfs overlay, moves /proc, /sys and /dev over, mounts the
# guest's own tmpfs and pseudo-filesystems (/run, /tmp, /dev/pts,
# /dev/shm), then, last of all, the repository read-write (9p tag "repo")
# at its host path, and hands over to tests/vm/guest/pid1.sh in the new
# root.  The repository comes last so that no mount of the guest's can
# hide it, wherever the clone lives (/tmp, /run, /dev/shm, ...).

/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

fail() {
	echo "iser-vm-init: $*"
	echo "@@ FATAL initramfs: $*" >/dev/ttyS1
	# /proc may have moved into the new root already
	for t in /proc/sysrq-trigger /newroot/proc/sysrq-trigger; do
		[ -e $t ] && echo o >$t
	done
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

mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
mount -t tmpfs -o mode=0755 tmpfs /newroot/run || fail "cannot mount tmpfs on /run"
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp || fail "cannot mount tmpfs on /tmp"
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts || fail "cannot mount devpts"
mount -t tmpfs tmpfs /newroot/dev/shm || fail "cannot mount tmpfs on /dev/shm"

# last: nothing mounted after it can hide the share.  Its mount point may
# be on one of the tmpfs above (a clone under /tmp): create it there.
mkdir -p "/newroot$repo" ||
	fail "cannot create the repository's mount point $repo in the guest"
mount -t 9p -o "$opts,cache=none" repo "/newroot$repo" ||
	fail "cannot mount the repository (9p tag repo) at $repo"
[ -r "/newroot$repo/tests/vm/guest/pid1.sh" ] ||
	fail "the repository mounted at $repo has no tests/vm/guest/pid1.sh"

exec switch_root /newroot /bin/bash "$repo/tests/vm/guest/pid1.sh"
