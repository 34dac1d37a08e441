# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: tests/vm/tools/iser_tgt, the hostile userspace target.
# Sourced by ../lib.sh, with the rest of the library.

# vm_iser_tgt_start OUT CASES [ARGS...]: start tests/vm/tools/iser_tgt (a
# hostile userspace target) on $VM_TGT_IP port $VM_ISER_TGT_PORT (3262;
# set it for the call to run another instance on another port) with the
# cases CASES, its summary lines to OUT (stderr to OUT.err); sets
# VM_ISER_TGT_PID.
VM_ISER_TGT_PORT=3262
VM_ISER_TGT_IQN=iqn.2003-01.org.linux-iscsi.iser-vm:hostile
vm_iser_tgt_start() {
	local out=$1 cases=$2 tgt=$VM_REPO/build/vm/tools/iser_tgt
	shift 2
	[ -x "$tgt" ] || vm_fail "$tgt is not built (make vm-tools)"
	vm_log "+ iser_tgt -c $cases $* $VM_TGT_IP $VM_ISER_TGT_PORT"
	"$tgt" -c "$cases" "$@" "$VM_TGT_IP" "$VM_ISER_TGT_PORT" >"$out" \
		2>"$out.err" &
	VM_ISER_TGT_PID=$!
}

# vm_iser_tgt_node [KEY=VALUE...]: a node for iser_tgt's portal (port
# $VM_ISER_TGT_PORT) with short NOP-Out and replacement timeouts, 8 KiB
# receive data segments and the node settings given.
vm_iser_tgt_node() {
	local portal=$VM_TGT_IP:$VM_ISER_TGT_PORT kv
	vm_must iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$portal" -I iser -o new >&2
	for kv in node.conn[0].timeo.noop_out_interval=5 \
		node.conn[0].timeo.noop_out_timeout=5 \
		node.session.timeo.replacement_timeout=20 \
		node.conn[0].iscsi.MaxRecvDataSegmentLength=8192 "$@"; do
		vm_must iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$portal" \
			-I iser -o update -n "${kv%%=*}" -v "${kv#*=}" >&2
	done
}

# vm_iser_tgt_login [KEY=VALUE...]: vm_iser_tgt_node with the settings
# given, then login (within VM_ISER_TGT_LOGIN_SECS, default 60); prints
# the disk of that session.
vm_iser_tgt_login() {
	local portal=$VM_TGT_IP:$VM_ISER_TGT_PORT dev
	vm_iser_tgt_node "$@"
	vm_run timeout "${VM_ISER_TGT_LOGIN_SECS:-60}" iscsiadm -m node \
		-T "$VM_ISER_TGT_IQN" -p "$portal" -I iser --login >&2 ||
		vm_fail "the first login to iser_tgt failed: $(cat "$VM_SCEN_DIR"/*.err 2>/dev/null)"
	dev=/dev/$(vm_wait 30 vm_disk_of_port "$VM_ISER_TGT_PORT" &&
		vm_disk_of_port "$VM_ISER_TGT_PORT") ||
		vm_fail "no disk for the iser_tgt session"
	vm_wait 10 test -b "$dev" || vm_fail "$dev did not appear"
	vm_log "logged in to iser_tgt, disk $dev" >&2
	echo "$dev"
}

# vm_iser_tgt_logout: log out of iser_tgt's portal; wait for the tool.
vm_iser_tgt_logout() {
	vm_run timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" \
		-p "$VM_TGT_IP:$VM_ISER_TGT_PORT" -I iser --logout ||
		vm_fail "logout from iser_tgt failed"
	vm_wait 15 vm_no_sessions || vm_fail "session still present after logout"
	vm_wait 30 sh -c "! kill -0 $VM_ISER_TGT_PID" || vm_fail "iser_tgt did not finish"
	wait "$VM_ISER_TGT_PID" || vm_fail "iser_tgt failed"
}
