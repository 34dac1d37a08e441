#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test guest, started by the initramfs after switch_root.  The
# root is the host's / (read-only) under a tmpfs overlay; the repository is
# mounted read-write at its host path.  Runs the job named on the kernel
# command line (iser_vm.job=DIR), then powers off.  PID 1 never exits: the
# kernel would panic.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C LC_ALL=C TERM=dumb

# The repository is mounted at its host path, which may lie under /tmp or
# /run (a clone there): keep that mount visible above the tmpfs mounted
# on them (moved aside, then back). This script is read from it; an open
# file stays readable across the moves.
repo=""
read -r cmdline </proc/cmdline
for arg in $cmdline; do
	case $arg in
	iser_vm.repo=*) repo=${arg#iser_vm.repo=} ;;
	esac
done
held=""
case $repo in
/tmp/* | /run/*)
	mkdir -p /.iser-repo
	mount --move "$repo" /.iser-repo && held=1
	;;
esac
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
if [ -n "$held" ]; then
	mkdir -p "$repo"
	mount --move /.iser-repo "$repo"
fi
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd 2>/dev/null
hostname iser-vm

job=""
for arg in $cmdline; do
	case $arg in
	iser_vm.job=*) job=${arg#iser_vm.job=} ;;
	# two-guest mode (host.sh vm_pair_boot): this guest's role and the
	# directory of the signal files shared with the other guest
	iser_vm.role=*) export VM_PEER_ROLE=${arg#iser_vm.role=} ;;
	iser_vm.sig=*) export VM_PEER_SIG=${arg#iser_vm.sig=} ;;
	esac
done
[ -n "${VM_PEER_ROLE:-}" ] && hostname "iser-vm-$VM_PEER_ROLE"

stty -F /dev/ttyS1 raw -echo 2>/dev/null
progress() {
	echo "@@ $*" >/dev/ttyS1
}

if [ -z "$job" ] || [ ! -d "$job" ]; then
	progress "FATAL no job directory '$job' in the guest"
else
	progress "UP $(uname -r)"
	here=$(dirname "$(readlink -f "$0")")
	bash "$here/run-job.sh" "$job" >"$job/guest.log" 2>&1
	progress "DONE $?"
fi

sync
echo o >/proc/sysrq-trigger
while :; do
	sleep 1000
done
