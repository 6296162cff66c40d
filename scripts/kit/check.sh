#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check: build, exported-symbol CRCs, sparse against the stock
# baseline, checkpatch, then the testbed (module checks, in-kernel tests,
# selftests) with our modules, and stock-reference: the selftests that pin
# down stock behaviour the kit must match, on the stock modules.  Every step
# and every TAP test counts; the last line is "N passed, N failed".
#   KIT_CHECK_SKIP="sparse checkpatch"  skip steps (counted as skipped)
#   TESTBED="qemu bochs"  the testbed backends to run, in order (default
#                         qemu: kvm_amd on TCG's SVM; bochs: kvm_intel on
#                         bochs' VMX, no PCI device; bochs3: kvm_intel on
#                         the VMX with APICv of make bochs's Bochs 3.0, two
#                         CPUs, checked to load with enable_apicv=Y; the
#                         posted-interrupt checks of posted_intr and
#                         posted_fastpath run there and skip elsewhere)
#   KIT_CAMPAIGN=1  the selftests plus the reliability campaign
#                   (Documentation/reliability.rst); on by default with
#                   KIT_DEBUG=1 (make check-debug)
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

passed=0 failed=0 skipped=0 failures=()
kit_target || exit 1
log=$B/check-$KREL
mkdir -p "$log"

record() {	# record NAME RC
	if [ "$2" -eq 0 ]; then
		passed=$((passed + 1)); echo "check: PASS $1"
	else
		failed=$((failed + 1)); failures+=("$1"); echo "check: FAIL $1"
	fi
}

run_step() {	# run_step NAME CMD...: output in build/check-<krel>/NAME.log
	local name=$1 rc start=$SECONDS; shift
	if [[ " ${KIT_CHECK_SKIP:-} " == *" $name "* ]]; then
		skipped=$((skipped + 1)); echo "check: SKIP $name (KIT_CHECK_SKIP)"
		return 0
	fi
	step "check: $name"
	"$@" > "$log/$name.log" 2>&1
	rc=$?
	[ $rc -eq 0 ] || tail -n 25 "$log/$name.log"
	grep -E '^(symvers|sparse|checkpatch): ' "$log/$name.log" | tail -n 3
	echo "check: $name took $((SECONDS - start)) s"
	record "$name" $rc
	return $rc
}

finish() {
	[ ${#failures[@]} -gt 0 ] && echo "check: failed: ${failures[*]}"
	echo "check: $KLINE $FLAVOUR ($KREL), logs in ${log#"$kit_top"/}/"
	if [ "$skipped" -gt 0 ]; then
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
	[ "$failed" -eq 0 ]
	exit
}

# The packages make check needs, installed when missing before the
# machine's state is recorded: after this step nothing in make check
# installs, removes or rebuilds anything on the machine (the package
# steps run in scripts/kit/sandbox.sh), and host-unchanged, the last step,
# compares the state again.
# The rt-storm step runs (below): a generic target, the QEMU testbed.
rt_storm() {
	[ "$FLAVOUR" = generic ] && [ "${KIT_DEBUG:-0}" != 1 ] &&
		[[ " ${TESTBED:-qemu} " == *" qemu "* ]] &&
		[[ " ${KIT_CHECK_SKIP:-} " != *" rt-storm "* ]]
}
# The debian13 steps run: a generic target of Debian 12, the QEMU testbed.
debian13() {
	[ "$FLAVOUR" = generic ] && [ "${KIT_DEBUG:-0}" != 1 ] && [ "$DEBIAN" = 12 ] &&
		[[ " ${TESTBED:-qemu} " == *" qemu "* ]]
}
prerequisites() {
	local p=("$SRCPKG" "$HDRPKG" make gcc libc6-dev rsync patch xz-utils
		 dwarves kmod sparse busybox-static cpio python3 dpkg-dev
		 debhelper dh-dkms dkms initramfs-tools util-linux) t
	for t in ${TESTBED:-qemu}; do
		case $t in
		qemu) p+=(qemu-system-x86) ;;
		bochs) p+=(bochs bochsbios vgabios isolinux syslinux-common xorriso) ;;
		bochs3) p+=(build-essential isolinux syslinux-common xorriso) ;;
		esac
	done
	[ "${KIT_DEBUG:-0}" = 1 ] && p+=(bc bison flex libelf-dev libssl-dev)
	rt_storm && p+=("linux-headers-${KREL%-amd64}-rt-amd64")
	debian13 && p+=(debootstrap)
	kit_need_pkgs "${p[@]}" &&
		"$kit_top/scripts/kit/host-state.sh" "$log/host-state.before"
}
run_step prerequisites prerequisites || finish
run_step build "$kit_top/scripts/kit/build.sh" || finish
run_step symvers "$kit_top/scripts/kit/symvers.sh"
run_step abi-guard "$kit_top/scripts/kit/abi-guard.sh" --self-test
run_step sparse "$kit_top/scripts/kit/sparse.sh"
run_step checkpatch "$kit_top/scripts/kit/checkpatch.sh"
sel=$B/selftests
run_step selftests-build make -C "$kit_top/tools/testing/selftests/kvm-irqbypass" OUTPUT="$sel" || finish
# make netbench's parts that run on the host: rr on loopback, report.py.
run_step netbench-rr bash -c 'make -C "$1/tools/netbench" OUTPUT="$2" &&
	"$1/tools/netbench/test_rr.sh" "$2/rr"' - "$kit_top" "$B/netbench"
