#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs inside the testbed (tools/testbed/run.sh, so the module set is
# already loaded): assign the outer QEMU's e1000e to vfio-pci, put the
# testbed's own virtio-net NIC (on the same hub) on 10.0.99.1, and for each
# {irq} x {irqchip} boot Debian's kernel as an L2 guest in the host's QEMU
# (-accel kvm; NETBENCH_QEMU, default qemu-system-x86_64 from PATH) with the
# e1000e assigned, while tools/netbench/rr serves
# here.  Everything lands in $KIT_OUT/nb-<irq>-<chip>-{l2,server}.txt.
#
#   l1-run.sh L2_KERNEL L2_INITRD RR "RR_CLIENT_ARGS" COMBO...
#   COMBO: msi-on msi-split nomsi-on nomsi-split
#
# The counters the server reads per repetition (rr -s), all host-wide:
#   exits   KVM's VM exits (debugfs kvm/exits)
#   uexits  returns of KVM_RUN to the VMM (a hist trigger on the
#           kvm:kvm_userspace_exit event, set up once before any guest runs)
#   ctxt    context switches (/proc/stat)
#   irqs    host interrupts handled by vfio (a hist trigger on
#           irq:irq_handler_entry, filtered on the "vfio" handler names)
#   fp_hit, fp_miss   the kit's fast path: MSIs injected from the hard-irq
#           handler, and those left to the irqfd (kit modules only)
#   l2_tx, l2_rx   packets the guest sent and received (the testbed NIC's
#           rx and tx counters: nothing else is on the hub)
#   irq_exits, halt_exits, io_exits, mmio_exits, irqwin_exits   KVM's VM
#           exits by reason, from its debugfs stats (no tracing): host
#           interrupts that arrived while a guest ran (the NIC's own and
#           timer ticks), guest HLTs, port I/O (in kernel or not), MMIO that went
#           to the VMM, interrupt-window exits
#
# NETBENCH_AB=1 (the kit's modules): same-boot A/B.  Each repetition is a
# guest of its own running one repetition, A then B per combination, the
# combinations in turn (round i: A B of each, then round i + 1); A is the
# stock path, B the kit's:
#   A  vfio_pci_core.fastpath=0 (stock's hard-irq handlers for MSI and
#      INTx, read when the vector's interrupt is requested, i.e. at the
#      guest's VFIO_DEVICE_SET_IRQS) and, with NETBENCH_QEMU_KIT=1, the
#      vfio-pci property x-kvm-split-resample=off (QEMU resamples
#      split-irqchip INTx on the EOI exit, as stock QEMU)
#   B  fastpath=1 and the property's default (on)
# A's logs are nb-<irq>-<chip>-a-{l2,server}.txt, B's nb-<irq>-<chip>-{l2,
# server}.txt (the kit row), one guest's lines after another.
# Exit code: the number of guests that failed.
set -u
l2k=$1 l2i=$2 rr=$3 rrargs=$4
shift 4
out=$KIT_OUT
qemu=${NETBENCH_QEMU:-qemu-system-x86_64}

echo "# netbench: kernel $(uname -r), modules $KIT_MODULES"
echo "# netbench: VMM $qemu: $("$qemu" --version | head -n 1)"

# 1. The e1000e (8086:10d3) to vfio-pci, the virtio-net NIC up.
bdf= nic=
for d in /sys/bus/pci/devices/*; do
	id="$(cat "$d/vendor"):$(cat "$d/device")"
	case $id in
	0x8086:0x10d3)
		bdf=${d##*/}
		[ -e "$d/driver" ] && echo "$bdf" > "$d/driver/unbind"
		echo vfio-pci > "$d/driver_override"
		echo "$bdf" > /sys/bus/pci/drivers_probe
		;;
	0x1af4:0x1000 | 0x1af4:0x1041)
		modprobe -d "$MODROOT" -S "$KREL" virtio_net || exit 90
		for n in "$d"/virtio*/net/*; do nic=${n##*/}; done
		;;
	esac
done
[ -n "$bdf" ] && [ -e "/sys/bus/pci/devices/$bdf/iommu_group" ] ||
	{ echo "# netbench: no e1000e behind the IOMMU"; exit 91; }
[ "$(basename "$(readlink -f "/sys/bus/pci/devices/$bdf/driver")")" = vfio-pci ] ||
	{ echo "# netbench: $bdf did not bind to vfio-pci"; exit 92; }
