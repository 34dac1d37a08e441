# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: teardown, run after every scenario whatever happened; kernel log checks.
# Sourced by ../lib.sh, with the rest of the library.

# vm_lio_clear: remove every LIO object through configfs, leaves first:
# what targetcli clearconfig does, without its start-up (seconds of
# Python under TCG, in every row).  0 when nothing is left.
vm_lio_clear() {
	local cfs=/sys/kernel/config/target d l
	for d in "$cfs"/iscsi/*/tpgt_*; do
		[ -d "$d" ] || continue
		echo 0 >"$d/enable" 2>/dev/null
		for l in "$d"/acls/*/lun_*/*; do
			[ -L "$l" ] && rm -f "$l"
		done
		for l in "$d"/acls/*/lun_*; do
			[ -d "$l" ] && rmdir "$l"
		done
		for l in "$d"/acls/*; do
			[ -d "$l" ] && rmdir "$l"
		done
		for l in "$d"/lun/lun_*/*; do
			[ -L "$l" ] && rm -f "$l"
		done
		for l in "$d"/lun/lun_* "$d"/np/*; do
			[ -d "$l" ] && rmdir "$l"
		done
		rmdir "$d"
	done
	for d in "$cfs"/iscsi/iqn.* "$cfs"/iscsi/eui.* "$cfs"/iscsi/naa.*; do
		[ -d "$d" ] && rmdir "$d"
	done
	# ALUA target port groups of a device (its own default stays)
	for d in "$cfs"/core/*_[0-9]*/*/alua/*; do
		[ "${d##*/}" = default_tg_pt_gp ] && continue
		[ -d "$d" ] && rmdir "$d"
	done
	for d in "$cfs"/core/*_[0-9]*/*; do
		[ -d "$d" ] && rmdir "$d"
	done
	for d in "$cfs"/core/*_[0-9]*; do
		[ -d "$d" ] && rmdir "$d"
	done
	! ls -d "$cfs"/iscsi/*/tpgt_* "$cfs"/core/*_[0-9]* >/dev/null 2>&1
}

# vm_teardown: log out, stop iscsid, clear LIO, unload the iSER stack and
# rdma_rxe or siw.  Prints one line per problem on stdout (empty: all
# clean).
vm_teardown() {
	local m rc=0 mods
	vm_memfrag_stop
	# multipath maps hold the sessions' disks: gone before the logout
	vm_mpath_stop
	if [ "$(vm_session_count)" != 0 ]; then
		timeout 60 iscsiadm -m node -U all >/dev/null 2>&1 ||
			timeout 60 iscsiadm -m session -u >/dev/null 2>&1
		vm_wait 15 vm_no_sessions || echo "iSCSI session still present after logout"
	fi
	vm_log "teardown: stop iscsid" >&2
	vm_iscsid_stop
	rm -rf /etc/iscsi/nodes/* /etc/iscsi/send_targets/*
	if vm_loaded target_core_mod; then
		vm_log "teardown: clear LIO's configuration" >&2
		if ! timeout $((60 * ${VM_TIMEOUT_SCALE:-1})) bash -c ". '$VM_REPO/tests/vm/guest/lib.sh'; vm_lio_clear"; then
			vm_log "teardown: configfs left entries; targetcli clearconfig" >&2
			timeout 60 targetcli clearconfig confirm=True >/dev/null 2>&1 ||
				echo "targetcli clearconfig failed"
		fi
		# the fabric's configfs directory pins iscsi_target_mod
		rmdir /sys/kernel/config/target/iscsi 2>/dev/null
	fi
	rm -f /tmp/lun0.img
	if vm_loaded nvmet; then
		vm_log "teardown: NVMe over Fabrics" >&2
		vm_nvme_clear || echo "nvmet's configuration left entries"
	fi
	# a userspace peer a failed scenario left running holds the RDMA
	# devices open (uverbs), and their removal would wait for it
	if pkill -KILL -f "$VM_REPO/build/vm/tools/" 2>/dev/null; then
		vm_log "teardown: killed a leftover userspace peer" >&2
		sleep 1
	fi
	# (run in a shell of its own, without the scenario's VM_RDMA: both kinds)
	vm_log "teardown: rxe, siw, veth" >&2
	for m in rxe0 rxe1 rxe2 rxe3 siw0 siw1 siw2 siw3; do
		[ -e "/sys/class/infiniband/$m" ] && rdma link delete "$m" >/dev/null 2>&1
	done
	ip link delete veth0 >/dev/null 2>&1
	ip link delete veth2 >/dev/null 2>&1
	ip netns delete "$VM_SIW_NETNS" >/dev/null 2>&1
	# the modules a scenario must be able to unload, in dependency order,
	# in one rmmod (one process, not one per module: seconds per row
	# under TCG); what it left loaded is tried once more alone only when
	# it timed out, and reported
	mods=()
	for m in ib_iser ib_isert iser_dm iscsi_target_mod target_core_file \
		target_core_iblock target_core_pscsi target_core_user \
		target_core_mod nvme_rdma nvme_fabrics nvmet_rdma nvmet brd \
		rdma_rxe siw; do
		vm_loaded "$m" && mods+=("$m")
	done
	if [ ${#mods[@]} -gt 0 ]; then
		vm_log "rmmod ${mods[*]}" >&2
		timeout 60 rmmod "${mods[@]}" >/dev/null 2>&1
		rc=$?
	fi
	for m in "${mods[@]}"; do
		vm_loaded "$m" || continue
		if [ "$rc" = 124 ]; then
			vm_log "rmmod $m" >&2
			timeout 60 rmmod "$m" >/dev/null 2>&1
			vm_loaded "$m" || continue
		fi
		echo "cannot unload $m (refcnt $(cat "/sys/module/$m/refcnt" 2>/dev/null), holders: $(cd "/sys/module/$m/holders" 2>/dev/null && echo *))"
	done
	# the stack below (ib_core, rdma_cm, libiscsi, scsi_transport_iscsi,
	# iscsi_tcp, veth) stays: no scenario's result depends on reloading
	# it, and unloading and loading it again cost every row seconds
	return 0
}

# vm_kmemleak FILE: on a kernel with kmemleak (the debug kernel of make
# check-debug), scan twice and write the unreferenced objects it reports to
# FILE, then clear the list for the next scenario. kmemleak reports only
# objects older than 5 s, so the first scan waits that long after the
# scenario's last allocation. Returns 1 when FILE has a report, 0 when it
# has none or the kernel has no kmemleak.
vm_kmemleak() {
	local k=/sys/kernel/debug/kmemleak
	[ -w "$k" ] || return 0
	sleep 6
	echo scan >"$k" 2>/dev/null
	echo scan >"$k" 2>/dev/null
	cat "$k" >"$1" 2>/dev/null
	echo clear >"$k" 2>/dev/null
	[ ! -s "$1" ]
}

# vm_klog_check FILE: print the offending kernel log lines, if any.
vm_klog_check() {
	grep -aE "$VM_BAD_KLOG" "$1"
}
