# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Host side of the guest test rig: the boot-from-SAN mode, in which the
# initiator guest boots its root file system from the target guest's LUN,
# over iSER, with the initramfs our package makes.
# Sourced by host.sh.

VM_SAN_INITIATOR_IQN=iqn.2004-10.org.debian:iser-san
VM_SAN_TARGET_IQN=iqn.2003-01.org.linux-iscsi.iser-vm:sanroot
# sanboot --ibft: iPXE from Debian's ipxe package, booted as a Linux
# kernel; it attaches the root LUN over iSCSI/TCP (which writes the
# iBFT), then loads the kernel and initramfs by TFTP from qemu's
# user-mode network on a second NIC
VM_SAN_IPXE=${ISER_VM_IPXE:-/boot/ipxe.lkrn}
VM_SAN_TGT_IP=192.168.78.1
VM_SAN_INI_IP=192.168.78.2
# seconds from qemu start until the booted root says "UP": the kernel, the
# initramfs, the network, soft-RoCE, the login (bounded by our script:
# 30 s for the RDMA port, 120 s for iscsistart) and the mount
VM_SAN_BOOT_TIMEOUT=${ISER_VM_SAN_BOOT_TIMEOUT:-300}

# vm_san_check_tools: die naming the package of a missing host program the
# boot-from-SAN rows need (on top of vm_check_tools)
vm_san_check_tools() {
	local missing="" pair cmd pkg
	for pair in mkinitramfs:initramfs-tools lsinitramfs:initramfs-tools \
		iscsistart:open-iscsi mke2fs:e2fsprogs debugfs:e2fsprogs \
		e2fsck:e2fsprogs dpkg-buildpackage:dpkg-dev dh:debhelper \
		dh_dkms:dh-dkms rsync:rsync zstd:zstd; do
		cmd=${pair%%:*}
		pkg=${pair#*:}
		PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "$cmd" >/dev/null 2>&1 ||
			missing="$missing $pkg($cmd)"
	done
	[ -r "$VM_SAN_IPXE" ] || missing="$missing ipxe($VM_SAN_IPXE)"
	[ -z "$missing" ] ||
		vm_die "missing host packages for the boot-from-SAN rows:$missing; install them (scripts/deps.sh)"
}

# vm_san_rootfs: build (or reuse) the root file system image
# (sanboot/mkroot.sh) in build/vm/sanboot/root.img; print its path.
# Rebuilt when the script, the root's init, busybox, open-iscsi or the
# list of bad kernel log lines changed.  Status 1 (the reason on stderr)
# when the build fails.
vm_san_rootfs() {
	local dir=$VM_OUT/sanboot key
	key=$({
		sha256sum "$VM_DIR/sanboot/mkroot.sh" "$VM_DIR/sanboot/rootinit.sh" \
			/bin/busybox /sbin/iscsid /sbin/iscsiadm /etc/iscsi/iscsid.conf
		grep '^VM_BAD_KLOG=' "$VM_DIR/guest/lib.sh"
		echo "$VM_SAN_INITIATOR_IQN"
	} | sha256sum | cut -d' ' -f1)
	if [ -s "$dir/root.img" ] && [ "$(cat "$dir/root.key" 2>/dev/null)" = "$key" ]; then
		echo "$dir/root.img"
		return 0
	fi
	mkdir -p "$dir" || return 1
	if ! "$VM_DIR/sanboot/mkroot.sh" "$dir/root.img" "$VM_SAN_INITIATOR_IQN" >"$dir/root.log" 2>&1; then
		echo "building the root image failed: $(tail -n 2 "$dir/root.log" | paste -sd ' ' -) (log: $dir/root.log)" >&2
		return 1
	fi
	echo "$key" >"$dir/root.key"
	echo "$dir/root.img"
}

# vm_san_initrd RELEASE MODDIR [norxe]: build (or reuse) the initramfs of
# sanboot/mkinitrd.sh (mkinitramfs with the package's hook) in
# build/vm/sanboot/RELEASE/initrd.img (initrd-norxe.img: without
# ISER_RXE_NETDEV, for sanboot --bad's "no RDMA device"); print its path.
# Rebuilt when the package's sources, our modules, iscsistart or the
# kernel's modules changed.  Status 1 (the reason on stderr) when the
# build fails.
vm_san_initrd() {
	local rel=$1 moddir=$2 variant=${3:-rxe} dir=$VM_OUT/sanboot/$1 key img
	img=initrd
	[ "$variant" = rxe ] || img=initrd-$variant
	key=$({
		echo "$rel $variant"
		(cd "$VM_REPO" && find initramfs debian VERSION dkms.conf scripts/make-deb.sh \
			scripts/dkms-tree.sh -type f -print0 | sort -z | xargs -0 sha256sum)
		sha256sum "$VM_DIR/sanboot/mkinitrd.sh" "$moddir/drivers/core/iser_dm.ko" \
			"$moddir/drivers/initiator/ib_iser.ko" /sbin/iscsistart
		stat -c '%n %s %Y' "/lib/modules/$rel/modules.dep"
		echo "$VM_SAN_INITIATOR_IQN"
	} 2>&1 | sha256sum | cut -d' ' -f1)
	if [ -s "$dir/$img.img" ] && [ "$(cat "$dir/$img.key" 2>/dev/null)" = "$key" ]; then
		echo "$dir/$img.img"
		return 0
	fi
	mkdir -p "$dir" || return 1
	echo "$VM_PROG: $rel: building the boot-from-SAN initramfs $img.img (mkinitramfs, about a minute)" >&2
	if ! nice -n 5 "$VM_DIR/sanboot/mkinitrd.sh" "$rel" "$dir/$img.img" "$moddir" \
		"$VM_SAN_INITIATOR_IQN" "$variant" >"$dir/$img.log" 2>&1; then
		echo "building the initramfs failed: $(tail -n 2 "$dir/$img.log" | paste -sd ' ' -) (log: $dir/$img.log)" >&2
		return 1
	fi
	echo "$key" >"$dir/$img.key"
	echo "$dir/$img.img"
}

# vm_san_dracut RELEASE MODDIR: the same with dracut and the package's
# dracut module (sanboot/mkdracut.sh), in
# build/vm/sanboot/RELEASE/dracut.img.  Status 1 (the reason on stderr)
# when the build fails, dracut not installed included.
vm_san_dracut() {
	local rel=$1 moddir=$2 dir=$VM_OUT/sanboot/$1 key
	key=$({
		echo "$rel"
		(cd "$VM_REPO" && find initramfs/dracut debian VERSION dkms.conf scripts/make-deb.sh \
			scripts/dkms-tree.sh -type f -print0 | sort -z | xargs -0 sha256sum)
		sha256sum "$VM_DIR/sanboot/mkdracut.sh" "$moddir/drivers/core/iser_dm.ko" \
			"$moddir/drivers/initiator/ib_iser.ko" /usr/sbin/iscsiadm /usr/bin/dracut
		stat -c '%n %s %Y' "/lib/modules/$rel/modules.dep"
	} 2>&1 | sha256sum | cut -d' ' -f1)
	if [ -s "$dir/dracut.img" ] && [ "$(cat "$dir/dracut.key" 2>/dev/null)" = "$key" ]; then
		echo "$dir/dracut.img"
		return 0
	fi
	mkdir -p "$dir" || return 1
	echo "$VM_PROG: $rel: building the boot-from-SAN dracut initramfs (about a minute)" >&2
	if ! nice -n 5 "$VM_DIR/sanboot/mkdracut.sh" "$rel" "$dir/dracut.img" "$moddir" \
		>"$dir/dracut.log" 2>&1; then
		echo "building the dracut initramfs failed: $(tail -n 2 "$dir/dracut.log" | paste -sd ' ' -) (log: $dir/dracut.log)" >&2
		return 1
	fi
	echo "$key" >"$dir/dracut.key"
	echo "$dir/dracut.img"
}

# the progress lines of the booted root (sanboot/rootinit.sh): "WRITING"
# tells the target guest to cut the link, "FLAP" that the writes across
# the outage are done (flap mode)
vm_san_line() {
	case $1 in
	WRITING*) echo "$1" >"$VM_SAN_SIG/.writing.tmp" && mv "$VM_SAN_SIG/.writing.tmp" "$VM_SAN_SIG/writing" ;;
	FLAP*) echo "$1" >"$VM_SAN_SIG/.flapped.tmp" && mv "$VM_SAN_SIG/.flapped.tmp" "$VM_SAN_SIG/flapped" ;;
	esac
	[ -z "${VM_SAN_HANDLER:-}" ] || "$VM_SAN_HANDLER" "$1"
}

