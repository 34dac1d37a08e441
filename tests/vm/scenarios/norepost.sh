# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# A logged-in peer that stops reposting its receive buffers costs only its
# own connection. iser_ffp (tests/vm/tools/ffp/) -m norepost logs in (a discovery
# session) and sends 200 immediate NOP-Out pings while it never reposts a
# receive buffer: once its buffers are full, the target's NOP-Ins wait in
# RNR retry for ever, each holding one of the session's command tags. It
# holds the connection 30 s, or until the target closes it, and
# disconnects. Meanwhile the row's initiator runs verified random writes
# on its own session. Judged with our target:
#  - the target closes the flooding connection (closed=yes) before the
#    hold ends;
#  - the verified I/O passes, and no request of it took 10 s or more;
#  - 30 s after the peer left, the target lists no discovery connection
#    (debugfs), and a new discovery login with a ping works.
# With the in-tree target the tool's outcome is logged, not judged; the
# kernel log and the row's timeout still judge it.

ffp=$VM_REPO/build/vm/tools/iser_ffp
[ -x "$ffp" ] || vm_fail "$ffp is not built (make vm-tools)"
vm_setup_node
dev=$(vm_login_disk) || exit 1

(
	vm_fio "$dev" bg <<-EOF
		[bg]
		rw=randwrite
		bs=4k
		iodepth=16
		size=8M
		loops=16
	EOF
) &
fpid=$!
sleep 2

start=$SECONDS
out=$("$ffp" -m norepost "$VM_TGT_IP" "$VM_ISER_PORT" 2>&1) ||
	vm_fail "iser_ffp -m norepost did not run: $out"
vm_log "iser_ffp -m norepost: $out ($((SECONDS - start)) s)"

fails=""
if [ "$VM_TARGET" != intree ]; then
	echo "$out" | grep -qE 'login=ok .*closed=yes .*pings_sent=[0-9]+ held=([0-9]|[12][0-9])$' ||
		fails+="the target did not close the flooding connection within the hold: $out; "
fi

wait "$fpid" || fails+="the verified I/O of the other session failed; "
/usr/bin/python3 - "$VM_SCEN_DIR/fio-bg.json" <<-'EOF' || fails+="a request of the other session took 10 s or more; "
	import json, sys
	t = open(sys.argv[1]).read()
	j = json.loads(t[t.index("{"):])["jobs"][0]
	worst = max(j[d]["lat_ns"]["max"] for d in ("read", "write"))
	print("longest request of the other session: %.3f s" % (worst / 1e9))
	sys.exit(0 if worst < 10e9 else 1)
EOF

if [ "$VM_TARGET" != intree ]; then
	no_disc() { ! grep -q 'session: discovery' /sys/kernel/debug/ib_isert/connections 2>/dev/null; }
	vm_wait 30 no_disc ||
		fails+="a discovery connection is still listed 30 s after the peer left; "
	out=$("$ffp" -m nop "$VM_TGT_IP" "$VM_ISER_PORT" 2>&1)
	vm_log "iser_ffp -m nop: $out"
	echo "$out" | grep -q 'login=ok .*nop_in=yes' ||
		fails+="a new login with a ping failed afterwards: $out; "
fi

vm_logout_check "$dev"
[ -z "$fails" ] || vm_fail "$fails"