# make mmiobench's report.py on logs with known answers.
run_step mmiobench-report "$kit_top/tools/mmiobench/test_report.sh"
# The guest virtio_mmio.ko's register encoding and sequences against a
# model of Dragonball's device, in userspace (make check-guest boots it).
run_step virtio-mmio-msi make -C "$kit_top/tools/testing/virtio-mmio-msi" \
	OUTPUT="$B/virtio-mmio-msi" check
# make bench-lifecycle's report: paired ratios and their verdicts.
run_step lifecycle-report "$kit_top/tools/lifecycle/test_report.sh"
# make bench's report: it refuses figures measured with tracing on.
run_step irqlat-report "$kit_top/tools/irqlat/test_report.sh"
# The testbed boots a second time only after a panic with stock modules.
run_step testbed-retry "$kit_top/tools/testbed/test_lib.sh"
# The lists the documentation freezes (targets, selftests, these steps).
run_step docs "$kit_top/scripts/kit/check-docs.sh" --self-test
# The dkms package builds and carries what dkms needs; an initramfs that
# lists vfio-pci packs the kit's irqbypass after make install (in the
# sandbox: the machine's /lib/modules and /boot stay as they are).  (The
# step deb-install, at the end, installs the package itself, sandboxed too.)
run_step deb "$kit_top/scripts/kit/deb.sh" --check
run_step initramfs "$kit_top/scripts/kit/deb.sh" --check-initramfs

