# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Peers that misbehave before login must not lock anyone out of the portal:
# with 20 connections held open that never send a login PDU, a normal
# initiator logs in within 5 s; the target closes the silent connections
# itself (bounded per source, then after prelogin_timeout); connections
# that drop at once, send garbage as their first message, or bring no or
# short Annex A12 private data are closed; afterwards a login
# and a verified fio job still work. Only for our target: in the
# in-tree one a silent peer blocks LIO's login thread.

peer=$VM_REPO/build/vm/tools/iser_peer
[ -x "$peer" ] || vm_fail "$peer is missing (built by 'make vm-check' / 'make check')"
portal=("$VM_TGT_IP" "$VM_ISER_PORT")

vm_setup_node

# 20 silent connections, held for 45 s (longer than prelogin_timeout, 15 s)
"$peer" -n 20 -m silent -t 45 "${portal[@]}" >/tmp/silent.out 2>&1 &
silent_pid=$!
sleep 5
start=$(date +%s%N)
out=$(vm_login 2>&1) || vm_fail "login behind 20 silent connections failed: $out"
ms=$((($(date +%s%N) - start) / 1000000))
vm_log "login behind 20 silent connections took $ms ms"
[ "$ms" -le 5000 ] || vm_fail "login behind 20 silent connections took $ms ms (limit 5000)"
vm_check_iser_session
dev=$(vm_disk)
wait "$silent_pid"
res=$(cat /tmp/silent.out)
vm_log "silent peers: $res"
echo "$res" | grep -qE 'established=([1-9]|1[0-9]|20) ' ||
	vm_fail "no silent connection was established: $res"
echo "$res" | grep -q ' alive=0$' ||
	vm_fail "the target left silent connections open: $res"
vm_logout_check "$dev"

# connect-and-drop, garbage first message, no or short private data; six
# at a time stays below the per-source bound of pre-login connections (8),
# so no connection is evicted and every count is exact. On IB and RoCE
# rdma_cm pads missing or short REQ private data with zeros, which reads
# as a valid REQ: those connections are accepted and must then be closed
# like any silent one, after prelogin_timeout (15 s).
echo 5 >/sys/module/ib_isert/parameters/prelogin_timeout
for m in drop garbage nopd shortpd; do
	res=$("$peer" -n 6 -m "$m" -t 9 "${portal[@]}" 2>&1) ||
		vm_fail "iser_peer -m $m: $res"
	vm_log "$m peers: $res"
	case $m in
	nopd | shortpd)
		echo "$res" | grep -qE '^established=6 .* alive=0$' ||
			vm_fail "connections with $m were not all closed: $res" ;;
	garbage)
		echo "$res" | grep -qE '^established=6 .* alive=0$' ||
			vm_fail "connections with a garbage first message were not all closed: $res" ;;
	drop)
		echo "$res" | grep -qE '^established=6 .* alive=0$' ||
			vm_fail "connect-and-drop peers were not accepted: $res" ;;
	esac
done
echo 15 >/sys/module/ib_isert/parameters/prelogin_timeout

# the portal still serves a normal initiator, with verified data
vm_serves_after after-hostile
