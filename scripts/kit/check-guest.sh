#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-guest: the compatibility matrix of the virtio-mmio MSI/doorbell
# extension, on QEMU's microvm machine with a Debian 6.12 guest, a
# virtio-blk-device and a virtio-net-device (user network; found by ACPI,
# as microvm describes them).  One boot pair (boot, reboot) per row, TAP
# from tools/testing/virtio-mmio-msi/guest-init plus the host's checks of
# QEMU's trace, after the device's registers alone
# (tools/testing/virtio-mmio-msi/qtest-device.sh, the kit's QEMU under
# its qtest accelerator: good and bad values, no guest):
#
#   stock-qemu       Debian's QEMU (no extension, TCG), the kit's driver: legacy
#   msi-tcg          the kit's QEMU (make qemu) with x-dbs-msi=on and
#                    x-dbs-doorbell=on under TCG, the kit's driver: MSI
#                    vectors (QEMU's own MSI writes) and doorbells
#   msi-on           the same under KVM, kernel-irqchip=on, split and off:
#   msi-split        KVM irqfds with on and split, QEMU's own MSI writes
#   msi-off          with off (only with CHECK_GUEST_ACCEL=kvm)
#   property-off     the kit's QEMU without the properties: legacy
#   stock-driver     the kit's QEMU with them, Debian's virtio_mmio.ko: legacy
#
# CHECK_GUEST_ACCEL=tcg (default) runs every row but the three KVM rows
# under TCG, which any build host has; =kvm runs them all under KVM (a
# host whose /dev/kvm boots guests: this machine's nested KVM stopped the
# guest in early boot, Documentation/results/2026-12-04.rst).
# CHECK_GUEST_ROWS="msi-tcg stock-driver" runs a subset.  Logs in
# build/check-guest/.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

kit_need_pkgs qemu-system-x86 busybox-static kmod xz-utils cpio
start=$SECONDS
"$kit_top/scripts/kit/guest.sh" > /dev/null
export KLINE=6.12 FLAVOUR=generic
unset KREL
kit_target
kit_image
out=$B/check-guest
rm -rf "$out"; mkdir -p "$out"
ko=$B/guest/drivers/virtio/virtio_mmio.ko
imods=$IMGROOT/lib/modules/$KREL/kernel

ir=$out/initramfs
mkdir -p "$ir"/{bin,proc,sys,dev}
cp /bin/busybox "$ir/bin/busybox"
cp "$kit_top/tools/testing/virtio-mmio-msi/guest-init" "$ir/init"
chmod +x "$ir/init"
cp "$ko" "$ir/virtio_mmio.ko"
for m in drivers/block/virtio_blk drivers/net/virtio_net drivers/net/net_failover \
	 net/core/failover drivers/virtio/virtio_mmio; do
	f=$(compgen -G "$imods/$m.ko*" | head -n 1) || die "no $m module in $IMGROOT"
	dst=$ir/${m##*/}.ko
	[ "$m" = drivers/virtio/virtio_mmio ] && dst=$ir/stock_virtio_mmio.ko
	case $f in
	*.xz) xz -dc "$f" > "$dst" ;;
	*) cp "$f" "$dst" ;;
	esac
done
(cd "$ir" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out/initrd.img"
rm -rf "$ir"

# The disk: sector i holds "sector i", blank padded (guest-init reads it).
sectors=2048
for ((i = 0; i < sectors; i++)); do printf '%-511s\n' "sector $i"; done > "$out/disk0.img"

kitqemu=$B/qemu/qemu-system-x86_64
gaccel=${CHECK_GUEST_ACCEL:-tcg}
case $gaccel in
tcg | kvm) ;;
*) die "CHECK_GUEST_ACCEL=$gaccel: tcg or kvm" ;;
esac
kvm_ok=0
[ "$gaccel" = kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] && kvm_ok=1
"$kit_top/scripts/kit/qemu.sh" > /dev/null
dbs=(-global virtio-mmio.force-legacy=false -global virtio-mmio.x-dbs-msi=on
     -global virtio-mmio.x-dbs-doorbell=on)
