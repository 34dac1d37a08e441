#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copy the files a DKMS build needs into DEST (e.g. /usr/src/iser-<ver>):
# Kbuild, Makefile, drivers/, include/, dkms.conf, VERSION, LICENSE.
# Only sources and Kbuild files are taken from drivers/ and include/, no
# objects from an earlier in-tree build.
#
#   scripts/dkms-tree.sh DEST

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:?usage: dkms-tree.sh DEST}

ver=$(cat "$top/VERSION")
conf_ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
if [ "$ver" != "$conf_ver" ]; then
	echo "dkms-tree: VERSION ($ver) and dkms.conf PACKAGE_VERSION ($conf_ver) differ" >&2
	exit 1
fi

hdr_ver=$(sed -n 's/^#define ISDM_VERSION[[:space:]]*"\(.*\)"$/\1/p' "$top/include/isdm/isdm.h")
if [ "$ver" != "$hdr_ver" ]; then
	echo "dkms-tree: VERSION ($ver) and ISDM_VERSION in include/isdm/isdm.h ($hdr_ver), the modules' MODULE_VERSION, differ" >&2
	exit 1
fi

mkdir -p "$dest"
for f in Kbuild Makefile dkms.conf VERSION LICENSE; do
	install -m 644 "$top/$f" "$dest/$f"
done
(cd "$top" && find drivers include -type f \( -name '*.c' -o -name '*.h' -o -name Kbuild \) -print0) |
	while IFS= read -r -d '' f; do
		install -D -m 644 "$top/$f" "$dest/$f"
	done
