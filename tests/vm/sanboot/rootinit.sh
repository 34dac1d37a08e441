#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /sbin/init of the boot-from-SAN test's root file system (mkroot.sh puts
# it there; busybox sh). The initramfs made by our initramfs-tools hook
# logged in over iSER, mounted this file system from the LUN and moved
# /proc, /sys, /dev and /run here. This script reports to the host on
# the second serial port ("@@ " lines, read by host.sh vm_san_boot):
#   UP RELEASE boot=N          the root is running
#   ROOT key=value...          what the root is mounted from
#   SESSION line               iscsiadm -m session, once iscsid runs
#   MARKER wrote|found TOKEN   boot 1 writes a marker, boot 2 reads it
#   FLAP ...                   the writes across a link outage (flap mode)
#   KLOG clean | KLOG bad: ... the kernel log (VM_BAD_KLOG of guest/lib.sh)
#   TAINT N                    /proc/sys/kernel/tainted
#   CHECK FAIL: reason         a check in here failed
#   DONE 0                     the end; then reboot (boot 1) or power off
# The host judges; this script only reports what it finds. Kernel
# command line: iser_san.boot=1|2, iser_san.mode=plain|flap,
# iser_san.flap=SECONDS (how long to write in flap mode).

export PATH=/sbin:/bin:/usr/sbin:/usr/bin
# (the initramfs moved /proc, /sys, /dev and /run here; busybox has no
# mountpoint)
[ -e /proc/self ] || mount -t proc proc /proc
[ -d /sys/class ] || mount -t sysfs sysfs /sys
[ -e /dev/ttyS1 ] || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
stty -F /dev/ttyS1 raw -echo 2>/dev/null

say() {
	echo "@@ $*" >/dev/ttyS1
	echo "iser-san: $*" >/dev/console
}
failed=0
check_fail() {
	failed=$((failed + 1))
	say "CHECK FAIL: $*"
}

boot=
mode=plain
flap=60
for a in $(cat /proc/cmdline); do
	case $a in
	iser_san.boot=*) boot=${a#*=} ;;
	iser_san.mode=*) mode=${a#*=} ;;
	iser_san.flap=*) flap=${a#*=} ;;
	esac
done
say "UP $(uname -r) boot=$boot mode=$mode"
echo 45 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null

finish() {
	if [ -s /run/iscsid.log ]; then
		sed 's/^/iscsid: /' /run/iscsid.log >/dev/console
	fi
	bad=$(dmesg | grep -aE -f /etc/iser-san/bad-klog | head -n 3 | sed 's/^\[[^]]*\] *//' | tr '\n' ';')
	if [ -n "$bad" ]; then
		say "KLOG bad: $bad"
	else
		say "KLOG clean"
	fi
	say "TAINT $(cat /proc/sys/kernel/tainted)"
	sync
	mount -o remount,ro / || say "CHECK FAIL: cannot remount / read-only"
	say "DONE 0"
	sleep 1
	if [ "$boot" = 1 ]; then
		reboot -f
	fi
	poweroff -f
	while :; do sleep 1000; done
}

mount -o remount,rw / || { check_fail "cannot remount / read-write"; finish; }

# what the root is mounted from: a disk of an iSCSI session, on a SCSI
# host of the iser transport, and the modules that serve it
# (by its device number: dracut mounts /dev/root, a link)
mm=$(awk '$5 == "/" { d = $3 } END { print d }' /proc/self/mountinfo)
fstype=$(awk '$2 == "/" && $1 != "rootfs" { t = $3 } END { print t }' /proc/mounts)
disk=$(basename "$(readlink -f "/sys/dev/block/$mm")")
rootdev=/dev/$disk
sess=
for s in /sys/class/iscsi_session/session*; do
	for b in "$s"/device/target*/*/block/"$disk"; do
		[ -e "$b" ] && sess=${s##*/}
	done
done
nsess=$(ls -d /sys/class/iscsi_session/session* 2>/dev/null | wc -l)
tn=- proc=- portal=-
if [ -n "$sess" ]; then
	tn=$(cat "/sys/class/iscsi_session/$sess/targetname")
	host=$(basename "$(dirname "$(readlink -f "/sys/class/iscsi_session/$sess/device")")")
	proc=$(cat "/sys/class/scsi_host/$host/proc_name")
	c=$(ls -d /sys/class/iscsi_session/"$sess"/device/connection*/iscsi_connection/connection* 2>/dev/null | head -n 1)
	[ -n "$c" ] && portal=$(cat "$c/persistent_address"):$(cat "$c/persistent_port")
