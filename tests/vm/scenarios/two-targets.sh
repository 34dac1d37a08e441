# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Two sessions at once: a second target ($VM_TARGET_IQN-b, its own 64 MiB
# ramdisk) behind the same iSER portal; the initiator logs in to both, gets
# two disks on two SCSI hosts, and runs a crc32c-verified fio job on each
# at the same time; both log out cleanly.

iqn2=$VM_TARGET_IQN-b
t2=/iscsi/$iqn2/tpg1
vm_rxe_up
vm_load_roles
vm_target_setup
vm_tcli "/backstores/ramdisk create name=lun1 size=$VM_LUN_SIZE" \
	"/iscsi create $iqn2" \
	"$t2/luns create /backstores/ramdisk/lun1" \
	"$t2/portals create $VM_TGT_IP $VM_ISER_PORT" \
	"$t2/portals/$VM_TGT_IP:$VM_ISER_PORT enable_iser true" \
	"$t2/acls create $VM_INITIATOR_IQN" \
	"$t2 set attribute authentication=0"
[ -d "/sys/kernel/config/target/iscsi/$iqn2/tpgt_1/acls/$VM_INITIATOR_IQN/lun_0" ] ||
	vm_fail "target: second target's ACL with LUN 0 missing in configfs"
vm_iscsid_start
vm_node_new
vm_must iscsiadm -m node -T "$iqn2" -p "$VM_TGT_IP:$VM_ISER_PORT" -I iser -o new
vm_login || vm_fail "login to $VM_TARGET_IQN failed"
vm_run timeout 120 iscsiadm -m node -T "$iqn2" -p "$VM_TGT_IP:$VM_ISER_PORT" \
	-I iser --login || vm_fail "login to $iqn2 failed"
vm_wait 15 test "$(vm_session_count)" = 2 ||
	vm_fail "expected 2 sessions, have $(vm_session_count)"
s=$(iscsiadm -m session 2>&1)
echo "$s"
[ "$(echo "$s" | grep -c '^iser: ')" = 2 ] || vm_fail "not two iSER sessions: $s"

# the disk of the session to target $1
disk_of() {
	local s b
	for s in /sys/class/iscsi_session/session*; do
		[ "$(cat "$s/targetname")" = "$1" ] || continue
		for b in "$s"/device/target*/*/block/*; do
			[ -e "$b" ] && echo "/dev/$(basename "$b")" && return 0
		done
	done
	return 1
}
vm_wait 30 disk_of "$VM_TARGET_IQN" || vm_fail "no disk for $VM_TARGET_IQN"
vm_wait 30 disk_of "$iqn2" || vm_fail "no disk for $iqn2"
dev1=$(disk_of "$VM_TARGET_IQN")
dev2=$(disk_of "$iqn2")
[ "$dev1" != "$dev2" ] || vm_fail "both sessions show the same disk $dev1"
vm_wait 10 test -b "$dev1" -a -b "$dev2" || vm_fail "$dev1 or $dev2 did not appear"
h1=$(basename "$(readlink -f "/sys/block/${dev1#/dev/}/device/../../..")")
h2=$(basename "$(readlink -f "/sys/block/${dev2#/dev/}/device/../../..")")
vm_log "disks: $dev1 ($VM_TARGET_IQN, $h1), $dev2 ($iqn2, $h2)"
[ "$h1" != "$h2" ] || vm_fail "both disks on one SCSI host $h1"

job='[rand-4k-256k]
rw=randwrite
bsrange=4k-256k
blockalign=4k
iodepth=16
size=24M'
(echo "$job" | vm_fio "$dev1" sess1) &
p1=$!
(echo "$job" | vm_fio "$dev2" sess2) &
p2=$!
wait "$p1" || vm_fail "fio on $dev1 ($VM_TARGET_IQN) failed: $(cat "$VM_SCEN_DIR/fio-sess1.err" 2>/dev/null)"
wait "$p2" || vm_fail "fio on $dev2 ($iqn2) failed: $(cat "$VM_SCEN_DIR/fio-sess2.err" 2>/dev/null)"
vm_log "verified I/O on both sessions at once"

vm_run timeout 120 iscsiadm -m node -U all || vm_fail "logout of both sessions failed"
vm_wait 15 vm_no_sessions || vm_fail "sessions left after logout"
vm_log "both sessions logged out"
