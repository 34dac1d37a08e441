#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install every Debian package the project needs (scripts/packages.txt plus
# the pinned 6.12 kernel of scripts/kernels.sh).  Idempotent: when all is
# installed it only runs dpkg-query and returns within a second.

set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/kernels.sh"

want=$(grep -v '^[[:space:]]*#' "$here/packages.txt" | awk 'NF {print $1}')
want="$want $KERNEL_PKGS_612"

missing=
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run as root (or install them) and try again" >&2
	exit 1
fi

echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y $missing >/tmp/iser-deps.log 2>&1; then
	apt-get update >>/tmp/iser-deps.log 2>&1 || true
	# the pinned 6.12 may have left the archive: pick again after update
	. "$here/kernels.sh"
	missing=$(echo "$missing" | sed 's/linux-[a-z]*-6\.12[^ ]*//g')
	missing="$missing $KERNEL_PKGS_612"
	if ! apt-get install -y $missing >>/tmp/iser-deps.log 2>&1; then
		echo "deps: apt-get install failed; the last lines of /tmp/iser-deps.log:" >&2
		tail -n 20 /tmp/iser-deps.log >&2
		exit 1
	fi
fi
echo "deps: done"
