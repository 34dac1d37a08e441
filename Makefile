# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree iSER initiator (ib_iser.ko), target (ib_isert.ko) and their
# shared datamover core (iser_dm.ko).
#
#   make                 build for KDIR (default: the running kernel if its
#                        headers are installed, else the newest Debian ones)
#   make modules-all     build for Debian 12's 6.1 and 6.12 with W=1
#   make sparse          sparse (C=2) on both kernels
#   make siw             soft-iWARP (siw.ko) from Debian's linux-source for
#                        6.1 and 6.12, for the guest rig's iWARP rows
#   make unit            userspace unit tests (cmocka, ASan + UBSan)
#   make fuzz            libFuzzer targets, FUZZ_SECONDS each
#   make vm-check        end-to-end scenarios in qemu guests, both kernels
#   make vm-full         the same plus the slower parameter variants and
#                        the soft-iWARP rows (builds siw.ko first)
#   make vm-selftest     the rig's gates tried on purpose (must catch a
#                        WARNING, a taint, a console-only line, a crash,
#                        a late oops, a lost BEGIN marker; bad usage)
#   make check           all of the above; installs missing packages first
#   make check-debug     the default guest scenarios on a debug kernel
#                        (KASAN, lockdep; built from linux-source-6.1)
#   make demo            the main job: iSER target + login + verified I/O
#   make bench           ours side by side with the in-tree pair, as ratios
#                        (BENCH_ARGS="--kernel 6.1 --rounds 5 --runtime 20")
#   make install         modules into /lib/modules/<release>/updates/
#   make dkms-install    sources to /usr/src/iser-<version>, then dkms add,
#                        build and install for KREL (default: KDIR's release)
#   make dkms-remove     dkms remove iser/<version> --all, rm /usr/src tree
#   make deb             the iser-dkms Debian package into build/deb/
#   make deb-check       build it, lintian, its contents, a dkms build of
#                        its sources for 6.1 and 6.12 in a scratch tree
#   make initramfs-check the boot-from-SAN pieces (initramfs/) on the host:
#                        script parsing, the boot script in a chroot with
#                        stubs, the dracut hooks, mkinitramfs for 6.1 with
#                        the hook (needs root and the 6.1 modules built)
#   make checkpatch      the kernel's checkpatch.pl on every source file

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

KDIR ?= $(shell \
	if [ -d /lib/modules/$$(uname -r)/build ]; then \
		readlink -f /lib/modules/$$(uname -r)/build; \
	else \
		ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1; \
	fi)
KREL = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
FUZZ_SECONDS ?= 20
VERSION := $(shell cat $(TOP)/VERSION)
DKMS_SRC = /usr/src/iser-$(VERSION)

.PHONY: all modules modules-all sparse siw unit fuzz vm-tools vm-check vm-full vm-selftest check check-debug demo bench \
	install dkms-install dkms-remove deb deb-check initramfs-check checkpatch deps clean

all: modules

modules:
	@test -n "$(KDIR)" || { echo "no kernel headers found: run 'bash scripts/deps.sh' or set KDIR=" >&2; exit 1; }
	@$(TOP)/scripts/build-modules.sh $(KDIR)

deps:
	@$(TOP)/scripts/deps.sh

modules-all:
	@$(TOP)/scripts/for-kernels.sh build-modules --strict

sparse:
	@$(TOP)/scripts/for-kernels.sh build-modules --sparse

siw:
	@$(TOP)/scripts/build-siw.sh

unit:
	@$(MAKE) -s -C $(TOP)/tests/unit run

fuzz:
	@$(MAKE) -s -C $(TOP)/tests/fuzz run FUZZ_SECONDS=$(FUZZ_SECONDS)

vm-tools:
	@$(MAKE) -s -C $(TOP)/tests/vm/tools

vm-check: modules-all vm-tools
	@$(TOP)/tests/vm/vm-check.sh

vm-full: modules-all vm-tools siw
	@$(TOP)/tests/vm/vm-check.sh --full

vm-selftest:
	@$(TOP)/tests/vm/selftest.sh

checkpatch:
	@$(TOP)/scripts/checkpatch.sh

check:
	@$(TOP)/scripts/check.sh

check-debug:
	@$(TOP)/scripts/check-debug.sh $(CHECK_DEBUG_ARGS)

demo: deps modules-all vm-tools
	@$(TOP)/tests/vm/demo.sh

bench: deps modules-all vm-tools
	@$(TOP)/tests/vm/bench.sh $(BENCH_ARGS)

install: modules
	@test -n "$(KREL)" || { echo "cannot tell the kernel release of $(KDIR)" >&2; exit 1; }
	install -d $(DESTDIR)/lib/modules/$(KREL)/updates
	install -m 644 $(TOP)/build/$(KREL)/drivers/core/iser_dm.ko \
		$(TOP)/build/$(KREL)/drivers/initiator/ib_iser.ko \
		$(TOP)/build/$(KREL)/drivers/target/ib_isert.ko \
		$(DESTDIR)/lib/modules/$(KREL)/updates/
	$(if $(DESTDIR),,depmod -a $(KREL))

# A second dkms-install replaces the version already added (new sources).
dkms-install:
	@test -n "$(KREL)" || { echo "cannot tell the kernel release of $(KDIR): set KREL=" >&2; exit 1; }
	@command -v dkms >/dev/null || { echo "dkms is not installed (apt-get install dkms)" >&2; exit 1; }
	@if dkms status -m iser -v $(VERSION) | grep -q .; then \
		dkms remove -m iser -v $(VERSION) --all; fi
	rm -rf $(DKMS_SRC)
	$(TOP)/scripts/dkms-tree.sh $(DKMS_SRC)
	dkms add -m iser -v $(VERSION)
	dkms build -m iser -v $(VERSION) -k $(KREL)
	dkms install -m iser -v $(VERSION) -k $(KREL)

deb:
	@$(TOP)/scripts/make-deb.sh

deb-check:
	@$(TOP)/tests/pkg/deb-check.sh

initramfs-check:
	@$(TOP)/tests/pkg/initramfs-check.sh

dkms-remove:
	@if dkms status -m iser -v $(VERSION) | grep -q .; then \
		dkms remove -m iser -v $(VERSION) --all; fi
	rm -rf $(DKMS_SRC)

clean:
	rm -rf $(TOP)/build
	@$(MAKE) -s -C $(TOP)/tests/unit clean
	@$(MAKE) -s -C $(TOP)/tests/fuzz clean
