# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Host side of the guest test rig: which kernel, its initramfs, one qemu boot.
# Sourced by tests/vm/vm-check.sh and tests/vm/demo.sh; see
# Documentation/testing-vm.md.
#
# A boot runs one "job": a directory under build/vm/logs/<kernel>/ holding
# job.list (the scenarios to run, one per line, as in tests/vm/scenarios.list).
# The guest reports progress on its second serial port (the file "progress"
# in the job directory) and writes its results into the job directory through
# the read-write 9p share of the repository.

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VM_REPO=$(cd "$VM_DIR/../.." && pwd)
VM_OUT=$VM_REPO/build/vm
VM_MEM=${ISER_VM_MEM:-3G}
VM_CPUS=${ISER_VM_CPUS:-2}
# seconds from qemu start until the guest must have said "UP"
VM_BOOT_TIMEOUT=${ISER_VM_BOOT_TIMEOUT:-120}
# seconds a scenario may overrun its own timeout (teardown, dmesg check)
VM_SCENARIO_SLACK=${ISER_VM_SCENARIO_SLACK:-150}
# the kernel log lines that fail a scenario (one list, in guest/lib.sh)
VM_BAD_KLOG=$(sed -n "s/^VM_BAD_KLOG='\(.*\)'\$/\1/p" "$VM_DIR/guest/lib.sh")
VM_PROG=${VM_PROG:-$(basename "$0")}

vm_die() {
	echo "$VM_PROG: $*" >&2
	exit 2
}

vm_now() {
	date +%s
}

# vm_kernel_release LABEL: print the release for 6.1, 6.12 or a full release.
vm_kernel_release() {
	# shellcheck source=../../../scripts/kernels.sh
	. "$VM_REPO/scripts/kernels.sh"
	case $1 in
	6.1) echo "${KREL_61:-}" ;;
	6.12) echo "${KREL_612:-}" ;;
	[0-9].[0-9] | [0-9].[0-9][0-9]) echo "" ;;
	*) echo "$1" ;;
	esac
}

# vm_check_kernel LABEL RELEASE: die with a clear message unless the guest
# kernel can boot (image and module tree installed).
vm_check_kernel() {
	local label=$1 rel=$2
	if [ -z "$rel" ]; then
		case $label in
		6.12) vm_die "no Debian 6.12 kernel found: install $KERNEL_PKGS_612 (scripts/deps.sh)" ;;
		6.1) vm_die "no Debian 6.1 kernel found (no /usr/src/linux-headers-6.1.0-*-amd64): install linux-image-amd64 and linux-headers-amd64 (scripts/deps.sh)" ;;
		*) vm_die "unknown kernel '$label' (use 6.1, 6.12 or a release such as 6.1.0-56-amd64)" ;;
		esac
	fi
	[ -r "/boot/vmlinuz-$rel" ] ||
		vm_die "kernel $label: /boot/vmlinuz-$rel is missing: install linux-image-$rel (or linux-image-$rel-unsigned), e.g. with scripts/deps.sh"
	[ -r "/lib/modules/$rel/modules.dep" ] ||
		vm_die "kernel $label: /lib/modules/$rel/modules.dep is missing: the linux-image-$rel package is not (fully) installed"
	[ -d "/lib/modules/$rel/build" ] ||
		echo "$VM_PROG: warning: kernel $label: no headers (/lib/modules/$rel/build); our modules cannot be built for it: install linux-headers-$rel" >&2
	return 0
}

# vm_check_tools: die naming the Debian package of any missing host program.
# The guest runs the host's userspace, so this covers the guest too.
vm_check_tools() {
	local missing="" pair cmd pkg
	for pair in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static \
		gzip:gzip xz:xz-utils modprobe:kmod modinfo:kmod \
		targetcli:targetcli-fb iscsiadm:open-iscsi iscsid:open-iscsi \
		rdma:iproute2 ip:iproute2 fio:fio dbus-daemon:dbus \
		timeout:coreutils python3:python3 sg_inq:sg3-utils; do
		cmd=${pair%%:*}
		pkg=${pair#*:}
		if ! PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "$cmd" >/dev/null 2>&1; then
			missing="$missing $pkg($cmd)"
		fi
	done
	[ -x /usr/bin/python3 ] || missing="$missing python3(/usr/bin/python3)"
	# the initramfs needs a statically linked busybox
	if [ -x /bin/busybox ] && ldd /bin/busybox >/dev/null 2>&1; then
		missing="$missing busybox-static(/bin/busybox is dynamically linked)"
	fi
	[ -z "$missing" ] ||
		vm_die "missing host packages:$missing; install them (scripts/deps.sh)"
}

# vm_initramfs_modules RELEASE: the .ko files the initramfs needs, in load
# order, without repeats.
vm_initramfs_modules() {
	local rel=$1 m
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		modprobe -S "$rel" --show-depends "$m" 2>/dev/null ||
			echo "MISSING $m"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }
		    $1 == "MISSING" { print "MISSING:" $2 }'
}

