# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The iser-dkms package on a running Debian system, the way apt handles it
# (row INITIATOR and TARGET "none": the tools load what the package
# installed). The guest's root is the host's / under a tmpfs overlay, so
# what dpkg and DKMS change here is gone after the boot.
#   1. Build the package of this tree (scripts/make-deb.sh) and an upgrade
#      of it: the same tree with the next version (VERSION, dkms.conf,
#      ISDM_VERSION and a changelog entry bumped in a copy).
#   2. dpkg -i: DKMS builds and installs the three modules for the running
#      kernel (and, as Debian's dkms does, for the newest kernel with
#      headers), under updates/dkms/. modinfo resolves each name there,
#      with the package's version and the srcversion of this tree's own
#      build (so DKMS built these sources, nothing else).
#   3. The module policy: nothing is loaded by hand. targetcli's
#      enable_iser makes LIO request ib_isert, iscsiadm -I iser makes
#      iscsid load ib_iser; both must be the package's modules. Login,
#      4 MiB of random data written and read back, logout, unload.
#   4. Upgrade: dpkg -i of the next version replaces the old modules (DKMS
#      removes the old version, builds the new one); used again the same
#      way, the loaded modules carry the new version.
#   5. The way back (/usr/share/doc/iser-dkms/examples/iser-intree.conf in
#      /etc/depmod.d, depmod): modprobe resolves both names to the
#      kernel's own modules; without the file, to the package's again.
#   6. dpkg --purge: the modules, the DKMS tree, /usr/src/iser-* and the
#      package's files are gone for every kernel, modprobe resolves the
#      in-tree modules, and the in-tree pair logs in.
# update-initramfs runs from the package's trigger at the install, as on
# any system; the image it makes must hold the boot script and the
# package's initiator (the hook adds them wherever open-iscsi is
# installed), not the target. The upgrade and the purge run with
# update_initramfs=no: each run of the trigger takes minutes under
# emulation (MODULES=most, zstd), and the hook is the same.
# If the body fails half-way, its EXIT trap purges the package, so the
# rows after it in the same boot see the kernel's own modules again.

export DEBIAN_FRONTEND=noninteractive
deb_dir=/tmp/iser-deb
deb_intree_conf=/etc/depmod.d/iser-intree.conf
deb_mods="iser_dm ib_iser ib_isert"

deb_cleanup() {
	rm -f "$deb_intree_conf"
	if dpkg-query -W -f '${Status}' iser-dkms 2>/dev/null | grep -q installed; then
		vm_log "cleanup: purging iser-dkms" >&2
		deb_no_initramfs
		vm_teardown >/dev/null 2>&1
		dpkg --purge iser-dkms >"$VM_SCEN_DIR/purge-cleanup.log" 2>&1
		depmod -a "$VM_REL"
	fi
}
trap deb_cleanup EXIT

# deb_path NAME: where modprobe would load module NAME from
deb_path() {
	modinfo -n "$1" 2>/dev/null
}

# deb_is_dkms PATH NAME: PATH is module NAME in updates/dkms/ of the
# running kernel (DKMS compresses it as the kernel's own modules are:
# .ko on 6.1, .ko.xz on 6.12)
deb_is_dkms() {
	case $1 in
	"/lib/modules/$VM_REL/updates/dkms/$2.ko" | "/lib/modules/$VM_REL/updates/dkms/$2.ko."*) return 0 ;;
	esac
	return 1
}

# deb_no_initramfs: later package operations leave the initramfs alone
# (update-initramfs.conf of the guest's overlay): the install's trigger is
# checked, and each further run costs minutes under emulation
deb_no_initramfs() {
	sed -i 's/^update_initramfs=.*/update_initramfs=no/' /etc/initramfs-tools/update-initramfs.conf
}