[ -n "$nic" ] || { echo "# netbench: no virtio-net interface"; exit 93; }
# Quiet on the hub until a guest talks: QEMU's hub only takes a packet when
# another port can receive it, and the e1000e cannot while no guest has
# enabled it, so IPv6's link-up chatter would stall the virtio-net queue
# (NETDEV WATCHDOG).  IPv4 answers only what the guest sends.
sysctl -qw "net.ipv6.conf.$nic.disable_ipv6=1"
ip addr add 10.0.99.1/24 dev "$nic" && ip link set "$nic" up || exit 94
ip link set lo up
echo "# netbench: e1000e $bdf on vfio-pci (group $(basename "$(readlink "/sys/bus/pci/devices/$bdf/iommu_group")")), server on $nic 10.0.99.1"

# 2. The counters, from what every kernel keeps without tracing: KVM's
# exit count, context switches, the vfio rows of /proc/interrupts, the
# NIC's packets.  NETBENCH_EVENTS=1 adds returns to QEMU and the kit's
# fast-path hits through hist triggers; those enable trace events, which
# lengthen the measured paths, so the default run has none.  Setting a
# trigger patches kernel text (the event's static key): done once here,
# before any guest runs.
ev=/sys/kernel/tracing/events
hist() {	# hist EVENT KEY [FILTER]: count EVENT in its hist file
	echo "hist:keys=$2${3:+ if $3}" > "$ev/$1/trigger" ||
		{ echo "# netbench: cannot set a hist trigger on $1"; exit 95; }
}
kd=/sys/kernel/debug/kvm
stats=(-s "exits=$kd/exits"
       -s "irq_exits=$kd/irq_exits" -s "halt_exits=$kd/halt_exits"
       -s "io_exits=$kd/io_exits" -s "mmio_exits=$kd/mmio_exits"
       -s "irqwin_exits=$kd/irq_window_exits"
       -s ctxt=/proc/stat:ctxt
       -s irqs=/proc/interrupts:~vfio
       -s "l2_tx=/sys/class/net/$nic/statistics/rx_packets"
       -s "l2_rx=/sys/class/net/$nic/statistics/tx_packets")
fastpath_hist=
if [ "${NETBENCH_EVENTS:-0}" = 1 ]; then
	echo "# netbench: NETBENCH_EVENTS=1: hist triggers on, times include tracing"
	hist kvm/kvm_userspace_exit reason
	stats+=(-s "uexits=$ev/kvm/kvm_userspace_exit/hist:Hits:")
	if [ -d "$ev/vfio_fastpath" ]; then
		hist vfio_fastpath/vfio_fastpath_hit irq
		hist vfio_fastpath/vfio_fastpath_miss err
		stats+=(-s "fp_hit=$ev/vfio_fastpath/vfio_fastpath_hit/hist:Hits:"
			-s "fp_miss=$ev/vfio_fastpath/vfio_fastpath_miss/hist:Hits:")
		fastpath_hist=1
	fi
fi

# Host interrupts over a guest's whole life, per irq with at least 50,
# from /proc/stat (which keeps an irq's count after it is freed, unlike
# /proc/interrupts), to set against the guest's own count of its NIC's
# interrupts (NB-L2-IRQ-COUNTS): a diagnostic of the nomsi rows.
host_irqs_since() {	# host_irqs_since "INTR LINE BEFORE"
	grep '^intr ' /proc/stat | awk -v before="$1" '{
		n = split(before, b, " ")
		for (i = 3; i <= NF && i <= n; i++)
			if ($i - b[i] >= 50)
				printf "irq %d: %d; ", i - 3, $i - b[i]
	}'
}

