#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs inside the testbed (tools/testbed/run.sh, so the module set is
# already loaded): a tap device with vhost-net for the L2 guests, the
# testbed's end on 10.0.98.1, and for each repetition, each combination
# TRANSPORT-IRQCHIP in turn, one L2 guest: the kit's QEMU (-accel kvm, -M
# microvm) boots Debian's kernel with a virtio-net NIC on the tap
# (vhost=on) while tools/netbench/rr serves here.  Repetitions alternate
# the combinations within the boot: repetition 1 of every combination,
# then repetition 2, ...
#
#   l1-run.sh QEMU L2_KERNEL L2_INITRD RR "RR_CLIENT_ARGS" REPS NAPI_TX COMBO...
#   NAPI_TX: the guest's virtio_net napi_tx (0 or 1)
#   COMBO: {pci,mmio,mmio-msi,mmio-msi-doorbell,mmio-msi-shared}-{on,split}
#
#   pci                virtio-net-pci on microvm's PCIe host (pcie=on),
#                      MSI-X
#   mmio               virtio-net-device on a virtio-mmio transport
#                      (Version 2), its legacy interrupt
#   mmio-msi           the same with x-dbs-msi=on: the MSI vectors of the
#                      Dragonball extension (patches/qemu-7.2/0003)
#   mmio-msi-doorbell  x-dbs-msi=on,x-dbs-doorbell=on: also per-queue
#                      doorbells
#   mmio-msi-shared    mmio-msi, the guest driver loaded with max_vectors=2:
#                      the config vector and one vector for all queues
#   on, split          -accel kvm,kernel-irqchip=on or split
#
# Every machine is microvm,acpi=on,rtc=on,ioapic2=off (KVM's own IOAPIC
# has 24 pins: microvm's second IOAPIC, a QEMU device, would not see the
# EOIs of the legacy interrupt with kernel-irqchip=on; the same machine for
# both irqchips).
#
# The counters the server reads around its repetition (rr -s), host-wide
# (one guest runs at a time):
#   exits   KVM's VM exits (debugfs kvm/exits)
#   uexits  returns of KVM_RUN to the VMM (a hist trigger on the
#           kvm:kvm_userspace_exit event, set once before any guest runs;
#           the times include that event)
#   io_exits, mmio_exits, irqwin_exits, halt_exits, irq_exits   KVM's VM
#           exits by reason (debugfs)
#   ctxt    context switches (/proc/stat)
#   retrans the testbed's TCP segments retransmitted (/proc/net/snmp)
# and per guest, around the whole guest, the testbed's TCP retransmissions
# (/proc/net/snmp) and, of those, tail loss probes, retransmission
# timeouts and SYN-ACK retransmissions (/proc/net/netstat), in the server
# file as "MB-L1-RETRANS: N probes=P timeouts=T synretrans=S".
#
# Logs: $KIT_OUT/mb-COMBO-{l2,server,qemu}.txt, one guest after another,
# each led by "MB-GUEST: REP".  Exit code: the number of guests that failed.
set -u
qemu=$1 l2k=$2 l2i=$3 rr=$4 rrargs=$5 reps=$6 napi_tx=$7
shift 7
out=$KIT_OUT
tap=mb0

echo "# mmiobench: kernel $(uname -r), modules $KIT_MODULES"
echo "# mmiobench: VMM $qemu: $("$qemu" --version | head -n 1)"

mp() { modprobe -d "$MODROOT" -S "$KREL" "$@" || { echo "# mmiobench: modprobe $* failed"; exit 90; }; }
mp tun
mp vhost_net
for _ in $(seq 50); do [ -c /dev/net/tun ] && [ -c /dev/vhost-net ] && break; sleep 0.1; done
[ -c /dev/vhost-net ] || { echo "# mmiobench: no /dev/vhost-net"; exit 91; }
ip tuntap add dev "$tap" mode tap || { echo "# mmiobench: cannot create $tap"; exit 92; }
sysctl -qw "net.ipv6.conf.$tap.disable_ipv6=1"
ip addr add 10.0.98.1/24 dev "$tap" && ip link set "$tap" up || exit 93
ip link set lo up
echo "# mmiobench: $tap 10.0.98.1, vhost-net $(cat /sys/module/vhost_net/refcnt 2>/dev/null || echo '?') users"

ev=/sys/kernel/tracing/events
echo 'hist:keys=reason' > "$ev/kvm/kvm_userspace_exit/trigger" ||
	{ echo "# mmiobench: cannot set a hist trigger on kvm_userspace_exit"; exit 95; }
kd=/sys/kernel/debug/kvm
stats=(-s "exits=$kd/exits" -s "uexits=$ev/kvm/kvm_userspace_exit/hist:Hits:"
       -s "irq_exits=$kd/irq_exits" -s "halt_exits=$kd/halt_exits"
       -s "io_exits=$kd/io_exits" -s "mmio_exits=$kd/mmio_exits"
       -s "irqwin_exits=$kd/irq_window_exits" -s ctxt=/proc/stat:ctxt
       -s retrans=/proc/net/snmp:@Tcp:RetransSegs)