# deb_check_installed VERSION: each module resolves to updates/dkms/ of
# the running kernel, with VERSION and this tree's srcversion
deb_check_installed() {
	local ver=$1 m ko want have
	for m in $deb_mods; do
		ko=$(deb_path "$m")
		deb_is_dkms "$ko" "$m" ||
			vm_fail "after installing $ver, modprobe resolves $m to '$ko', not updates/dkms/$m.ko"
		have=$(modinfo -F version "$ko")
		[ "$have" = "$ver" ] || vm_fail "$ko has version '$have', the package $ver"
		want=$(modinfo -F srcversion "$(vm_ours_path "$m")")
		have=$(modinfo -F srcversion "$ko")
		{ [ -n "$want" ] && [ "$have" = "$want" ]; } ||
			vm_fail "$ko has srcversion '$have'; this tree's build has '$want'"
	done
	vm_log "modprobe resolves $deb_mods to updates/dkms/, version $ver, this tree's sources"
}

# deb_use VERSION: the tools load the package's modules and move data
deb_use() {
	local ver=$1 m dev
	for m in $deb_mods; do
		! vm_loaded "$m" || vm_fail "$m is loaded before the tools asked for it"
	done
	vm_rxe_up
	vm_target_setup	# enable_iser: LIO's request_module("ib_isert")
	vm_iscsid_start
	vm_discover >/dev/null 2>&1 || vm_fail "SendTargets discovery failed"
	vm_node_new
	dev=$(vm_login_disk) || exit 1	# iscsid: modprobe ib_iser
	for m in $deb_mods; do
		vm_loaded "$m" || vm_fail "$m is not loaded after the login"
		[ "$(cat "/sys/module/$m/version")" = "$ver" ] ||
			vm_fail "loaded $m has version $(cat "/sys/module/$m/version"), not the package's $ver"
		[ "$(cat "/sys/module/$m/srcversion")" = "$(modinfo -F srcversion "$(deb_path "$m")")" ] ||
			vm_fail "loaded $m is not the module in $(deb_path "$m")"
	done
	vm_log "LIO and iscsid loaded the package's modules ($ver)"
	head -c 4M /dev/urandom >/tmp/pattern
	vm_must dd if=/tmp/pattern of="$dev" bs=1M oflag=direct status=none
	cmp <(dd if="$dev" bs=1M count=4 iflag=direct status=none) /tmp/pattern ||
		vm_fail "$ver: data read back from $dev differs from what was written"
	vm_logout_check "$dev"
	problems=$(vm_teardown 2>/dev/null)
	[ -z "$problems" ] || vm_fail "unloading after the $ver session: $problems"
}

# deb_dkms_versions: the versions of iser DKMS knows, one per line
deb_dkms_versions() {
	dkms status -m iser 2>/dev/null | sed -n 's|^iser/\([^,:]*\)[,:].*|\1|p' | sort -u
}

# deb_installed_for VERSION: the kernels DKMS installed VERSION for
deb_installed_for() {
	dkms status -m iser -v "$1" 2>/dev/null | sed -n 's|^iser/[^,]*, \([^,]*\),.*: installed.*|\1|p'
}

# --- 0. the system starts without the package
for t in dpkg-buildpackage dh_dkms dkms rsync; do
	command -v "$t" >/dev/null || vm_fail "$t is missing in the guest (scripts/deps.sh on the host)"
done
[ -d "/usr/src/linux-headers-$VM_REL" ] || vm_fail "no headers for $VM_REL: DKMS cannot build"
! dpkg-query -W iser-dkms >/dev/null 2>&1 ||
	vm_fail "iser-dkms is already installed on the host (dpkg -l iser-dkms); the row needs a system without it"
for m in ib_iser ib_isert; do
	case $(deb_path $m) in
	"/lib/modules/$VM_REL/kernel/"*) ;;
	*) vm_fail "before the install, $m resolves to '$(deb_path $m)', not the kernel's own" ;;
	esac
done
[ -z "$(deb_dkms_versions)" ] || vm_fail "DKMS already knows iser: $(deb_dkms_versions | paste -sd ' ')"

