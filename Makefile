# SPDX-License-Identifier: GPL-2.0-only
#
# kvm-irqbypass: build Debian's irqbypass, kvm, kvm-intel, kvm-amd,
# vfio-pci-core and vfio-pci with the kit's changes, out of tree.
#
#   make help                 this list
#   make                      build for Debian 6.12 generic (default; also
#                             make all, make modules)
#   make KLINE=6.1 FLAVOUR=rt the other targets (KLINE 6.12|6.1|7.3, FLAVOUR
#                             generic|rt, DEBIAN 12|13: 7.3 and DEBIAN=13 build
#                             in a trixie root, scripts/kit/root.sh)
#   make list                 kernel packages apt offers for each target
#   make check                build, sparse, checkpatch, docs, testbed selftests;
#                             installs what it needs, changes nothing else
#   make symvers              the exported symbols' CRCs and the shared structs'
#                             layouts (BTF) against Debian's modules
#   make sparse               sparse over the build, against the stock baseline
#   make checkpatch           scripts/checkpatch.pl --strict on our files and patches
#   make testbed [CMD=...]    boot the QEMU testbed with the kit's modules and
#                             run CMD there (default: the module checks)
#   make check TESTBED=bochs  the same, the testbed on bochs (kvm_intel on
#                             emulated VMX) instead of QEMU (kvm_amd, SVM);
#                             TESTBED="qemu bochs" runs both;
#   make check TESTBED=bochs3 the same on Bochs 3.0 (make bochs): kvm_intel
#                             with APICv (posted interrupts), two CPUs
#   make selftests            build the selftests into build/selftests (no run)
#   make check-all            make check for all four targets (generic ones
#                             on qemu and bochs, rt on qemu; 6.12 also on
#                             bochs3)
#   make check-debug          make check on the debug kernel (lockdep, KASAN, ...),
#                             with the reliability campaign
#   make campaign [MODULES=stock] the reliability campaign alone in the testbed
#   make install              into /lib/modules/<krel>/updates (root)
#   make uninstall            remove what make install installed (root)
#   make demo [DEMO=msi,rt]   the interrupt-path matrix: build/report/matrix.md
#   make bench [N=500]        irqlat on generic+rt, stock+kit: build/report/matrix.csv
#   make irqlat               build tools/irqlat (the benchmark VMM)
#   make bench-irqbypass      stock vs kit irqbypass manager: build/report/irqbypass.csv
#   make bench-lifecycle      irqfd/VFIO pairing setup and teardown, stock vs kit,
#                             generic+rt: build/report/lifecycle.csv
#   make bench-rt             cyclictest on the rt kernel, quiet and under a
#                             guest's MSI storm, stock vs kit: build/report/rt.csv
#                             (RT_SECONDS=5)
#   make netbench             TCP_RR through an assigned e1000e into an L2 Linux
#                             guest (QEMU), stock vs kit: build/report/tcprr.csv
#   make conformance          kvm-unit-tests and the distro's KVM selftests in the
#                             testbed, stock vs kit: build/report/conformance.csv
#                             (KLINE=all, CONFORMANCE_SUITES=kut|selftests,
#                             CONFORMANCE_TESTS="a b", KUT_SRC=checkout)
#   make bochs                Bochs 3.0 (VMX with APICv) with patches/bochs-3.0/
#                             into build/bochs/, for make check TESTBED=bochs3
#   make qemu                 Debian's QEMU source with patches/qemu-<version>/
#                             (split-irqchip INTx resampled in the kernel) into
#                             build/qemu/ (x86_64, KVM only; never installed)
#   make check-qemu           the kit's QEMU as the VMM of an L2 guest with an
#                             assigned edu in the testbed, kit and stock modules
#                             (not in make check: the QEMU build takes minutes)
#   make deb                  build/deb/kvm-irqbypass-dkms_<version>_all.deb (dh_dkms)
#   make status               kvm-irqbypass-status: whose modules modprobe loads
#                             per kernel, the running kernel's vectors and a
#                             verdict (STATUS_ARGS="--trace 10": hits, misses)
#   make check-deb            apt install the .deb (dkms builds it), check, apt
#                             remove, in a sandbox whose writes are discarded:
#                             the machine is not changed (root; several minutes)
#   make guest                build/guest/drivers/virtio/virtio_mmio.ko: the 6.12
#                             guest driver with the MSI/doorbell extension
#                             (GUEST_SPARSE=1: with sparse)
#   make check-guest          that module in QEMU microvm guests: the compatibility
#                             matrix with Debian's QEMU and the kit's (make qemu)
#                             MSI/doorbell device, and Debian's driver (TAP)
#   make mmiobench            TCP_RR into an L2 microvm guest with virtio-net and
#                             vhost-net per virtio transport (pci, mmio, mmio-msi,
#                             mmio-msi-doorbell) x kernel-irqchip on/split, one
#                             testbed boot: build/report/mmio.csv
#                             (MMIOBENCH_REPS, MMIOBENCH_COMBOS)
#   make clean                the builds, reports and testbed runs (not the
#                             extracted sources or the downloaded images)
#   make distclean            all of build/

