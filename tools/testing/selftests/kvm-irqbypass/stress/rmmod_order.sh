#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# rmmod in every order while the interrupt path is in use
# (Documentation/reliability.rst): hold_irqfd keeps the edu open through
# vfio-pci with its MSI on a KVM irqfd of a running VM and raises MSIs; meanwhile
# every permutation of our five modules (irqbypass kvm kvm_amd vfio_pci_core
# vfio_pci, 120 orders) is removed module by module with rmmod, then the stock
# vfio and vfio_iommu_type1.  Every attempt must be refused (module in use),
# every module stay loaded, the kernel log stay clean, and hold_irqfd's MSIs
# arrive exactly once.  Never rmmod -f.  A module that did unload is loaded
# again with the testbed's modprobe so later tests still run.
# Environment: KVM_IRQBYPASS_RMMOD_ORDERS (default 120: all of them),
#              KVM_IRQBYPASS_SECONDS (time bound of the rmmod loop, 240).
DIR=$(dirname "$(readlink -f "$0")")
MODS=(irqbypass kvm kvm_amd vfio_pci_core vfio_pci)
STOCK=(vfio vfio_iommu_type1)
max=${KVM_IRQBYPASS_RMMOD_ORDERS:-120}
limit=${KVM_IRQBYPASS_SECONDS:-240}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "TAP version 13"
echo "1..5"
if [ ! -e /sys/bus/pci/drivers/vfio-pci ] || [ ! -d /sys/module/kvm ]; then
	for i in 1 2 3 4 5; do echo "ok $i # SKIP kvm and vfio-pci not loaded"; done
	exit 0
fi

# Permutations of MODS, one per line (Heap's algorithm would do; n=5 is small).
perms() {	# perms PREFIX... -- REST...
	local pre=() rest=() seen=0 i
	for i in "$@"; do
		[ "$i" = -- ] && { seen=1; continue; }
		[ $seen = 0 ] && pre+=("$i") || rest+=("$i")
	done
	if [ ${#rest[@]} -eq 0 ]; then echo "${pre[*]}"; return; fi
	for i in "${!rest[@]}"; do
		perms "${pre[@]}" "${rest[$i]}" -- "${rest[@]:0:$i}" "${rest[@]:$((i + 1))}"
	done
}

before=$(dmesg | wc -l)
"$DIR/hold_irqfd" > "$tmp/hold.log" 2>&1 &
holder=$!
for _ in $(seq 1 600); do
	grep -q '^# holding' "$tmp/hold.log" && break
	kill -0 $holder 2>/dev/null || break
	sleep 0.1
done
if ! grep -q '^# holding' "$tmp/hold.log"; then
	sed 's/^/# hold_irqfd: /' "$tmp/hold.log"
	echo "not ok 1 - hold_irqfd set up the path"
	kill $holder 2>/dev/null; wait $holder
	for i in 2 3 4 5; do echo "not ok $i - not reached"; done
	exit 1
fi
echo "ok 1 - hold_irqfd holds the path (edu MSI -> irqfd -> running VM)"

# A file, not <(...): the testbed's devtmpfs has no /dev/fd.
perms -- "${MODS[@]}" > "$tmp/orders"
orders=0 attempts=0 refused=0 unloaded=() start=$SECONDS
# One rmmod per order (it goes on after a refusal) and no other command in
# the loop: every exec reads its binary over 9p, slow under TCG.
while read -r -a order; do
	[ $orders -ge "$max" ] && break
	[ $((SECONDS - start)) -ge "$limit" ] && { echo "# time bound ${limit}s reached"; break; }
	orders=$((orders + 1))
	rmmod "${order[@]}" "${STOCK[@]}" 2> "$tmp/err"
	attempts=$((attempts + ${#order[@]} + ${#STOCK[@]}))
	while read -r line; do
		case "$line" in
		*"is in use"*) refused=$((refused + 1)) ;;
		*) echo "# $line" ;;
		esac
	done < "$tmp/err"
	for m in "${order[@]}" "${STOCK[@]}"; do
		[ -d "/sys/module/$m" ] || unloaded+=("$m")
	done
	[ ${#unloaded[@]} -eq 0 ] || break
done < "$tmp/orders"
echo "# $orders orders, $attempts rmmod attempts, $refused refused as in use, $((SECONDS - start)) s"
[ ${#unloaded[@]} -eq 0 ] || echo "# unloaded: ${unloaded[*]}"
failed=0
ok=ok; [ $refused -eq $attempts ] && [ $attempts -gt 0 ] || ok="not ok"
[ "$ok" = ok ] || failed=$((failed + 1))
echo "$ok 2 - every rmmod refused while in use ($refused of $attempts, $orders orders)"

missing=()
for m in "${MODS[@]}" "${STOCK[@]}"; do
	[ -d "/sys/module/$m" ] || missing+=("$m")
done
ok=ok; [ ${#missing[@]} -eq 0 ] || ok="not ok"
[ "$ok" = ok ] || failed=$((failed + 1))
echo "$ok 3 - all modules still loaded${missing:+ (missing: ${missing[*]})}"
for m in "${missing[@]}"; do
	modprobe -d "${MODROOT:-/}" -S "${KREL:-$(uname -r)}" "$m" ||
		echo "# modprobe $m failed"
done

kill -TERM $holder
wait $holder
hrc=$?
sed 's/^/# hold_irqfd: /' "$tmp/hold.log"
ok=ok; [ $hrc -eq 0 ] || ok="not ok"
[ "$ok" = ok ] || failed=$((failed + 1))
echo "$ok 4 - hold_irqfd: every MSI delivered exactly once meanwhile (exit $hrc)"

splat='WARNING:|BUG:|Oops|KASAN|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|scheduling while atomic|sleeping function called from invalid context|blocked for more than|new suspected memory leak'
n=$(dmesg | tail -n +$((before + 1)) | grep -cE "$splat")
ok=ok; [ "$n" -eq 0 ] || ok="not ok"
[ "$ok" = ok ] || failed=$((failed + 1))
echo "$ok 5 - no kernel report in the log ($n)"
[ "$n" -eq 0 ] || dmesg | tail -n +$((before + 1)) | grep -E "$splat" | head -n 5 | sed 's/^/# /'
[ $failed -eq 0 ]
