#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Known-answer test of tools/mmiobench/report.py (TAP), run by make check:
# logs laid out as scripts/kit/mmiobench.sh lays them out, with figures
# whose medians, ratios and per-transaction counts are known, and logs
# that each break one check of the check step.  No guest, no timing.
#
#   test_report.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source-path=SCRIPTDIR source=../lib/shell/tap.sh
. "$here/../lib/shell/tap.sh"

# guest DIR COMBO REP TPS UEXITS EXITS KIND DELTA [RETRANS [RX [MODE [TTY]]]]:
# one guest's lines, 1000 timed transactions (200 warm-up: 1200 in all),
# the NIC's interrupts DELTA on a row of KIND (legacy or msi); TTY 0: the
# guest's line written to /dev/console never arrived; $L1RT: the testbed's
# retransmissions and their kinds (none by default); $SRVX: more counters
# on the server's line (retrans=N: the timed transactions' own).
guest() {
	local d=$1 c=$2 rep=$3 tps=$4 ux=$5 ex=$6 kind=$7 delta=$8
	local rt=${9:-0} rx=${10:-1201} mode=${11:-} tty=${12:-1}
	mkdir -p "$d"
	[ -n "$mode" ] || case $c in
		mmio-msi*) mode="${c%-*} ext=extension_0x6:_MSI_offered,_doorbells_offered" ;;
		*) mode="${c%-*} ext=" ;;
	esac
	{
		echo "MB-GUEST: $rep"
		echo "MB-L2-MODE: $mode"
		echo "MB-L2-BEGIN"
		echo "rr-client: rep=1 n=1000 usec=1000000 trans_per_s=$tps"
		echo "rr-client: done reps=1 median_trans_per_s=$tps spread_pct=0.00"
		echo "MB-L2-END"
		echo "MB-L2-IRQ: name=virtio0-config kind=msi delta=0 unhandled=0"
		echo "MB-L2-IRQ: name=virtio0-x kind=$kind delta=$delta unhandled=1"
		echo "MB-L2-NET: trans=1200 rx=$rx tx=1201 retrans=$rt"
		[ "$tty" = 0 ] || echo "MB-L2-TTY: through /dev/console"
		echo "MB-L2-SERIAL: 4: 6 IO-APIC 4-edge ttyS0"
		echo "MB-L2-RC=0"
	} >> "$d/mb-$c-l2.txt"
	{
		echo "MB-GUEST: $rep"
		echo "rr-server: listening on port 12865"
		echo "rr-server: rep=1 n=1000 usec=1000000 trans_per_s=$tps exits=$ex uexits=$ux ctxt=5${SRVX:+ $SRVX}"
		echo "MB-L1-RETRANS: ${L1RT:-0 probes=0 timeouts=0 synretrans=0}"
	} >> "$d/mb-$c-server.txt"
}

echo "TAP version 13"
echo "1..9"

# 1-3: a good run, two irqchips, three guests each.
r=$tmp/good
d=$r/mmiobench/6.12-generic-kit
for chip in on split; do
	for rep in 1 2 3; do
		guest "$d" "pci-$chip" $rep $((900 + rep * 100)) 100 5000 msi 1200
		guest "$d" "mmio-$chip" $rep $((600 + rep * 100)) 2400 7000 legacy 1200
		guest "$d" "mmio-msi-$chip" $rep $((900 + rep * 50)) 50 4000 msi 1320
		guest "$d" "mmio-msi-doorbell-$chip" $rep 1000 $((rep * 10)) 4000 msi 1200
	done