v2=(-global virtio-mmio.force-legacy=false)
rows=${CHECK_GUEST_ROWS:-stock-qemu msi-tcg property-off stock-driver msi-on msi-split msi-off}
passed=0 failed=0 skipped=0
host_ok() {	# host_ok ROW COND-RC DESCRIPTION
	if [ "$2" -eq 0 ]; then
		echo "ok - $1: $3"; passed=$((passed + 1))
	else
		echo "not ok - $1: $3"; failed=$((failed + 1))
	fi
}
# trace_count ROW EVENT [GREP]: lines of an event in the row's QEMU trace.
trace_count() {
	grep -c "$2 ${3:-}" "$out/$1.trace" 2>/dev/null || true
}
run_row() {	# run_row ROW
	# (qemu64 under KVM: this machine's KVM refuses -cpu host's
	# ARCH_CAPABILITIES MSR, and QEMU aborts on that.)
	local row=$1 qemu=$kitqemu accel=$gaccel cpu=qemu64 driver=kit expect=msi rc=0 t=$SECONDS
	local machine=microvm,acpi=on,rtc=on net=user
	local netdev=(-netdev "user,id=n0") blk=virtio-blk-device,drive=d0,iothread=io0
	local extra=() trace=() p f planned port kvmrow=0
	case $row in
	stock-qemu) qemu=qemu-system-x86_64 expect=legacy ;;
	msi-tcg) extra=("${dbs[@]}"); accel=tcg ;;
	# (KVM's own IOAPIC has 24 pins: microvm's second one, a QEMU
	# device, would never see the EOIs of its level interrupts.)
	msi-on) extra=("${dbs[@]}"); accel=kvm,kernel-irqchip=on
		machine=$machine,ioapic2=off kvmrow=1 ;;
	msi-split) extra=("${dbs[@]}"); accel=kvm,kernel-irqchip=split kvmrow=1 ;;
	msi-off) extra=("${dbs[@]}"); accel=kvm,kernel-irqchip=off kvmrow=1 ;;
	property-off) extra=("${v2[@]}"); expect=legacy ;;
	stock-driver) extra=("${dbs[@]}"); driver=stock expect=legacy ;;
	*) die "check-guest: unknown row $row" ;;
	esac
	if [ "$kvmrow" = 1 ] && [ $kvm_ok = 0 ]; then
		echo "ok - $row # SKIP a KVM row (CHECK_GUEST_ACCEL=kvm and a usable /dev/kvm)"
		skipped=$((skipped + 1))
		return 0
	fi
	# (no ioeventfd, so no iothread, under TCG)
	[ "${accel%%,*}" = kvm ] || { cpu=max blk=virtio-blk-device,drive=d0; }
	if [ "$qemu" = "$kitqemu" ]; then
		trace=(-trace "enable=virtio_mmio_msi_*" -D "$out/$row.trace")
		# The kit's QEMU has no user network: a socket netdev that
		# sends its frames to itself.
		port=$((20000 + RANDOM % 20000)) net=loop
		netdev=(-netdev "socket,id=n0,udp=127.0.0.1:$port,localaddr=127.0.0.1:$port")
	fi
	cp "$out/disk0.img" "$out/$row.img"
	: > "$out/$row.console"
	# The disk on an iothread: virtio-blk's dataplane takes the guest
	# notifiers (set_guest_notifiers), as vhost does, so with KVM's
	# irqchip its completions go through irqfds.  No -no-reboot: the
	# guest reboots once (reboot=t, a triple fault) and powers off.
	timeout 300 "$qemu" -M "$machine" -accel "$accel" \
		-cpu "$cpu" -smp 2 -m 512 -nodefaults -no-user-config -nographic \
		-serial "file:$out/$row.console" "${extra[@]}" \
		-kernel "$IMGROOT/boot/vmlinuz-$KREL" -initrd "$out/initrd.img" \
		-append "console=ttyS0 panic=-1 reboot=t loglevel=4 vm.sectors=$sectors vm.row=$row vm.driver=$driver vm.expect=$expect vm.net=$net vm.reboot=1 iomem=relaxed" \
		-object iothread,id=io0 \
		-drive "id=d0,file=$out/$row.img,format=raw,if=none,cache=none" \
		-device "$blk" "${netdev[@]}" -device virtio-net-device,netdev=n0 \
		"${trace[@]}" \
		> "$out/$row.qemu.log" 2>&1 || rc=$?
	sed -n '/^VM-GUEST-BEGIN/,/^VM-GUEST-END/p' "$out/$row.console" | tr -d '\r' |
		sed "s/^\(\(not \)\{0,1\}ok [0-9]* - \)/\1$row: /" > "$out/$row.tap"
	cat "$out/$row.tap"
	p=$(grep -c '^ok ' "$out/$row.tap" || true)
	f=$(grep -c '^not ok ' "$out/$row.tap" || true)
	planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out/$row.tap")
	passed=$((passed + p)) failed=$((failed + f))
	local good=0
	[ "$rc" -eq 0 ] && [ -n "$planned" ] && [ "$p" -eq "$planned" ] && [ "$f" -eq 0 ] &&
		grep -q '^# boot 2' "$out/$row.tap" || good=1
	host_ok "$row" $good "both boots ran all ${planned:-?} guest checks, QEMU exit $rc ($((SECONDS - t)) s)"
	[ -f "$out/$row.trace" ] || : > "$out/$row.trace"
	local sends irqfds cmds
	sends=$(trace_count "$row" virtio_mmio_msi_send)
	irqfds=$(trace_count "$row" virtio_mmio_msi_irqfd "queue 0 virq [0-9]* attach 1")
	cmds=$(trace_count "$row" virtio_mmio_msi_cmd)
	echo "# $row: QEMU trace: $cmds MSI commands, $sends MSI writes by QEMU, $irqfds irqfd attaches of queue 0"
	good=0
	case $row in
	msi-on|msi-split)
		[ "$irqfds" -gt 0 ] || good=1
		host_ok "$row" $good "the disk queue's guest notifier became a KVM irqfd" ;;
	msi-off|msi-tcg)
		[ "$irqfds" -eq 0 ] && [ "$sends" -gt 0 ] || good=1
		host_ok "$row" $good "no irqfd without KVM's irqchip: QEMU wrote the MSIs"
		# The guest's affinity moves: the disk vector's MSIs went
		# to more than one address (APIC destination).
		local dests
		dests=$(sed -n 's/.*virtio_mmio_msi_send vector 1 addr \(0x[0-9a-f]*\) .*/\1/p' \
			"$out/$row.trace" | sort -u | tr '\n' ' ')
		echo "# $row: the disk vector's MSI addresses: $dests"
		good=0
		[ "$(echo "$dests" | wc -w)" -ge 2 ] || good=1
		host_ok "$row" $good "the disk vector's MSIs went to both CPUs (affinity moves)" ;;
	*)
		[ "$sends" -eq 0 ] && [ "$irqfds" -eq 0 ] || good=1
		host_ok "$row" $good "no MSI sent" ;;
	esac
	if grep -qiE 'assert|abort|segmentation' "$out/$row.qemu.log"; then
		host_ok "$row" 1 "QEMU log clean"; tail -n 5 "$out/$row.qemu.log"
	fi
}
# The device's register decoder, good and bad input, through QEMU's qtest
# accelerator (no guest, no KVM).
if [ -x "$kitqemu" ]; then
	"$kit_top/tools/testing/virtio-mmio-msi/qtest-device.sh" "$kitqemu" > "$out/device.tap" || true
	cat "$out/device.tap"
	passed=$((passed + $(grep -c '^ok ' "$out/device.tap" || true)))
	failed=$((failed + $(grep -c '^not ok ' "$out/device.tap" || true)))
	[ "$(sed -n 's/^1\.\.//p' "$out/device.tap")" = "$(grep -c 'ok [0-9]' "$out/device.tap")" ] ||
		host_ok device 1 "the qtest plan ran to its end"
fi
step "check-guest: rows $rows (${ko#"$kit_top"/})"
for row in $rows; do
	run_row "$row"
done
echo "check-guest: $passed passed, $failed failed, $skipped skipped ($((SECONDS - start)) s)"
[ "$failed" -eq 0 ] || die "check-guest failed (logs in ${out#"$kit_top"/}/)"
