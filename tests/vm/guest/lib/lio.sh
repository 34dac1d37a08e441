# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: the LIO target, configured with targetcli only; brd, NVMe-oF and slow LUNs.
# Sourced by ../lib.sh, with the rest of the library.

# vm_tcli CMD...: run targetcli commands, one per argument, in one targetcli
# process (it reads commands from stdin when that is not a terminal; each
# start costs seconds under TCG).  targetcli reports most errors with status
# 0, so known error texts fail the scenario here, and callers check the
# outcome in configfs.
vm_tcli() {
	local out rc
	printf '+ targetcli: %s\n' "$@"
	out=$(printf '%s\n' "$@" exit | targetcli 2>&1)
	rc=$?
	echo "$out" | grep -v '^ *\(/> \)\?\(o-\||\)' | grep -v '^$'
	if [ $rc != 0 ] || echo "$out" | grep -qiE 'No such path|exists|Could not|Traceback|error|invalid|Unknown|not found|failed|cannot'; then
		vm_fail "targetcli failed: $(echo "$out" | grep -iE 'No such path|exists|Could not|Traceback|error|invalid|Unknown|not found|failed|cannot' | head -n 2 | paste -sd ' ' -)"
	fi
}

# vm_target_setup [--fileio|--iblock] [--pi TYPE] [--chap USER PASS] [--acl IQN]
# A target $VM_TARGET_IQN with one 64 MiB LUN (LIO's ramdisk backstore;
# --fileio: a file on the guest's tmpfs; --iblock: LIO's block backstore
# on a brd RAM disk, /dev/ram0, the path a block device takes), an iSER portal on
# $VM_TGT_IP:$VM_ISER_PORT and a TCP portal on $VM_TGT_IP:$VM_TCP_PORT (for
# SendTargets discovery), an ACL for IQN (default: our initiator).
# --pi TYPE: the backstore formatted with T10 protection information of
# TYPE (1 or 3; fileio keeps the tuples in /tmp/lun0.img.protection), and
# the TPG's t10_pi attribute set, so that the transport carries them.
vm_target_setup() {
	local bs=ramdisk acl=$VM_INITIATOR_IQN chap_user="" chap_pass="" t np tpg
	local pi="" bsdir
	local -a cmds
	while [ $# -gt 0 ]; do
		case $1 in
		--fileio) bs=fileio ;;
		--iblock) bs=iblock ;;
		--pi) pi=$2; shift ;;
		--chap) chap_user=$2; chap_pass=$3; shift 2 ;;
		--acl) acl=$2; shift ;;
		*) vm_fail "vm_target_setup: bad argument $1" ;;
		esac
		shift
	done
	t=/iscsi/$VM_TARGET_IQN/tpg1
	if [ $bs = fileio ]; then
		bs=/backstores/fileio/lun0
		cmds=("/backstores/fileio create name=lun0 file_or_dev=/tmp/lun0.img size=$VM_LUN_SIZE write_back=false")
	elif [ $bs = iblock ]; then
		vm_brd_up
		bs=/backstores/block/lun0
		cmds=("/backstores/block create name=lun0 dev=/dev/ram0")
	else
		bs=/backstores/ramdisk/lun0
		cmds=("/backstores/ramdisk create name=lun0 size=$VM_LUN_SIZE")
	fi
	# the protection type can only change before the LUN exports it;
	# fileio formats its protection file (every tuple an escape), the
	# ramdisk has no format and starts with zeroed tuples
	[ -n "$pi" ] && cmds+=("$bs set attribute pi_prot_type=$pi")
	[ -n "$pi" ] && [ "$bs" = /backstores/fileio/lun0 ] &&
		cmds+=("$bs set attribute pi_prot_format=1")
	cmds+=(
		"/iscsi create $VM_TARGET_IQN"
		"$t/luns create $bs"
	)
	[ -n "$pi" ] && cmds+=("$t set attribute t10_pi=1")
	# over siw the iSER portal is made by vm_siw_iser_portal (below)
	[ "$VM_RDMA" = siw ] || cmds+=(
		"$t/portals create $VM_TGT_IP $VM_ISER_PORT"
		"$t/portals/$VM_TGT_IP:$VM_ISER_PORT enable_iser true"
	)
	cmds+=(
		"$t/portals create $VM_TGT_IP $VM_TCP_PORT"
		"$t/acls create $acl"
	)
	if [ -n "$chap_user" ]; then
		cmds+=("$t/acls/$acl set auth userid=$chap_user password=$chap_pass"
			"$t set attribute authentication=1")
	else
		cmds+=("$t set attribute authentication=0")
	fi
	vm_tcli "${cmds[@]}"
	tpg=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1
	[ "$VM_RDMA" = siw ] && vm_siw_iser_portal "$tpg" "$VM_TGT_IP:$VM_ISER_PORT"
	# check what the kernel got, not what targetcli printed
	np=$tpg/np
	[ "$(cat "$np/$VM_TGT_IP:$VM_ISER_PORT/iser" 2>/dev/null)" = 1 ] ||
		vm_fail "target: portal $VM_TGT_IP:$VM_ISER_PORT is not an iSER portal in configfs"
	[ "$(cat "$np/$VM_TGT_IP:$VM_TCP_PORT/iser" 2>/dev/null)" = 0 ] ||
		vm_fail "target: TCP portal $VM_TGT_IP:$VM_TCP_PORT missing in configfs"
	[ "$(cat "$tpg/enable" 2>/dev/null)" = 1 ] || vm_fail "target: tpg 1 not enabled"
	[ -d "$tpg/lun/lun_0" ] || vm_fail "target: LUN 0 missing in configfs"
	[ -d "$tpg/acls/$acl/lun_0" ] || vm_fail "target: ACL $acl with LUN 0 missing in configfs"
	if [ -n "$pi" ]; then
		bsdir=$(ls -d /sys/kernel/config/target/core/*/lun0 | head -n 1)
		[ "$(cat "$bsdir/attrib/pi_prot_type" 2>/dev/null)" = "$pi" ] ||
			vm_fail "target: the backstore has no protection type $pi in configfs"
		[ "$(cat "$tpg/attrib/t10_pi")" = 1 ] ||
			vm_fail "target: t10_pi not set on the TPG in configfs"
	fi
	if [ -n "$chap_user" ]; then
		[ "$(cat "$tpg/acls/$acl/auth/userid")" = "$chap_user" ] ||
			vm_fail "target: CHAP user not set in configfs"
		[ "$(cat "$tpg/attrib/authentication")" = 1 ] ||
			vm_fail "target: authentication not enabled in configfs"
	fi
	vm_log "target ready: $VM_TARGET_IQN, $bs${pi:+ (PI type $pi)}, iSER $VM_TGT_IP:$VM_ISER_PORT, TCP :$VM_TCP_PORT"
}

# vm_brd_up: one brd RAM disk, /dev/ram0, of $VM_LUN_SIZE (the teardown
# unloads brd once LIO let go of it)
vm_brd_up() {
	local mib=${VM_LUN_SIZE%M}
	vm_loaded brd && vm_fail "vm_brd_up: brd is already loaded"
	vm_must modprobe brd rd_nr=1 rd_size=$((mib * 1024)) max_part=0
	vm_wait 10 test -b /dev/ram0 || vm_fail "brd: /dev/ram0 did not appear"
}

# NVMe over Fabrics on the same soft-RoCE link, make bench's context
# column: nvmet-rdma exporting /dev/ram0 (vm_brd_up) as namespace 1 of
# $VM_NVME_NQN on $VM_TGT_IP:4420, nvme-rdma connected to it.
VM_NVME_NQN=nqn.2003-01.org.linux-iscsi.iser-vm:nvme0
VM_NVMET=/sys/kernel/config/nvmet

# vm_nvme_disk: set up the target, connect, print the namespace's disk
# (only that on stdout: the set-up's own lines go to stderr)
vm_nvme_disk() {
	vm_nvme_up >&2
	vm_nvme_dev
}

vm_nvme_up() {
	local s=$VM_NVMET/subsystems/$VM_NVME_NQN p=$VM_NVMET/ports/1
	command -v nvme >/dev/null || vm_fail "nvme-cli missing (scripts/packages.txt)"
	vm_brd_up
	vm_must modprobe nvmet-rdma
	vm_must modprobe nvme-rdma
	vm_must mkdir "$s"
	echo 1 >"$s/attr_allow_any_host"
	vm_must mkdir "$s/namespaces/1"
	echo /dev/ram0 >"$s/namespaces/1/device_path"
	echo 1 >"$s/namespaces/1/enable" || vm_fail "nvmet: cannot enable namespace 1"
	vm_must mkdir "$p"
	echo rdma >"$p/addr_trtype"
	echo ipv4 >"$p/addr_adrfam"
	echo "$VM_TGT_IP" >"$p/addr_traddr"
	echo 4420 >"$p/addr_trsvcid"
	vm_must ln -s "$s" "$p/subsystems/$VM_NVME_NQN"
	vm_must nvme connect -t rdma -a "$VM_TGT_IP" -s 4420 -n "$VM_NVME_NQN"
}

vm_nvme_dev() {
	local d
	# the disk (with native multipath, the head nvmeXnY; its paths
	# nvmeXcZnY have no device node)
	for _ in $(seq 30); do
		for d in /sys/block/nvme*n1; do
			[ -e "$d/device/subsysnqn" ] || continue
			case ${d##*/} in nvme*c*) continue ;; esac
			[ "$(cat "$d/device/subsysnqn")" = "$VM_NVME_NQN" ] || continue
			vm_wait 10 test -b "/dev/${d##*/}" || vm_fail "no /dev/${d##*/}"
			echo "/dev/${d##*/}"
			return 0
		done
		sleep 1
	done
	vm_fail "nvme-rdma: no namespace of $VM_NVME_NQN within 30 s"
}

