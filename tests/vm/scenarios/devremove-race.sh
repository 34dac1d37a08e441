# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Device removal meeting connections that are half set up, on both sides
# (our initiator and our target in one guest, both on rxe0):
#  1. Initiator: an endpoint whose address resolution binds its rdma_cm id
#     to rxe0 after the removal began, held by nobody (an iscsid that died
#     never sends ep_disconnect; tests/vm/tools/iscsi_ep opens the
#     endpoint and exits). The removal is kept waiting by a READ that sits
#     in a suspended dm device behind LUN 1 (LIO's connection close waits
#     for it), the endpoint is opened meanwhile and must log "connection
#     setup failed at address resolved: -19", then the dm device resumes:
#     "rdma link delete" must return within 60 s. rdma_cm's own removal
#     waits for every id on the device to be destroyed, so the initiator
#     destroys such an id itself, without a device reference to give back.
#  2. Target: 24 removals, each while three iser_peer open 64 silent
#     connections each, so that the listener's CONNECT_REQUEST handler is
#     busy setting connections up when the removal starts (round R starts
#     it once R connections show in debugfs, to vary the moment). The
#     pre-login timer is raised to 60 s: a connection the removal missed
#     would hold the device until then. The core's own wait (from its
#     "rxe0 removed: ... waiting" line to "rxe0 removed: released") must
#     stay under 20 s; the peers are killed only after it, since
#     ib_uverbs' part of the removal waits for their processes. The rounds
#     log how many connections were closed as "device removed during
#     accept" (caught at the end of the CONNECT_REQUEST handler).
# Then the device is back, the portal listens, and a login with verified
# I/O works. Arguments: --initiator or --target runs only that part.

ep_tool=$VM_REPO/build/vm/tools/iscsi_ep
peer=$VM_REPO/build/vm/tools/iser_peer
for t in "$ep_tool" "$peer"; do
	[ -x "$t" ] || vm_fail "$t is missing (built by 'make vm-tools')"
done
rounds=${DEVREMOVE_ROUNDS:-24}
part_ini=1 part_tgt=1
case ${1:-} in
--initiator) part_tgt=0 ;;
--target) part_ini=0 ;;
"") ;;
*) vm_fail "devremove-race: bad argument $1" ;;
esac
np=$VM_TGT_IP:$VM_ISER_PORT
par=/sys/module/ib_isert/parameters
conns=/sys/kernel/debug/ib_isert/connections