# sanboot --bad CASE,...: the initiator guest boots once per CASE with a
# configuration that cannot work, and each boot must end in our script's
# panic message naming the cause and Debian's "(initramfs)" shell, within
# the bound of the wait that failed (initramfs/initramfs-tools/scripts/
# iser-functions).  The target guest serves the root LUN as in the other
# rows, but requires CHAP (user VM_SAN_CHAP_USER, scenarios/sanboot.sh).
VM_SAN_BAD_CASES="target chap nochap port addr rdma"
# the CHAP account the target guest requires with --bad and --chap
# (scenarios/sanboot.sh has the same two values)
VM_SAN_CHAP_USER=iser-san
VM_SAN_CHAP_SECRET=sanboot-secret-1
# the target's own account, for mutual CHAP (--chap --mutual)
VM_SAN_CHAP_IN_USER=iser-san-target
VM_SAN_CHAP_IN_SECRET=sanboot-mutual-2
# an address on the link that nobody has, a port nobody listens on
VM_SAN_NOBODY_IP=192.168.78.9
VM_SAN_NOBODY_PORT=3261
# seconds the host keeps a failed boot's guest after its shell appeared,
# for late kernel reports (with hung_task_timeout_secs=10, a task stuck
# since the failure is reported within 20 s)
VM_SAN_BAD_SETTLE=${ISER_VM_SAN_BAD_SETTLE:-25}

