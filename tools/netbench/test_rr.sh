#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Host-side tests of make netbench's parts (TAP), run by make check: rr's
# protocol and counters on loopback, its bad input, and report.py on logs
# laid out as scripts/kit/netbench.sh lays them out.  No timing is judged.
#
#   test_rr.sh RR_BINARY
set -uo pipefail
rr=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
# shellcheck source-path=SCRIPTDIR source=../lib/shell/tap.sh
. "$here/../lib/shell/tap.sh"
port() { echo $((20000 + RANDOM % 20000)); }
# wait_listen LOG: until the server printed that it listens (5 s at most).
wait_listen() {
	for _ in $(seq 50); do grep -q listening "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

echo "TAP version 13"
echo "1..19"

# 1-4: a run on loopback; the counters' deltas are read around each rep.
p=$(port)
echo 7 > "$tmp/seven"
"$rr" server -1 -p "$p" -s ctxt=/proc/stat:ctxt -s seven="$tmp/seven" \
	-s missing=/nonexistent -s nokey=/proc/stat:nosuchkey > "$tmp/srv" 2>&1 &
srv=$!
wait_listen "$tmp/srv"
"$rr" client -H 127.0.0.1 -p "$p" -w 10 -n 300 -r 3 > "$tmp/cli" 2>&1
ok $? "client on loopback exits 0"
wait "$srv"
ok $? "server exits 0 after its one client (-1)"
[ "$(grep -c '^rr-client: rep=[123] n=300 usec=[0-9]* trans_per_s=[0-9.]*$' "$tmp/cli")" = 3 ] &&
	grep -q '^rr-client: done reps=3 median_trans_per_s=[0-9.]* spread_pct=[0-9.]*$' "$tmp/cli"
ok $? "client prints 3 repetitions and the median line"
[ "$(grep -cE '^rr-server: rep=[123] n=300 usec=[0-9]+ trans_per_s=[0-9.]+ ctxt=[1-9][0-9]* seven=0 missing=-1 nokey=-1$' "$tmp/srv")" = 3 ]
ok $? "server counters: ctxt moved, a constant gives 0, unreadable ones -1"

# 17 (numbered last): :~TEXT sums the per-CPU columns of /proc/interrupts
# rows that hold TEXT; the ahci row and the chip's own digits do not count.
printf ' 24: 1 2 IR-PCI-MSI-0000:00:03.0 0-edge vfio-msi[0](0000:00:03.0)\n 25: 5 5 IR-PCI 1-edge ahci\n 26: 7 0 IR-PCI-MSIX-0000:00:03.0 1-edge vfio-msix[1]\n' > "$tmp/irqs"
sum_out=$("$rr" stat irqs="$tmp/irqs:~vfio" none="$tmp/irqs:~no-such-irq" 2>&1)
# 19 (numbered last): :@GROUP:NAME reads a column of /proc/net/snmp's
# header-and-values tables; a missing column, group or name gives -1.
printf 'Ip: Forwarding InReceives\nIp: 1 77\nTcp: RtoAlgorithm RetransSegs InErrs\nTcp: 1 42 3\nUdp: InDatagrams RetransSegs\nUdp: 5 6\n' > "$tmp/snmp"
tab_out=$("$rr" stat r="$tmp/snmp:@Tcp:RetransSegs" u="$tmp/snmp:@Udp:RetransSegs" \
	i="$tmp/snmp:@Ip:InReceives" c="$tmp/snmp:@Tcp:NoSuch" g="$tmp/snmp:@Tc:RetransSegs" \
	n="$tmp/snmp:@Tcp" 2>&1)

# 5-10: bad input gives exit code 2 and a message, never a run.
"$rr" client -H not-an-address -n 1 > /dev/null 2>&1; [ $? = 2 ]
ok $? "client -H with a name: exit 2"
"$rr" client -H 127.0.0.1 -n 0 > /dev/null 2>&1; [ $? = 2 ]
ok $? "client -n 0: exit 2"
"$rr" client -H 127.0.0.1 -r 1001 > /dev/null 2>&1; [ $? = 2 ]
ok $? "client -r above 1000: exit 2"
"$rr" client -H 127.0.0.1 -p 65536 > /dev/null 2>&1; [ $? = 2 ]
ok $? "client -p 65536: exit 2"
"$rr" server -s novalue > /dev/null 2>&1; [ $? = 2 ]
ok $? "server -s without NAME=PATH: exit 2"
"$rr" frobnicate > /dev/null 2>&1; [ $? = 2 ]
ok $? "unknown mode: exit 2"

# 11: nothing listening: the client gives up with exit 1 (10 s of retries).
p=$(port)
"$rr" client -H 127.0.0.1 -p "$p" -n 1 -r 1 > /dev/null 2>&1; [ $? = 1 ]
ok $? "client without a server: exit 1"

# 12-13: a peer that breaks the protocol stops the run with exit 1.
p=$(port)
"$rr" server -1 -p "$p" > "$tmp/srv2" 2>&1 &
srv=$!
wait_listen "$tmp/srv2"
python3 -c 'import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"XXXXXXXXXXXXXXXX")
s.recv(1)' "$p" 2> /dev/null
wait "$srv"; [ $? = 1 ] && grep -q 'bad hello' "$tmp/srv2"
ok $? "server: a bad hello ends the session with exit 1"
p=$(port)
python3 -c 'import socket, sys
l = socket.socket(socket.AF_INET6); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("::", int(sys.argv[1]))); l.listen(1); print("listening", flush=True)
c, _ = l.accept(); c.recv(16); c.sendall(b"\x01")
c.recv(1); c.sendall(b"\x00")   # the complement of sequence 0 is 0xff
c.recv(1)' "$p" > "$tmp/fake" 2>&1 &
wait_listen "$tmp/fake"
"$rr" client -H 127.0.0.1 -p "$p" -w 0 -n 5 -r 1 > "$tmp/cli2" 2>&1; [ $? = 1 ] &&
	grep -q 'response 0, expected 0xff' "$tmp/cli2"
