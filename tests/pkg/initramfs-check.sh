#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host check of the boot-from-SAN pieces (initramfs/), without a guest:
#   1. shellcheck on every script (sh for what runs in the initramfs);
#   2. the parsing of iser-functions (the configuration file, the iscsi_*
#      kernel parameters, root=iscsi:..., the checks) under dash, busybox
#      sh and klibc's sh, from a fake /proc/cmdline;
#   3. scripts/init-premount/iser run whole in a scratch chroot (busybox,
#      then klibc's tools alone as with BUSYBOX=n;
#      stubs for modprobe, iscsistart, rdma and the networking of
#      /scripts/functions, a fake /sys): the iscsistart arguments, the
#      root device it exports, the marker for scripts/local-bottom/iser
#      (which then runs in the same chroot), and that every bad input
#      ends in panic with its message within the bound (shortened for
#      the test);
#   4. the dracut module's hooks (iser-lib.sh) with a stubbed dracut-lib;
#   5. mkinitramfs for the 6.1 kernel with the hook in a scratch
#      configuration directory (-d), our modules from build/<release>/
#      (make modules-all or scripts/build-modules.sh) through
#      ISER_MODULES_FROM and a scratch iscsi.initramfs through
#      ISER_ISCSI_CONF; lsinitramfs and the unpacked image show our
#      modules (resolved by modprobe ahead of the in-tree ib_iser), the
#      scripts in the init-premount and local-bottom ORDER, iscsistart, rdma and
#      rdma_rxe only with ISER_RXE_NETDEV, the configuration; and
#      nothing of ours with NO_ISCSI_IN_INITRAMFS=yes.
# Nothing in /etc, /boot or /lib/modules is written. Needs root (chroot,
# mknod). Prints PASS/FAIL lines and "N passed, N failed"; exit 1 on any
# failure.

# The checks are strings for eval and functions called through check():
# shellcheck disable=SC2016,SC2317,SC2034,SC2001
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/kernels.sh
. "$top/scripts/kernels.sh"

pass=0
fail=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
ko() { echo "FAIL: $*"; fail=$((fail + 1)); }
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else ko "$what"; fi
}
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit
}

