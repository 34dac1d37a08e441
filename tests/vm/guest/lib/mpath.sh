# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: dm-multipath over several iSER sessions to one LUN. A
# second soft-RoCE link beside vm_rxe_up's, a second iSER portal, and udev
# and multipathd run as on an installed system, with the settings of
# Documentation/admin-guide.md ("Multipath").
# Sourced by ../lib.sh, with the rest of the library.

# the second link: veth2 (the target's second address) and veth3 in one
# guest, the second qemu link in the two-guest mode
VM_TGT_IP2=192.168.79.1
VM_INI_IP2=192.168.79.2
VM_DEV2=${VM_RDMA}2
VM_DEV3=${VM_RDMA}3
# open-iscsi's replacement_timeout for multipath: I/O of a path that is
# down fails back to dm-multipath after this many seconds
VM_MPATH_REPLACEMENT=5
# NOP-Out interval and timeout: a silent path fails within about 3 s
VM_MPATH_NOOP_INTERVAL=1
VM_MPATH_NOOP_TIMEOUT=2

# vm_rxe2_up: the second veth pair with an RDMA device on each end; in the
# two-guest mode, the second link between the guests (vm_peer_rxe2_up)
vm_rxe2_up() {
	if [ -n "${VM_PEER_ROLE:-}" ]; then
		vm_peer_rxe2_up
		return
	fi
	vm_must ip link add veth2 type veth peer name veth3
	vm_must ip addr add "$VM_TGT_IP2/24" dev veth2
	vm_must ip addr add "$VM_INI_IP2/24" dev veth3
	vm_must ip link set veth2 up
	vm_must ip link set veth3 up
	vm_must rdma link add "$VM_DEV2" type "$VM_RDMA" netdev veth2
	vm_must rdma link add "$VM_DEV3" type "$VM_RDMA" netdev veth3
	vm_wait 10 vm_rxe_active 4 ||
		vm_fail "second $VM_RDMA link not ACTIVE: $(rdma link show 2>&1 | tr '\n' ';')"
}

# vm_portal_add IP: an iSER portal on IP:$VM_ISER_PORT in vm_target_setup's
# TPG, so that the LUN is reachable through it as well
vm_portal_add() {
	local t=/iscsi/$VM_TARGET_IQN/tpg1
	vm_tcli "$t/portals create $1 $VM_ISER_PORT" \
		"$t/portals/$1:$VM_ISER_PORT enable_iser true"
	[ "$(cat "/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/np/$1:$VM_ISER_PORT/iser" 2>/dev/null)" = 1 ] ||
		vm_fail "target: portal $1:$VM_ISER_PORT is not an iSER portal in configfs"
}

# vm_alua_tpg2 IP: a second TPG of $VM_TARGET_IQN with an iSER portal on
# IP and the same LUN, in an ALUA target port group of its own ("nonopt",
# active/non-optimized, implicit); the first TPG's LUN stays in LIO's
# default group (active/optimized)
vm_alua_tpg2() {
	local t=/iscsi/$VM_TARGET_IQN/tpg2 so=/backstores/block/lun0 cfs
	vm_tcli "/iscsi/$VM_TARGET_IQN create 2" \
		"$t/luns create $so" \
		"$t/portals create $1 $VM_ISER_PORT" \
		"$t/portals/$1:$VM_ISER_PORT enable_iser true" \
		"$t/acls create $VM_INITIATOR_IQN" \
		"$t set attribute authentication=0" \
		"$so/alua create nonopt 2" \
		"$so/alua/nonopt set alua alua_access_type=1" \
		"$so/alua/nonopt set alua alua_access_state=1" \
		"$t/luns/lun0 set alua alua_tg_pt_gp_name=nonopt" \
		"$t enable"
	cfs=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_2
	[ "$(cat "$cfs/np/$1:$VM_ISER_PORT/iser" 2>/dev/null)" = 1 ] ||
		vm_fail "target: tpg2 has no iSER portal on $1 in configfs"
	[ "$(cat "$cfs/enable" 2>/dev/null)" = 1 ] || vm_fail "target: tpg2 not enabled"
	grep -q '^TG Port Alias: nonopt' "$cfs/lun/lun_0/alua_tg_pt_gp" 2>/dev/null ||
		vm_fail "target: tpg2's LUN is not in ALUA group nonopt: $(head -n 1 "$cfs/lun/lun_0/alua_tg_pt_gp" 2>&1)"
}