# sanboot --dracut --bad: dracut gives up after rd.retry= seconds (its
# initqueue's bound; 180 by default) and opens its emergency shell
VM_SAN_DR_RETRY=30
# seconds from qemu's start until dracut gives up: the boot to its
# initqueue and the network (about 30 s under emulation) and rd.retry=,
# which dracut counts in passes of its main loop (rd.retry * 2 passes of
# at least 0.5 s; under emulation a pass takes 1.5-2 s, up to 3 s on a
# loaded machine: with rd.retry=30, "Could not boot." came 148-255 s
# after qemu's start with five other guests running)
VM_SAN_DR_BOUND=$((VM_SAN_DR_RETRY * 8 + 30))

# vm_san_bad_case CASE: the configuration of one boot of sanboot --bad.
# Sets VM_SAN_BAD_ROOT (the root= parameter), VM_SAN_BAD_INITRD (rxe, or
# norxe: the initramfs made without ISER_RXE_NETDEV), VM_SAN_BAD_EXPECT
# (what the console's "iser: boot from SAN failed: " line must hold),
# VM_SAN_BAD_FROM (the key of the script's line that starts the wait that
# fails: login or rdma, see vm_san_bad_poll), VM_SAN_BAD_BOUND (that
# wait's bound in seconds: ISER_LOGIN_KILL, ISER_RDMA_WAIT) and
# VM_SAN_BAD_MIN (how long the wait must at least take).  With the dracut
# initramfs (--dracut --bad) the login is dracut's iscsi module's
# (discovery over TCP, then iscsiadm), which ends in "Could not boot" and
# its shell after rd.retry=: VM_SAN_BAD_DR_EXPECT is the line on the
# console that names the cause (dracut's, iscsiadm's or ours) and
# VM_SAN_BAD_DR_RXE=0 leaves rd.iser.rxe out.  Status 1 for an
# unknown CASE.
# shellcheck disable=SC2034 # for vm_san_boot and vm-check.sh's san_result
vm_san_bad_case() {
	local portal=$VM_SAN_TGT_IP::3260:0
	VM_SAN_BAD_ROOT=iscsi:$portal:$VM_SAN_TARGET_IQN
	VM_SAN_BAD_INITRD=rxe
	VM_SAN_BAD_FROM=login
	VM_SAN_BAD_BOUND=120
	VM_SAN_BAD_MIN=0
	VM_SAN_BAD_DR_RXE=1
	case $1 in
	target) # a target name the target guest does not serve
		VM_SAN_BAD_ROOT=iscsi:$portal:${VM_SAN_TARGET_IQN%:*}:nosuchtarget
		VM_SAN_BAD_DR_EXPECT="iSCSI target \"${VM_SAN_TARGET_IQN%:*}:nosuchtarget\" not found on portal"
		# (LIO answers 03/01, "service unavailable"; a target that
		# answers 02/03, "not found", gets the error-19 hint)
		VM_SAN_BAD_EXPECT="check ISCSI_TARGET_NAME"
		;;
	chap) # CHAP with a wrong secret
		VM_SAN_BAD_ROOT=iscsi:$VM_SAN_CHAP_USER:wrong-secret-0@$portal:$VM_SAN_TARGET_IQN
		VM_SAN_BAD_EXPECT="login over iSER failed: CHAP failed or not allowed"
		VM_SAN_BAD_DR_EXPECT="iSCSI login failed due to authorization failure"
		;;
	nochap) # no credentials, the target requires CHAP
		VM_SAN_BAD_EXPECT="login over iSER failed: CHAP failed or not allowed"
		VM_SAN_BAD_DR_EXPECT="iSCSI login failed due to authorization failure"
		;;
	port) # the target guest's address, a port nobody listens on
		VM_SAN_BAD_ROOT=iscsi:$VM_SAN_TGT_IP::$VM_SAN_NOBODY_PORT:0:$VM_SAN_TARGET_IQN
		VM_SAN_BAD_EXPECT="login over iSER failed: no iSER connection to the portal"
		VM_SAN_BAD_DR_EXPECT="Target discovery to $VM_SAN_TGT_IP:$VM_SAN_NOBODY_PORT failed"
		;;
	addr) # an address on the link nobody has (no ARP reply)
		VM_SAN_BAD_ROOT=iscsi:$VM_SAN_NOBODY_IP::3260:0:$VM_SAN_TARGET_IQN
		VM_SAN_BAD_EXPECT="login over iSER failed: no iSER connection to the portal"
		VM_SAN_BAD_DR_EXPECT="Target discovery to $VM_SAN_NOBODY_IP:3260 failed"
		;;
	rdma) # the initramfs knows nothing of soft-RoCE: no RDMA device
		VM_SAN_BAD_INITRD=norxe
		VM_SAN_BAD_EXPECT="no RDMA device after 30s"
		VM_SAN_BAD_FROM=rdma
		VM_SAN_BAD_BOUND=30
		VM_SAN_BAD_MIN=28
		VM_SAN_BAD_DR_RXE=0
		VM_SAN_BAD_DR_EXPECT="iser: no RDMA device after 30s"
		;;
	*) return 1 ;;
	esac
	return 0
}

