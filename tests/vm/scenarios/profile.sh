# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Where the guest's CPU time goes while one fio workload runs (rows
# profile-*, and tests/vm/profile.sh in make bench's exact mode; see
# Documentation/performance.md, "Profiles"):
#   profile WORKLOAD [SECONDS] [--iblock | --pi=TYPE] [--freq=HZ]
#           [MODULE.PARAM=VALUE...]
# WORKLOAD is one of bench.sh's (guest/lib/bench.sh VM_BENCH_WORKLOADS). Sets up
# the pairing as bench.sh does (ramdisk LUN, or with --iblock LIO's block
# backstore on brd, or with --pi the ramdisk formatted with protection
# information of that type; the module parameters set after loading;
# prefilled), then samples every CPU with perf
# (cpu-clock, HZ per second of guest time, default 999, call graphs) over
# SECONDS (default 20) of the workload.  Under icount (ISER_VM_ICOUNT=1)
# one second of guest time is 1e9 guest instructions, so a sample stands
# for 1e9 / HZ instructions.  In $VM_SCEN_DIR: perf-sym.txt (the hottest
# kernel symbols, self time), perf-dso.txt (the share of each module and
# of the core kernel), perf-caller.txt (the hottest symbols with their
# callers), perf-samples.txt (the sample count of every module and
# symbol), modsyms.txt (each module function with its module, for
# perf names them without it), profile.json (the frequency and the requests the disk
# completed while perf ran: what tests/vm/profile-report.py divides by;
# the workload's options, the negotiated immediate-data limit and the
# path MTU and the protection interval (0 without PI), for the protocol's
# floor of packets; the packets and the RNR
# NAKs and retries of every RDMA device over the same window, from its
# hw_counters)
# and fio.json; over one more second of the workload (tracefs), timers.txt
# (the timers that expired, per request) and sched.txt (work items by
# function, context switches by the task switched to, softirqs by kind,
# per request). perf comes from the host's root (linux-perf); the module
# symbols from /proc/kallsyms.

workload=${1:-}
secs=${2:-20}
case $secs in
'' | *[!0-9]*) vm_fail "profile.sh: SECONDS must be a number, not '$secs'" ;;
esac
shift $(($# < 2 ? $# : 2))
setup=()
params=()
freq=999
pi=""
for a in "$@"; do
	case $a in
	--iblock) setup+=(--iblock) ;;
	--pi=[13]) pi=${a#*=}; setup+=(--pi "$pi") ;;
	--freq=[1-9]*) freq=${a#*=} ;;
	?*.?*=*) params+=("$a") ;;
	*) vm_fail "profile.sh: bad argument '$a'" ;;
	esac
done
case $freq in *[!0-9]*) vm_fail "profile.sh: --freq takes a number" ;; esac
opts=$(vm_bench_workload "$workload") ||
	vm_fail "profile.sh: unknown workload '$workload'"
command -v perf >/dev/null || vm_fail "profile.sh: no perf in the guest (linux-perf on the host)"

vm_bench_disk "${params[@]}" "${setup[@]}"
dev=$VM_BENCH_DEV
[ -z "$pi" ] || vm_bench_pi_check "$dev" "$pi"

args=()
for o in $opts; do
	args+=("--$o")
done
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid
data=/tmp/perf.data
vm_log "perf record over $secs s of $workload ($opts), $freq Hz"
# rdma_counters: "device/counter value" of every RDMA device's port 1
rdma_counters() {
	local f
	for f in /sys/class/infiniband/*/ports/1/hw_counters/*; do
		[ -f "$f" ] || continue
		echo "$(basename "$(dirname "$(dirname "$(dirname "$(dirname "$f")")")")")/${f##*/} $(cat "$f")"
	done
}
c0=$(rdma_counters)
req0=$(vm_disk_requests "$dev")
perf record -q -a -g -e cpu-clock -F "$freq" -o "$data" -- \
	fio --name="$workload" --filename="$dev" --direct=1 --ioengine=libaio \
	--time_based --ramp_time=2 --runtime="$secs" "${args[@]}" \
	--output-format=json --output="$VM_SCEN_DIR/fio.json" \
	>"$VM_SCEN_DIR/perf-record.log" 2>&1 ||
	vm_fail "perf record or fio failed: $(tail -n 3 "$VM_SCEN_DIR/perf-record.log" | paste -sd ' ' -)"
req1=$(vm_disk_requests "$dev")
c1=$(rdma_counters)
iops=$(/usr/bin/python3 -c '
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])["jobs"][0]
print(round(j["read"]["iops"] + j["write"]["iops"]))' "$VM_SCEN_DIR/fio.json") ||
	vm_fail "no fio result"
vm_log "$workload: $iops IOPS under perf, $((req1 - req0)) requests while perf ran"
# the immediate data a WRITE may carry (RFC 7143 13.11, 13.14): the
# session's FirstBurstLength and the connection's MaxXmitDataSegmentLength
sess=
cn=
for sess in /sys/class/iscsi_session/session*; do break; done
for cn in /sys/class/iscsi_connection/connection*; do break; done
if [ ! -d "$sess" ] || [ ! -d "$cn" ]; then
	vm_fail "profile.sh: no iSCSI session in sysfs"
fi
imm=0
[ "$(cat "$sess/immediate_data")" = 1 ] &&
	imm=$(( $(cat "$sess/first_burst_len") < $(cat "$cn/max_xmit_dlength") ?
		$(cat "$sess/first_burst_len") : $(cat "$cn/max_xmit_dlength") ))