# vm_mpath_nodes IP...: an iSER node record per portal address, each with
# the replacement_timeout multipath wants and the NOP-Out's interval and
# timeout (a silent path fails within their sum), and a login through each
vm_mpath_nodes() {
	local ip n v
	for ip in "$@"; do
		vm_must iscsiadm -m node -T "$VM_TARGET_IQN" -p "$ip:$VM_ISER_PORT" \
			-I iser -o new
		for n in session.timeo.replacement_timeout:$VM_MPATH_REPLACEMENT \
			conn[0].timeo.noop_out_interval:$VM_MPATH_NOOP_INTERVAL \
			conn[0].timeo.noop_out_timeout:$VM_MPATH_NOOP_TIMEOUT; do
			v=${n##*:}
			vm_must iscsiadm -m node -T "$VM_TARGET_IQN" \
				-p "$ip:$VM_ISER_PORT" -I iser -o update \
				-n "node.${n%:*}" -v "$v"
		done
		vm_run timeout 120 iscsiadm -m node -T "$VM_TARGET_IQN" \
			-p "$ip:$VM_ISER_PORT" -I iser --login ||
			vm_fail "login through $ip failed"
	done
}

# vm_disk_of_addr IP: sdX of the session whose portal address is IP
vm_disk_of_addr() {
	# shellcheck disable=SC2046 # one session directory per word
	vm_disk_of_sessions $(vm_sessions_of_conn persistent_address "$1")
}

# vm_session_state_of_addr IP: open-iscsi's state of that session
# (LOGGED_IN, FAILED, FREE), or nothing
vm_session_state_of_addr() {
	local sd
	sd=$(vm_sessions_of_conn persistent_address "$1" | head -n 1)
	[ -n "$sd" ] && cat "$sd/state" 2>/dev/null
}

# vm_mpath_start: udev (the block devices only), then multipathd with the
# admin guide's settings; waits until one map holds COUNT (default 2) paths
vm_mpath_start() {
	local want=${1:-2}
	mkdir -p /etc/multipath
	cat >/etc/multipath.conf <<-EOF
		defaults {
			user_friendly_names no
			find_multipaths no
			polling_interval 2
		}
		blacklist {
			devnode "^(ram|loop|zram|vd|nvme)"
		}
	EOF
	vm_log "+ systemd-udevd --daemon"
	/lib/systemd/systemd-udevd --daemon >/dev/null 2>&1 ||
		vm_fail "systemd-udevd did not start"
	udevadm trigger --subsystem-match=block --action=add
	udevadm settle -t 30 || vm_log "udevadm settle timed out"
	# what multipathd.service loads before it starts the daemon
	vm_must modprobe -a dm_multipath scsi_dh_alua
	# in the foreground, so that its log lands in the scenario's directory
	# (the guest has no syslog)
	vm_log "+ multipathd -d -s >$VM_SCEN_DIR/multipathd.log"
	multipathd -d -s >"$VM_SCEN_DIR/multipathd.log" 2>&1 </dev/null &
	vm_wait 10 multipathd show daemon ||
		vm_fail "multipathd did not start: $(tail -3 "$VM_SCEN_DIR/multipathd.log")"
	vm_wait 30 vm_mpath_paths_ok "$want" ||
		vm_fail "multipathd: no map with $want ready paths: $(multipathd show topology 2>&1 | tr '\n' ';')"
	vm_log "$(multipathd show topology 2>&1)"
}

# vm_mpath_paths_ok COUNT: one multipath map, COUNT of its paths active and
# ready
vm_mpath_paths_ok() {
	[ "$(multipathd show maps raw format '%n' 2>/dev/null | grep -c .)" = 1 ] &&
		[ "$(multipathd show paths raw format '%t %T' 2>/dev/null |
			grep -c '^active ready')" = "$1" ]
}

# vm_mpath_dev: /dev/mapper/NAME of the one map
vm_mpath_dev() {
	local n
	n=$(multipathd show maps raw format '%n' 2>/dev/null | head -n 1)
	[ -n "$n" ] && echo "/dev/mapper/$n"
}

# vm_mpath_path_state SDX: multipathd's "%t %T" of that path (dm state,
# checker state), e.g. "active ready" or "failed faulty"
vm_mpath_path_state() {
	multipathd show paths raw format '%d %t %T' 2>/dev/null |
		awk -v d="$1" '$1 == d { print $2, $3 }'
}

# vm_mpath_stop: maps failed fast and flushed, multipathd and udevd
# stopped; for vm_teardown, whatever happened (which removes the second
# link with the first)
vm_mpath_stop() {
	local m
	if pgrep -x multipathd >/dev/null; then
		for m in $(dmsetup ls --target multipath 2>/dev/null | awk '{ print $1 }'); do
			dmsetup message "$m" 0 fail_if_no_path >/dev/null 2>&1
		done
		multipath -F >/dev/null 2>&1 || echo "multipath -F left maps: $(dmsetup ls 2>&1)"
		multipathd shutdown >/dev/null 2>&1
		vm_wait 10 sh -c '! pgrep -x multipathd' || pkill -KILL -x multipathd
	fi
	rm -f /etc/multipath.conf
	if pgrep -x systemd-udevd >/dev/null; then
		udevadm control --exit >/dev/null 2>&1
		vm_wait 10 sh -c '! pgrep -x systemd-udevd' || pkill -KILL -x systemd-udevd
	fi
	return 0
}
