# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Pre-login churn: for CHURN_SECONDS (default 60) several iser_peer loops
# open connections that stay silent and close around the moment the
# pre-login timer (prelogin_timeout=1) fires, send garbage at once, or
# drop at once, while the per-source and per-portal bounds are so small
# (2 or 3) that nearly every connect request evicts an older connection.
# Every way a pre-login connection can end (timer, eviction inside the
# listener's CONNECT_REQUEST, the peer's disconnect, a malformed first
# message) thus races with the others. Run with
# ISER_VM_APPEND="slub_debug=FZPU" so that a use after free shows as a
# "BUG kmalloc-..." line or a fault on poisoned memory. Afterwards no
# pre-login connection may be left, the portal must serve a normal login
# with verified fio, and the kernel log must be clean. Events rdma_cm
# delivers for a connection must never reach the listener's code: its
# pr_debug is switched on, and a "portal ...: CM event" line fails the
# scenario (no listener event other than CONNECT_REQUEST happens here).

peer=$VM_REPO/build/vm/tools/iser_peer
[ -x "$peer" ] || vm_fail "$peer is missing (built by 'make vm-tools')"
portal=("$VM_TGT_IP" "$VM_ISER_PORT")
secs=${CHURN_SECONDS:-60}
par=/sys/module/ib_isert/parameters

vm_setup_node

ddc=/sys/kernel/debug/dynamic_debug/control
if [ -w "$ddc" ]; then
	echo 'module ib_isert func ist_np_cm_event +p' >"$ddc" ||
		vm_log "cannot enable ist_np_cm_event's pr_debug"
else
	vm_log "no dynamic debug control: misrouted CM events are not counted"
fi

echo 1 >"$par/prelogin_timeout"
echo 2 >"$par/max_prelogin_per_source"
echo 64 >"$par/max_prelogin_per_portal"

end=$(($(date +%s) + secs))
# MODE N: iser_peer runs of N connections until the end, each holding
# them a random 0.6-1.5 s (around the timer) or, for drop/garbage, 0.5 s
churn() {
	local mode=$1 n=$2 runs=0 stuck=0 hold
	while [ "$(date +%s)" -lt "$end" ]; do
		case $mode in
		silent) hold=$((RANDOM % 10 + 6)) hold=$((hold / 10)).$((hold % 10)) ;;
		*) hold=0.5 ;;
		esac
		# a peer stuck in librdmacm must not stop the churn
		timeout -s KILL 30 "$peer" -n "$n" -m "$mode" -t "$hold" \
			"${portal[@]}" >/dev/null 2>&1 || stuck=$((stuck + 1))
		runs=$((runs + 1))
	done
	echo "$mode x$n: $runs runs, $stuck killed or failed"
}
pids=()
churn silent 6 >/tmp/churn.1 & pids+=($!)
churn silent 3 >/tmp/churn.2 & pids+=($!)
churn garbage 4 >/tmp/churn.3 & pids+=($!)
churn drop 3 >/tmp/churn.4 & pids+=($!)
# alternate which bound evicts: per source (2), then per portal (3)
flips=0
while [ "$(date +%s)" -lt "$end" ]; do
	sleep 5
	if [ $((flips % 2)) -eq 0 ]; then
		echo 8 >"$par/max_prelogin_per_source"
		echo 3 >"$par/max_prelogin_per_portal"
	else
		echo 2 >"$par/max_prelogin_per_source"
		echo 64 >"$par/max_prelogin_per_portal"
	fi
	flips=$((flips + 1))
done
wait "${pids[@]}"
vm_log "churn: $(cat /tmp/churn.[1-4] | tr '\n' ' ')"
closed=$(vm_scen_dmesg | grep -c 'before login')
vm_log "pre-login connections closed by the target (log lines, rate-limited): $closed"
[ "$closed" -gt 0 ] || vm_fail "the target closed no pre-login connection during the churn"

echo 15 >"$par/prelogin_timeout"
echo 8 >"$par/max_prelogin_per_source"
echo 64 >"$par/max_prelogin_per_portal"
[ -w "$ddc" ] && echo 'module ib_isert func ist_np_cm_event -p' >"$ddc"

# every churn connection is gone once its peer exited: a silent peer that
# still holds one sees it alive
res=$(timeout -s KILL 30 "$peer" -n 2 -m silent -t 2 "${portal[@]}" 2>&1)
vm_log "after the churn, 2 silent connections held 2 s: $res"
echo "$res" | grep -qE '^established=2 ' ||
	vm_fail "the portal did not accept connections after the churn: $res"

misrouted=$(vm_scen_dmesg | grep -E 'ib_isert: portal .*: CM event' | head -3)
[ -z "$misrouted" ] ||
	vm_fail "connection CM events reached the listener's handler: $misrouted"

# the portal still serves a normal initiator, with verified data
dev=$(vm_login_disk) || exit 1
vm_fio "$dev" after-churn <<-EOF || exit 1
	[verify]
	rw=randwrite
	bs=16k
	iodepth=16
	size=16M
EOF
vm_logout_check "$dev"
