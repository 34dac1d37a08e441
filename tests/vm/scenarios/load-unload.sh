# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Our modules load from the build tree with an rxe device present, show up
# in lsmod as the very files we built, and unload in reverse order.

missing=""
for m in iser_dm ib_iser ib_isert; do
	[ -f "$(vm_ours_path "$m")" ] || missing="$missing $(vm_ours_path "$m")"
done
[ -z "$missing" ] ||
	vm_fail "our modules are not built for $VM_REL:$missing (run 'make modules')"

vm_rxe_up
rdma link show | grep -q '^link rxe0/' || vm_fail "no rxe0 device"

for m in iser_dm ib_iser ib_isert; do
	vm_insmod_ours "$m"
done
mods=$(lsmod)
for m in iser_dm ib_iser ib_isert; do
	echo "$mods" | grep -q "^$m " || vm_fail "lsmod does not show $m"
done
vm_log "loaded: $(echo "$mods" | grep -E '^(iser_dm|ib_iser|ib_isert) ' | tr -s ' ' | paste -sd ';' -)"

for m in ib_isert ib_iser iser_dm; do
	vm_must rmmod "$m"
	! vm_loaded "$m" || vm_fail "$m still loaded after rmmod"
done