itools=$top/initramfs/initramfs-tools
funcs=$itools/scripts/iser-functions
premount=$itools/scripts/init-premount/iser
bottom=$itools/scripts/local-bottom/iser
hook=$itools/hooks/iser
dracut=$top/initramfs/dracut/95iser
krel=$KREL_61
tmp=$(mktemp -d /tmp/iser-initramfs-check.XXXXXX)
# Processes left in the chroot (the stub iscsistart the script's
# watchdog gave up on) are ours: end them before removing it.
kill_chroot() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$tmp/chroot" ] && kill "${p#/proc/}" 2>/dev/null
	done
}
cleanup() {
	kill_chroot
	rm -rf "$tmp"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || { ko "runs as root (chroot, mknod)"; finish; }

# ---- 1. shellcheck
if command -v shellcheck >/dev/null; then
	check "shellcheck (sh): hook, init-premount and local-bottom scripts, iser-functions, dracut hooks" \
		shellcheck -s sh -x "$hook" "$premount" "$bottom" "$funcs" \
		"$dracut/parse-iser.sh" "$dracut/iser-online.sh" "$dracut/iser-lib.sh"
	check "shellcheck (bash): dracut module-setup.sh, this test" \
		shellcheck -x "$dracut/module-setup.sh" "$0"
else
	ko "shellcheck is installed"
fi

# ---- 2. parsing, under each shell
vars="ISCSI_INITIATOR ISCSI_TARGET_NAME ISCSI_TARGET_IP ISCSI_TARGET_PORT"
vars+=" ISCSI_TARGET_GROUP ISCSI_USERNAME ISCSI_PASSWORD ISCSI_IN_USERNAME"
vars+=" ISCSI_IN_PASSWORD ISCSI_ROOT_LUN ISCSI_AUTO ISCSI_TRANSPORT ISER_RXE_NETDEV"
vars+=" ISCSI_HAD_ROOT"
# parse SHELL CONF CMDLINE: the variables after iser_parse, its status
# (rc=) and iser_check_config's output (check=, stderr included).
parse() {
	printf '%s\n' "$2" >"$tmp/conf"
	printf '%s\n' "$3" >"$tmp/cmdline"
	(cd "$tmp" && $1 -c '
		. "$1"
		iser_parse "$2" "$3"
		echo "rc=$?"
		for v in $4; do eval "echo $v=\${$v-}"; done
		echo "check=$(iser_check_config 2>&1)"
		echo "params=$(iser_iscsistart_params)"
	' sh "$funcs" "$tmp/conf" "$tmp/cmdline" "$vars" 2>&1)
}
# has OUTPUT LINE...: every LINE is a whole line of OUTPUT
has() {
	local out=$1 l
	shift
	for l in "$@"; do
		grep -qxF -- "$l" <<<"$out" || { echo "  missing: $l"; sed 's/^/  | /' <<<"$out"; return 1; }
	done
}
# like: OUTPUT contains the fixed string
like() { grep -qF -- "$2" <<<"$1" || { echo "  missing: $2"; sed 's/^/  | /' <<<"$1"; return 1; }; }

shells=(dash)
command -v busybox >/dev/null && shells+=("busybox sh")
[ -x /usr/lib/klibc/bin/sh ] && shells+=(/usr/lib/klibc/bin/sh)
for sh in "${shells[@]}"; do
	conf='ISCSI_INITIATOR=iqn.2026-11.org.example:host1
ISCSI_TARGET_NAME=iqn.2003-01.org.example:tgt0
ISCSI_TARGET_IP=192.168.1.10
ISCSI_TRANSPORT=iser'
	out=$(parse "$sh" "$conf" "quiet ro")
	check "[$sh] config file alone: iser, target, ready to log in" has "$out" \
		rc=0 ISCSI_TRANSPORT=iser ISCSI_TARGET_NAME=iqn.2003-01.org.example:tgt0 \
		ISCSI_TARGET_IP=192.168.1.10 ISCSI_INITIATOR=iqn.2026-11.org.example:host1 \
		check=ok ISCSI_HAD_ROOT=
	check "[$sh] iscsistart gets -P iface.transport_name=iser and the login bounds" like "$out" \
		"params=-P iface.transport_name=iser -P node.session.initial_login_retry_max=4 -P node.conn[0].timeo.login_timeout=15"

	out=$(parse "$sh" "$conf" "iscsi_target_ip=10.0.0.2 iscsi_target_port=3261 iscsi_target_group=2 iscsi_username=u1 iscsi_password=p1 iscsi_in_username=u2 iscsi_in_password=p2 iscsi_initiator=iqn.x:y iser_rxe_netdev=eth1")
	check "[$sh] kernel parameters override the file" has "$out" \
		rc=0 ISCSI_TARGET_IP=10.0.0.2 ISCSI_TARGET_PORT=3261 ISCSI_TARGET_GROUP=2 \
		ISCSI_USERNAME=u1 ISCSI_PASSWORD=p1 ISCSI_IN_USERNAME=u2 ISCSI_IN_PASSWORD=p2 \
		ISCSI_INITIATOR=iqn.x:y ISER_RXE_NETDEV=eth1 ISCSI_TRANSPORT=iser check=ok

	out=$(parse "$sh" "" "root=iscsi:chapuser:secret@10.1.2.3::3262:1:iqn.2003-01.org.example:disk:one iscsi_transport=iser")
	check "[$sh] root=iscsi: with CHAP, empty protocol, LUN 1, ':' in the target name" has "$out" \
		rc=0 ISCSI_TARGET_IP=10.1.2.3 ISCSI_TARGET_PORT=3262 ISCSI_ROOT_LUN=1 \
		ISCSI_TARGET_NAME=iqn.2003-01.org.example:disk:one ISCSI_USERNAME=chapuser \
		ISCSI_PASSWORD=secret ISCSI_HAD_ROOT=yes check=ok

	out=$(parse "$sh" "" "root=iscsi:chapuser:pa:ss@10.1.2.3::3262:1:iqn.2003-01.org.example:disk")
	check "[$sh] root=iscsi: with 3 credential fields is refused, nothing set" has "$out" \
		rc=1 ISCSI_USERNAME= ISCSI_TARGET_NAME= ISCSI_HAD_ROOT=
	check "[$sh] ...with a message" like "$out" "credentials must be user:password"

	out=$(parse "$sh" "" "root=iscsi:u:p@10.1.2.3::3262:1:iqn.2003-01.org.example:disk iscsi_transport=iser")
	check "[$sh] root=iscsi: user:password@..." has "$out" \
		rc=0 ISCSI_USERNAME=u ISCSI_PASSWORD=p ISCSI_IN_USERNAME= ISCSI_HAD_ROOT=yes check=ok

	out=$(parse "$sh" "" "root=iscsi:u:p:iu:ip@[fd00::1:2]:6:3260:0:iqn.2003-01.org.example:v6 iscsi_transport=iser")
	check "[$sh] root=iscsi: [IPv6] server, protocol 6, mutual CHAP" has "$out" \
		rc=0 ISCSI_TARGET_IP=fd00::1:2 ISCSI_TARGET_PORT=3260 ISCSI_ROOT_LUN=0 \
		ISCSI_TARGET_NAME=iqn.2003-01.org.example:v6 ISCSI_USERNAME=u ISCSI_PASSWORD=p \
		ISCSI_IN_USERNAME=iu ISCSI_IN_PASSWORD=ip check=ok

	out=$(parse "$sh" "" "root=iscsi:10.1.2.3 iscsi_transport=iser")
	check "[$sh] root=iscsi:10.1.2.3 (fields missing) is refused" has "$out" rc=1 ISCSI_TARGET_IP=
	check "[$sh] ...with a message" like "$out" "needs server:protocol:port:lun:target"

	out=$(parse "$sh" "" "root=iscsi:10.1.2.3::3260:lunX:iqn.a:b")
	check "[$sh] a non-decimal LUN is refused" has "$out" rc=1 ISCSI_TARGET_NAME=

	out=$(parse "$sh" "$conf" "iscsi_transport=tcp")
	check "[$sh] iscsi_transport=tcp: left to Debian's script (skip)" has "$out" check=skip
	out=$(parse "$sh" "ISCSI_TARGET_NAME=iqn.a:b
ISCSI_TARGET_IP=10.0.0.1" "")
	check "[$sh] no transport set: skip (TCP, Debian's script)" has "$out" check=skip ISCSI_TRANSPORT=
	out=$(parse "$sh" "$conf" "iscsi_transport=rdma")
	check "[$sh] an unknown transport is an error" like "$out" "ISCSI_TRANSPORT='rdma': only tcp and iser are known"
	out=$(parse "$sh" "ISCSI_TRANSPORT=iser" "")
	check "[$sh] iser without a target is an error" like "$out" "transport iser, but no target"
	out=$(parse "$sh" "ISCSI_TRANSPORT=iser" "iscsi_auto")
	check "[$sh] iser with iscsi_auto (iBFT) needs no target" has "$out" ISCSI_AUTO=true check=ok
	out=$(parse "$sh" "$conf" "iscsi_target_port=32x0")
	check "[$sh] a bad port is an error" like "$out" "ISCSI_TARGET_PORT='32x0' is not a number"
	out=$(parse "$sh" "$conf" "iscsi_in_username=x iscsi_in_password=y")
	check "[$sh] mutual CHAP without CHAP is an error" like "$out" "mutual CHAP (ISCSI_IN_USERNAME) needs ISCSI_USERNAME"
	touch "$tmp/iscsi_target_name=GLOBBED"
	out=$(parse "$sh" "$conf" "iscsi_target_name=*")
	check "[$sh] parameters are not globbed" has "$out" "ISCSI_TARGET_NAME=*"
	rm -f "$tmp/iscsi_target_name=GLOBBED"
done

# ---- 3. the whole init-premount script in a chroot, with stubs
# chroot_tests FLAVOR: the tools of an image built with BUSYBOX=y
# (busybox) or BUSYBOX=n (klibc: its sh, cat, sleep, kill; no grep, sed)
chroot_tests() {
	local fl=$1
	r=$tmp/chroot
	kill_chroot
	rm -rf "$r"
	mkdir -p "$r"/bin "$r"/sbin "$r"/lib "$r"/scripts/init-premount "$r"/etc \
		"$r"/proc "$r"/conf "$r"/run "$r"/dev "$r"/tmp
	case $fl in
	busybox)
		cp "$bb" "$r/bin/busybox"
		chroot "$r" /bin/busybox --install -s /bin
		;;
	klibc)
		cp /usr/lib/klibc/bin/* "$r/bin/"
		cp /usr/lib/klibc-*.so "$r/lib/"
		;;
	esac
	cp "$funcs" "$r/scripts/iser-functions"
	cp "$premount" "$r/scripts/init-premount/iser"
	mknod "$r/dev/null" c 1 3
	mknod "$r/dev/sdz" b 7 250 # any block device node; never opened
	cat >"$r/scripts/functions" <<'EOF'
panic() { echo "PANIC: $*"; echo panic >>/tmp/calls; exit 1; }
wait_for_udev() { :; }
configure_networking() { echo configure_networking >>/tmp/calls; DEVICE=eth0; }
# busybox sh runs its own applets (modprobe, ip) before PATH: the stubs
# are reached by their path
modprobe() { /sbin/modprobe "$@"; }
ip() { /sbin/ip "$@"; }
rdma() { /sbin/rdma "$@"; }
iscsistart() { /sbin/iscsistart "$@"; }
EOF
	for stub in modprobe rdma ip; do
		printf '#!/bin/sh\necho "%s $*" >>/tmp/calls\n' "$stub" >"$r/sbin/$stub"
	done
	# iscsistart: what /tmp/iscsistart.mode says
	cat >"$r/sbin/iscsistart" <<'EOF'
#!/bin/sh
echo "iscsistart $*" >>/tmp/calls
case $(cat /tmp/iscsistart.mode) in
ok) echo "iscsistart: Connection1:0 to [target: x, portal: y] through [iface: default] is operational now"; exit 0 ;;
chap) echo "iscsistart: initiator reported error (24 - iSCSI login failed due to authorization failure)"; exit 1 ;;
target) echo "iscsistart: initiator reported error (19 - encountered non-retryable iSCSI login failure)"; exit 1 ;;
lio-target) # what LIO does with a target name it does not serve (ours-sanboot-bad)
	echo "iscsistart: connection1:0 login rejected: target error (03/01)"
	echo "iscsistart: Login I/O error, failed to send a PDU"
	echo "iscsistart: initiator reported error (8 - connection timed out)"; exit 1 ;;
unreach) echo "iscsistart: initiator reported error (8 - connection timed out)"; exit 1 ;;
exists) echo "iscsistart: initiator reported error (15 - session exists)"; exit 1 ;;
hang) exec sleep 20 ;;
esac
EOF
	chmod +x "$r"/sbin/*
	iname='InitiatorName=iqn.2026-11.org.example:host1'
	tgt=iqn.2003-01.org.example:tgt0
	# mk_lun N: LUN N of the target, as sdz, in the fake sysfs
	mk_lun() {
		local d=$r/sys/class/iscsi_session/session3/device/target2:0:0/2:0:0:$1/block/sdz
		mkdir -p "$d"
		echo "$tgt" >"$r/sys/class/iscsi_session/session3/targetname"
	}
	# run CONF CMDLINE ISCSISTART-MODE ACTIVE(0/1/down) [ROOT [LUN]]:
	# sets out, rc, calls, secs
	run() {
		rm -rf "$r/sys" "$r/tmp/calls" "$r/conf/param.conf" "$r/run"/*
		mkdir -p "$r/sys/class/net/eth0" "$r/sys/class/net/eth1"
		printf '%s\n' "$1" >"$r/etc/iscsi.initramfs"
		printf '%s\n' "$2" >"$r/proc/cmdline"
		printf '%s\n' "$3" >"$r/tmp/iscsistart.mode"
		echo "$iname" >"$r/etc/initiatorname.iscsi"
		touch "$r/tmp/calls"
		if [ "$4" = 1 ]; then
			mkdir -p "$r/sys/class/infiniband/rxe0/ports/1"
			echo "4: ACTIVE" >"$r/sys/class/infiniband/rxe0/ports/1/state"
		elif [ "$4" = down ]; then
			mkdir -p "$r/sys/class/infiniband/mlx5_0/ports/1"
			echo "1: DOWN" >"$r/sys/class/infiniband/mlx5_0/ports/1/state"
		fi
		[ -n "${6:-}" ] && mk_lun "$6"
		[ -z "${RUN_IBFT:-}" ] || mk_ibft "$RUN_IBFT"
		local s=$SECONDS
		out=$(env -i PATH=/sbin:/bin ROOT="${5:-/dev/sda1}" ISER_RDMA_WAIT=2 \
			ISER_LOGIN_KILL=3 ISER_DISK_WAIT=2 \
			timeout 60 chroot "$r" /bin/sh /scripts/init-premount/iser 2>&1)
		rc=$?
		secs=$((SECONDS - s))
		calls=$(cat "$r/tmp/calls")
	}
	conf="ISCSI_TARGET_NAME=$tgt
ISCSI_TARGET_IP=192.168.1.10
ISCSI_TRANSPORT=iser"

	run "ISCSI_TARGET_NAME=$tgt
ISCSI_TARGET_IP=192.168.1.10" "quiet" ok 1
	check "[$fl] script: TCP configuration: exits 0 and does nothing" \
		test "$rc" = 0 -a -z "$calls"

	run "$conf" "iscsi_username=u iscsi_password=p" ok 1
	check "[$fl] script: iSER login: exit 0" test "$rc" = 0
	check "[$fl] script: loads ib_iser, configures the network, no rxe without ISER_RXE_NETDEV" \
		eval 'has "$calls" "modprobe ib_iser" configure_networking && ! like "$calls" rdma >/dev/null'
	check "[$fl] script: iscsistart arguments" has "$calls" \
		"iscsistart -i iqn.2026-11.org.example:host1 -t $tgt -g 1 -a 192.168.1.10 -p 3260 -u u -w p -P iface.transport_name=iser -P node.session.initial_login_retry_max=4 -P node.conn[0].timeo.login_timeout=15"
	check "[$fl] script: records the interface for open-iscsi" \
		has "$(cat "$r/run/initramfs/open-iscsi.interface")" eth0
	check "[$fl] script: leaves /run/iser/logged-in for local-bottom" \
		test -e "$r/run/iser/logged-in"
	# local-bottom: with the marker it reads OpenSSL's configuration
	# below rootmnt (missing here: still exit 0); without, nothing
	mkdir -p "$r/scripts/local-bottom" "$r/root"
	cp "$bottom" "$r/scripts/local-bottom/iser"
	out=$(env -i PATH=/sbin:/bin rootmnt=/root timeout 20 chroot "$r" /bin/sh /scripts/local-bottom/iser 2>&1)
	check "[$fl] local-bottom script: exit 0, silent, with the marker and no files" \
		test "$?" = 0 -a -z "$out"
	rm -f "$r/run/iser/logged-in"
	out=$(env -i PATH=/sbin:/bin rootmnt=/root timeout 20 chroot "$r" /bin/sh /scripts/local-bottom/iser 2>&1)
	check "[$fl] local-bottom script: exit 0, silent, without the marker" \
		test "$?" = 0 -a -z "$out"

	# root=iscsi: the LUN's block device becomes ROOT
	run "ISCSI_TRANSPORT=iser" "root=iscsi:192.168.1.10::3260:1:$tgt" ok 1 "iscsi:192.168.1.10::3260:1:$tgt"
	check "[$fl] script: root=iscsi: LUN 1 missing: panic after the bounded wait" \
		eval 'test "$rc" = 1 && like "$out" "LUN 1 of $tgt has no block device after 2s" >/dev/null'
	run "ISCSI_TRANSPORT=iser" "root=iscsi:192.168.1.10::3260:1:$tgt" ok 1 "iscsi:192.168.1.10::3260:1:$tgt" 1
	check "[$fl] script: root=iscsi: exports ROOT=/dev/sdz for LUN 1" \
		eval 'test "$rc" = 0 && has "$(cat "$r/conf/param.conf")" "export ROOT=/dev/sdz"'

	run "$conf
ISER_RXE_NETDEV=eth1" "" ok 1
	check "[$fl] script: ISER_RXE_NETDEV=eth1: rdma_rxe and rdma link add" has "$calls" \
		"modprobe rdma_rxe" "rdma link add rxe0 type rxe netdev eth1"
	run "$conf" "iser_rxe_netdev=eth7" ok 1
	check "[$fl] script: iser_rxe_netdev=eth7 (no such device): panic" \
		eval 'test "$rc" = 1 && like "$out" "ISER_RXE_NETDEV=eth7: no such network device" >/dev/null'

	run "$conf" "" ok 0
	check "[$fl] script: no RDMA device: panic after ${secs}s (bound 2s + slack)" \
		eval 'test "$rc" = 1 -a "$secs" -le 6 && like "$out" "no RDMA device after 2s" >/dev/null && ! like "$calls" iscsistart >/dev/null'
	run "$conf" "" ok down
	check "[$fl] script: RDMA port DOWN: panic naming the port" \
		eval 'test "$rc" = 1 && like "$out" "mlx5_0/1 1: DOWN" >/dev/null'
	run "$conf" "" chap 1
	check "[$fl] script: failed CHAP: panic with the CHAP hint" \
		eval 'test "$rc" = 1 && like "$out" "CHAP failed or not allowed: check ISCSI_USERNAME" >/dev/null'
	run "$conf" "" target 1
	check "[$fl] script: wrong target name: panic with the target hint" \
		eval 'test "$rc" = 1 && like "$out" "the target refused the login for good: check ISCSI_TARGET_NAME" >/dev/null'
	run "$conf" "" lio-target 1
	check "[$fl] script: wrong target name, LIO's 03/01 reject: panic with the target hint" \
		eval 'test "$rc" = 1 && like "$out" "as LIO does for a target name it does not serve: check ISCSI_TARGET_NAME" >/dev/null'
	run "$conf" "" unreach 1
	check "[$fl] script: unreachable portal: panic with the portal hint" \
		eval 'test "$rc" = 1 && like "$out" "no iSER connection to the portal" >/dev/null'
	run "ISCSI_TRANSPORT=iser" "iscsi_auto" ok 1
	check "[$fl] script: iscsi_auto: network from the iBFT (no configure_networking), iscsistart -b over iSER" \
		eval 'test "$rc" = 0 && has "$calls" "modprobe iscsi_ibft" "iscsistart -N" "iscsistart -b -P iface.transport_name=iser -P node.session.initial_login_retry_max=4 -P node.conn[0].timeo.login_timeout=15" && ! like "$calls" configure_networking >/dev/null'
	# iser_rxe_netdev=ibft: the interface with the MAC of the iBFT's NIC
	# (the one target0 names first, then any); fake iBFT in /sys
	mk_ibft() {
		mkdir -p "$r/sys/firmware/ibft/ethernet0" "$r/sys/firmware/ibft/ethernet1" \
			"$r/sys/firmware/ibft/target0"
		echo 52:54:00:00:00:aa >"$r/sys/firmware/ibft/ethernet0/mac"
		echo 52:54:00:00:00:bb >"$r/sys/firmware/ibft/ethernet1/mac"
		echo "$1" >"$r/sys/firmware/ibft/target0/nic-assoc"
		echo 52:54:00:00:00:11 >"$r/sys/class/net/eth0/address"
		echo 52:54:00:00:00:bb >"$r/sys/class/net/eth1/address"
		mkdir -p "$r/sys/class/net/eth2"
		echo 52:54:00:00:00:aa >"$r/sys/class/net/eth2/address"
	}
	run "ISCSI_TRANSPORT=iser" "iscsi_auto iser_rxe_netdev=ibft" ok 1
	check "[$fl] script: iser_rxe_netdev=ibft without an iBFT: panic before any login" \
		eval 'test "$rc" = 1 && like "$out" "no network device has the MAC address of an iBFT NIC" >/dev/null && ! like "$calls" "rdma link" >/dev/null && ! like "$calls" "iscsistart -b" >/dev/null'
	for na in 0 1; do
		nd=eth2
		[ $na = 1 ] && nd=eth1
		RUN_IBFT=$na run "ISCSI_TRANSPORT=iser" "iscsi_auto iser_rxe_netdev=ibft" ok 1
		check "[$fl] script: iser_rxe_netdev=ibft, target0 on iBFT NIC $na: soft-RoCE on $nd, then iscsistart -b" \
			eval 'test "$rc" = 0 && has "$calls" "iscsistart -N" "rdma link add rxe0 type rxe netdev $nd" "iscsistart -b -P iface.transport_name=iser -P node.session.initial_login_retry_max=4 -P node.conn[0].timeo.login_timeout=15" && like "$out" "soft-RoCE on $nd, the iBFT" >/dev/null'
	done
	run "$conf" "" exists 1
	check "[$fl] script: a session that exists already (error 15) is used" \
		eval 'test "$rc" = 0 && like "$out" "a session exists already; using it" >/dev/null'
	run "$conf" "" hang 1
	check "[$fl] script: iscsistart that hangs is killed: panic after ${secs}s (bound 3s + slack)" \
		eval 'test "$rc" = 1 -a "$secs" -le 8 && like "$out" "iscsistart killed after 3s" >/dev/null'
	run "ISCSI_TRANSPORT=iser" "" ok 1
	check "[$fl] script: iser without a target: panic before touching anything" \
		eval 'test "$rc" = 1 && like "$out" "bad iSER boot configuration" >/dev/null && ! like "$calls" modprobe >/dev/null'
	run "$conf" "root=iscsi:1.2.3.4" ok 1
	check "[$fl] script: malformed root=iscsi: panic" \
		eval 'test "$rc" = 1 && like "$out" "bad root=iscsi: parameter" >/dev/null'
	run "$conf" "iscsi_transport=ib" ok 1
	check "[$fl] script: unknown transport: panic" \
		eval 'test "$rc" = 1 && like "$out" "only tcp and iser are known" >/dev/null'
}
if bb=$(command -v busybox) && file -L "$bb" | grep -q 'statically linked'; then
	chroot_tests busybox
else
	ko "a static busybox for the chroot (busybox-static)"
fi
if [ -x /usr/lib/klibc/bin/sh ]; then
	chroot_tests klibc
else
	ko "klibc's tools for the chroot (klibc-utils)"
fi

# ---- 4. dracut hooks with a stubbed dracut-lib
# dr CMDLINE SYSFS-SETUP: runs iser_dracut_cmdline, then
# iser_dracut_online eth0; output with DIE:/INFO: lines, calls logged.
dr() {
	rm -rf "$tmp/dr"
	mkdir -p "$tmp/dr/sys/class/net/eth0" "$tmp/dr/cmdline.d"
	case $2 in
	active)
		mkdir -p "$tmp/dr/sys/class/infiniband/rxe0/ports/1"
		echo "4: ACTIVE" >"$tmp/dr/sys/class/infiniband/rxe0/ports/1/state"
		;;
	esac
	printf '%s\n' "$1" >"$tmp/dr/cmdline"
	(cd "$tmp/dr" && ISER_SYSFS=$tmp/dr/sys ISER_CMDLINE_D=$tmp/dr/cmdline.d \
		ISER_RDMA_WAIT=2 timeout 30 dash -c '
		getarg() {
			for a in $(cat cmdline); do
				case $a in "$1"*) echo "${a#"$1"}"; return 0 ;; esac
			done
			return 1
		}
		die() { echo "DIE: $*"; exit 1; }
		info() { echo "INFO: $*"; }
		warn() { echo "WARN: $*"; }
		modprobe() { echo "modprobe $*" >>calls; }
		rdma() { echo "rdma $*" >>calls; }
		. "$1"
		iser_dracut_cmdline
		iser_dracut_online eth0
		echo END
	' sh "$dracut/iser-lib.sh" 2>&1)
}
out=$(dr "rd.iscsi.transport=iser netroot=iscsi:10.0.0.1::::iqn.a:b" active)
check "dracut: rd.iscsi.transport=iser writes rd.iscsi.param=iface.transport_name=iser" \
	eval 'like "$out" END >/dev/null && like "$(cat "$tmp/dr/cmdline.d/95-iser.conf")" "rd.iscsi.param=iface.transport_name=iser" >/dev/null && has "$(cat "$tmp/dr/calls")" "modprobe ib_iser"'
out=$(dr "netroot=iscsi:10.0.0.1::::iqn.a:b" none)
check "dracut: without rd.iscsi.transport nothing is written or waited for" \
	eval 'like "$out" END >/dev/null && [ ! -e "$tmp/dr/cmdline.d/95-iser.conf" ] && [ ! -e "$tmp/dr/calls" ]'
out=$(dr "rd.iscsi.transport=roce" none)
check "dracut: unknown transport dies with a message" like "$out" "DIE: iser: rd.iscsi.transport=roce: only tcp and iser are known"
out=$(dr "rd.iscsi.transport=iser" none)
check "dracut: no RDMA device dies after the bounded wait" like "$out" "DIE: iser: no RDMA device after 2s"
out=$(dr "rd.iscsi.transport=iser rd.iser.rxe=eth0" active)
check "dracut: rd.iser.rxe=eth0 creates the soft-RoCE device" \
	has "$(cat "$tmp/dr/calls" 2>/dev/null)" "modprobe rdma_rxe" "rdma link add rxe0 type rxe netdev eth0"
out=$(dr "rd.iscsi.transport=iser rd.iser.rxe=eth9" active)
check "dracut: rd.iser.rxe of a missing device dies" like "$out" "DIE: iser: rd.iser.rxe=eth9: no such network device"

# ---- 5. mkinitramfs with the hook
mods=$top/build/$krel
if [ -z "$krel" ] || [ ! -f "$mods/drivers/initiator/ib_iser.ko" ]; then
	ko "modules built for ${krel:-6.1} in $mods (scripts/build-modules.sh /usr/src/linux-headers-<6.1 release>)"
	finish
fi
if [ ! -d "/lib/modules/$krel/kernel" ]; then
	ko "kernel $krel installed (/lib/modules/$krel)"
	finish
fi
# A DKMS-like scratch layout of our modules
mkdir -p "$tmp/updates/dkms"
cp "$mods/drivers/core/iser_dm.ko" "$mods/drivers/initiator/ib_iser.ko" \
	"$mods/drivers/target/ib_isert.ko" "$tmp/updates/dkms/"

# mkimage NAME MODULES ISCSI-CONF [NO_ISCSI]: image in $tmp/NAME.img
mkimage() {
	local cd=$tmp/conf-$1
	mkdir -p "$cd/hooks" "$cd/scripts/init-premount" "$cd/scripts/local-bottom" "$cd/conf.d"
	printf 'MODULES=%s\nBUSYBOX=auto\nCOMPRESS=zstd\nKEYMAP=n\nDEVICE=\nNFSROOT=auto\nRUNSIZE=10%%\nFSTYPE=auto\n' \
		"$2" >"$cd/initramfs.conf"
	cp "$hook" "$cd/hooks/iser"
	cp "$premount" "$cd/scripts/init-premount/iser"
	cp "$bottom" "$cd/scripts/local-bottom/iser"
	cp "$funcs" "$cd/scripts/iser-functions"
	[ -n "${4:-}" ] && echo "NO_ISCSI_IN_INITRAMFS=yes" >"$cd/conf.d/open-iscsi"
	printf '%s\n' "$3" >"$tmp/$1.iscsi.initramfs"
	if ! ISER_MODULES_FROM=$tmp/updates/dkms ISER_ISCSI_CONF=$tmp/$1.iscsi.initramfs \
		TMPDIR=$tmp nice -n 19 mkinitramfs -d "$cd" -o "$tmp/$1.img" "$krel" \
		>"$tmp/$1.log" 2>&1; then
		sed 's/^/  /' "$tmp/$1.log"
		return 1
	fi
	lsinitramfs "$tmp/$1.img" | sed 's|^\./||' >"$tmp/$1.list"
	mkdir -p "$tmp/$1.x"
	unmkinitramfs "$tmp/$1.img" "$tmp/$1.x" >/dev/null 2>&1
	# unmkinitramfs puts the main archive in main/ when there is an early one
	if [ -d "$tmp/$1.x/main" ]; then mv "$tmp/$1.x" "$tmp/$1.y" && mv "$tmp/$1.y/main" "$tmp/$1.x"; fi
}
inlist() { grep -qE "$2" "$tmp/$1.list"; }
# all_in NAME MODULE...: every MODULE.ko is in image NAME
all_in() {
	local img=$1 m
	shift
	for m in "$@"; do
		inlist "$img" "/$m\\.ko$" || { echo "  missing: $m.ko"; return 1; }
	done
}

rxeconf="ISCSI_TARGET_NAME=$tgt
ISCSI_TARGET_IP=192.168.1.10
ISCSI_TRANSPORT=iser
ISER_RXE_NETDEV=eth0"
if check "mkinitramfs -d (MODULES=most, ISER_RXE_NETDEV=eth0) for $krel" mkimage most most "$rxeconf"; then
	K="usr/lib/modules/$krel"
	check "image has our iser_dm.ko and ib_iser.ko in updates/" \
		eval 'inlist most "^$K/updates/iser/iser_dm\.ko$" && inlist most "^$K/updates/iser/ib_iser\.ko$"'
	check "image has no ib_isert.ko of ours (the target is not needed to boot)" \
		eval '! inlist most "^$K/updates/.*ib_isert\.ko"'
	check "image has rdma_cm, ib_core, libiscsi, scsi_transport_iscsi, iscsi_ibft" \
		all_in most rdma_cm ib_core libiscsi scsi_transport_iscsi iscsi_ibft
	check "image has rdma_rxe and the rdma tool (ISER_RXE_NETDEV set)" \
		eval 'inlist most "/rdma_rxe\.ko$" && inlist most "^usr/sbin/rdma$"'
	check "image has mlx5_ib (MODULES=most)" inlist most "/mlx5_ib\.ko$"
	check "image has iscsistart" inlist most "^usr/sbin/iscsistart$"
	check "image has scripts/init-premount/iser and scripts/iser-functions" \
		eval 'inlist most "^scripts/init-premount/iser$" && inlist most "^scripts/iser-functions$"'
	check "image's init-premount ORDER runs iser" \
		grep -q '^/scripts/init-premount/iser ' "$tmp/most.x/scripts/init-premount/ORDER"
	check "image's local-bottom ORDER runs iser" \
		grep -q '^/scripts/local-bottom/iser ' "$tmp/most.x/scripts/local-bottom/ORDER"
	check "image's /etc/iscsi.initramfs is the configuration given" \
		cmp -s "$tmp/most.iscsi.initramfs" "$tmp/most.x/etc/iscsi.initramfs"
	check "image has the initiator name" test -s "$tmp/most.x/etc/initiatorname.iscsi"
	dep=$(modprobe -d "$tmp/most.x" -S "$krel" --show-depends ib_iser 2>&1)
	check "in the image, modprobe ib_iser loads ours (updates/iser), after iser_dm" \
		eval 'like "$dep" "updates/iser/iser_dm.ko" >/dev/null && like "$dep" "updates/iser/ib_iser.ko" >/dev/null && ! like "$dep" "ulp/iser/ib_iser.ko" >/dev/null'
	check "image's ib_iser.ko is built for $krel" \
		eval 'modinfo -F vermagic "$tmp/most.x/$K/updates/iser/ib_iser.ko" | grep -q "^$krel "'
	check "the image's scripts are the repository's" \
		eval 'cmp -s "$premount" "$tmp/most.x/scripts/init-premount/iser" && cmp -s "$bottom" "$tmp/most.x/scripts/local-bottom/iser" && cmp -s "$funcs" "$tmp/most.x/scripts/iser-functions"'
fi

if check "mkinitramfs -d (MODULES=list, no ISER_RXE_NETDEV)" mkimage list list "ISCSI_TRANSPORT=iser"; then
	check "without ISER_RXE_NETDEV: no rdma_rxe, no rdma tool" \
		eval '! inlist list "/rdma_rxe\.ko$" && ! inlist list "^usr/sbin/rdma$"'
	check "MODULES=list: only loaded RDMA drivers (no mlx5_ib here)" \
		eval '! inlist list "/mlx5_ib\.ko$" || grep -q "^mlx5_ib " /proc/modules'
	check "MODULES=list: our modules all the same" inlist list "updates/iser/ib_iser\.ko$"
fi

if check "mkinitramfs -d with NO_ISCSI_IN_INITRAMFS=yes" mkimage noiscsi list "$rxeconf" yes; then
	# (Debian's hook reads /etc/initramfs-tools/conf.d/open-iscsi, not
	# the scratch one, so it still copies iscsistart here.)
	check "NO_ISCSI_IN_INITRAMFS=yes: none of our modules, no rdma tool" \
		eval '! inlist noiscsi "updates/iser/" && ! inlist noiscsi "^usr/sbin/rdma$"'
fi

finish
