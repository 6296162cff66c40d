#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-guest: the kit's virtio_mmio.ko (make guest) in a Debian 6.12
# guest on QEMU's microvm machine, with a stock virtio-blk-device and
# virtio-net-device (user network; found by ACPI, as microvm describes them).  Stock QEMU has no MSI extension, so the
# device must probe on the legacy interrupt; the guest checks I/O,
# unbind/rebind and a reload with msi=0
# (tools/testing/virtio-mmio-msi/guest-init, TAP).  Logs in
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
mods=$IMGROOT/lib/modules/$KREL/kernel

ir=$out/initramfs
mkdir -p "$ir"/{bin,proc,sys,dev}
cp /bin/busybox "$ir/bin/busybox"
cp "$kit_top/tools/testing/virtio-mmio-msi/guest-init" "$ir/init"
chmod +x "$ir/init"
cp "$ko" "$ir/virtio_mmio.ko"
for m in drivers/block/virtio_blk drivers/net/virtio_net drivers/net/net_failover \
	 net/core/failover; do
	f=$(compgen -G "$mods/$m.ko*" | head -n 1) || die "no $m module in $IMGROOT"
	case $f in
	*.xz) xz -dc "$f" > "$ir/${m##*/}.ko" ;;
	*) cp "$f" "$ir/${m##*/}.ko" ;;
	esac
done
(cd "$ir" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out/initrd.img"
rm -rf "$ir"

# The disk: sector i holds "sector i", blank padded (guest-init reads it).
sectors=2048
for ((i = 0; i < sectors; i++)); do printf '%-511s\n' "sector $i"; done > "$out/disk.img"

# TCG by default: the result must not depend on this machine's KVM
# (CHECK_GUEST_ACCEL=kvm to use it).
accel=${CHECK_GUEST_ACCEL:-tcg} cpu=max
[ "$accel" = kvm ] && cpu=host
step "check-guest: microvm ($accel), virtio-blk-device, ${ko#"$kit_top"/}"
rc=0
timeout 300 qemu-system-x86_64 -M microvm,acpi=on,rtc=on -accel "$accel" \
	-cpu "$cpu" -smp 2 -m 512 -nodefaults -no-user-config -nographic -no-reboot \
	-serial "file:$out/console.log" \
	-kernel "$IMGROOT/boot/vmlinuz-$KREL" -initrd "$out/initrd.img" \
	-append "console=ttyS0 panic=-1 loglevel=4 vm.sectors=$sectors" \
	-drive "id=d0,file=$out/disk.img,format=raw,if=none,cache=none" \
	-device virtio-blk-device,drive=d0 \
	-netdev user,id=n0 -device virtio-net-device,netdev=n0 > "$out/qemu.log" 2>&1 || rc=$?
sed -n '/^VM-GUEST-BEGIN/,/^VM-GUEST-END/p' "$out/console.log" | tr -d '\r' > "$out/tap.txt"
cat "$out/tap.txt"
passed=$(grep -c '^ok ' "$out/tap.txt" || true)
failed=$(grep -c '^not ok ' "$out/tap.txt" || true)
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out/tap.txt")
echo "check-guest: $passed passed, $failed failed of ${planned:-?} planned ($accel, $((SECONDS - start)) s; QEMU exit $rc)"
if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ -z "$planned" ] || [ "$passed" -ne "$planned" ]; then
	tail -n 30 "$out/console.log" >&2
	die "check-guest failed (logs in ${out#"$kit_top"/}/)"
fi
