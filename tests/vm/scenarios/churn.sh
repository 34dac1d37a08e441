# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Lifetime under churn (issue #10):
#   churn [--logins N] [--links M] [--chains K]
# Session A (tgt0) carries verified I/O for the whole scenario: fio jobs
# with crc32c verification, one after the other, each writing 8 MiB of
# random blocks (4 KiB to 64 KiB) and reading them back. Meanwhile:
#  1. N login/logout cycles in all (default 1000), shared by K chains that
#     run at the same time (default 2), each on its own further session:
#     chain k logs in and out of tgt<k> (its own ramdisk, the same iSER
#     portal). Every 50th cycle of a chain waits for its disk and reads its
#     first 64 KiB, the others log out at once, so logout races the SCSI
#     scan of the new session; with K > 1 logins and logouts of different
#     sessions also race each other (and the debug kernel's CPU-bound
#     cycles use both guest CPUs);
#  2. M link cycles (default 200): "rdma link delete" of the target
#     address's soft-RoCE device, then "rdma link add": in one guest the
#     initiator reaches the local target address through that device too
#     (rxe1 carries nothing), so both ends of every connection go through
#     their module's device removal path, and session A logs in again by
#     itself (replacement_timeout 600: no I/O is failed; LIO's login
#     statistics count the new login) before the next cycle.
# Judged: every login, logout, delete and add succeeds in its time; every
# fio job of session A passes its verification; after each phase, with I/O
# stopped and caches dropped, unreclaimable slab memory has not grown by
# more than 4 MiB from before the churn (kmemleak, on the debug kernel,
# judges single objects); and the rig's kernel-log gate.
# With K > 1, one chain's iscsiadm reads the sysfs files of another's
# connection while they are removed; on a lockdep kernel that can close a
# lock cycle of the kernel's iSCSI transport class and libiscsi, with no
# lock of ours in it (attribute_container_mutex -> a reader's kernfs
# active reference -> ep_mutex -> the session's iscsi_ctrl work queue ->
# attribute_container_mutex). lockdep reports one cycle and then judges
# nothing more, so the debug kernel's long rows use K = 1.

logins=1000
links=200
chains=2
while [ $# -gt 0 ]; do
	case $1 in
	--logins) logins=$2; shift ;;
	--links) links=$2; shift ;;
	--chains) chains=$2; shift ;;
	*) vm_fail "churn: bad argument $1" ;;
	esac
	shift
done

case $chains in [1-8]) ;; *) vm_fail "churn: --chains $chains (1 to 8)" ;; esac
iqn_of() { echo "${VM_TARGET_IQN%:*}:tgt$1"; } # chain K's target
portal=$VM_TGT_IP:$VM_ISER_PORT
vm_rxe_up
vm_load_roles
vm_target_setup
for ((k = 1; k <= chains; k++)); do
	vm_target_add "$(iqn_of $k)" 16M "churn$k"
done
vm_iscsid_start
vm_node_new
vm_node_set node.session.timeo.replacement_timeout 600
for ((k = 1; k <= chains; k++)); do
	vm_must iscsiadm -m node -T "$(iqn_of $k)" -p "$portal" -I iser -o new
done
dev=$(vm_login_disk) || exit 1

login2() { # K
	vm_run timeout 60 iscsiadm -m node -T "$(iqn_of "$1")" -p "$portal" -I iser --login
}
logout2() { # K
	vm_run timeout 60 iscsiadm -m node -T "$(iqn_of "$1")" -p "$portal" -I iser --logout
}
disk2() { vm_disk_of "$(iqn_of "$1")"; }
stats=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/fabric_statistics/iscsi_login_stats
accepts() { cat "$stats/accepts"; }
accepted_since() { [ "$(accepts)" -gt "$1" ]; }
a_logged_in() { # session A is LOGGED_IN
	iscsiadm -m session -P 1 2>/dev/null |
		awk -v t="$VM_TARGET_IQN" '$1 == "Target:" { on = ($2 == t) }
			on && /iSCSI Session State: LOGGED_IN/ { f = 1 } END { exit !f }'
}
slab_top() { # the caches with the most active objects, for the log
	awk 'NR > 2 { print $1, $2 * $4 }' /proc/slabinfo | sort -k2 -nr |
		head -n 12 | paste -sd ' ' -
}

# verified I/O on session A until /tmp/churn.stop appears
rm -f /tmp/churn.stop /tmp/churn.iofail
io_loop() {
	local n=0
	while [ ! -e /tmp/churn.stop ]; do
		n=$((n + 1))
		printf '%s\n' "[churn-$n]" 'rw=randwrite' 'bsrange=4k-64k' \
			'blockalign=4k' 'iodepth=16' 'size=8M' \
			"offset=$(((n % 6) * 8))M" |
			vm_fio "$dev" "io$((n % 4))" >/dev/null ||
			{ echo "fio job $n: $(cat "$VM_SCEN_DIR/fio-io$((n % 4)).err" 2>/dev/null)" \
				>/tmp/churn.iofail; return 1; }
		echo "$n" >/tmp/churn.jobs
	done
}
io_start() {
	rm -f /tmp/churn.stop
	io_loop &
	iopid=$!
}
io_stop() { # WHAT: stop the I/O loop, fail if a job failed
	touch /tmp/churn.stop
	wait "$iopid" || vm_fail "verified I/O on session A failed during $1: $(cat /tmp/churn.iofail 2>/dev/null)"
	vm_log "$1: $(cat /tmp/churn.jobs 2>/dev/null || echo 0) verified fio jobs so far on $dev"
}
slab_check() { # WHAT
	local now
	now=$(vm_slab_settled)
	vm_log "after $1: SUnreclaim ${now} KiB (before the churn ${slab0} KiB); largest caches: $(slab_top)"
	[ $((now - slab0)) -le 4096 ] ||
		vm_fail "unreclaimable slab grew by $((now - slab0)) KiB over $1 (more than 4 MiB)"
}

