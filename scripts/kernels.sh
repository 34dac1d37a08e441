#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian 12 kernels the project builds for and tests on.
#
# Sourced by the other scripts.  Sets:
#   KREL_61   release of the newest installed Debian 6.1 kernel (e.g. 6.1.0-56-amd64)
#   KREL_612  release of the 6.12 kernel (e.g. 6.12.107+deb12-amd64)
#   KERNEL_PKGS_612  the packages that provide the 6.12 image and headers
#
# The 6.12 kernel is pinned (ISER_612_VERSION) so that every run tests the
# same kernel; when that version has left the archive the newest 6.12 that
# Debian offers is used instead.

ISER_612_VERSION=${ISER_612_VERSION:-6.12.107+deb12}

kernels_pick_612() {
	local v=$ISER_612_VERSION
	if ! dpkg-query -W -f='${Status}' "linux-headers-$v-amd64" 2>/dev/null |
		grep -q 'install ok installed'; then
		if ! apt-cache show "linux-headers-$v-amd64" >/dev/null 2>&1; then
			v=$(apt-cache search --names-only \
				'^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' 2>/dev/null |
				awk '{print $1}' | sed 's/^linux-headers-//; s/-amd64$//' |
				sort -V | tail -n 1)
		fi
	fi
	[ -n "$v" ] || v=$ISER_612_VERSION
	KREL_612="$v-amd64"
	KERNEL_PKGS_612="linux-headers-$KREL_612 linux-image-$KREL_612-unsigned"
}

kernels_pick_61() {
	KREL_61=$(find /usr/src -maxdepth 1 -name 'linux-headers-6.1.0-*-amd64' \
		-printf '%f\n' 2>/dev/null | sed 's/^linux-headers-//' |
		sort -V | tail -n 1)
}

kernels_pick_612
kernels_pick_61
