# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# A storm of connections that never log in cannot grow the target's share
# of the device's CQ pool without bound. Every connection takes its
# full-size queues at CONNECT_REQUEST (an RC queue pair cannot be resized
# once the session is known), and the pool never shrinks, so the bound on
# connections waiting for their first login PDU (max_prelogin_per_portal,
# 64; the per-source bound is lifted here, since every peer comes from
# one address) is what limits it. Two waves of 500 silent connections
# (two iser_peer processes of 250 each, held 20 s, times VM_TIMEOUT_SCALE
# on the debug kernel, where 250 connects take longer than 20 s):
#   - debugfs never lists more than 64 connections waiting for a login,
#     beside at most 8 evicted ones whose release has not yet run;
#   - after the first wave the pool has grown (rdma res show cq, ib_core's
#     CQs) by at most one pool CQ per connection held at once, the worst
#     case (a pool CQ holds at least 4096 entries, rounded up by the
#     device; soft-RoCE fits three connections of 2066 in one of 8191);
#   - the second wave grows it no more;
#   - a normal login with verified data works afterwards.
# Our target only: the in-tree one has no pre-login bound.

peer=$VM_REPO/build/vm/tools/iser_peer
[ -x "$peer" ] || vm_fail "$peer is missing (built by 'make vm-tools')"
portal=("$VM_TGT_IP" "$VM_ISER_PORT")
par=/sys/module/ib_isert/parameters
dbg=/sys/kernel/debug/ib_isert/connections

vm_rxe_up
vm_load_roles
vm_target_setup

# entries of ib_core's own CQs: the CQ pools (and the MAD agents' CQs,
# which do not change); with "max", the largest of them
pool_cqes() {
	rdma res show cq | awk -v max="${1:-}" '/comm \[ib_core\]/ {
		for (i = 1; i < NF; i++) if ($i == "cqe") {
			s += $(i + 1); if ($(i + 1) > m) m = $(i + 1)
		}
	} END { print (max ? m : s) + 0 }'
}
waiting() { grep -c '^state: accepted' "$dbg" 2>/dev/null || true; }

per_src=$(cat $par/max_prelogin_per_source)
bound=$(cat $par/max_prelogin_per_portal)
echo 0 >$par/max_prelogin_per_source

# wave N: 500 silent connections; prints the most seen waiting at once
# and the largest cq_entries of a listed connection
wave() {
	local peak=0 cqe=0 n c pids=()

	"$peer" -n 250 -m silent -t "$((20 * ${VM_TIMEOUT_SCALE:-1}))" "${portal[@]}" >"/tmp/storm.$1.a" 2>&1 &
	pids+=($!)
	"$peer" -n 250 -m silent -t "$((20 * ${VM_TIMEOUT_SCALE:-1}))" "${portal[@]}" >"/tmp/storm.$1.b" 2>&1 &
	pids+=($!)
	while kill -0 "${pids[@]}" 2>/dev/null; do
		n=$(waiting)
		[ "$n" -le "$peak" ] || peak=$n
		c=$(awk '$1 == "cq_entries:" && $2 > m { m = $2 } END { print m + 0 }' "$dbg" 2>/dev/null)
		[ "$c" -le "$cqe" ] || cqe=$c
		sleep 0.2
	done
	wait "${pids[@]}" || true
	echo "$peak $cqe"
}

# what the CQs are, counted by kind (all but their number)
cq_list() {
	vm_log "rdma res show cq, $1: $(rdma res show cq | awk '{
		for (i = 1; i < NF; i++) if ($i == "cqn") { $i = ""; $(i + 1) = "" }
		$1 = $1; print }' | sort | uniq -c | sort -rn | head -6 | tr '\n' ';')"
}
cq_list "at the start"
start=$(pool_cqes)
read -r peak1 cqe1 < <(wave 1)
after1=$(pool_cqes)
chunk=$(pool_cqes max)
cq_list "after wave 1"
read -r peak2 _ < <(wave 2)
after2=$(pool_cqes)
echo "$per_src" >$par/max_prelogin_per_source
vm_log "wave 1: $(tr '\n' ' ' </tmp/storm.1.a)/ $(tr '\n' ' ' </tmp/storm.1.b)"
vm_log "wave 2: $(tr '\n' ' ' </tmp/storm.2.a)/ $(tr '\n' ' ' </tmp/storm.2.b)"
vm_log "CQ pool entries: $start at the start, $after1 after wave 1, $after2 after wave 2; most waiting at once $peak1 and $peak2 (bound $bound); cq_entries $cqe1"

grep -qE '^established=[1-9]' /tmp/storm.1.a ||
	vm_fail "wave 1 established no connection: $(cat /tmp/storm.1.a)"
[ "$cqe1" -gt 0 ] || vm_fail "debugfs showed no connection's cq_entries during the storm"
# an evicted connection is listed until its release work has run
if [ "$peak1" -gt $((bound + 8)) ] || [ "$peak2" -gt $((bound + 8)) ]; then
	vm_fail "up to $peak1 and $peak2 connections waited for a login at once (bound $bound, 8 more on their way out)"
fi
[ "$after1" -gt "$start" ] ||
	vm_fail "the CQ pool did not grow in the storm ($start entries): rdma res show cq lists no pool CQ"
# at worst every connection held at once took a pool CQ of its own
limit=$(((bound + 8 + 1) * chunk))
vm_log "CQ pool growth $((after1 - start)) entries; limit $limit (pool CQs of $chunk entries)"
[ $((after1 - start)) -le "$limit" ] ||
	vm_fail "the CQ pool grew by $((after1 - start)) entries in 500 connects (limit $limit)"
[ "$after2" -le "$after1" ] ||
	vm_fail "the second wave grew the CQ pool again: $after1 -> $after2 entries"

vm_serves_after after-storm
