# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Raw link limit, a context column of make bench (tests/vm/bench.sh runs it
# once per round, in the same boot and round order as the pairings):
# perftest's ib_write_bw and ib_read_bw connected with rdma_cm (-R), with
# 128 KiB and 512 KiB messages, RUNTIME seconds each: the server on
# $VM_DEV0 (veth0, the target's address), the client connecting to the
# target's address from the same guest, as the iSER initiator does.  No
# iSCSI module is loaded.  rdma_cm resolves an address of this host to the
# device that owns it, so, as for the iSER sessions of the one-guest rig,
# both queue pairs end up on $VM_DEV0 and soft-RoCE loops the packets back
# inside it ($VM_DEV1 and the veth pair carry none; the packet counters of
# both devices are logged after each test to show it).
#   bench-link [RUNTIME]
# Results, one JSON object per test in $VM_SCEN_DIR/link.json:
#   {"test": "write"|"read", "size_kib": N, "mib_s": X, "error": ""}
# with mib_s null and the reason in error when perftest gave no number:
# the scenario still passes (the other numbers stand) and
# bench-report.py names the missing one and fails the report.

runtime=${1:-10}
case $runtime in
'' | *[!0-9]*) vm_fail "bench-link.sh: RUNTIME must be a number of seconds, not '$runtime'" ;;
esac
command -v ib_write_bw >/dev/null ||
	vm_fail "ib_write_bw not found: install Debian's perftest (scripts/deps.sh)"

vm_rxe_up

# rxe_pkts: "device sent received" packets of each soft-RoCE device, to
# show which devices carried a test
rxe_pkts() {
	local d c=/ports/1/hw_counters
	for d in "$VM_DEV0" "$VM_DEV1"; do
		echo "$d $(cat "/sys/class/infiniband/$d$c/sent_pkts") $(cat "/sys/class/infiniband/$d$c/rcvd_pkts")"
	done
}

# perftest_listening PORT: an rdma_cm id listens on PORT
perftest_listening() {
	rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*:$1 *$"
}

# perftest_bw TOOL BYTES PORT OUT: one server/client run; the client's
# output in OUT, the server's in OUT.server.  Prints the client's average
# bandwidth (perftest's "MB/sec", 2^20 bytes a second); status 1 and the
# reason on stderr when there is none.
perftest_bw() {
	local tool=$1 bytes=$2 port=$3 out=$4 spid bw rc=0
	"$tool" -R -d "$VM_DEV0" -s "$bytes" -D "$runtime" -F -p "$port" \
		>"$out.server" 2>&1 &
	spid=$!
	if vm_wait 30 perftest_listening "$port"; then
		timeout $((runtime + 60)) "$tool" -R -s "$bytes" -D "$runtime" -F \
			-p "$port" "$VM_TGT_IP" >"$out" 2>&1
		rc=$?
	else
		echo "the $tool server did not listen on port $port within 30 s" >"$out"
		rc=1
	fi
	vm_wait 20 sh -c "! kill -0 $spid 2>/dev/null" || kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	# the result line: the message size in bytes, the iterations, the
	# peak and the average bandwidth, the message rate
	bw=$(awk -v b="$bytes" '$1 == b && NF >= 5 { print $4 }' "$out" | tail -n 1)
	if [ $rc != 0 ] || [ -z "$bw" ]; then
		echo "exit $rc, no result line: $(grep -v '^[- ]*$' "$out" | tail -n 2 | paste -sd ' ' - | cut -c1-200)" >&2
		return 1
	fi
	echo "$bw"
}

out=$VM_SCEN_DIR/link.json
: >"$out"
port=18515
for test in write read; do
	for kib in 128 512; do
		log=$VM_SCEN_DIR/ib_${test}_bw-${kib}k.log
		rxe_pkts >/tmp/link.before
		vm_log "+ ib_${test}_bw -R -s $((kib * 1024)) -D $runtime -p $port $VM_TGT_IP (server on $VM_DEV0)"
		if bw=$(perftest_bw "ib_${test}_bw" $((kib * 1024)) "$port" "$log" 2>/tmp/link.err); then
			err=""
		else
			bw=null
			err=$(cat /tmp/link.err)
		fi
		port=$((port + 1))
		/usr/bin/python3 - "$test" "$kib" "$bw" "$err" >>"$out" <<-'EOF' ||
			import json, sys
			test, kib, bw, err = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
			print(json.dumps({"test": test, "size_kib": kib,
			                  "mib_s": None if bw == "null" else float(bw),
			                  "error": err}))
		EOF
			vm_fail "ib_${test}_bw $kib KiB: no usable result ('$bw')"
		vm_log "bench-link $(tail -n 1 "$out")"
		rxe_pkts | awk 'NR == FNR { s[$1] = $2; r[$1] = $3; next }
			{ printf "%s sent +%d received +%d  ", $1, $2 - s[$1], $3 - r[$1] }
			END { print "" }' /tmp/link.before - | sed 's/^/rxe packets: /'
	done
done