ok $? "client: a wrong response byte ends the run with exit 1"

# 14: report.py on netbench.sh's layout, from this run's own logs.
r=$tmp/report
for fm in generic-stock generic-kit; do
	for c in msi-on nomsi-on msi-split nomsi-split; do
		mkdir -p "$r/netbench/$fm"
		cp "$tmp/cli" "$r/netbench/$fm/nb-$c-l2.txt"
		cp "$tmp/srv" "$r/netbench/$fm/nb-$c-server.txt"
	done
done
python3 "$here/report.py" --kline 6.12 "$r" > "$tmp/report.out" 2>&1 &&
	[ "$(head -n 1 "$r/tcprr.csv")" = "irq,irqchip,kernel,modules,trans_per_s,spread_pct,ratio_to_msi_on,qemu,uexits_per_trans,vmexits_per_trans,ctxsw_per_trans,kit_stock_ratio,kit_stock_ci_low,kit_stock_ci_high" ] &&
	[ "$(grep -c '^\(msi\|nomsi\),\(on\|split\),6.12-generic,\(stock\|kit\),[0-9.]*,[0-9.]*,1.000,stock,,,[0-9.]*,,,$' "$r/tcprr.csv")" = 8 ] &&
	[ "$(wc -l < "$r/tcprr-reps.csv")" = 25 ] &&
	grep -q 'stock nomsi/split against nomsi/on: 1.00 (the seed: 0.93)' "$r/tcprr.txt"
rc=$?; [ "$rc" -eq 0 ] || sed "s/^/# /" "$tmp/report.out" "$r/tcprr.csv"
ok $rc "report.py: tcprr.csv header and 8 rows, 24 repetitions, the seed line"