# testbed BACKEND: the testbed run with our modules; each TAP line counts.
testbed() {
	local tb=$1 runner name label tlog rc tb_pass tb_skip tb_fail
	case "$tb" in
	qemu) runner=() name=check label=testbed ;;
	bochs) runner=(--bochs) name=check-bochs label=testbed-bochs ;;
	bochs3) runner=(--bochs3) name=check-bochs3 label=testbed-bochs3 ;;
	*) record "testbed (unknown TESTBED backend '$tb': qemu, bochs or bochs3)" 1; return ;;
	esac
	tlog=$log/$label.log
	step "check: $label ($KREL, kit modules${campaign:+, with the campaign})"
	"$kit_top/scripts/kit/testbed.sh" "${runner[@]}" --modules kit --name "$name" \
		--timeout "$timeout" ${append:+--append "$append"} \
		--trace-events vfio_fastpath,kvm/kvm_set_irq -- \
		tools/testbed/run_all_tests.sh "$sel" $campaign | tee "$tlog"
	rc=${PIPESTATUS[0]}
	tb_pass=$(grep -cE '^ok [0-9]+' "$tlog" | head -n 1)
	tb_skip=$(grep -cE '^ok [0-9]+.*# (SKIP|skip)' "$tlog" | head -n 1)
	tb_fail=$(grep -cE '^not ok [0-9]+' "$tlog" | head -n 1)
	passed=$((passed + tb_pass - tb_skip))
	skipped=$((skipped + tb_skip))
	failed=$((failed + tb_fail))
	[ "$tb_fail" -gt 0 ] && failures+=("$label: $(grep -E '^not ok' "$tlog" | head -n 5 | tr '\n' ';')")
	# A testbed that crashed, timed out or logged a splat fails as a whole,
	# even when every TAP line it printed said ok.
	case $rc in
	0) ;;
	124) record "$label (timed out)" 1 ;;
	125) record "$label (kernel splat: $(head -n 1 "$B/testbed/$KREL/$name/splats.txt"))" 1 ;;
	*) [ "$tb_fail" -gt 0 ] || record "$label (exit $rc)" 1 ;;
	esac
	# bochs3 exists to execute the APICv paths (posted interrupts,
	# virtual-interrupt delivery): a kvm_intel that came up without them
	# fails the backend, whatever the tests said.
	if [ "$tb" = bochs3 ]; then
		local apicv
		apicv=$(sed -n 's/^# testbed: kvm_intel .*enable_apicv=\([^ ]*\).*/\1/p' "$tlog" | tail -n 1)
		[ "$apicv" = Y ]
		record "$label: kvm_intel enable_apicv=${apicv:-(not printed)}" $?
	fi
}
campaign= timeout=900 append=
[ "${KIT_CAMPAIGN:-${KIT_DEBUG:-0}}" = 1 ] && campaign=--all timeout=3600
# As make campaign: the clocksource watchdog marked the TSC unstable during
# stress_rt (rt, then 6.12 generic), and that static-key flip died on TCG's
# text patching.
[ -n "$campaign" ] && append=tsc=reliable
for t in ${TESTBED:-qemu}; do
	testbed "$t"
done
# stock-reference: these selftests assert what stock KVM and VFIO do (the
# kit run above checks the kit against the same assertions), so they must
# pass on the stock modules too, or they pin down the wrong behaviour.  One
# more boot, 11-13 s in CI; QEMU only (vfio_shared_eventfd needs the edu
# device).  split_resample_smp runs only its case 14 there (no capability):
# two vCPUs, the VMM's userspace resample.  vfio_msi_no_target: KVM drops
# an MSI no LAPIC takes, and so must the kit's fast path.
stock_ref=(vfio_shared_eventfd split_resample_smp vfio_msi_no_target)
if [[ " ${TESTBED:-qemu} " == *" qemu "* ]]; then
	run_step stock-reference "$kit_top/scripts/kit/testbed.sh" --modules stock \
		--name check-stock --timeout 300 -- \
		"$sel/run_tests.sh" "${stock_ref[@]}"
fi
# intx-exclusive: vfio's INTx on a line it holds alone (vfio_pci.nointxmask=1,
# as for a device without DisINTx): the fast handler masks the host line
# with disable_irq_nosync() and, on rt, requests it without IRQF_ONESHOT
# (Documentation/vfio-intx-fastpath.rst).  One more boot; QEMU only (the edu).
if [[ " ${TESTBED:-qemu} " == *" qemu "* ]]; then
	run_step intx-exclusive "$kit_top/scripts/kit/testbed.sh" --modules kit \
		--name check-intx-exclusive --timeout 600 \
		--append vfio_pci.nointxmask=1 -- \
		"$sel/run_tests.sh" vfio_intx vfio_intx_split stress_intx
fi
# msix-noremap: vfio_msix and stress_teardown without interrupt remapping
# (intremap=off): the MSI-X entries then hold the messages themselves, and
# each affinity move rewrites one, which a trigger swap must find intact
# (Documentation/vfio-trigger-swap.rst).  vfio_iommu_type1
# needs allow_unsafe_interrupts=1 without remapping: a test setting, MSIs
# are not isolated.  One more boot; QEMU only (the e1000e).
if [[ " ${TESTBED:-qemu} " == *" qemu "* ]]; then
	run_step msix-noremap "$kit_top/scripts/kit/testbed.sh" --modules kit \
		--name check-msix-noremap --timeout 600 \
		--trace-events vfio_fastpath \
		--append "intremap=off vfio_iommu_type1.allow_unsafe_interrupts=1" -- \
		"$sel/run_tests.sh" vfio_msix stress_teardown