# 3. The matrix.  guest COMBO TAG RRARGS [DEVICE-PROPERTY]: one L2 guest
# and its rr server; its logs are appended to nb-COMBO[-TAG]-*.txt.
fp=/sys/module/vfio_pci_core/parameters/fastpath
guest() {
	local combo=$1 tag=$2 args=$3 prop=${4-} irq chip extra stem qrc src l2rc intr0
	irq=${combo%-*} chip=${combo#*-}
	case $irq in msi) extra= ;; nomsi) extra=pci=nomsi ;; *) exit 96 ;; esac
	case $chip in on | split) ;; *) exit 96 ;; esac
	stem=$out/nb-$combo${tag:+-$tag}
	intr0=$(grep '^intr ' /proc/stat)
	"$rr" server -1 "${stats[@]}" > "$out/srv.tmp" 2>&1 &
	srv=$!
	start=$SECONDS
	# pci=nomsi also keeps the guest's other devices off MSI: there are
	# none (-nodefaults); rombar=0: no option ROM to read through vfio.
	timeout -k 5 900 "$qemu" -accel kvm \
		-M "q35,kernel-irqchip=$chip" -cpu host -smp 1 -m 512 \
		-nodefaults -display none -no-reboot \
		-serial "file:$out/l2.tmp" -kernel "$l2k" -initrd "$l2i" \
		-append "console=ttyS0 panic=-1 quiet nb.addr=10.0.99.2/24 nb.server=10.0.99.1 nb.args=$args $extra" \
		-device "vfio-pci,host=$bdf,rombar=0$prop" > "$out/qemu.tmp" 2>&1
	qrc=$?
	# The server exits after its one client; one that never got a client
	# is stopped.
	for _ in $(seq 50); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
	kill "$srv" 2>/dev/null
	wait "$srv"
	src=$?
	# report.py pairs A's and B's guests by this line.
	echo "NB-GUEST: $gi" | tee -a "$stem-server.txt" >> "$stem-l2.txt"
	echo "NB-HOST-IRQS: $(host_irqs_since "$intr0")" >> "$stem-l2.txt"
	cat "$out/l2.tmp" >> "$stem-l2.txt" 2>/dev/null
	cat "$out/srv.tmp" >> "$stem-server.txt"
	cat "$out/qemu.tmp" >> "$stem-qemu.txt"
	l2rc=$(sed -n 's/^NB-L2-RC=\([0-9]*\).*/\1/p' "$out/l2.tmp" 2>/dev/null | tail -n 1)
	echo "# netbench: $combo${tag:+ $tag}: qemu $qrc, l2 ${l2rc:-none}, server $src, $((SECONDS - start)) s"
	grep -h '^rr-' "$out/l2.tmp" "$out/srv.tmp" 2>/dev/null | sed 's/^/#   /'
	if [ "$qrc" -ne 0 ] || [ "${l2rc:-x}" != 0 ] || [ "$src" -ne 0 ]; then
		failed=$((failed + 1))
		tail -n 20 "$out/l2.tmp" "$out/qemu.tmp" 2>/dev/null | sed 's/^/#   /'
	fi
	rm -f "$out/l2.tmp" "$out/srv.tmp" "$out/qemu.tmp"
}
failed=0 gi=1
if [ "${NETBENCH_AB:-0}" = 1 ]; then
	[ -w "$fp" ] || { echo "# netbench: NETBENCH_AB=1 but no writable $fp"; exit 97; }
	reps=$(echo ",$rrargs," | sed -n 's/.*,-r,\([0-9]*\),.*/\1/p')
	one=$(echo ",$rrargs," | sed 's/,-r,[0-9]*,/,-r,1,/; s/^,//; s/,$//')
	[ -n "$reps" ] || exit 96
	aprop=
	[ "${NETBENCH_QEMU_KIT:-0}" = 1 ] && aprop=,x-kvm-split-resample=off
	echo "# netbench: same-boot A/B, $reps pairs per combination: A fastpath=0${aprop:+ $aprop}, B fastpath=1"
	# Round by round: guest i of every combination before guest i + 1,
	# so that guest i of nomsi/split and of nomsi/on (report.py pairs
	# them) run minutes apart, not a combination's whole run apart.
	for gi in $(seq "$reps"); do
		for combo in "$@"; do
			echo 0 > "$fp"
			echo "# netbench: $combo A $gi: fastpath=$(cat "$fp")"
			guest "$combo" a "$one" "$aprop"
			echo 1 > "$fp"
			echo "# netbench: $combo B $gi: fastpath=$(cat "$fp")"
			guest "$combo" "" "$one"
		done
	done
else
	for combo in "$@"; do
		guest "$combo" "" "$rrargs"
	done
fi
[ -n "$fastpath_hist" ] &&
	sed -n 's/^{ err: *\(-*[0-9]*\) *} hitcount: *\([0-9]*\)/# netbench: fast-path misses, err \1: \2/p' \
		"$ev/vfio_fastpath/vfio_fastpath_miss/hist"
# The triggers stay: removing them would patch text again.
exit $failed