# vm_nvme_clear: disconnect the host and remove the nvmet configuration
# (the teardown calls it; 0 when nothing is left)
vm_nvme_clear() {
	local p
	if [ -d /sys/class/nvme-fabrics ]; then
		nvme disconnect -n "$VM_NVME_NQN" >/dev/null 2>&1
	fi
	[ -d "$VM_NVMET" ] || return 0
	for p in "$VM_NVMET"/ports/*/subsystems/*; do
		[ -L "$p" ] && rm -f "$p"
	done
	for p in "$VM_NVMET"/ports/*; do
		[ -d "$p" ] && rmdir "$p"
	done
	for p in "$VM_NVMET"/subsystems/*/namespaces/*; do
		[ -d "$p" ] || continue
		echo 0 >"$p/enable"
		rmdir "$p"
	done
	for p in "$VM_NVMET"/subsystems/*; do
		[ -d "$p" ] && rmdir "$p"
	done
	! ls -d "$VM_NVMET"/subsystems/* "$VM_NVMET"/ports/* >/dev/null 2>&1
}

# vm_acl_idle: LIO's ACL of our initiator on vm_target_setup's target
# shows no session (for vm_wait: the target released every session of a
# peer that went away)
vm_acl_idle() {
	grep -q 'No active iSCSI Session' \
		"/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/acls/$VM_INITIATOR_IQN/info"
}

# vm_slow_lun DELAY_MS: LUN 1 of vm_target_setup's target, a block
# backstore "slow" on a dm-delay device (isdm_slow, over a loop device on
# a tmpfs file of $VM_LUN_SIZE) that delays every I/O by DELAY_MS, mapped
# in the ACL. vm_slow_lun_delay MS changes the delay; vm_slow_lun_remove
# (the scenario's EXIT trap) clears LIO and removes both devices.
vm_slow_lun_table() {
	echo "0 $(blockdev --getsz "$VM_SLOW_LOOP") delay $VM_SLOW_LOOP 0 $1"
}
vm_slow_lun() {
	local t=/iscsi/$VM_TARGET_IQN/tpg1
	local c=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1
	vm_must modprobe loop
	vm_must modprobe dm_delay
	vm_must truncate -s "$VM_LUN_SIZE" /tmp/slow.img
	VM_SLOW_LOOP=$(losetup -f --show /tmp/slow.img) || vm_fail "losetup failed"
	vm_must dmsetup create --noudevsync isdm_slow --table "$(vm_slow_lun_table "$1")"
	# no udev in the guest: dmsetup makes the node itself
	vm_must dmsetup mknodes isdm_slow
	[ -b /dev/mapper/isdm_slow ] || vm_fail "/dev/mapper/isdm_slow missing after dmsetup mknodes"
	vm_tcli "/backstores/block create name=slow dev=/dev/mapper/isdm_slow" \
		"$t/luns create /backstores/block/slow"
	[ -d "$c/lun/lun_1" ] || vm_fail "target: LUN 1 (block on dm-delay) missing in configfs"
	[ -d "$c/acls/$VM_INITIATOR_IQN/lun_1" ] || vm_fail "target: LUN 1 not mapped in the ACL"
}
vm_slow_lun_delay() {
	vm_must dmsetup suspend --noudevsync isdm_slow
	vm_must dmsetup load isdm_slow --table "$(vm_slow_lun_table "$1")"
	vm_must dmsetup resume --noudevsync isdm_slow
}
vm_slow_lun_remove() {
	timeout 60 targetcli clearconfig confirm=True >/dev/null 2>&1
	dmsetup remove --noudevsync isdm_slow >/dev/null 2>&1
	[ -z "${VM_SLOW_LOOP:-}" ] || losetup -d "$VM_SLOW_LOOP" >/dev/null 2>&1
	rm -f /tmp/slow.img
}

# vm_target_add IQN SIZE [NAME]: another target IQN beside
# vm_target_setup's, on the same iSER portal, its own ramdisk NAME (default
# lun1; give each further target its own) of SIZE, the ACL of
# $VM_INITIATOR_IQN, no authentication
vm_target_add() {
	local t=/iscsi/$1/tpg1 rd=${3:-lun1}
	vm_tcli "/backstores/ramdisk create name=$rd size=$2" \
		"/iscsi create $1" \
		"$t/luns create /backstores/ramdisk/$rd" \
		"$t/portals create $VM_TGT_IP $VM_ISER_PORT" \
		"$t/portals/$VM_TGT_IP:$VM_ISER_PORT enable_iser true" \
		"$t/acls create $VM_INITIATOR_IQN" \
		"$t set attribute authentication=0"
	[ "$(cat "/sys/kernel/config/target/iscsi/$1/tpgt_1/np/$VM_TGT_IP:$VM_ISER_PORT/iser" 2>/dev/null)" = 1 ] ||
		vm_fail "target: $1 has no iSER portal in configfs"
}

# vm_siw_iser_portal TPGDIR IP:PORT: an iSER portal that can listen over
# iWARP.  An LIO portal is a TCP portal first (mkdir of np/IP:PORT opens a
# TCP listener on IP:PORT) and enable_iser adds the iSER one beside it.
# Over soft-RoCE the two do not meet, but siw's listener is a TCP socket of
# the same network stack, so its bind fails with EADDRINUSE (isert:
# "rdma_listen() failed: -98", targetcli: "Cannot change iser").  Both
# listeners are created in the caller's network namespace (sock_create()
# in iscsit_setup_np() and in siw_create_listen()), so the portal's
# directory is made from a namespace of its own (a dummy device with the
# same address, for the bind), which takes LIO's TCP listener there, and
# iser is switched on from this one.  vm_teardown deletes the namespace.
VM_SIW_NETNS=iser-vm-lio-tcp
vm_siw_iser_portal() {
	local np=$1/np/$2
	if [ ! -e "/run/netns/$VM_SIW_NETNS" ]; then
		vm_must ip netns add "$VM_SIW_NETNS"
		vm_must ip -n "$VM_SIW_NETNS" link add dummy0 type dummy
		vm_must ip -n "$VM_SIW_NETNS" addr add "${2%:*}/32" dev dummy0
		vm_must ip -n "$VM_SIW_NETNS" link set dummy0 up
	fi
	vm_must nsenter --net="/run/netns/$VM_SIW_NETNS" mkdir "$np"
	vm_log "+ echo 1 >$np/iser"
	echo 1 >"$np/iser" || vm_fail "cannot enable iSER on $2 over siw"
}
