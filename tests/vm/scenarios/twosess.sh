# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Two sessions at once: a second target (tgt1, its own 64 MiB ramdisk)
# shares the iSER portal 192.168.77.1:3260 with tgt0; the initiator logs in
# to both, gets two iSER sessions and two disks, and runs a fio verify job
# on each concurrently; both must pass. Then both log out. Used for both
# roles: each session must have its own SCSI host.

iqn2=${VM_TARGET_IQN%:*}:tgt1
vm_rxe_up
vm_load_roles
vm_target_setup
vm_target_add "$iqn2" "$VM_LUN_SIZE"
vm_iscsid_start
vm_node_new
vm_must iscsiadm -m node -T "$iqn2" -p "$VM_TGT_IP:$VM_ISER_PORT" -I iser -o new
vm_login || vm_fail "login to $VM_TARGET_IQN failed"
vm_run timeout 120 iscsiadm -m node -T "$iqn2" -p "$VM_TGT_IP:$VM_ISER_PORT" \
	-I iser --login || vm_fail "login to $iqn2 failed"
s=$(iscsiadm -m session 2>&1)
vm_log "sessions: $s"
[ "$(echo "$s" | grep -c "^iser: ")" = 2 ] || vm_fail "expected 2 iSER sessions: $s"

vm_wait 30 vm_disk_of "$VM_TARGET_IQN" || vm_fail "no disk for $VM_TARGET_IQN"
vm_wait 30 vm_disk_of "$iqn2" || vm_fail "no disk for $iqn2"
dev0=$(vm_disk_of "$VM_TARGET_IQN")
dev1=$(vm_disk_of "$iqn2")
vm_wait 10 test -b "$dev0" -a -b "$dev1" || vm_fail "$dev0 or $dev1 did not appear"
[ "$dev0" != "$dev1" ] || vm_fail "both sessions report $dev0"
# one SCSI host per session, as open-iscsi expects of the transport
h0=$(basename "$(readlink -f "/sys/block/${dev0#/dev/}/device/../../..")")
h1=$(basename "$(readlink -f "/sys/block/${dev1#/dev/}/device/../../..")")
vm_log "disks: $dev0 ($VM_TARGET_IQN, $h0), $dev1 ($iqn2, $h1)"
[ "$h0" != "$h1" ] || vm_fail "both disks on one SCSI host $h0"
vm_check_disk "$dev0"
vm_check_disk "$dev1"
vm_scen_dmesg | grep -E 'ib_isert: normal session' | tail -n 2

jobs_for() { # TAG
	printf '%s\n' "[$1-rand]" 'rw=randwrite' 'bsrange=4k-128k' \
		'blockalign=4k' 'iodepth=32' 'size=24M' "[$1-seq]" 'rw=write' \
		'bs=256k' 'iodepth=8' 'size=16M' 'offset=32M'
}
jobs_for s0 | vm_fio "$dev0" s0 &
p0=$!
jobs_for s1 | vm_fio "$dev1" s1 &
p1=$!
r0=0 r1=0
wait "$p0" || r0=$?
wait "$p1" || r1=$?
[ $r0 = 0 ] || vm_fail "fio on $dev0 ($VM_TARGET_IQN): $(cat "$VM_SCEN_DIR/fio-s0.err" 2>/dev/null)"
[ $r1 = 0 ] || vm_fail "fio on $dev1 ($iqn2): $(cat "$VM_SCEN_DIR/fio-s1.err" 2>/dev/null)"
vm_log "concurrent verified I/O on both sessions passed"

vm_run timeout 120 iscsiadm -m node -T "$iqn2" -p "$VM_TGT_IP:$VM_ISER_PORT" \
	-I iser --logout || vm_fail "logout of $iqn2 failed"
vm_logout_check "$dev0"