mtu=$(ibv_devinfo 2>/dev/null | awk '$1 == "active_mtu:" { print $2; exit }')
[ -n "$mtu" ] || vm_fail "profile.sh: ibv_devinfo shows no active_mtu"
# with PI, an 8-byte tuple follows each logical block on the wire
interval=0
[ -z "$pi" ] || interval=$(cat "/sys/block/${dev#/dev/}/queue/logical_block_size")
/usr/bin/python3 - "$VM_SCEN_DIR/profile.json" "$workload" "$freq" \
	"$((req1 - req0))" "$iops" "$opts" "$imm" "$mtu" "$c0" "$c1" "$interval" <<'PY' ||
import json, sys
out, wl, freq, req, iops, opts, imm, mtu, c0, c1, interval = sys.argv[1:]
def parse(t):
    return {k: int(v) for k, v in (l.split() for l in t.splitlines() if l.strip())}
a, b = parse(c0), parse(c1)
json.dump({"workload": wl, "freq": int(freq), "requests": int(req),
           "iops": int(iops),
           "options": dict(o.split("=", 1) for o in opts.split()),
           "immediate_limit": int(imm), "path_mtu": int(mtu),
           "pi_interval": int(interval),
           "rdma_counters": {k: b[k] - a.get(k, 0) for k in b}},
          open(out, "w"))
PY
	vm_fail "profile.sh: cannot write profile.json"
vm_log "RDMA device counters over the window: $(/usr/bin/python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["rdma_counters"]
print(", ".join("%s %d" % kv for kv in sorted(c.items()) if kv[1]))' "$VM_SCEN_DIR/profile.json")"
report() {
	perf report -i "$data" --stdio --no-children --percent-limit 0.5 "$@" 2>/dev/null |
		grep -v '^$'
}
report -g none --sort sym >"$VM_SCEN_DIR/perf-sym.txt"
report -g none --sort dso >"$VM_SCEN_DIR/perf-dso.txt"
report -g caller,0.5,callee --sort sym --percent-limit 2 >"$VM_SCEN_DIR/perf-caller.txt"
perf report -i "$data" --stdio --no-children -g none -n --sort dso,sym \
	--percent-limit 0 2>/dev/null | grep -E '^ +[0-9.]+%' >"$VM_SCEN_DIR/perf-samples.txt"
# perf names a module's functions without their module: the map
awk 'NF == 4 && $2 ~ /^[tT]$/ { print $3, $4 }' /proc/kallsyms >"$VM_SCEN_DIR/modsyms.txt"
[ -s "$VM_SCEN_DIR/perf-sym.txt" ] || vm_fail "perf report gave nothing"
[ -s "$VM_SCEN_DIR/perf-samples.txt" ] || vm_fail "perf report -n gave nothing"
vm_log "by module: $(grep -E '^ +[0-9.]+%' "$VM_SCEN_DIR/perf-dso.txt" | head -n 12 | awk '{ printf "%s %s; ", $2, $1 }')"
vm_log "hottest symbols:"
grep -E '^ +[0-9.]+%' "$VM_SCEN_DIR/perf-sym.txt" | head -n 25
rm -f "$data"

# Which timers expire, per request, over one more second of the workload:
# under icount a guest that waits for a timer is idle, and that time
# counts in its figures.  timers.txt: count per request, then the
# function (timer_expire_entry and hrtimer_expire_entry).
t=/sys/kernel/tracing
[ -d "$t/events" ] || mount -t tracefs nodev "$t" || vm_fail "cannot mount tracefs"
echo 0 >"$t/tracing_on"
echo 65536 >"$t/buffer_size_kb"
: >"$t/trace"
ev="timer/timer_expire_entry timer/hrtimer_expire_entry
	workqueue/workqueue_execute_start sched/sched_switch irq/softirq_entry"
for e in $ev; do
	echo 1 >"$t/events/$e/enable"
done
req0=$(vm_disk_requests "$dev")
echo 1 >"$t/tracing_on"
fio --name="$workload-timers" --filename="$dev" --direct=1 --ioengine=libaio \
	--time_based --runtime=1 "${args[@]}" --output=/dev/null >/dev/null 2>&1 ||
	vm_fail "fio for the timer trace failed"
echo 0 >"$t/tracing_on"
req1=$(vm_disk_requests "$dev")
for e in $ev; do
	echo 0 >"$t/events/$e/enable"
done
n=$((req1 - req0))
grep -o 'function=[^ ]*' "$t/trace" | sort | uniq -c | sort -rn |
	awk -v n="$n" 'n > 0 { printf "%10.4f %s\n", $1 / n, $2 }' \
	>"$VM_SCEN_DIR/timers.txt"
# work items run, context switches (by the task switched to) and softirq
# runs per request: the scheduling a pairing costs
{
	grep -o 'workqueue_execute_start: .*function [^ ]*' "$t/trace" |
		awk '{ print "work", $NF }'
	grep -o 'next_comm=[^ ]*' "$t/trace" | sed 's/[0-9/:]*$//; s/^/switch-to /'
	grep -o 'softirq_entry: vec=[0-9]* \[action=[A-Z_]*' "$t/trace" |
		sed 's/.*action=/softirq /'
} | sort | uniq -c | sort -rn |
	awk -v n="$n" 'n > 0 { printf "%10.4f %s %s\n", $1 / n, $2, $3 }' \
	>"$VM_SCEN_DIR/sched.txt"
: >"$t/trace"
echo 1408 >"$t/buffer_size_kb"
vm_log "timers expiring per request ($n requests):"
head -n 12 "$VM_SCEN_DIR/timers.txt"
vm_log "work items, context switches and softirqs per request:"
head -n 25 "$VM_SCEN_DIR/sched.txt"
vm_logout_check "$dev"