done
python3 "$here/report.py" --reps 3 --no-machine "$r" > "$tmp/good.out" 2>&1
ok $? "report.py on a good run exits 0"
csv=$r/mmio.csv
[ "$(head -n 1 "$csv")" = transport,irqchip,kernel,trans_per_s,spread_pct,ratio_to_pci,ratio_to_mmio,uexits_per_trans,vmexits_per_trans,guest_irqs_per_trans ] &&
	grep -qx 'pci,on,6.12-generic-kit,1100.0,18.2,1.00,1.38,0.10,5.00,1.00' "$csv" &&
	grep -qx 'mmio,on,6.12-generic-kit,800.0,25.0,0.73,1.00,2.40,7.00,1.00' "$csv" &&
	grep -qx 'mmio-msi,split,6.12-generic-kit,1000.0,10.0,0.91,1.25,0.05,4.00,1.10' "$csv" &&
	grep -qx 'mmio-msi-doorbell,split,6.12-generic-kit,1000.0,0.0,0.91,1.25,0.02,4.00,1.00' "$csv" &&
	[ "$(wc -l < "$csv")" = 9 ] && [ "$(wc -l < "$r/mmio-guests.csv")" = 25 ]
rc=$?; [ "$rc" -eq 0 ] || sed 's/^/# /' "$csv"
ok $rc "mmio.csv: the header, medians, spreads, ratios to pci and mmio, counts per transaction"
grep -q '^mmiobench check: 32 passed, 0 failed$' "$tmp/good.out" &&
	grep -q '^pci  *on .* 9536$' "$tmp/good.out" && grep -q '^mmio  *on .* 6939$' "$tmp/good.out"
