# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The demo (tests/vm/demo.sh): an iSER target on a ramdisk made with
# targetcli, TCP discovery, iSER login, fio write+verify and a short
# measurement, logout.  Writes a human summary to $VM_SCEN_DIR/summary.

S=$VM_SCEN_DIR/summary
role_desc() { # ROLE(ours|intree) MODULE
	if [ "$1" = ours ]; then
		echo "ours   ($2 from $(vm_ours_path "$2" | sed "s|^$VM_REPO/||"))"
	else
		echo "in-tree ($2 from $(modinfo -n "$2" | sed 's|^/lib/modules/[^/]*/||'))"
	fi
}

vm_progress "guest up: kernel $VM_REL, $(nproc) vCPUs"
vm_progress "soft-RoCE: rdma_rxe on a veth pair (target 192.168.77.1 / initiator 192.168.77.2)"
vm_rxe_up
vm_progress "loading modules: initiator=$VM_INITIATOR target=$VM_TARGET"
vm_load_roles
# with debug_level=2 the in-tree modules log what the CM exchange negotiated
for m in ib_iser ib_isert; do
	[ -w "/sys/module/$m/parameters/debug_level" ] &&
		echo 2 >"/sys/module/$m/parameters/debug_level"
done
vm_progress "targetcli: iSER target $VM_TARGET_IQN, 64 MiB ramdisk (rd_mcp), iSER portal :$VM_ISER_PORT, TCP portal :$VM_TCP_PORT, ACL"
vm_target_setup
vm_iscsid_start
vm_progress "iscsiadm: SendTargets discovery over TCP on $VM_TGT_IP:$VM_TCP_PORT"
disc=$(vm_discover 2>&1) || vm_fail "discovery failed: $disc"
echo "$disc"
echo "$disc" | grep -q "^$VM_TGT_IP:$VM_ISER_PORT,1 $VM_TARGET_IQN" ||
	vm_fail "discovery did not report the iSER portal"
vm_progress "iscsiadm: login over iSER (-I iser) to $VM_TGT_IP:$VM_ISER_PORT"
vm_node_new
vm_kmsg "iser-vm: demo login"
dev=$(vm_login_disk) || exit 1
for m in ib_iser ib_isert; do
	[ -w "/sys/module/$m/parameters/debug_level" ] &&
		echo 0 >"/sys/module/$m/parameters/debug_level"
done
vm_check_disk "$dev"
vm_progress "logged in: $dev ($(($(cat "/sys/block/${dev#/dev/}/size") / 2048)) MiB, $(iscsiadm -m session | head -n 1))"
p3=$VM_SCEN_DIR/session-P3.txt
iscsiadm -m session -P 3 >"$p3" 2>&1

vm_progress "fio: write + crc32c verify, 1M sequential QD4 (32 MiB) and 4k random QD32 (8 MiB)"
vm_fio "$dev" verify <<-EOF
	[seq-1m-qd4]
	rw=write
	bs=1M
	iodepth=4
	size=32M
	[rand-4k-qd32]
	rw=randwrite
	bs=4k
	iodepth=32
	size=8M
	offset=32M
EOF
vm_progress "fio: verify passed; measuring 4k random read QD32 and 1M sequential read QD8, 8 s each"
perf=$VM_SCEN_DIR/fio-perf.json
fio --output-format=json --output="$perf" - <<-EOF || vm_fail "fio measurement failed"
	[global]
	filename=$dev
	ioengine=libaio
	direct=1
	time_based
	runtime=8
	stonewall
	[randread-4k-qd32]
	rw=randread
	bs=4k
	iodepth=32
	[seqread-1m-qd8]
	rw=read
	bs=1M
	iodepth=8
EOF
perf_line=$(/usr/bin/python3 - "$perf" <<-'EOF'
	import json, sys
	t = open(sys.argv[1]).read()
	d = json.loads(t[t.index("{"):])
	j = {x["jobname"]: x for x in d["jobs"]}
	bad = [n for n in j if j[n]["error"]]
	if bad:
	    print("ERROR in " + " ".join(bad)); sys.exit(1)
	print("%.0f IOPS (4k random read, QD32); %.1f MiB/s (1M sequential read, QD8)" % (
	    j["randread-4k-qd32"]["read"]["iops"], j["seqread-1m-qd8"]["read"]["bw"] / 1024.0))
EOF
) || vm_fail "fio measurement: $perf_line"
vm_progress "fio: $perf_line"

vm_progress "iscsiadm: logout"
vm_logout_check "$dev"

# what was negotiated
neg=$(awk '/Negotiated iSCSI params:/ { p = 1; next } p && /:/ { gsub(/^[ \t]+/, ""); print }' \
	"$p3" | grep -E 'MaxRecvDataSegmentLength|MaxXmitDataSegmentLength|FirstBurstLength|MaxBurstLength|ImmediateData|InitialR2T|HeaderDigest|DataDigest')
rdma=$(grep -m1 -E 'RDMAExtensions' "$p3" | sed 's/^[ \t]*//')
[ -n "$rdma" ] || rdma="not shown by iscsiadm -P 3; implied by the iser transport: $(grep -m1 'Iface Transport' "$p3" | sed 's/^[ \t]*//')"
klog=$(dmesg | awk '/iser-vm: demo login/ { p = 1 } p')
inv_i=$(echo "$klog" | grep -o 'negotiated [a-z]* invalidation' | head -n 1)
inv_t=$(echo "$klog" | grep -o 'Using remote invalidation' | head -n 1)
if [ -n "$inv_i" ] || [ -n "$inv_t" ]; then
	swi="initiator: ${inv_i:-not reported}; target: ${inv_t:-not reported} (from the CM REQ/REP private data, debug_level=2)"
else
	swi="not reported by the modules in use"
fi
hdr="not reported by the modules in use"
# our target reports the mode of each session when it enters full feature
# phase: "... normal session from A:P: 28-byte header, Send with Invalidate, ORD n, ..."
ours_t=$(echo "$klog" | sed -n 's/.*ib_isert: normal session from [^ ]*: \(.*\)$/\1/p' | tail -n 1)
if [ -n "$ours_t" ]; then
	hdr="$(echo "$ours_t" | cut -d, -f1) (target's log)"
	swi="$(echo "$ours_t" | cut -d, -f2 | sed 's/^ //') (target's log; from the CM REQ/REP private data)"
	[ -n "$inv_i" ] && swi="$swi; initiator: $inv_i"
fi
{
	echo "kernel:        $VM_REL (qemu TCG, $(nproc) vCPUs)"
	echo "initiator:     $(role_desc "$VM_INITIATOR" ib_iser)"
	echo "target:        $(role_desc "$VM_TARGET" ib_isert)"
	echo "fabric:        soft-RoCE (rdma_rxe) on veth, $VM_INI_IP -> $VM_TGT_IP:$VM_ISER_PORT"
	echo "LUN:           64 MiB LIO ramdisk (rd_mcp) as $dev"
	echo "RDMAExtensions: $rdma"
	echo "iSER header:   $hdr"
	echo "Send-with-Invalidate: $swi"
	echo "negotiated:"
	echo "$neg" | sed 's/^/    /'
	echo "performance:   $perf_line"
	echo "verification:  PASSED (fio crc32c: 40 MiB written and read back, 0 errors)"
	echo "logout:        session and $dev gone"
} >"$S"
cat "$S"