# vm_san_bad_poll JOBDIR SECONDS: vm_boot's VM_BOOT_POLL for a boot of
# sanboot --bad.  Notes in JOBDIR/times when (seconds since qemu started,
# polled once a second) the console first showed our script's RDMA wait
# ("rdma"), its login ("login"), its panic line ("panic", "iser: boot
# from SAN failed: ...") and the "(initramfs) " prompt of Debian's panic
# shell ("shell"); returns 0 (stop the guest) VM_SAN_BAD_SETTLE seconds
# after the prompt.
vm_san_bad_poll() {
	local job=$1 t=$2 con=$1/console.log total line key
	total=$({ wc -l <"$con"; } 2>/dev/null) || total=0
	if [ "$total" -gt "$VM_SAN_BP_N" ]; then
		while IFS= read -r line; do
			case $line in
			*"iser: waiting up to "*) key=rdma ;;
			*"iser: logging in over iSER"*) key=login ;;
			*"iser: boot from SAN failed: "*) key=panic ;;
			*"Could not boot."* | *"dracut: FATAL: "*) key=dpanic ;;
			*) continue ;;
			esac
			grep -q "^$key " "$job/times" 2>/dev/null || echo "$key $t" >>"$job/times"
		done < <(sed -n "$((VM_SAN_BP_N + 1)),${total}p" "$con")
		VM_SAN_BP_N=$total
	fi
	# the prompt ends no line: it waits for input that never comes
	if [ -z "$VM_SAN_BP_SHELL" ] && grep -aqE '\(initramfs\) |^dracut:/# ' "$con" 2>/dev/null; then
		VM_SAN_BP_SHELL=$t
		echo "shell $t" >>"$job/times"
	fi
	[ -n "$VM_SAN_BP_SHELL" ] && [ $((t - VM_SAN_BP_SHELL)) -ge "$VM_SAN_BAD_SETTLE" ]
}