# vm_initramfs RELEASE: build (or reuse) the initramfs; print its path.
# Rebuilt only when the init script, busybox or one of the modules changed.
vm_initramfs() {
	local rel=$1 dir mods key stage f base
	dir=$VM_OUT/initramfs/$rel
	mods=$(vm_initramfs_modules "$rel")
	case $mods in
	*MISSING:*)
		vm_die "kernel $rel lacks a module the guest boot needs: $(echo "$mods" | sed -n 's/^MISSING://p' | tr '\n' ' ')"
		;;
	esac
	key=$({
		echo "$rel"
		sha256sum "$VM_DIR/initramfs-init.sh" /bin/busybox
		# shellcheck disable=SC2086
		stat -c '%n %s %Y' $mods
	} | sha256sum | cut -d' ' -f1)
	if [ -s "$dir/initramfs.cpio.gz" ] && [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ]; then
		echo "$dir/initramfs.cpio.gz"
		return 0
	fi
	mkdir -p "$dir" || vm_die "cannot create $dir"
	stage=$(mktemp -d "$dir/stage.XXXXXX") || vm_die "mktemp failed in $dir"
	mkdir -p "$stage/bin" "$stage/lib/modules" "$stage/proc" "$stage/sys" \
		"$stage/dev" "$stage/lower" "$stage/rw" "$stage/newroot"
	cp /bin/busybox "$stage/bin/busybox"
	cp "$VM_DIR/initramfs-init.sh" "$stage/init"
	chmod 755 "$stage/init"
	: >"$stage/modules.order"
	for f in $mods; do
		base=$(basename "$f")
		case $f in
		*.ko.xz) base=${base%.xz}; xz -dc "$f" >"$stage/lib/modules/$base" ;;
		*.ko.gz) base=${base%.gz}; gzip -dc "$f" >"$stage/lib/modules/$base" ;;
		*.ko.zst) base=${base%.zst}; zstd -qdc "$f" >"$stage/lib/modules/$base" ;;
		*) cp "$f" "$stage/lib/modules/$base" ;;
		esac || vm_die "cannot unpack $f"
		echo "$base" >>"$stage/modules.order"
	done
	if ! (cd "$stage" && find . -mindepth 1 | busybox cpio -o -H newc 2>/dev/null) |
		gzip -1 >"$dir/initramfs.cpio.gz.tmp"; then
		rm -rf "$stage"
		vm_die "building the initramfs in $dir failed"
	fi
	rm -rf "$stage"
	mv "$dir/initramfs.cpio.gz.tmp" "$dir/initramfs.cpio.gz"
	echo "$key" >"$dir/key"
	echo "$dir/initramfs.cpio.gz"
}