rc=$?; [ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/good.out"
ok $rc "the table carries the seed's figures; every check passes"

# 4: paired ratios of the good run: three pairs are too few for a verdict.
grep -qx 'mmio-msi,on,6.12-generic-kit,pci,3,0.909,0.875,0.950,0.750' "$r/mmio-pairs.csv" &&
	grep -qx 'mmio-msi,on,6.12-generic-kit,mmio,3,1.250,1.167,1.357,0.750' "$r/mmio-pairs.csv" &&
	grep -q '^mmio-msi  *on .* pci  *3  *0.91  *0.88\.\.0\.95  *0.75  too few pairs for 95%$' "$tmp/good.out"
rc=$?; [ "$rc" -eq 0 ] || sed 's/^/# /' "$r/mmio-pairs.csv"
ok $rc "paired ratios: median and sign-test interval of the repetitions, no verdict from three pairs"

# 5: six pairs give a 96.9 % interval: a verdict when it excludes 1, none
# when it does not.
r=$tmp/pairs
d=$r/mmiobench/6.12-rt-kit
for rep in 1 2 3 4 5 6; do
	guest "$d" pci-on $rep $((1000 + rep * 10)) 100 5000 msi 1200
	guest "$d" mmio-on $rep $((700 + rep * 10)) 2400 7000 legacy 1200
	guest "$d" mmio-msi-on $rep $((990 + (rep % 2) * 40)) 50 4000 msi 1200
done
python3 "$here/report.py" --combos "pci-on mmio-on mmio-msi-on" --reps 6 --no-machine "$r" > "$tmp/pairs.out" 2>&1
grep -q '^mmio  *on .* pci  *6 .* 0.97  below pci$' "$tmp/pairs.out" &&
	grep -q '^mmio-msi  *on .* pci  *6 .* 0.97  not told apart from pci$' "$tmp/pairs.out" &&
	grep -q '^mmio-msi  *on .* mmio  *6 .* 0.97  above mmio$' "$tmp/pairs.out"
rc=$?; [ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/pairs.out"
ok $rc "paired ratios: six pairs, below/above when the interval excludes 1, no verdict when it does not"

# 6-8: each bad log fails its own check, and only that one.
r=$tmp/bad
d=$r/mmiobench/6.12-generic-kit
guest "$d" pci-on 1 1000 100 5000 msi 1200
guest "$d" mmio-on 1 800 2400 7000 msi 1200
guest "$d" mmio-msi-on 1 1000 50 4000 legacy 1200
guest "$d" mmio-msi-doorbell-on 1 1000 50 4000 msi 1200 1
guest "$d" pci-split 1 1000 100 5000 msi 1200 0 900
L1RT="1 probes=1 timeouts=0 synretrans=0" guest "$d" mmio-on 2 800 2400 7000 legacy 1200
# the second mmio-split guest never connected: its server saw nothing.
guest "$d" mmio-split 1 800 2400 7000 legacy 1200
echo "MB-GUEST: 2" >> "$d/mb-mmio-split-server.txt"
{ echo "MB-GUEST: 2"; echo "MB-L2-RC=1"; } >> "$d/mb-mmio-split-l2.txt"
guest "$d" mmio-msi-split 1 1000 50 4000 msi 1200 0 1201 "mmio-msi ext="
guest "$d" mmio-msi-doorbell-split 1 1000 50 4000 msi 1200 0 1201 "" 0
python3 "$here/report.py" --reps 0 --no-machine "$r" > "$tmp/bad.out" 2>&1
[ $? -eq 1 ]
ok $? "report.py exits 1 when a check fails"
sed -n 's/^not ok [0-9]* - //p' "$tmp/bad.out" > "$tmp/notok"
grep -q '^6.12-generic-kit mmio-on: the legacy interrupt only' "$tmp/notok" &&
	grep -q '^6.12-generic-kit mmio-msi-on: MSI vectors only' "$tmp/notok" &&
	grep -q '^6.12-generic-kit mmio-msi-split: MSI vectors only .*no extension at probe' "$tmp/notok" &&
	grep -q '^6.12-generic-kit mmio-msi-doorbell-on: no lost interrupt (TCP retransmissions: guest 1' "$tmp/notok" &&
	grep -q '^6.12-generic-kit pci-split: no lost interrupt .*fewer packets received than transactions: 1' "$tmp/notok" &&
	grep -q '^6.12-generic-kit mmio-split: 1 of 2 guests connected' "$tmp/notok" &&
	grep -q '^6.12-generic-kit mmio-msi-doorbell-split: the guest.s write to /dev/console arrived .*missing in 1 of 1' "$tmp/notok" &&
	grep -q '^6.12-generic-kit mmio-on: no lost interrupt (TCP retransmissions: guest 0, testbed 1 (loss probes 1, timeouts 0, SYN-ACK 0);' "$tmp/notok" &&
	[ "$(wc -l < "$tmp/notok")" = 8 ]
rc=$?; [ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/bad.out"
ok $rc "each bad log fails its check: legacy on mmio, MSI on mmio-msi, the extension, retransmissions, packets, a guest that did not connect, the console, the testbed's retransmission and its kind"
grep -q '^mmio,split,6.12-generic-kit,800.0,' "$r/mmio.csv"
ok $? "the guests that ran still give their row"

# 9: with the server's timed count, a retransmission around the guest only
# (connect, teardown) is printed but not judged; one in the timed
# transactions fails.
r=$tmp/timed
d=$r/mmiobench/6.12-generic-kit
L1RT="1 probes=1 timeouts=0 synretrans=0" SRVX=retrans=0 guest "$d" pci-on 1 1000 100 5000 msi 1200
L1RT="1 probes=1 timeouts=0 synretrans=0" SRVX=retrans=1 guest "$d" mmio-on 1 800 2400 7000 legacy 1200
python3 "$here/report.py" --combos "pci-on mmio-on" --reps 0 --no-machine "$r" > "$tmp/timed.out" 2>&1
grep -q '^ok [0-9]* - 6.12-generic-kit pci-on: no lost interrupt (TCP retransmissions: guest 0, testbed 0 in the timed transactions, 1 around the whole guests (loss probes 1, timeouts 0, SYN-ACK 0);' "$tmp/timed.out" &&
	grep -q '^not ok [0-9]* - 6.12-generic-kit mmio-on: no lost interrupt (TCP retransmissions: guest 0, testbed 1 in the timed transactions' "$tmp/timed.out"
rc=$?; [ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/timed.out"
ok $rc "the testbed's retransmissions are judged in the timed transactions when the server counted them"

echo "# $((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
