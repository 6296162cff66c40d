#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The register decoder of the kit's QEMU virtio-mmio MSI/doorbell device
# (patches/qemu-7.2/0003-*) against good and bad driver input, with no
# guest: QEMU's qtest accelerator runs microvm with a virtio-net-device
# and this script reads and writes the transport's registers through
# -qtest stdio.  TAP on stdout.  Run by make check-guest.
#
#   qtest-device.sh QEMU-BINARY
set -uo pipefail
qemu=$1
n=0 fails=0
ok() {	# ok COND-RC DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - device: $2"; else
		echo "not ok $n - device: $2"; fails=$((fails + 1)); fi
}
# qt GLOBALS... < COMMANDS: QEMU's answers, one line each ("OK [value]").
# (QEMU does not exit at the end of its qtest input: it answers within
# milliseconds, and timeout ends it after 2 s.)
qt() {
	timeout 2 "$qemu" -M microvm,acpi=on -accel qtest -display none -nodefaults \
		"$@" -netdev hubport,id=n0,hubid=0 -device virtio-net-device,netdev=n0 \
		-qtest stdio 2>/dev/null | grep -E '^(OK|FAIL|ERR)'
}
v2=(-global virtio-mmio.force-legacy=off)
dbs=("${v2[@]}" -global virtio-mmio.x-dbs-msi=on -global virtio-mmio.x-dbs-doorbell=on)

# Where microvm plugged the device: the transport whose DeviceID is 1.
base=
i=0
while read -r _ v; do
	[ "$((v))" = 1 ] && base=$((0xfeb00000 + i * 0x200))
	i=$((i + 1))
done < <(for s in $(seq 0 23); do printf 'readl 0x%x\n' $((0xfeb00000 + s * 0x200 + 8)); done |
	 qt "${dbs[@]}")
[ -n "$base" ]
ok $? "the virtio-net transport found$( [ -n "$base" ] && printf ' at 0x%x' "$base")"
[ -n "$base" ] || { echo "1..$n"; exit 1; }
r() { printf 'readl 0x%x\n' $((base + $1)); }
rw() { printf 'readw 0x%x\n' $((base + $1)); }
w() { printf 'writel 0x%x 0x%x\n' $((base + $1)) "$2"; }
ww() { printf 'writew 0x%x 0x%x\n' $((base + $1)) "$2"; }
# A driver up to FEATURES_OK (VERSION_1 only), MSI on, vectors 0-3
# programmed; DRIVER_OK with $1 = 1.
setup() {
	w 0x70 0; w 0x70 1; w 0x70 3; w 0x24 1; w 0x20 1; w 0x24 0; w 0x20 0; w 0x70 0xb
	ww 0xc0 0x8000
	for v in 0 1 2 3; do
		w 0xc4 0xfee00000; w 0xc8 0; w 0xcc $((0x4040 + v)); ww 0xc2 $((0x1000 | v))
	done
	[ "$1" = 1 ] && w 0x70 0xf
}
# last STATUS-AFTER COMMANDS...: the Status read at the end of a session.
status_after() { { "$@"; r 0x70; } | qt "${dbs[@]}" | tail -n 1 | awk '{ print $2 }'; }

out=$(printf '%s\n' "$(r 0x0c)" "$(rw 0xc0)" "$(r 0x50)" "$(r 0x04)" | qt "${dbs[@]}" |
      awk '{ print $2 }' | tr '\n' ' ')
read -r a b c d <<< "$out"
set -- "$a" "$b" "$c" "$d"
[ "$(($1))" = $((0xdbfcdb06)) ]; ok $? "VendorID 0xdbfcdb06 with both properties ($1)"
[ "$(($2))" = $((0x8000)) ]; ok $? "MSI CSR reads 0x8000 ($2)"
[ "$(($3))" = $((0x40180)) ]; ok $? "QueueNotify reads the doorbell layout 0x180 | 4 << 16 ($3)"
[ "$(($4))" = 2 ]; ok $? "Version stays 2 ($4)"
out=$(printf '%s\n' "$(r 0x0c)" "$(r 0x50)" | qt "${v2[@]}" | awk '{ print $2 }' | tr '\n' ' ')
read -r a b <<< "$out"
set -- "$a" "$b"
[ "$(($1))" = $((0x554d4551)) ] && [ "$(($2))" = 0 ]
ok $? "properties off: QEMU's VendorID, QueueNotify reads 0 ($1 $2)"
out=$(printf 'readl 0x%x\n' $((0xfeb00000 + 8)) | timeout 2 "$qemu" -M microvm,acpi=on \
	-accel qtest -display none -nodefaults -global virtio-mmio.x-dbs-msi=on \
	-qtest stdio 2>&1)
echo "$out" | grep -q 'need force-legacy=off'
ok $? "x-dbs-msi on a Version 1 transport: QEMU refuses to start"

st=$(status_after setup 1)
[ "$((st & 0x4f))" = 15 ]; ok $? "good sequence: DRIVER_OK, no DEVICE_NEEDS_RESET ($st)"
st=$(status_after eval 'setup 1; ww 0xc2 0x2001; w 0xc4 0xfee01000; ww 0xc2 0x1001; ww 0xc2 0x3001')
[ "$((st & 0x40))" = 0 ]; ok $? "live retarget MASK, UPDATE, UNMASK accepted ($st)"
st=$(status_after eval 'setup 1; w 0x180 0; w 0x184 1; w 0x184 7; w 0x1fc 31')
[ "$((st & 0x40))" = 0 ]; ok $? "doorbell writes, good and bad values, no failure ($st)"
for bad in "unknown command 0x7001:ww 0xc2 0x7001" "UPDATE of vector 9 of 4:ww 0xc2 0x1009" \
	   "MASK of vector 4095:ww 0xc2 0x2fff" "CSR off after DRIVER_OK:ww 0xc0 0" \
	   "UPDATE of live unmasked vector 1:ww 0xc2 0x1001"; do
	st=$(status_after eval "setup 1; ${bad#*:}")
	[ "$((st & 0x40))" = 64 ]; ok $? "${bad%%:*}: DEVICE_NEEDS_RESET ($st)"
done
st=$(status_after eval 'setup 1; ww 0xc2 0x7001; w 0x70 0')
[ "$((st))" = 0 ]; ok $? "reset after the failure: Status 0 ($st)"
st=$(status_after eval 'setup 1; w 0x70 0; ww 0xc2 0x2001; w 0x70 1')
[ "$((st))" = 1 ]; ok $? "after a reset the device is legacy: a command is ignored ($st)"
st=$(status_after eval 'setup 0; ww 0xc0 0; ww 0xc0 0x8000')
[ "$((st & 0x40))" = 0 ]; ok $? "CSR off and on before DRIVER_OK accepted ($st)"
echo "1..$n"
[ "$fails" -eq 0 ]
