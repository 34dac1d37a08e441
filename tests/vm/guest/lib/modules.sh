# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: modules: our builds or the in-tree ones, per role.
# Sourced by ../lib.sh, with the rest of the library.

# vm_ours_path NAME: the .ko file of our module NAME.
vm_ours_path() {
	echo "$VM_MODDIR/${VM_OURS[$1]}"
}

vm_loaded() {
	[ -d "/sys/module/$1" ]
}

# vm_insmod_ours NAME: load our module NAME from the build tree, after the
# modules it depends on (ours by insmod, in-tree ones by modprobe).
vm_insmod_ours() {
	local name=$1 ko dep want have
	ko=$(vm_ours_path "$name")
	[ -f "$ko" ] || vm_fail "our $name is not built: $ko is missing (run 'make modules' for $VM_REL)"
	want=$(modinfo -F srcversion "$ko" 2>/dev/null)
	if vm_loaded "$name"; then
		have=$(cat "/sys/module/$name/srcversion" 2>/dev/null)
		[ -n "$want" ] && [ "$have" = "$want" ] && return 0
		vm_fail "a different $name is already loaded (srcversion '$have', ours '$want')"
	fi
	for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
		vm_loaded "$dep" && continue
		if [ -n "${VM_OURS[$dep]:-}" ]; then
			vm_insmod_ours "$dep"
		else
			vm_must modprobe "$dep"
		fi
	done
	vm_must insmod "$ko"
	vm_loaded "$name" || vm_fail "insmod $ko returned 0 but /sys/module/$name is missing"
	if [ -n "$want" ]; then
		have=$(cat "/sys/module/$name/srcversion" 2>/dev/null)
		[ "$have" = "$want" ] ||
			vm_fail "loaded $name has srcversion '$have', not ours ('$want')"
	fi
}

# vm_modprobe_intree NAME [PARAM=VALUE...]: load the in-tree module (with
# those parameters), refusing to mix it up
# with ours of the same name: modprobe must resolve NAME to the kernel's own
# file under kernel/drivers/infiniband/ulp/ (not, say, ours installed in
# updates/ for this release), and the loaded module must be that file.
vm_modprobe_intree() {
	local name=$1 ko want have
	shift
	ko=$(modinfo -n "$name" 2>/dev/null)
	[ -n "$ko" ] || vm_fail "in-tree $name: modinfo does not find it for $VM_REL"
	case $ko in
	"/lib/modules/$VM_REL/kernel/drivers/infiniband/ulp/"*) ;;
	*) vm_fail "in-tree $name: modprobe would load $ko, not the kernel's own module under /lib/modules/$VM_REL/kernel/drivers/infiniband/ulp/" ;;
	esac
	want=$(modinfo -F srcversion "$ko" 2>/dev/null)
	if vm_loaded "$name"; then
		have=$(cat "/sys/module/$name/srcversion" 2>/dev/null)
		[ -z "$want" ] || [ "$have" = "$want" ] ||
			vm_fail "a different $name is already loaded (srcversion '$have', the in-tree $ko has '$want')"
	fi
	vm_must modprobe "$name" "$@"
	have=$(cat "/sys/module/$name/srcversion" 2>/dev/null)
	[ -z "$want" ] || [ "$have" = "$want" ] ||
		vm_fail "$name loaded is not the in-tree one (srcversion '$have', $ko has '$want')"
}

# vm_load_roles: load the initiator and target modules the scenario asks for.
vm_load_roles() {
	case ${VM_INITIATOR:-intree} in
	ours) vm_insmod_ours iser_dm; vm_insmod_ours ib_iser ;;
	intree) vm_modprobe_intree ib_iser ;;
	none) ;;
	*) vm_fail "bad initiator '$VM_INITIATOR' (ours|intree|none)" ;;
	esac
	case ${VM_TARGET:-intree} in
	ours) vm_insmod_ours iser_dm; vm_insmod_ours ib_isert ;;
	intree) vm_modprobe_intree ib_isert ;;
	none) ;;
	*) vm_fail "bad target '$VM_TARGET' (ours|intree|none)" ;;
	esac
	vm_log "modules: $(lsmod | awk 'NR > 1 && /iser|rxe|siw|iw_cm|target_core|iscsi/ {print $1}' | tr '\n' ' ')"
}

# vm_module_params MODULE.PARAM=VALUE...: set module parameters of modules
# loaded already (/sys/module/MODULE/parameters/PARAM), for the rows of the
# performance tools that compare a setting with another in one boot; a
# parameter that is absent or refuses the value fails the scenario
vm_module_params() {
	local spec f
	for spec in "$@"; do
		case $spec in
		?*.?*=*) ;;
		*) vm_fail "vm_module_params: '$spec' is not MODULE.PARAM=VALUE" ;;
		esac
		f=${spec%%=*}
		f=/sys/module/${f%%.*}/parameters/${f#*.}
		[ -w "$f" ] || vm_fail "vm_module_params: no parameter $f"
		echo "${spec#*=}" >"$f" || vm_fail "vm_module_params: $f refused '${spec#*=}'"
		vm_log "module parameter ${spec%%=*} = $(cat "$f")"
	done
}