fi
ini=$(cat /sys/module/ib_iser/srcversion 2>/dev/null || echo none)
dm=$(cat /sys/module/iser_dm/srcversion 2>/dev/null || echo none)
say "ROOT dev=$rootdev fstype=$fstype session=${sess:-none} sessions=$nsess target=$tn portal=$portal scsi_host=$proc ib_iser=$ini iser_dm=$dm"
# booted through firmware that described the LUN (sanboot --ibft): what
# the iBFT says (iscsi_ibft, loaded by the initramfs)
ibft=/sys/firmware/ibft
if [ -d $ibft ]; then
	say "IBFT target=$(cat $ibft/target0/target-name) initiator=$(cat $ibft/initiator/initiator-name) ip=$(cat $ibft/ethernet0/ip-addr)"
fi

[ -d /sys/kernel/debug/ib_iser ] || mount -t debugfs debugfs /sys/kernel/debug
for f in /sys/kernel/debug/ib_iser/host*/conn; do
	[ -r "$f" ] && sed 's/^/ib_iser conn: /' "$f" >/dev/console
done

# iscsid, as a booted system runs it: it takes the session over from
# the initramfs' iscsistart (and reconnects it after a connection loss)
mkdir -p /run/lock/iscsi
iscsid -f -d 1 >/run/iscsid.log 2>&1 &
n=0
while ! grep -q ISCSIADM_ABSTRACT_NAMESPACE /proc/net/unix 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 20 ] || break
	sleep 0.5
done
# Taking the session over, iscsid stops its connection and logs in
# again (open-iscsi's iscsi_sync_session() reopens it: "connection1:0
# is operational after recovery"); wait for that, so that it does not
# fall into the writes below
n=0
while ! grep -q 'operational after recovery' /run/iscsid.log 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 60 ] || break
	sleep 0.5
done
say "SESSION $(iscsiadm -m session 2>&1 | head -n 2 | tr '\n' ';') takeover=$(grep -c 'operational after recovery' /run/iscsid.log)"

d=/var/lib/iser-san
if [ "$boot" = 1 ]; then
	if [ -e $d/marker ]; then
		check_fail "boot 1 found a marker already ($(cat $d/marker)): the image is not fresh"
	fi
	token=$(cat /proc/sys/kernel/random/uuid)
	dd if=/dev/urandom of=$d/data bs=64k count=64 conv=fsync 2>/dev/null ||
		check_fail "writing $d/data failed"
	(cd $d && md5sum data >data.md5)
	echo "$token" >$d/marker
	sync
	say "MARKER wrote $(cat $d/marker)"
	if [ "$mode" = flap ]; then
		# the target's address stays resolved through the outage (a
		# failed ARP makes soft-RoCE's transmit fail, see linkflap.sh)
		ip=$(echo "$portal" | cut -d: -f1)
		arp -s "$ip" 52:54:00:12:78:01 ||
			check_fail "arp -s $ip failed"
		errs0=$(dmesg | grep -c 'detected conn error')
		say "WRITING $flap"
		start=$(date +%s)
		i=0 max=0
		while [ $(($(date +%s) - start)) -lt "$flap" ]; do
			i=$((i + 1))
			t0=$(date +%s)
			# 32 files of 256 KiB, rewritten in turn: the file
			# system has about 30 MiB free
			if ! out=$(dd if=/dev/urandom of=$d/flap.$((i % 32)) bs=64k count=4 conv=fsync 2>&1); then
				check_fail "write $i of the flap files failed: $(echo "$out" | head -n 1)"
				break
			fi
			t=$(($(date +%s) - t0))
			[ $t -gt $max ] && max=$t
		done
		(cd $d && md5sum flap.* >flap.md5)
		sync
		errs=$(($(dmesg | grep -c 'detected conn error') - errs0))
		say "FLAP files=$i longest_write=${max}s conn_errors=$errs state=$(iscsiadm -m session -P 1 2>&1 | grep -m1 'Session State' | tr -d ' \t')"
	fi
elif [ "$boot" = 2 ]; then
	if [ -e $d/marker ]; then
		say "MARKER found $(cat $d/marker)"
	else
		say "MARKER missing"
	fi
	# a new boot: these reads come from the LUN, not from a page cache
	(cd $d && md5sum -c data.md5 >/dev/null 2>&1) || check_fail "$d/data does not match its checksum"
	if [ -e $d/flap.md5 ]; then
		if (cd $d && md5sum -c flap.md5 >/dev/null 2>&1); then
			say "FLAPDATA ok $(wc -l <$d/flap.md5)"
		else
			check_fail "the files written across the outage do not match their checksums"
		fi
	fi
else
	check_fail "no iser_san.boot= on the kernel command line"
fi
finish