# vm_boot RELEASE JOBDIR HARD_TIMEOUT [LINE_HANDLER]
#
# Boot the guest for one job and watch it.  LINE_HANDLER, when given, is
# called with every progress line ("@@ ..." without the "@@ ").  Sets:
#   VM_STATE  done | noboot | hung | died | timeout
#   VM_CURRENT  the scenario that was running when the guest stopped ("" if none)
#   VM_ELAPSED  seconds the boot took
# shellcheck disable=SC2034 # VM_CURRENT, VM_ELAPSED are for the caller
vm_boot() {
	local rel=$1 job=$2 hard=$3 handler=${4:-} initrd qpid start deadline
	local n=0 total line kw a b done_seen=0 up=0 alive
	initrd=$(vm_initramfs "$rel") || exit 2
	rm -f "$job/progress" "$job/console.log" "$job/qemu.log"
	: >"$job/progress"
	VM_CURRENT=""
	VM_STATE=""
	start=$(vm_now)
	timeout -k 10 "$hard" qemu-system-x86_64 \
		-name "iser-vm-$rel" -nodefaults -no-user-config \
		-accel tcg,thread=multi -smp "$VM_CPUS" -m "$VM_MEM" \
		-nic none -display none -monitor none -no-reboot \
		-kernel "/boot/vmlinuz-$rel" -initrd "$initrd" \
		-append "console=ttyS0,115200 panic=-1 mitigations=off ${ISER_VM_APPEND:-} iser_vm.repo=$VM_REPO iser_vm.job=$job" \
		-serial "file:$job/console.log" -serial "file:$job/progress" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$VM_REPO,mount_tag=repo,security_model=none,multidevs=remap" \
		</dev/null >"$job/qemu.log" 2>&1 &
	qpid=$!
	deadline=$((start + VM_BOOT_TIMEOUT))
	while :; do
		alive=0
		kill -0 "$qpid" 2>/dev/null && alive=1
		total=$(wc -l <"$job/progress")
		while [ "$n" -lt "$total" ]; do
			n=$((n + 1))
			line=$(sed -n "${n}p" "$job/progress" | tr -d '\r')
			case $line in
			"@@ "*) line=${line#@@ } ;;
			*) continue ;;
			esac
			read -r kw a b _ <<<"$line"
			case $kw in
			UP) up=1; deadline=$(($(vm_now) + VM_SCENARIO_SLACK)) ;;
			BEGIN) VM_CURRENT=$a; deadline=$(($(vm_now) + ${b:-300} + VM_SCENARIO_SLACK)) ;;
			END) VM_CURRENT=""; deadline=$(($(vm_now) + VM_SCENARIO_SLACK)) ;;
			DONE) done_seen=1; deadline=$(($(vm_now) + 30)) ;;
			esac
			[ -n "$handler" ] && "$handler" "$line"
		done
		[ $alive = 1 ] || break
		if [ "$(vm_now)" -gt "$deadline" ]; then
			if [ "$up" = 0 ]; then
				VM_STATE=noboot
			elif [ "$done_seen" = 0 ]; then
				VM_STATE=hung
			fi
			kill "$qpid" 2>/dev/null
			sleep 2
			kill -9 "$qpid" 2>/dev/null
			break
		fi
		sleep 1
	done
	wait "$qpid" 2>/dev/null
	local rc=$?
	VM_ELAPSED=$(($(vm_now) - start))
	if [ -z "$VM_STATE" ]; then
		if [ "$done_seen" = 1 ]; then
			VM_STATE="done"
		elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			VM_STATE=timeout
		elif [ "$up" = 0 ]; then
			VM_STATE=noboot
		else
			VM_STATE=died
		fi
	fi
	return 0
}

# vm_console_klog JOBDIR SCENARIO: the first bad kernel log lines of the
# console after SCENARIO began, on one line.
vm_console_klog() {
	awk -v b="iser-vm: BEGIN $2" 'index($0, b) { p = 1 } p' "$1/console.log" 2>/dev/null |
		tr -d '\r' | grep -aE "$VM_BAD_KLOG" | head -n 2 |
		sed 's/^\[[^]]*\] *//' | paste -sd ';' -
}

# vm_state_reason JOBDIR: a sentence for VM_STATE after vm_boot (and the
# kernel's complaints after VM_CURRENT began, if any).
vm_state_reason() {
	local job=$1 klog=""
	[ -n "${VM_CURRENT:-}" ] && klog=$(vm_console_klog "$job" "$VM_CURRENT")
	echo "$(vm_state_sentence "$job")${klog:+; kernel log: $klog}"
}

vm_state_sentence() {
	local job=$1
	case $VM_STATE in
	done) echo "guest finished" ;;
	noboot)
		local why
		why=$(grep -a -m1 -E 'iser-vm-init:|Kernel panic|not syncing' "$job/console.log" 2>/dev/null)
		[ -n "$why" ] || why=$(grep -a -v 'terminating on signal' "$job/qemu.log" 2>/dev/null | grep -a -m1 .)
		[ -n "$why" ] || why="last console line: $(grep -a . "$job/console.log" 2>/dev/null | tail -n 1)"
		why=$(echo "$why" | tr -d '\r' | sed 's/^\[[^]]*\] *//')
		echo "guest did not come up within ${VM_BOOT_TIMEOUT}s ($why)"
		;;
	hung) echo "guest hung (no progress within the scenario timeout + ${VM_SCENARIO_SLACK}s), killed" ;;
	timeout) echo "hard boot timeout reached, qemu killed" ;;
	died)
		local why
		why=$(grep -a -m1 -E 'Kernel panic|not syncing' "$job/console.log" 2>/dev/null | tr -d '\r' | sed 's/^\[[^]]*\] *//')
		echo "guest stopped unexpectedly${why:+ ($why)}"
		;;
	esac
}
