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

# /run, /tmp, /dev/pts and /dev/shm are mounted by the initramfs
# (tests/vm/initramfs-init.sh) before the repository share, so that none
# of them hides a clone that lives below one of them.
ln -sf /proc/self/fd /dev/fd 2>/dev/null
# debugfs, once for every scenario: our modules' state files, dynamic
# debug, kmemleak
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
read -r cmdline </proc/cmdline
hostname iser-vm

job=""
for arg in $cmdline; do
	case $arg in
	iser_vm.job=*) job=${arg#iser_vm.job=} ;;
	# ISER_VM_TIMEOUT_SCALE of the host (the debug kernel's), for the
	# time limits a scenario sets itself (VM_TIMEOUT_SCALE)
	iser_vm.scale=*) export VM_TIMEOUT_SCALE=${arg#iser_vm.scale=} ;;
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