# 15: the paired statistics against known answers: the sign test's
# interval of the median is x(6)..x(15) for 20 values (95.9 %), min..max for
# 6 (96.9 %) and, below 95 %, for 5 (93.8 %).
python3 - "$here" > "$tmp/stats.out" 2>&1 <<'EOF_PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
from report import median_interval as mi, pairs
r = [(mi(list(range(20, 0, -1)))), mi([6, 1, 5, 2, 4, 3]), mi([5, 1, 4, 2, 3])]
want = [(10.5, 6, 15, 0.9586), (3.5, 1, 6, 0.9688), (3, 1, 5, 0.9375)]
ok = all(g[:3] == w[:3] and abs(g[3] - w[3]) < 5e-5 for g, w in zip(r, want))
p = pairs([{"guest": 1, "trans_per_s": 100.0}, {"guest": 2, "trans_per_s": 50.0},
           {"guest": 3, "trans_per_s": 10.0}],
          [{"guest": 2, "trans_per_s": 60.0}, {"guest": 1, "trans_per_s": 90.0},
           {"guest": 4, "trans_per_s": 1.0}])
ok = ok and p == [1.2, 0.9] and mi([]) is None
print(r, p)
sys.exit(0 if ok else 1)
EOF_PY
rc=$?; [ "$rc" -eq 0 ] || sed "s/^/# /" "$tmp/stats.out"
ok $rc "report.py: paired ratios and the sign-test interval, known answers"

# 16: a same-boot A/B layout: B at 0.9 of A in every pair of one row is
# "below stock", B at 1.1 in another "above", a row with A = B neither,
# and 5 pairs at 0.8 give no verdict (min..max covers 93.8 %).
r=$tmp/report-ab
mkdir -p "$r/netbench/generic-stock" "$r/netbench/generic-kit"
ab_log() {	# ab_log FILE WHO RATE...: one guest per rate
	local f=$1 who=$2 g=0
	shift 2
	for t in "$@"; do
		g=$((g + 1))
		printf 'NB-GUEST: %s\n%s: rep=1 n=1000 usec=1 trans_per_s=%s exits=3000 ctxt=5000\n' \
			"$g" "$who" "$t" >> "$f"
	done
}
for c in msi-on nomsi-split msi-split; do
	for w in l2:rr-client server:rr-server; do
		ab_log "$r/netbench/generic-stock/nb-$c-${w%%:*}.txt" "${w#*:}" 100
		ab_log "$r/netbench/generic-kit/nb-$c-a-${w%%:*}.txt" "${w#*:}" 100 200 100 200 100 200
	done
done
for w in l2:rr-client server:rr-server; do
	ab_log "$r/netbench/generic-kit/nb-msi-on-${w%%:*}.txt" "${w#*:}" 90 180 90 180 90 180
	ab_log "$r/netbench/generic-kit/nb-nomsi-split-${w%%:*}.txt" "${w#*:}" 110 220 110 220 110 220
	ab_log "$r/netbench/generic-kit/nb-msi-split-${w%%:*}.txt" "${w#*:}" 100 200 100 200 100 200
	ab_log "$r/netbench/generic-kit/nb-nomsi-on-a-${w%%:*}.txt" "${w#*:}" 100 100 100 100 100
	ab_log "$r/netbench/generic-kit/nb-nomsi-on-${w%%:*}.txt" "${w#*:}" 80 80 80 80 80