# The testbed's TCP counters around a guest: retransmitted segments and,
# of those, tail loss probes, timeouts and SYN-ACK retransmissions.
l1_tcp() {
	"$rr" stat rt=/proc/net/snmp:@Tcp:RetransSegs probes=/proc/net/netstat:@TcpExt:TCPLossProbes \
		timeouts=/proc/net/netstat:@TcpExt:TCPTimeouts \
		synretrans=/proc/net/netstat:@TcpExt:TCPSynRetrans
}
# l1_tcp_since BEFORE: "N probes=P timeouts=T synretrans=S" since l1_tcp
# printed BEFORE (an awk variable: the testbed has no /dev/fd for <(...)).
l1_tcp_since() {
	l1_tcp | awk -v b="$1" '{ split(b, o, /[ =]/); split($0, c, /[ =]/)
		printf "%d probes=%d timeouts=%d synretrans=%d", c[2] - o[2], c[4] - o[4],
			c[6] - o[6], c[8] - o[8] }'
}

# guest COMBO REP: one L2 guest and its rr server.
guest() {
	local combo=$1 rep=$2 t chip stem qrc src l2rc m dev tcp0 start
	local glob=()
	t=${combo%-*} chip=${combo##*-}
	m=microvm,acpi=on,rtc=on,ioapic2=off
	dev=virtio-net-device,netdev=n0
	case $t in
	# (no option ROM: the guest boots its kernel directly)
	pci) m=$m,pcie=on dev=virtio-net-pci,netdev=n0,romfile= ;;
	mmio) glob=(-global virtio-mmio.force-legacy=false) ;;
	mmio-msi | mmio-msi-shared) glob=(-global virtio-mmio.force-legacy=false
			-global virtio-mmio.x-dbs-msi=on) ;;
	mmio-msi-doorbell) glob=(-global virtio-mmio.force-legacy=false
			-global virtio-mmio.x-dbs-msi=on -global virtio-mmio.x-dbs-doorbell=on) ;;
	*) echo "# mmiobench: unknown transport $t"; failed=$((failed + 1)); return ;;
	esac
	case $chip in on | split) ;; *) echo "# mmiobench: unknown irqchip $chip"; failed=$((failed + 1)); return ;; esac
	stem=$out/mb-$combo
	"$rr" server -1 "${stats[@]}" > "$out/srv.tmp" 2>&1 &
	srv=$!
	tcp0=$(l1_tcp)
	start=$SECONDS
	timeout -k 5 600 "$qemu" -M "$m" -accel "kvm,kernel-irqchip=$chip" \
		-cpu host -smp 1 -m 256 -nodefaults -no-user-config -display none -no-reboot \
		"${glob[@]}" -serial "file:$out/l2.tmp" -kernel "$l2k" -initrd "$l2i" \
		-append "console=ttyS0 panic=-1 quiet printk.devkmsg=on mb.transport=$t mb.addr=10.0.98.2/24 mb.server=10.0.98.1 mb.napi_tx=$napi_tx mb.args=$rrargs" \
		-netdev "tap,id=n0,ifname=$tap,script=no,downscript=no,vhost=on" \
		-device "$dev" > "$out/qemu.tmp" 2>&1
	qrc=$?
	for _ in $(seq 50); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
	kill "$srv" 2>/dev/null
	wait "$srv"
	src=$?
	echo "MB-GUEST: $rep" | tee -a "$stem-server.txt" "$stem-qemu.txt" >> "$stem-l2.txt"
	# The guest's lines come through its kernel log: no time stamps.
	tr -d '\r' < "$out/l2.tmp" | sed 's/^\[ *[0-9.]*\] //' > "$out/l2.txt"
	mv "$out/l2.txt" "$out/l2.tmp"
	cat "$out/l2.tmp" >> "$stem-l2.txt"
	cat "$out/srv.tmp" >> "$stem-server.txt"
	echo "MB-L1-RETRANS: $(l1_tcp_since "$tcp0")" >> "$stem-server.txt"
	cat "$out/qemu.tmp" >> "$stem-qemu.txt"
	l2rc=$(sed -n 's/^MB-L2-RC=\([0-9]*\).*/\1/p' "$out/l2.tmp" 2>/dev/null | tail -n 1)
	echo "# mmiobench: $combo rep $rep: qemu $qrc, l2 ${l2rc:-none}, server $src, $((SECONDS - start)) s"
	grep -h '^rr-\|^MB-L2-\(IRQ\|NET\|MODE\)' "$out/l2.tmp" "$out/srv.tmp" 2>/dev/null | sed 's/^/#   /'
	if [ "$qrc" -ne 0 ] || [ "${l2rc:-x}" != 0 ] || [ "$src" -ne 0 ]; then
		failed=$((failed + 1))
		tail -n 30 "$out/l2.tmp" "$out/qemu.tmp" 2>/dev/null | sed 's/^/#   /'
	fi
	rm -f "$out/l2.tmp" "$out/srv.tmp" "$out/qemu.tmp"
}
failed=0
for rep in $(seq "$reps"); do
	for combo in "$@"; do
		guest "$combo" "$rep"
	done
done
echo "# mmiobench: userspace exits by reason, all guests:"
grep -E '^\{' "$ev/kvm/kvm_userspace_exit/hist" | sed 's/^/#   /'
exit $failed
