#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host check of the iser-dkms package, without installing it:
#   - make deb builds it;
#   - lintian reports no error (E:) for the .deb and the .changes;
#   - the package holds dkms.conf, the sources and the Kbuild files under
#     /usr/src/iser-<version>/, the way-back example, the initramfs-tools
#     hook and boot script and the dracut module (executable where they
#     must be) with the update-initramfs trigger, and no tests/ or
#     build/ and no objects;
#   - the dkms.conf in the package names the three modules;
#   - for each Debian 12 kernel of scripts/kernels.sh whose headers are
#     installed, dkms adds and builds the package's sources (modules of
#     the package's version, MODULE_VERSION) in a scratch
#     DKMS tree (--dkmstree, --sourcetree in a temporary directory), so
#     /var/lib/dkms, /usr/src and /lib/modules stay untouched. dkms signs
#     the built modules with its key (/var/lib/dkms/mok.key), and creates
#     that key the first time, as any dkms build does.
#
# Prints PASS/FAIL lines, ends with "N passed, N failed"; exit status 1
# on any failure.

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

for tool in dpkg-buildpackage dh_dkms dkms lintian fakeroot; do
	command -v "$tool" >/dev/null ||
		{ ko "$tool is installed (run scripts/deps.sh)"; finish; }
done

ver=$(cat "$top/VERSION")
deb=$top/build/deb/iser-dkms_${ver}_all.deb
src=usr/src/iser-$ver
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. build
if make -s -C "$top" deb >"$tmp/make-deb.log" 2>&1 && [ -f "$deb" ]; then
	ok "make deb builds $(basename "$deb")"
else
	sed 's/^/  /' "$tmp/make-deb.log"
	ko "make deb builds $(basename "$deb")"
	finish
fi

# 2. lintian
lintian "$deb" "$top"/build/deb/iser_"${ver}"_*.changes >"$tmp/lintian.log" 2>&1
if grep -q '^E:' "$tmp/lintian.log"; then
	grep '^E:' "$tmp/lintian.log" | sed 's/^/  /'
	ko "lintian reports no errors"
else
	ok "lintian reports no errors"
fi
grep '^W:' "$tmp/lintian.log" | sed 's/^/  lintian /'

# 3. contents
dpkg-deb -c "$deb" >"$tmp/contents-long"
awk '{print $NF}' "$tmp/contents-long" | sed 's|^\./||' >"$tmp/contents"
# shellcheck disable=SC2317 # both are called through check()
has() { grep -qx "$1" "$tmp/contents"; }
# shellcheck disable=SC2317
lacks() { ! grep -qE "$1" "$tmp/contents"; }
check "package has $src/dkms.conf" has "$src/dkms.conf"
for f in Kbuild VERSION drivers/core/Kbuild drivers/initiator/Kbuild \
	drivers/target/Kbuild include/isdm/iser_wire.h drivers/core/wire.c \
	drivers/initiator/main.c drivers/target/main.c; do
	check "package has $src/$f" has "$src/$f"
done
n_src=$(cd "$top" && find drivers include -name '*.[ch]' | wc -l)
n_pkg=$(grep -cE "^$src/(drivers|include)/.*\.[ch]$" "$tmp/contents")
check "package has all $n_src sources (has $n_pkg)" test "$n_src" = "$n_pkg"
check "package has the way-back example" \
	has usr/share/doc/iser-dkms/examples/iser-intree.conf
for f in usr/share/initramfs-tools/hooks/iser \
	usr/share/initramfs-tools/scripts/init-premount/iser \
	usr/share/initramfs-tools/scripts/local-bottom/iser \
	usr/lib/dracut/modules.d/95iser/module-setup.sh \
	usr/lib/dracut/modules.d/95iser/parse-iser.sh \
	usr/lib/dracut/modules.d/95iser/iser-online.sh; do
	check "package has $f, executable" \
		grep -qE "^-rwxr-xr-x .* \./$f\$" "$tmp/contents-long"
done
check "package has usr/share/initramfs-tools/scripts/iser-functions" \
	has usr/share/initramfs-tools/scripts/iser-functions
check "package has usr/lib/dracut/modules.d/95iser/iser-lib.sh" \
	has usr/lib/dracut/modules.d/95iser/iser-lib.sh
check "package triggers update-initramfs (its hook changes the initramfs)" \
	eval "dpkg-deb --ctrl-tarfile '$deb' | tar -xOf - ./triggers >'$tmp/triggers' && grep -qx 'activate-noawait update-initramfs' '$tmp/triggers'"
check "package has no tests/" lacks '(^|/)tests/'
check "package has no build/" lacks '(^|/)build/'
check "package has no objects" lacks '\.(o|ko|mod|mod\.c|cmd)$|Module\.symvers$'
check "package has no .git" lacks '(^|/)\.git'

# 4. dkms.conf as shipped
dpkg-deb -x "$deb" "$tmp/root"
conf=$tmp/root/$src/dkms.conf
check "dkms.conf version is $ver" grep -qx "PACKAGE_VERSION=\"$ver\"" "$conf"
for m in iser_dm ib_iser ib_isert; do
	check "dkms.conf names $m" grep -qE "^BUILT_MODULE_NAME\[[0-9]\]=\"$m\"$" "$conf"
done
check "dkms.conf has AUTOINSTALL=yes" grep -qx 'AUTOINSTALL="yes"' "$conf"

# 5. dkms build from the package's sources in a scratch tree
dk=(--dkmstree "$tmp/dkms" --sourcetree "$tmp/root/usr/src")
mkdir -p "$tmp/dkms"
if dkms add -m iser -v "$ver" "${dk[@]}" >"$tmp/dkms-add.log" 2>&1; then
	ok "dkms add (scratch tree)"
else
	sed 's/^/  /' "$tmp/dkms-add.log"
	ko "dkms add (scratch tree)"
	finish
fi
for krel in "$KREL_61" "$KREL_612"; do
	kdir=/usr/src/linux-headers-$krel
	if [ -z "$krel" ] || [ ! -f "$kdir/Makefile" ]; then
		ko "dkms build for ${krel:-6.1}: headers not installed ($kdir)"
		continue
	fi
	log=$tmp/dkms-build-$krel.log
	if dkms build -m iser -v "$ver" -k "$krel" --kernelsourcedir "$kdir" \
		"${dk[@]}" >"$log" 2>&1; then
		missing=
		for m in iser_dm ib_iser ib_isert; do
			f=$(compgen -G "$tmp/dkms/iser/$ver/$krel/*/module/$m.ko*" | head -n 1)
			if [ -z "$f" ]; then
				missing="$missing $m"
			elif [ "$(modinfo -F version "$f" 2>/dev/null)" != "$ver" ]; then
				missing="$missing $m(version '$(modinfo -F version "$f" 2>/dev/null)', not $ver)"
			fi
		done
		if [ -z "$missing" ]; then
			ok "dkms build for $krel (three modules, version $ver)"
		else
			ko "dkms build for $krel: missing$missing"
		fi
	else
		tail -n 30 "$log" | sed 's/^/  /'
		[ -f "$tmp/dkms/iser/$ver/build/make.log" ] &&
			grep -E 'error|warning' "$tmp/dkms/iser/$ver/build/make.log" | head -n 20
		ko "dkms build for $krel"
	fi
done

finish