# warm-up: one cycle of each kind, so that caches the churn uses exist
login2 1 >/dev/null || vm_fail "login to $(iqn_of 1) failed"
vm_wait 30 disk2 1 >/dev/null || vm_fail "no disk for $(iqn_of 1)"
logout2 1 >/dev/null || vm_fail "logout of $(iqn_of 1) failed"
slab0=$(vm_slab_settled)
vm_log "before the churn: SUnreclaim ${slab0} KiB; largest caches: $(slab_top)"

# chain K: cycles FROM..TO (numbered in the whole run), logging in and out
# of tgtK; on failure it writes why to /tmp/churn.chainK.fail and stops.
# Its commands go to /tmp/churn.chainK.log, its progress to fd 3 (the
# scenario's log)
chain() {
	local k=$1 from=$2 to=$3 i d2 out
	for ((i = from; i <= to; i++)); do
		out=$(login2 "$k" 2>&1) || { echo "login $i to $(iqn_of "$k") failed: $out" >"/tmp/churn.chain$k.fail"; return 1; }
		if [ $((i % 50)) = 0 ]; then
			vm_wait 30 disk2 "$k" ||
				{ echo "login $i: no disk for $(iqn_of "$k")" >"/tmp/churn.chain$k.fail"; return 1; }
			d2=$(disk2 "$k")
			vm_wait 10 test -b "$d2" ||
				{ echo "login $i: $d2 did not appear" >"/tmp/churn.chain$k.fail"; return 1; }
			dd if="$d2" of=/dev/null bs=64k count=1 iflag=direct 2>/dev/null ||
				{ echo "login $i: reading $d2 failed" >"/tmp/churn.chain$k.fail"; return 1; }
			vm_log "chain $k: login cycle $i ($(($(date +%s) - t0)) s)" >&3
		fi
		out=$(logout2 "$k" 2>&1) || { echo "logout $i of $(iqn_of "$k") failed: $out" >"/tmp/churn.chain$k.fail"; return 1; }
		# stop with the I/O or with another chain that failed
		[ -e /tmp/churn.iofail ] && return 0
		compgen -G "/tmp/churn.chain*.fail" >/dev/null && return 0
	done
	return 0
}

# 1. login/logout of further sessions under verified I/O on the first,
# the cycles shared by the chains
io_start
t0=$(date +%s)
rm -f /tmp/churn.chain*.fail
pids=()
per=$(((logins + chains - 1) / chains))
for ((k = 1; k <= chains; k++)); do
	from=$(((k - 1) * per + 1))
	to=$((k * per < logins ? k * per : logins))
	[ "$from" -le "$to" ] || continue
	chain "$k" "$from" "$to" 3>&1 >"/tmp/churn.chain$k.log" 2>&1 &
	pids+=($!)
done
chain_fail=
for ((k = 0; k < ${#pids[@]}; k++)); do
	wait "${pids[$k]}" || chain_fail=1
done
[ -e /tmp/churn.iofail ] && { io_stop "login cycles"; exit 1; }
if [ -n "$chain_fail" ]; then
	io_stop "login cycles"
	vm_fail "$(cat /tmp/churn.chain*.fail 2>/dev/null | paste -sd ';' -)"
fi
io_stop "$logins login/logout cycles in $chains chains ($(($(date +%s) - t0)) s)"
a_logged_in || vm_fail "session A is not logged in after the login cycles"
[ "$(vm_session_count)" = 1 ] || vm_fail "expected session A alone, have $(vm_session_count) sessions"
slab_check "$logins login/logout cycles"

# 2. link delete/add under verified I/O
io_start
t0=$(date +%s)
for ((i = 1; i <= links; i++)); do
	d=$VM_DEV0 nd=veth0
	acc=$(accepts)
	vm_run timeout 150 rdma link delete "$d" ||
		{ io_stop "link cycle $i"; vm_fail "link cycle $i: rdma link delete $d failed or hung"; }
	vm_run rdma link add "$d" type "$VM_RDMA" netdev "$nd" ||
		{ io_stop "link cycle $i"; vm_fail "link cycle $i: rdma link add $d failed"; }
	vm_wait 10 vm_rxe_active ||
		{ io_stop "link cycle $i"; vm_fail "link cycle $i: $d not ACTIVE again"; }
	# the session notices the loss (connection error) and logs in again:
	# LIO accepts a new login, then the session is LOGGED_IN
	vm_wait 120 accepted_since "$acc" ||
		{ io_stop "link cycle $i"; vm_fail "link cycle $i: no new login of session A within 120 s"; }
	vm_wait 60 a_logged_in ||
		{ io_stop "link cycle $i"; vm_fail "link cycle $i: session A not logged in again within 120 s"; }
	[ -e /tmp/churn.iofail ] && { io_stop "link cycle $i"; exit 1; }
	[ $((i % 20)) = 0 ] && vm_log "link cycle $i of $links ($(($(date +%s) - t0)) s)"
done
io_stop "$links link cycles ($(($(date +%s) - t0)) s)"
vm_wait 120 a_logged_in || vm_fail "session A not logged in after the link cycles"
slab_check "$links link cycles"

printf '%s\n' '[after-churn]' 'rw=randwrite' 'bsrange=4k-128k' 'blockalign=4k' \
	'iodepth=16' 'size=16M' | vm_fio "$dev" after-churn || exit 1
vm_logout_check "$dev"