# lun1_disk: the block device of LUN 1 of the session
lun1_disk() {
	local b
	for b in /sys/class/iscsi_session/session*/device/target*/*:1/block/*; do
		[ -e "$b" ] && echo "/dev/$(basename "$b")" && return 0
	done
	return 1
}

add_rxe0() { # wait for the listener to come back, too
	local relistened
	relistened=$(vm_scen_dmesg | grep -c "ib_isert: portal $np: listening again on rxe0")
	vm_must rdma link add rxe0 type rxe netdev veth0
	vm_wait 10 vm_rxe_active || vm_fail "rxe0 not ACTIVE after it was added again"
	vm_wait 30 sh -c "[ \$(dmesg | grep -c 'ib_isert: portal $np: listening again on rxe0') -gt $relistened ]" ||
		vm_fail "the iSER portal did not listen again on rxe0"
}

vm_setup_node
vm_node_set node.session.timeo.replacement_timeout 300

# 1. an endpoint bound to the device during the removal, never disconnected
if [ $part_ini = 1 ]; then
	vm_slow_lun 0
	trap vm_slow_lun_remove EXIT
	dev=$(vm_login_disk) || exit 1
	vm_wait 30 lun1_disk || vm_fail "LUN 1 did not appear"
	lun1=$(lun1_disk)

	vm_must dmsetup suspend --noudevsync isdm_slow
	dd if="$lun1" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null &
	dd_pid=$!
	sleep 2
	rdma link delete rxe0 &
	del_pid=$!
	vm_wait 30 sh -c "dmesg | grep -q 'iser_dm: rxe0 removed: .*waiting'" ||
		vm_fail "the device removal did not start waiting for its connections"
	ep=$("$ep_tool" iser connect "$VM_TGT_IP" "$VM_ISER_PORT") ||
		vm_fail "iscsi_ep connect failed"
	vm_log "endpoint $ep opened during the removal"
	vm_wait 15 sh -c "dmesg | grep -q 'ib_iser: connection setup failed at address resolved: -19'" ||
		vm_fail "the endpoint's id was not refused the device at address resolution"
	vm_must dmsetup resume --noudevsync isdm_slow
	returned=0
	end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ]; do
		kill -0 "$del_pid" 2>/dev/null || { returned=1; break; }
		sleep 0.1
	done
	"$ep_tool" iser disconnect "$ep" || vm_log "iscsi_ep disconnect $ep failed"
	if [ $returned = 0 ]; then
		if vm_wait 60 sh -c "! kill -0 $del_pid 2>/dev/null"; then
			how="it returned after ep_disconnect"
		else
			how="not even after ep_disconnect"
		fi
		vm_fail "rdma link delete did not return while an endpoint bound during the removal was held ($how)"
	fi
	wait "$del_pid" || vm_fail "rdma link delete rxe0 failed"
	vm_log "removal with a held endpoint returned; endpoint disconnected"
	add_rxe0
	vm_wait 60 sh -c "iscsiadm -m session -P 1 | grep -q 'iSCSI Session State: LOGGED_IN'" ||
		vm_fail "session not logged in again after the removal"
	vm_wait 60 sh -c "! kill -0 $dd_pid 2>/dev/null" ||
		vm_fail "the READ held across the removal did not complete"
	wait "$dd_pid" || vm_fail "the READ held across the removal failed"
	vm_logout_check "$dev"
fi

# 2. removals while the target sets up connections
[ $part_tgt = 1 ] || exit 0
echo 60 >"$par/prelogin_timeout"
echo 512 >"$par/max_prelogin_per_source"
echo 512 >"$par/max_prelogin_per_portal"
slow=0
for ((r = 1; r <= rounds; r++)); do
	released=$(dmesg | grep -c 'iser_dm: rxe0 removed: released')
	peer_pids=()
	for _ in 1 2 3; do
		"$peer" -n 64 -m silent -t 300 "$VM_TGT_IP" "$VM_ISER_PORT" >/dev/null 2>&1 &
		peer_pids+=($!)
	done
	# the burst has begun: the handler sets up the rest of the 192 now
	end=$((SECONDS + 10))
	while [ $SECONDS -lt $end ] &&
		[ "$(grep -c '^peer:' "$conns" 2>/dev/null)" -lt "$r" ]; do
		sleep 0.02
	done
	rdma link delete rxe0 &
	del_pid=$!
	# the core's part of the removal: from its "waiting" line to its
	# "released" line; the peers stay until then, so that a connection
	# the removal missed is not closed by their disconnect instead
	vm_wait 120 sh -c "[ \$(dmesg | grep -c 'iser_dm: rxe0 removed: released') -gt $released ]" ||
		vm_log "round $r: the core did not release rxe0 within 120 s"
	kill -KILL "${peer_pids[@]}" 2>/dev/null
	wait "${peer_pids[@]}" 2>/dev/null
	# (ib_uverbs' removal waits for the peers' processes to close)
	vm_wait 60 sh -c "! kill -0 $del_pid 2>/dev/null" ||
		vm_fail "round $r: rdma link delete did not return after the peers exited"
	wait "$del_pid" || vm_fail "round $r: rdma link delete rxe0 failed"
	secs=$(dmesg | grep 'iser_dm: rxe0 removed: ' | tail -n 2 | awk -F'[][]' '
		/waiting/ { w = $2 } /released/ { r = $2 }
		END { if (w == "" || r == "") print 0; else printf "%.1f", r - w }')
	vm_log "round $r: the core waited $secs s for the device's connections"
	awk "BEGIN { exit !($secs > 20) }" && slow=$((slow + 1))
	add_rxe0
done
during=$(vm_scen_dmesg | grep -c 'before login: device removed during accept')
removed=$(vm_scen_dmesg | grep -c 'before login: device removed$')
vm_log "pre-login connections closed by the removals (rate-limited lines): $removed; caught at the end of accept: $during"
[ "$slow" = 0 ] ||
	vm_fail "in $slow of $rounds removals the core waited more than 20 s for a connection set up while they began"

echo 15 >"$par/prelogin_timeout"
echo 8 >"$par/max_prelogin_per_source"
echo 64 >"$par/max_prelogin_per_portal"
dev=$(vm_login_disk) || exit 1
printf '%s\n' '[after-races]' 'rw=randwrite' 'bs=8k' 'iodepth=8' 'size=4M' |
	vm_fio "$dev" after-races || exit 1
vm_logout_check "$dev"