KLINE ?= 6.12
FLAVOUR ?= generic
export KLINE FLAVOUR
ifdef KREL
export KREL
endif
ifdef TESTBED
export TESTBED
endif

K := scripts/kit

.PHONY: all help modules list install uninstall check check-all check-debug campaign \
	clean distclean \
	testbed sparse checkpatch symvers selftests demo bench irqlat \
	bench-irqbypass bench-lifecycle bench-rt netbench conformance bochs qemu check-qemu

all modules:
	@$(K)/build.sh

# The header comment above, from "make help" to the last target.
help:
	@sed -n 's/^#   //p' $(firstword $(MAKEFILE_LIST))

list:
	@$(K)/list.sh

install:
	@$(K)/install.sh install

uninstall:
	@$(K)/install.sh uninstall

check:
	@$(K)/check.sh

check-all:
	@$(K)/check-all.sh

# Same code as make check, so no sparse run (and no stock baseline exists
# for the debug config).
check-debug:
	@KIT_DEBUG=1 KIT_CHECK_SKIP="sparse $${KIT_CHECK_SKIP:-}" $(K)/check.sh

campaign:
	@$(K)/campaign.sh

sparse:
	@$(K)/sparse.sh

checkpatch:
	@$(K)/checkpatch.sh

symvers:
	@$(K)/symvers.sh

# Into build/selftests, where make check builds them, not the source tree.
selftests:
	@$(MAKE) -C tools/testing/selftests/kvm-irqbypass \
		OUTPUT=$(or $(KIT_BUILD),$(CURDIR)/build)/selftests

irqlat:
	@$(MAKE) -C tools/irqlat

bench-irqbypass:
	@$(K)/bench-irqbypass.sh

bench-lifecycle:
	@$(K)/bench-lifecycle.sh

bench-rt:
	@$(K)/bench-rt.sh

demo:
	@$(K)/demo.sh

bench:
	@$(K)/bench.sh

netbench:
	@$(K)/netbench.sh

conformance:
	@$(K)/conformance.sh

bochs:
	@$(K)/bochs.sh

qemu:
	@$(K)/qemu.sh

check-qemu:
	@$(K)/check-qemu.sh

testbed:
	@$(K)/testbed.sh --modules kit -- $(or $(CMD),bash tools/testbed/module_checks.sh)

.PHONY: deb status check-deb guest check-guest mmiobench
guest:
	@$(K)/guest.sh

check-guest:
	@$(K)/check-guest.sh

mmiobench:
	@$(K)/mmiobench.sh

deb:
	@$(K)/deb.sh

status:
	@$(K)/status.sh

check-deb:
	@$(K)/deb.sh --check-install

clean:
	rm -rf build/*-amd64 build/.stage-* build/.target-* build/testbed build/report \
		build/netbench build/deb

distclean:
	rm -rf build
