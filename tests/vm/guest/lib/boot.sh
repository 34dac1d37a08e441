# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: once per boot: the guest's settings and the runtime PM guard.
# Sourced by ../lib.sh, with the rest of the library.

# vm_scsi_target_pm_guard: runs for the whole job (run-job.sh), in the
# background: every SCSI target of an iSCSI session gets runtime PM
# forbidden (power/control "on") within half a second of appearing.  The
# reason is a kernel WARNING that is neither ours nor the in-tree
# initiator's: removing a session's LUN sets its runtime PM status to
# suspended, which queues an idle request for its parent, the SCSI target,
# on pm_wq (pm_runtime_reinit -> pm_request_idle); the target's own
# removal a few calls later flushes that request, and when pm_wq has not
# run it yet, check_flush_dependency() warns because the flush comes from
# the session's WQ_MEM_RECLAIM work queue (__iscsi_unbind_session).  A
# forbidden target (usage count held) gets no idle request, so there is
# nothing to flush.  Nothing in our modules or the rows' I/O depends on
# the target's runtime PM; rows that log out within half a second of
# logging in can still meet the race.  See Documentation/testing-vm.md.
vm_scsi_target_pm_guard() {
	local f v fd
	# a pipe of our own, never written: "read -t" on it is a sleep
	# without a fork per turn
	exec {fd}<> <(:)
	while :; do
		for f in /sys/class/iscsi_session/session*/device/target*/power/control; do
			[ -e "$f" ] || continue
			read -r v <"$f" 2>/dev/null || continue
			[ "$v" = on ] || echo on 2>/dev/null >"$f"
		done
		read -r -t 0.5 -u "$fd" _
	done
}

# vm_targets_pm_on: the guard has reached every SCSI target of the iSCSI
# sessions, and there is at least one
vm_targets_pm_on() {
	local f v n=0
	for f in /sys/class/iscsi_session/session*/device/target*/power/control; do
		[ -e "$f" ] || continue
		read -r v <"$f" || return 1
		[ "$v" = on ] || return 1
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

vm_guest_init() {
	local f
	echo 45 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
	echo 8 >/proc/sys/kernel/printk 2>/dev/null
	modprobe configfs || return 1
	mountpoint -q /sys/kernel/config ||
		mount -t configfs configfs /sys/kernel/config || return 1
	mkdir -p /etc/target /run/dbus /var/run /etc/iscsi /root
	rm -rf /etc/target/* /root/.targetcli
	# D-Bus: targetcli fails with a Gio "Could not connect" error without it
	dbus-daemon --system --fork || return 1
	echo "InitiatorName=$VM_INITIATOR_IQN" >/etc/iscsi/initiatorname.iscsi
	# no stale records from the host's own open-iscsi state
	for f in nodes send_targets ifaces; do
		rm -rf "/etc/iscsi/$f" "/var/lib/iscsi/$f"
	done
	mkdir -p /etc/iscsi/nodes /etc/iscsi/send_targets
	mkdir -p /run/lock/iscsi /var/lock
	# an initiator guest of the two-guest mode runs no target (and a cold
	# targetcli start costs ~20 s of the CPU both guests share)
	[ "${VM_PEER_ROLE:-}" = initiator ] && return 0
	printf '%s\n' "set global auto_add_default_portal=false" \
		"set global auto_save_on_exit=false" "set global auto_use_daemon=false" \
		"set global color_mode=false" exit | targetcli >/dev/null 2>&1 || return 1
	return 0
}