# --- 1. the packages
ver1=$(cat "$VM_REPO/VERSION")
ver2=$ver1.1
rm -rf "$deb_dir"
mkdir -p "$deb_dir/up"
vm_progress "building iser-dkms $ver1 and $ver2"
vm_must "$VM_REPO/scripts/make-deb.sh" --out "$deb_dir/1"
deb1=$deb_dir/1/iser-dkms_${ver1}_all.deb
[ -f "$deb1" ] || vm_fail "make-deb.sh made no $deb1"
vm_must rsync -a --exclude=/.git --exclude=/build/ "$VM_REPO/" "$deb_dir/up/"
echo "$ver2" >"$deb_dir/up/VERSION"
sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$ver2\"/" "$deb_dir/up/dkms.conf"
sed -i "s/^#define ISDM_VERSION.*/#define ISDM_VERSION\t\"$ver2\"/" "$deb_dir/up/include/isdm/isdm.h"
{
	printf 'iser (%s) unstable; urgency=medium\n\n  * Upgrade test of tests/vm/scenarios/deb.sh.\n\n' "$ver2"
	printf ' -- %s  %s\n\n' "$(sed -n 's/^Maintainer: //p' "$VM_REPO/debian/control")" "$(date -R)"
	cat "$VM_REPO/debian/changelog"
} >"$deb_dir/up/debian/changelog"
vm_must "$deb_dir/up/scripts/make-deb.sh" --out "$deb_dir/2"
deb2=$deb_dir/2/iser-dkms_${ver2}_all.deb
[ -f "$deb2" ] || vm_fail "make-deb.sh made no $deb2"

# --- 2. install
vm_progress "dpkg -i iser-dkms $ver1 (DKMS builds the modules)"
t0=$(date +%s)
dpkg -i "$deb1" >"$VM_SCEN_DIR/install.log" 2>&1 ||
	vm_fail "dpkg -i $ver1 failed: $(tail -n 3 "$VM_SCEN_DIR/install.log" | paste -sd ' ' -) (log: install.log)"
vm_log "dpkg -i $ver1: $(($(date +%s) - t0)) s"
[ "$(deb_dkms_versions)" = "$ver1" ] || vm_fail "after the install DKMS knows iser '$(deb_dkms_versions | paste -sd ' ')', expected $ver1"
deb_installed_for "$ver1" | grep -qx "$VM_REL" ||
	vm_fail "DKMS did not install $ver1 for the running kernel: $(dkms status -m iser | paste -sd ';' -)"
vm_log "dkms status: $(dkms status -m iser | paste -sd ';' -)"
deb_check_installed "$ver1"
# the trigger's initramfs (update-initramfs -u: the newest kernel, for
# which Debian's dkms builds too): with open-iscsi installed, the hook
# puts our boot script and the package's modules in
kimg=$(sed -n 's|^update-initramfs: Generating /boot/initrd.img-||p' "$VM_SCEN_DIR/install.log" | tail -n 1)
[ -n "$kimg" ] || vm_fail "the package's trigger did not run update-initramfs (install.log)"
deb_installed_for "$ver1" | grep -qx "$kimg" ||
	vm_fail "update-initramfs made the image of $kimg, for which DKMS installed nothing"
lsinitramfs "/boot/initrd.img-$kimg" >"$VM_SCEN_DIR/initrd.list" ||
	vm_fail "lsinitramfs /boot/initrd.img-$kimg failed"
for f in "lib/modules/$kimg/updates/dkms/ib_iser.ko" "lib/modules/$kimg/updates/dkms/iser_dm.ko" \
	scripts/init-premount/iser scripts/iser-functions; do
	grep -q "$f" "$VM_SCEN_DIR/initrd.list" ||
		vm_fail "the trigger's initrd.img-$kimg has no $f (initrd.list)"
done
! grep -q 'ib_isert\.ko' "$VM_SCEN_DIR/initrd.list" ||
	vm_fail "the trigger's initrd.img-$kimg holds the target module"
vm_log "update-initramfs made initrd.img-$kimg with the boot script and the package's ib_iser"

deb_no_initramfs

# --- 3. the tools load the package's modules
vm_progress "using $ver1 through targetcli and iscsiadm"
deb_use "$ver1"

# --- 4. upgrade
vm_progress "dpkg -i iser-dkms $ver2 (upgrade)"
t0=$(date +%s)
dpkg -i "$deb2" >"$VM_SCEN_DIR/upgrade.log" 2>&1 ||
	vm_fail "upgrading to $ver2 failed: $(tail -n 3 "$VM_SCEN_DIR/upgrade.log" | paste -sd ' ' -) (log: upgrade.log)"
