#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The iSER demo: boot a Debian 6.1 guest (qemu, TCG), make an iSER target on
# a ramdisk with targetcli, discover it over TCP and log in over iSER with
# iscsiadm, write and verify data with fio, measure a little, log out, and
# print a summary.  Takes a few minutes.  See Documentation/testing-vm.md.
#
# Environment:
#   DEMO_INITIATOR=intree|ours  which ib_iser the initiator uses (default:
#                               ours when it registers its transport)
#   DEMO_TARGET=intree|ours     which ib_isert the target uses (default: ours
#                               when it registers its transport)
#   DEMO_KERNEL=6.1|6.12        guest kernel (default 6.1)

set -u
# shellcheck disable=SC2034 # used by lib/host.sh
VM_PROG=demo
# shellcheck source=lib/host.sh
. "$(dirname "$0")/lib/host.sh"

ini=${DEMO_INITIATOR:-auto}
tgt=${DEMO_TARGET:-auto}
kernel=${DEMO_KERNEL:-6.1}
for v in "$ini" "$tgt"; do
	case $v in ours | intree | auto) ;; *) vm_die "DEMO_INITIATOR / DEMO_TARGET must be 'ours' or 'intree', not '$v'" ;; esac
done

vm_check_tools
rel=$(vm_kernel_release "$kernel")
vm_check_kernel "$kernel" "$rel"

# ours_status ROLE MODULE SYMBOL: is our module built, and does it register
# an iSCSI transport (references SYMBOL)?  Prints a sentence; status 0 if usable.
ours_status() {
	local ko=$VM_REPO/build/$rel/$1
	if [ ! -f "$ko" ]; then
		echo "not built (${ko#"$VM_REPO"/} missing; 'make modules')"
		return 1
	fi
	if ! command -v nm >/dev/null 2>&1; then
		echo "built, but nm (binutils) is missing to tell whether it registers a transport"
		return 1
	fi
	if nm -u "$ko" 2>/dev/null | grep -qw "$3"; then
		echo "built and registers an iSCSI transport ($3)"
		return 0
	fi
	echo "built, but does not register an iSCSI transport yet (no $3 reference)"
	return 1
}

ini_status=$(ours_status drivers/initiator/ib_iser.ko ib_iser iscsi_register_transport)
ini_ok=$?
tgt_status=$(ours_status drivers/target/ib_isert.ko ib_isert iscsit_register_transport)
tgt_ok=$?
if [ "$ini" = auto ]; then
	ini=intree
	[ $ini_ok = 0 ] && ini=ours
fi
if [ "$tgt" = auto ]; then
	tgt=intree
	[ $tgt_ok = 0 ] && tgt=ours
fi
echo "demo: our initiator (ib_iser): $ini_status"
echo "demo: our target (ib_isert):   $tgt_status"
if [ "$ini" = ours ] && [ $ini_ok != 0 ]; then
	vm_die "DEMO_INITIATOR=ours, but our ib_iser is $ini_status"
fi
if [ "$tgt" = ours ] && [ $tgt_ok != 0 ]; then
	vm_die "DEMO_TARGET=ours, but our ib_isert is $tgt_status"
fi
[ "$ini" = intree ] &&
	echo "demo: NOTE: the initiator side uses the IN-TREE ib_iser of $rel (DEMO_INITIATOR=ours to use ours)"
[ "$tgt" = intree ] &&
	echo "demo: NOTE: the target side uses the IN-TREE ib_isert of $rel (DEMO_TARGET=ours to use ours)"

job=$VM_OUT/logs/demo
rm -rf "$job"
mkdir -p "$job" || vm_die "cannot create $job"
: >"$job/job.env"
line=$(awk '$1 == "demo"' "$VM_DIR/scenarios.list")
[ -n "$line" ] || vm_die "no 'demo' line in tests/vm/scenarios.list"
echo "$line" | awk -v i="$ini" -v t="$tgt" '{ $2 = i; $3 = t; print }' >"$job/job.list"
tmo=$(awk '{ print $5 }' "$job/job.list")

# shellcheck disable=SC2317 # called by vm_boot
show() {
	case $1 in
	"MSG "*) echo "demo: [$(($(vm_now) - t0))s] ${1#MSG }" ;;
	"UP "*) echo "demo: [$(($(vm_now) - t0))s] guest booted (${1#UP })" ;;
	"FATAL "*) echo "demo: guest: ${1#FATAL }" >&2 ;;
	esac
}

t0=$(vm_now)
echo "demo: booting a $kernel guest ($rel) under qemu TCG, 2 vCPUs; logs in $job"
vm_boot "$rel" "$job" $((VM_BOOT_TIMEOUT + tmo + VM_SCENARIO_SLACK + 60)) show
result=$(cat "$job/demo/result" 2>/dev/null)
# the host's own look at the whole console, and a clean end of the guest
if [ "$result" = PASS ]; then
	bad=$(vm_console_scan "$job/console.log" | cut -f 2 | head -n 3 | paste -sd ';' -)
	if [ -n "$bad" ]; then
		result="FAIL: console: $bad"
	elif [ "$VM_STATE" != done ] || [ "$VM_DONE_RC" != 0 ]; then
		result="FAIL: the guest did not end cleanly: $(cat "$job/final" 2>/dev/null || vm_state_sentence "$job")"
	fi
fi
echo
if [ "$result" = PASS ]; then
	echo "=== iSER demo summary ($(($(vm_now) - t0)) s) ==="
	cat "$job/demo/summary"
	echo "kernel log:    clean (no WARNING/BUG/Oops/hung task), modules unloaded"
	echo "logs:          $job/demo/"
	exit 0
fi
if [ -z "$result" ]; then
	result="FAIL: $(vm_state_reason "$job")"
	echo "demo: $result (console: $job/console.log)" >&2
else
	echo "demo: $result (log: $job/demo/log)" >&2
fi
exit 1