done
python3 "$here/report.py" --kline 6.12 --qemu kit "$r" > "$tmp/report-ab.out" 2>&1 &&
	grep -q '^msi,on,6.12-generic,kit,135.0,66.67,1.000,kit,,3.000,5.000,0.900,0.900,0.900$' "$r/tcprr.csv" &&
	grep -q '^nomsi,split,6.12-generic,kit,165.0,66.67,1.222,kit,,3.000,5.000,1.100,1.100,1.100$' "$r/tcprr.csv" &&
	grep -q '^msi,split,6.12-generic,kit,150.0,66.67,1.111,kit,,3.000,5.000,1.000,1.000,1.000$' "$r/tcprr.csv" &&
	grep -q '^msi,on,6.12-generic,stock,100.0,0.00,1.000,kit,,3.000,5.000,,,$' "$r/tcprr.csv" &&
	[ "$(grep -c 'BELOW STOCK' "$r/tcprr.txt")" = 1 ] &&
	grep -q 'BELOW STOCK (the whole interval below 1): 6.12-generic msi/on kit B/A 0.900, interval 0.900..0.900 (6 pairs, coverage 96.9 %)' "$r/tcprr.txt" &&
	[ "$(grep -c 'above stock' "$r/tcprr.txt")" = 1 ] &&
	grep -q 'above stock (the whole interval above 1): 6.12-generic nomsi/split' "$r/tcprr.txt" &&
	grep -q '^nomsi,on,6.12-generic,kit,80.0,0.00,0.593,kit,,3.000,5.000,0.800,0.800,0.800$' "$r/tcprr.csv" &&
	grep -q 'no verdict, the interval covers less than 95 %: 6.12-generic nomsi/on kit B/A 0.800, interval 0.800..0.800 (5 pairs, coverage 93.8 %)' "$r/tcprr.txt" &&
	grep -q 'no verdict, the interval covers less than 95 %: 6.12-generic kit nomsi/split over nomsi/on, paired (guest i of each): 1.375, interval 1.375..2.750 (5 pairs, coverage 93.8 %)' "$r/tcprr.txt" &&
	[ "$(wc -l < "$r/tcprr-reps.csv")" = 50 ]
rc=$?; [ "$rc" -eq 0 ] || sed "s/^/# /" "$tmp/report-ab.out" "$r/tcprr.csv"
ok $rc "report.py: same-boot A/B rows, paired ratios, the verdicts from the interval"

# 17: nomsi/split over nomsi/on paired by guest number: 6 pairs from 0.9
# to 1.2 give an interval that contains 1.
r=$tmp/report-split
mkdir -p "$r/netbench/generic-kit"
for w in l2:rr-client server:rr-server; do
	for c in nomsi-on nomsi-split; do
		ab_log "$r/netbench/generic-kit/nb-$c-a-${w%%:*}.txt" "${w#*:}" 100 100 100 100 100 100
	done
	ab_log "$r/netbench/generic-kit/nb-nomsi-on-${w%%:*}.txt" "${w#*:}" 100 100 100 100 100 100
	ab_log "$r/netbench/generic-kit/nb-nomsi-split-${w%%:*}.txt" "${w#*:}" 90 95 100 105 110 120
done
python3 "$here/report.py" --kline 6.12 --qemu kit "$r" > "$tmp/report-split.out" 2>&1 &&
	grep -q 'split not shown below on (the interval contains 1): 6.12-generic kit nomsi/split over nomsi/on, paired (guest i of each): 1.025, interval 0.900..1.200 (6 pairs, coverage 96.9 %)' "$r/tcprr.txt"
rc=$?; [ "$rc" -eq 0 ] || sed "s/^/# /" "$tmp/report-split.out" "$r/tcprr.txt"
ok $rc "report.py: nomsi/split over nomsi/on paired by guest, known answers"

[ "$sum_out" = "irqs=10 none=-1" ] || echo "# rr stat: $sum_out"
[ "$sum_out" = "irqs=10 none=-1" ]
ok $? "server counter :~vfio sums the vfio rows' CPU columns (rr stat)"

want="r=42 u=6 i=77 c=-1 g=-1 n=-1"
[ "$tab_out" = "$want" ] || echo "# rr stat: $tab_out"
[ "$tab_out" = "$want" ]
ok $? "server counter :@GROUP:NAME reads a /proc/net/snmp column (rr stat)"

echo "# $((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