fi
# rt-storm: on the rt kernel of the same line (the generic target has no
# thread to throttle to), vfio_storm (the PREEMPT_RT storm_budget switches
# and back, every MSI once), vfio_msi_no_target and the parameters' bad
# input (Documentation/rt-storm.rst).  One more build and QEMU boot.
if rt_storm; then
	run_step rt-storm env -u KREL FLAVOUR=rt bash -c '"$1/scripts/kit/build.sh" &&
		"$1/scripts/kit/testbed.sh" --modules kit --name check-rt-storm \
			--timeout 600 --trace-events vfio_fastpath -- bash -c \
			"tools/testbed/module_params.sh && $2/run_tests.sh vfio_storm vfio_msi_no_target"' \
		- "$kit_top" "$sel"
fi
# debian13-6.12 and debian13-7.3: Debian 13's kernels, built in the trixie
# root of scripts/kit/root.sh (made once, about 30 s; the target's source
# and headers go into the root, never onto this machine).  6.12.x+deb13:
# the kit as on Debian 12, its CRCs and struct layouts, the module checks
# and the selftests.  7.3: the kit's irqbypass manager alone (no
# patches/7.3 yet): the layouts through BTF (its CRCs are all 0), the
# manager's in-kernel tests and stock vhost_vdpa against it.  About 5
# minutes together, most of it the first downloads.
if debian13; then
	run_step debian13-6.12 env -u KREL KLINE=6.12 DEBIAN=13 bash -c \
		'"$1/scripts/kit/build.sh" && "$1/scripts/kit/symvers.sh" &&
		"$1/scripts/kit/testbed.sh" --modules kit --name check-deb13 --timeout 900 -- \
			tools/testbed/run_all_tests.sh "$2"' \
		- "$kit_top" "$sel"
	run_step debian13-7.3 env -u KREL KLINE=7.3 bash -c \
		'"$1/scripts/kit/build.sh" && "$1/scripts/kit/symvers.sh" &&
		"$1/scripts/kit/testbed.sh" --modules kit --name check-7.3 --timeout 600 -- \
			tools/testbed/manager_checks.sh' - "$kit_top"
fi
# stock-irqbypass: a stock irqbypass loaded first (as by an initramfs built
# before the kit was installed), then modprobe kvm_amd and vfio_pci with the
# dkms package's modprobe.d rule: the stock set loads and a guest runs
# (Documentation/kit.rst).  One more boot, about 70 s; QEMU only (kvm_amd).
# The debug kernel (KASAN, lockdep) on one CPU takes about 240 s to reach
# the test and 45 s to load the four modules: 300 s cut it off in its
# first test on 5 December 2026, so it gets 900.
guard_timeout=300
[ "${KIT_DEBUG:-0}" = 1 ] && guard_timeout=900
if [[ " ${TESTBED:-qemu} " == *" qemu "* ]]; then
	run_step stock-irqbypass "$kit_top/scripts/kit/testbed.sh" --modules kit \
		--smp 1 --name check-guard --timeout "$guard_timeout" -- debian/tests/stock-irqbypass "$sel"
fi
# deb-install (make check-deb): in the sandbox, apt install the package
# (dkms builds the kit for every installed kernel with headers), a testbed
# boot on the modules dkms installed (module checks, irqfd_msi, vfio_msi),
# apt remove, a boot on stock.  About 6 minutes; KIT_CHECK_SKIP=deb-install
# skips it.  Not on the debug kernel, which is not installed here.
if [[ " ${TESTBED:-qemu} " == *" qemu "* ]] && [ "${KIT_DEBUG:-0}" != 1 ]; then
	run_step deb-install "$kit_top/scripts/kit/deb.sh" --check-install
fi
# host-unchanged: the packages, /lib/modules/*/updates, the initramfs
# images and the kit's files are as prerequisites recorded them.
run_step host-unchanged "$kit_top/scripts/kit/host-state.sh" --compare \
	"$log/host-state.before" "$log/host-state.after"
finish
