# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Where the guest's CPU time goes while one fio workload runs (rows
# profile-*: not a test, a tool for the performance work; see
# Documentation/performance.md, "Profiles"):
#   profile WORKLOAD [SECONDS]
# WORKLOAD is one of bench.sh's (randread-4k-qd32, randwrite-4k-qd32,
# randread-4k-qd1, randrw70-16k-qd16, read-512k-qd4, read-1m-qd4,
# write-1m-qd4). Sets up the pairing as bench.sh does (ramdisk LUN,
# prefilled), then samples every CPU with perf (cpu-clock, 999 Hz, call
# graphs) over SECONDS (default 20) of the workload. In $VM_SCEN_DIR:
# perf-sym.txt (the hottest kernel symbols, self time), perf-dso.txt (the
# share of each module and of the core kernel), perf-caller.txt (the
# hottest symbols with their callers) and fio.json. perf comes from the
# host's root (linux-perf); the module symbols from /proc/kallsyms.

workload=${1:-}
secs=${2:-20}
case $secs in
'' | *[!0-9]*) vm_fail "profile.sh: SECONDS must be a number, not '$secs'" ;;
esac
opts=$(vm_bench_workload "$workload") ||
	vm_fail "profile.sh: unknown workload '$workload'"
command -v perf >/dev/null || vm_fail "profile.sh: no perf in the guest (linux-perf on the host)"

vm_bench_disk
dev=$VM_BENCH_DEV

args=()
for o in $opts; do
	args+=("--$o")
done
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid
data=/tmp/perf.data
vm_log "perf record over $secs s of $workload ($opts)"
perf record -q -a -g -e cpu-clock -F 999 -o "$data" -- \
	fio --name="$workload" --filename="$dev" --direct=1 --ioengine=libaio \
	--time_based --ramp_time=2 --runtime="$secs" "${args[@]}" \
	--output-format=json --output="$VM_SCEN_DIR/fio.json" \
	>"$VM_SCEN_DIR/perf-record.log" 2>&1 ||
	vm_fail "perf record or fio failed: $(tail -n 3 "$VM_SCEN_DIR/perf-record.log" | paste -sd ' ' -)"
iops=$(/usr/bin/python3 -c '
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])["jobs"][0]
print(round(j["read"]["iops"] + j["write"]["iops"]))' "$VM_SCEN_DIR/fio.json") ||
	vm_fail "no fio result"
vm_log "$workload: $iops IOPS under perf"
report() {
	perf report -i "$data" --stdio --no-children --percent-limit 0.5 "$@" 2>/dev/null |
		grep -v '^$'
}
report -g none --sort sym >"$VM_SCEN_DIR/perf-sym.txt"
report -g none --sort dso >"$VM_SCEN_DIR/perf-dso.txt"
report -g caller,0.5,callee --sort sym --percent-limit 2 >"$VM_SCEN_DIR/perf-caller.txt"
[ -s "$VM_SCEN_DIR/perf-sym.txt" ] || vm_fail "perf report gave nothing"
vm_log "by module: $(grep -E '^ +[0-9.]+%' "$VM_SCEN_DIR/perf-dso.txt" | head -n 12 | awk '{ printf "%s %s; ", $2, $1 }')"
vm_log "hottest symbols:"
grep -E '^ +[0-9.]+%' "$VM_SCEN_DIR/perf-sym.txt" | head -n 25
rm -f "$data"
vm_logout_check "$dev"