# vm_san_boot RELEASE JOBDIR ROW [LINE_HANDLER]
#
# Run one boot-from-SAN scenario (ROW: INITIATOR "ours@san", TARGET
# "X@peer", BODY sanboot [--flap SECONDS] [--chap]).  The target guest is booted as
# in vm_pair_boot and runs the body (scenarios/sanboot.sh), which serves
# JOBDIR/NAME.sig/root.img (a copy of vm_san_rootfs's image) as LUN 0 of
# $VM_SAN_TARGET_IQN over iSER and signals "ready".  Then the initiator
# guest boots twice from vm_san_initrd's initramfs, without the 9p shares:
# root=iscsi:... on the kernel command line, ip= for the network.  Boot 1
# writes a marker and reboots (qemu's -no-reboot ends it; the host starts
# the same guest again, same kernel, initramfs, NIC and disk), boot 2
# must find the marker.  Each boot's files are in JOBDIR/NAME.bootN/
# (console.log, progress, qemu.log, state, state-reason); the target
# guest's as in vm_pair_boot.  After the boots the host writes the marker
# it saw (NAME.sig/token) and "done"; the target guest then checks its
# copy of the image and the logins it accepted, and tears down.
# With --chap the target requires CHAP and root= carries the account
# (root=iscsi:USER:SECRET@...), so both boots log in with it; --mutual
# adds the target's account (root=iscsi:USER:SECRET:INUSER:INSECRET@...).
# With --bad CASE,... the initiator guest boots once per CASE instead
# (vm_san_bad_case; NAME.bootN/case names it), without panic= so that a
# failure ends in the initramfs shell, which vm_san_bad_poll waits for;
# every case boots whatever the one before showed.
# Sets VM_SAN_ERR (a set-up failure, empty if none), VM_SAN_BOOTS (how
# many boots ran), VM_PEER_STATE, VM_PEER_REASON.
# shellcheck disable=SC2034 # VM_SAN_BOOTS, VM_PEER_* are for the caller
vm_san_boot() {
	local rel=$1 job=$2 row=$3 name ini tgt def tmo body rest mode=plain flap=0 dracut=0
	local pjob sig port hard phard ppid n root initrd b bj token moddir a cred=""
	local bad="" boots="1 2" c initrd_norxe="" rootp mutual=0 ibft=0 tftp
	local save_cpus=$VM_CPUS save_mem=$VM_MEM save_bt=$VM_BOOT_TIMEOUT save_slack=$VM_SCENARIO_SLACK
	read -r name ini tgt def tmo body rest <<<"$row"
	pjob=$job/$name.peer
	sig=$job/$name.sig
	rm -rf "$pjob" "$sig" "${job:?}/$name" "$job/$name".boot[0-9]
	mkdir -p "$pjob" "$sig" "$job/$name" || vm_die "cannot create $pjob"
	VM_SAN_ERR=""
	VM_SAN_BOOTS=0
	VM_PEER_STATE=""
	VM_PEER_REASON=""
	# shellcheck disable=SC2086
	set -- $rest
	while [ $# -gt 0 ]; do
		case $1 in
		--flap) mode=flap; flap=${2:-}; shift ;;
		--dracut) dracut=1 ;;
		--bad) mode=bad; bad=${2:-}; shift ;;
		--chap) cred=$VM_SAN_CHAP_USER:$VM_SAN_CHAP_SECRET@ ;;
		--mutual) mutual=1 ;;
		--ibft) ibft=1 ;;
		esac
		shift
	done
	[ "$mutual" = 0 ] || [ -z "$cred" ] ||
		cred=$VM_SAN_CHAP_USER:$VM_SAN_CHAP_SECRET:$VM_SAN_CHAP_IN_USER:$VM_SAN_CHAP_IN_SECRET@
	moddir=${ISER_VM_MODDIR:-$VM_REPO/build/$rel}
	if [ $mode = bad ]; then
		boots=${bad//,/ }
		[ -n "$boots" ] || { VM_SAN_ERR="set-up: --bad needs a list of cases ($VM_SAN_BAD_CASES)"; return 0; }
		for c in $boots; do
			vm_san_bad_case "$c" || { VM_SAN_ERR="set-up: unknown --bad case '$c' ($VM_SAN_BAD_CASES)"; return 0; }
			if [ "$VM_SAN_BAD_INITRD" = norxe ] && [ -z "$initrd_norxe" ] && [ $dracut = 0 ]; then
				initrd_norxe=$(vm_san_initrd "$rel" "$moddir" norxe 2>"$sig/prep.err") ||
					{ VM_SAN_ERR="set-up: $(cat "$sig/prep.err")"; return 0; }
			fi
		done
	fi
	if [ $dracut = 1 ]; then
		initrd=vm_san_dracut
	else
		initrd=vm_san_initrd
	fi
	if ! root=$(vm_san_rootfs 2>"$sig/prep.err") ||
		! initrd=$($initrd "$rel" "$moddir" 2>"$sig/prep.err"); then
		VM_SAN_ERR="set-up: $(cat "$sig/prep.err")"
		return 0
	fi
	cp "$root" "$sig/root.img" || { VM_SAN_ERR="set-up: cannot copy $root"; return 0; }
	tftp=$sig/tftp
	if [ $ibft = 1 ] && { ! mkdir -p "$tftp" || ! cp "/boot/vmlinuz-$rel" "$tftp/vmlinuz" ||
		! cp "$initrd" "$tftp/initrd.img"; }; then
		VM_SAN_ERR="set-up: cannot fill the TFTP directory $tftp"
		return 0
	fi
	port=$(vm_free_port) || vm_die "no free TCP port on 127.0.0.1 for the guests' link"
	echo "$name none ${tgt%@peer} $def $((tmo + VM_PAIR_EXTRA)) $body $rest" >"$pjob/job.list"
	cp "$job/job.env" "$pjob/job.env" 2>/dev/null
	hard=$((VM_SAN_BOOT_TIMEOUT + tmo + 60))
	[ $mode = bad ] && hard=$((VM_SAN_BOOT_TIMEOUT + VM_SAN_BAD_SETTLE + 30))
	# shellcheck disable=SC2086
	set -- $boots
	phard=$((VM_BOOT_TIMEOUT + 300 + $# * hard + VM_PAIR_EXTRA + VM_PAIR_GRACE))
	VM_CPUS=$VM_PAIR_CPUS
	VM_MEM=$VM_PAIR_MEM
	vm_peer_start "$rel" "$pjob" "$sig" "$phard" "$port"
	ppid=$VM_PEER_PID
	# the target must serve the LUN before the initiator guest boots
	n=0
	while [ ! -e "$sig/ready" ]; do
		kill -0 "$ppid" 2>/dev/null || break
		n=$((n + 1))
		[ $n -lt 400 ] || break
		sleep 1
	done
	if [ ! -e "$sig/ready" ]; then
		if kill -0 "$ppid" 2>/dev/null; then
			VM_SAN_ERR="the target guest did not serve the root LUN within 400 s"
		else
			VM_SAN_ERR="the target guest stopped before it served the root LUN"
		fi
	else
		VM_SAN_SIG=$sig
		VM_SAN_HANDLER=${4:-}
		b=0
		for c in $boots; do
			b=$((b + 1))
			bj=$job/$name.boot$b
			mkdir -p "$bj"
			rm -f "$bj/times" "$bj/case"
			mapfile -t VM_QEMU_EXTRA < <(vm_pair_links initiator "$port")
			VM_BOOT_INITRD=$initrd
			VM_BOOT_SHARES=0
			# initramfs-tools: ip= of klibc's ipconfig, the rest from
			# iscsi.initramfs; dracut: its own ip= and rd.* options,
			# rd.emergency=reboot so that a failure ends the boot
			if [ $dracut = 1 ]; then
				a="ip=$VM_SAN_INI_IP:::255.255.255.0:iser-san:eth0:none rd.neednet=1 rd.iscsi.initiator=$VM_SAN_INITIATOR_IQN rd.iscsi.transport=iser rd.iser.rxe=eth0 rd.shell=0 rd.emergency=reboot"
			else
				a="ip=$VM_SAN_INI_IP::::iser-san:eth0:off"
			fi
			VM_BOOT_CMDLINE="console=ttyS0,115200 panic=-1 mitigations=off log_buf_len=$VM_LOG_BUF_LEN printk.devkmsg=on net.ifnames=0 $a root=iscsi:$cred$VM_SAN_TGT_IP::3260:0:$VM_SAN_TARGET_IQN iser_san.boot=$b iser_san.mode=$mode iser_san.flap=$((flap + 40)) ${ISER_VM_APPEND:-}"
			if [ $ibft = 1 ]; then
				# iPXE's script is its command line: net0 (the
				# link) gets the address and attaches the LUN over
				# TCP, which describes it in the iBFT; net1 (qemu's
				# user network, no way out) fetches the kernel and
				# the initramfs.  Linux then takes the target, the
				# initiator name and the address from the iBFT
				# (iscsi_auto), soft-RoCE goes on the iBFT's NIC, and
				# the root is found by its label.
				VM_QEMU_EXTRA+=(-netdev "user,id=n2,restrict=on,tftp=$tftp"
					-device "e1000,netdev=n2,romfile=")
				VM_BOOT_KERNEL=$VM_SAN_IPXE
				VM_BOOT_INITRD=none
				VM_BOOT_CMDLINE="set net0/ip $VM_SAN_INI_IP && set net0/netmask 255.255.255.0 && ifopen net0 && set initiator-iqn $VM_SAN_INITIATOR_IQN && sanhook --drive 0x80 iscsi:$VM_SAN_TGT_IP::3260:0:$VM_SAN_TARGET_IQN && dhcp net1 && kernel tftp://10.0.2.2/vmlinuz console=ttyS0,115200 panic=-1 mitigations=off log_buf_len=$VM_LOG_BUF_LEN printk.devkmsg=on net.ifnames=0 ip=off iscsi_auto iser_rxe_netdev=ibft root=LABEL=iser-san-root iser_san.boot=$b iser_san.mode=$mode iser_san.flap=$((flap + 40)) ${ISER_VM_APPEND:-} && initrd tftp://10.0.2.2/initrd.img && boot"
			fi
			VM_BOOT_TIMEOUT=$VM_SAN_BOOT_TIMEOUT
			VM_SCENARIO_SLACK=$((tmo + 60))
			if [ $mode = bad ]; then
				# no panic=: initramfs-tools' panic then opens its
				# shell (panic=-1 would reboot at once); a lower
				# hung-task timeout, so that the boot's minutes can
				# show a stuck task
				vm_san_bad_case "$c"
				echo "$c" >"$bj/case"
				rootp=$VM_SAN_BAD_ROOT
				if [ $dracut = 1 ]; then
					# dracut's shell instead of a reboot, after
					# rd.retry= seconds
					# rd.shell=1: dracut's die() opens the
					# shell only when it is given (without, a
					# die in our online hook wrote FATAL and
					# dracut's iscsi module went on logging in)
					a="ip=$VM_SAN_INI_IP:::255.255.255.0:iser-san:eth0:none rd.neednet=1 rd.iscsi.initiator=$VM_SAN_INITIATOR_IQN rd.iscsi.transport=iser rd.retry=$VM_SAN_DR_RETRY rd.shell=1"
					[ "$VM_SAN_BAD_DR_RXE" = 0 ] || a+=" rd.iser.rxe=eth0"
					# the shell may come at the bound: then
					# the settle time (vm_san_bad_poll)
					VM_BOOT_TIMEOUT=$((VM_SAN_DR_BOUND + 10 + VM_SAN_BAD_SETTLE + 5))
				elif [ "$VM_SAN_BAD_INITRD" != rxe ]; then
					VM_BOOT_INITRD=$initrd_norxe
				fi
				VM_BOOT_CMDLINE="console=ttyS0,115200 mitigations=off log_buf_len=$VM_LOG_BUF_LEN printk.devkmsg=on net.ifnames=0 $a root=$rootp sysctl.kernel.hung_task_timeout_secs=10 iser_san.bad=$c ${ISER_VM_APPEND:-}"
				VM_BOOT_POLL=vm_san_bad_poll
				VM_SAN_BP_N=0
				VM_SAN_BP_SHELL=""
				echo "$VM_PROG: $rel: booting from SAN with a bad configuration: $c (root=$rootp, initramfs $VM_SAN_BAD_INITRD)" >&2
			fi
			vm_boot "$rel" "$bj" "$hard" vm_san_line
			unset VM_BOOT_POLL
			VM_SAN_BOOTS=$b
			echo "$VM_STATE" >"$bj/state"
			vm_state_reason "$bj" >"$bj/state-reason"
			VM_BOOT_TIMEOUT=$save_bt
			VM_SCENARIO_SLACK=$save_slack
			[ $mode != bad ] || continue
			[ "$VM_STATE" = "done" ] || break
			# boot 2 looks for what boot 1 wrote
			grep -aq '^@@ MARKER wrote ' "$bj/progress" || break
		done
		unset VM_BOOT_INITRD VM_BOOT_SHARES VM_BOOT_CMDLINE VM_BOOT_KERNEL VM_SAN_SIG VM_SAN_HANDLER
	fi
	VM_QEMU_EXTRA=()
	VM_CPUS=$save_cpus
	VM_MEM=$save_mem
	token=$(sed -n 's/^@@ MARKER wrote \([^ \r]*\).*/\1/p' "$job/$name.boot1/progress" 2>/dev/null | head -n 1)
	echo "$token" >"$sig/token"
	echo "$VM_SAN_BOOTS" >"$sig/boots"
	[ -e "$sig/done" ] || echo "STOPPED after $VM_SAN_BOOTS boot(s)" >"$sig/done"
	vm_peer_finish "$pjob" "$sig" "$ppid"
	return 0
}
