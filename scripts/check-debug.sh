#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the guest scenarios on a debug kernel built from
# Debian's 6.1 source with KASAN, lockdep, DEBUG_LIST, DEBUG_OBJECTS,
# SLUB_DEBUG, kmemleak, atomic-sleep and hung-task checks
# (scripts/debug-kernel.sh; about 25 minutes on 2 cores the first time,
# then reused from /var/cache/iser). Any KASAN report, lockdep splat,
# debug-objects or list-debug report or other bad kernel line fails the
# row that produced it, through the rig's usual gates; so does an object
# kmemleak finds unreferenced after the row's teardown. That gate is tried
# first, with a module that leaks on purpose (tests/vm/debug/leak): its
# row must fail, and the summary counts that check too.
#
#   scripts/check-debug.sh [vm-check.sh options]
#
# Without options: the default scenario set of 6.1, the random modes of
# both hostile tools with 10000 PDUs each (ours-target-ffp-random,
# ours-initiator-random-10k), the churn (ours-pair-churn: 1000 logins in
# one chain, 200 link cycles; this makes the run take hours) and the rows
# that need this kernel's fault injection (ours-target-queue-fault,
# ours-initiator-queue-fault: a device out of QPs or CQs), and the login
# storm of 64 sessions in a 6 GiB guest (ours-pair-manysess-debug). The debug
# kernel runs about three times slower under emulation, so every
# scenario's timeout (and the time limits a scenario sets itself,
# VM_TIMEOUT_SCALE in the guest) is multiplied by ISER_VM_TIMEOUT_SCALE
# (default 3 here). Logs go to
# build/vm/logs-debug. The last line is "N passed, N failed".

set -u
top=$(cd "$(dirname "$0")/.." && pwd)

if ! "$top/scripts/deps.sh"; then
	echo "check-debug: could not install the packages the build needs"
	echo "0 passed, 1 failed"
	exit 1
fi
if ! rel=$("$top/scripts/debug-kernel.sh"); then
	echo "check-debug: the debug kernel could not be built"
	echo "0 passed, 1 failed"
	exit 1
fi
if ! "$top/scripts/build-modules.sh" "/lib/modules/$rel/build" --strict ||
	! make -s -C "$top/tests/vm/tools"; then
	echo "check-debug: our modules or the guest tools could not be built for $rel"
	echo "0 passed, 1 failed"
	exit 1
fi
# the kmemleak gate's self-test needs a module that leaks on purpose; it
# is built outside the source tree (Kbuild writes next to the sources)
leak=$top/build/leaktest-$rel
rm -rf "$leak" && mkdir -p "$leak" &&
	cp "$top"/tests/vm/debug/leak/{Kbuild,iser_leaktest.c} "$leak"/ || exit 1
if ! make -s -C "/lib/modules/$rel/build" M="$leak" W=1 modules; then
	echo "check-debug: the kmemleak self-test module could not be built for $rel"
	echo "0 passed, 1 failed"
	exit 1
fi
# Without options: the default set of 6.1 and the hardening rows: both
# hostile tools' random modes, the churn of logins and RDMA links, and
# the rows that need this kernel's fault injection (queue-fault); then,
# in a boot of its own with a guest of ISER_VM_BIG_MEM (6G: KASAN's
# shadow and quarantine and kmemleak's records of 64 sessions' objects
# outgrow the usual 3 GiB), the login storm of 64 sessions
# (ours-pair-manysess-debug)
big=""
if [ $# -eq 0 ]; then
	big=ours-pair-manysess-debug
	rows=$("$top/tests/vm/vm-check.sh" --list |
		awk '$4 == "yes" || $4 == "yes:6.1" { printf "%s,", $1 }')
	for r in ours-target-ffp-random ours-initiator-random-10k ours-pair-churn \
		ours-target-queue-fault ours-initiator-queue-fault; do
		grep -qE "^${r}[[:space:]]" "$top/tests/vm/scenarios.list" && rows+="$r,"
	done
	set -- --scenario "${rows%,}"
fi
logs=${ISER_VM_LOGS:-$top/build/vm/logs-debug}
export ISER_VM_TIMEOUT_SCALE=${ISER_VM_TIMEOUT_SCALE:-3}
# The guest's set-up before its first row (debugfs, kmemleak's first scan,
# configfs, dbus, targetcli) takes about 200 s on this kernel, and the boot
# about 40 s: the boot wait and the slack after each marker scale too.
export ISER_VM_BOOT_TIMEOUT=${ISER_VM_BOOT_TIMEOUT:-$((120 * ISER_VM_TIMEOUT_SCALE))}
export ISER_VM_SCENARIO_SLACK=${ISER_VM_SCENARIO_SLACK:-$((150 * ISER_VM_TIMEOUT_SCALE))}
# pci=noacpi: with KASAN and lockdep under emulation, ACPI's _PRT method
# of qemu's i440fx runs past the interpreter's 30 s loop limit for each
# PCI device, which then gets no interrupt line (90 s lost at boot);
# the PCI BIOS routing table gives the same lines at once
export ISER_VM_APPEND="pci=noacpi${ISER_VM_APPEND:+ $ISER_VM_APPEND}"

# First the kmemleak gate itself: a row whose module leaks on purpose must
# FAIL for it, or a clean kmemleak file proves nothing (one short boot)
mkdir -p "$logs" || exit 1
printf 'selftest-kmemleak none none yes 120 selftest leak\n' >"$logs/kmemleak-gate.list"
ISER_VM_LIST=$logs/kmemleak-gate.list ISER_VM_LOGS=$logs/kmemleak-gate \
	"$top/tests/vm/vm-check.sh" --kernel "$rel" >"$logs/kmemleak-gate.log" 2>&1
gate_ok=0
if grep -qE "^FAIL $rel selftest-kmemleak: .*kmemleak: [1-9][0-9]* unreferenced object" \
	"$logs/kmemleak-gate.log"; then
	echo "PASS check-debug kmemleak-gate: a deliberate leak fails its row"
	gate_ok=1
else
	echo "FAIL check-debug kmemleak-gate: the deliberate leak of iser_leaktest was not reported (see $logs/kmemleak-gate.log)"
fi

ISER_VM_LOGS=$logs "$top/tests/vm/vm-check.sh" --kernel "$rel" "$@" | tee "$logs/check-debug.log"
rc=${PIPESTATUS[0]}
sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$logs/check-debug.log" | tail -n 1)
[ -n "$sum" ] || exit "$rc"
read -r p _ f _ <<<"$sum"
if [ -n "$big" ]; then
	ISER_VM_MEM=${ISER_VM_BIG_MEM:-6G} ISER_VM_LOGS=$logs/big \
		"$top/tests/vm/vm-check.sh" --kernel "$rel" --scenario "$big" |
		tee "$logs/check-debug-big.log"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$logs/check-debug-big.log" | tail -n 1)
	read -r bp _ bf _ <<<"${sum:-0 passed, 1 failed}"
	p=$((p + bp)) f=$((f + bf))
fi
echo "with the kmemleak gate's self-test:"
echo "$((p + gate_ok)) passed, $((f + 1 - gate_ok)) failed"
[ "$rc" = 0 ] && [ "$gate_ok" = 1 ]