vm_log "dpkg -i $ver2: $(($(date +%s) - t0)) s"
[ "$(deb_dkms_versions)" = "$ver2" ] ||
	vm_fail "after the upgrade DKMS knows iser '$(deb_dkms_versions | paste -sd ' ')', expected only $ver2"
[ ! -e "/usr/src/iser-$ver1" ] || vm_fail "/usr/src/iser-$ver1 is still there after the upgrade"
[ -d "/usr/src/iser-$ver2" ] || vm_fail "/usr/src/iser-$ver2 is missing after the upgrade"
for m in $deb_mods; do
	[ "$(modinfo -F version "$(deb_path "$m")")" = "$ver2" ] ||
		vm_fail "after the upgrade $m resolves to $(deb_path "$m") of version $(modinfo -F version "$(deb_path "$m")")"
done
vm_log "upgrade: DKMS has only $ver2, the modules carry $ver2"
deb_use "$ver2"

# --- 5. the way back, and back again
vm_progress "the way back to the in-tree modules"
# (Debian 12's kmod ships no /etc/depmod.d; the admin guide says mkdir)
vm_must mkdir -p /etc/depmod.d
vm_must cp "/usr/share/doc/iser-dkms/examples/iser-intree.conf" "$deb_intree_conf"
vm_must depmod -a "$VM_REL"
for m in ib_iser ib_isert; do
	case $(deb_path $m) in
	"/lib/modules/$VM_REL/kernel/drivers/infiniband/ulp/"*) ;;
	*) vm_fail "with iser-intree.conf, $m resolves to '$(deb_path $m)', not the kernel's own" ;;
	esac
done
vm_modprobe_intree ib_iser
vm_modprobe_intree ib_isert
vm_must rmmod ib_iser ib_isert
vm_must rm "$deb_intree_conf"
vm_must depmod -a "$VM_REL"
deb_is_dkms "$(deb_path ib_iser)" ib_iser ||
	vm_fail "without iser-intree.conf, ib_iser resolves to '$(deb_path ib_iser)', not the package's"
vm_log "iser-intree.conf selects the in-tree modules; removed, the package's again"

# --- 6. purge
vm_progress "dpkg --purge iser-dkms"
dpkg --purge iser-dkms >"$VM_SCEN_DIR/purge.log" 2>&1 ||
	vm_fail "dpkg --purge failed: $(tail -n 3 "$VM_SCEN_DIR/purge.log" | paste -sd ' ' -) (log: purge.log)"
! dpkg-query -W -f '${Status}' iser-dkms 2>/dev/null | grep -q installed ||
	vm_fail "dpkg still lists iser-dkms after the purge"
[ -z "$(deb_dkms_versions)" ] || vm_fail "DKMS still knows iser after the purge: $(dkms status -m iser | paste -sd ';' -)"
left=""
for f in /usr/src/iser-* /var/lib/dkms/iser /lib/modules/*/updates/dkms/{iser_dm,ib_iser,ib_isert}.ko* \
	/usr/share/initramfs-tools/hooks/iser /usr/lib/dracut/modules.d/95iser; do
	[ -e "$f" ] && left="$left $f"
done
[ -z "$left" ] || vm_fail "left after the purge:$left"
for m in ib_iser ib_isert; do
	case $(deb_path $m) in
	"/lib/modules/$VM_REL/kernel/"*) ;;
	*) vm_fail "after the purge, $m resolves to '$(deb_path $m)', not the kernel's own" ;;
	esac
done
vm_log "purged: no module, DKMS tree, source or initramfs piece left; the kernel's own modules resolve"
# the in-tree pair works as before the package
vm_rxe_up
vm_modprobe_intree ib_isert
vm_modprobe_intree ib_iser
vm_target_setup
vm_iscsid_start
vm_discover >/dev/null 2>&1 || vm_fail "SendTargets discovery failed after the purge"
vm_node_new
dev=$(vm_login_disk) || exit 1
vm_check_disk "$dev"
vm_logout_check "$dev"
vm_log "the in-tree pair logs in after the purge"
