#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs in the testbed after guest-setup.sh loaded the module set: bad input
# to the kit's module parameters in /sys/module/*/parameters.
#  - kvm.irqfd_fastpath is 0444: kernfs refuses to open it for writing,
#    even for root (EACCES), and the value stays.
#  - kvm.irqfd_vcpu_inject and vfio_pci_core.fastpath are 0644 bools:
#    anything kstrtobool() does not take ("maybe", "2", "-1", a bare
#    newline) fails with EINVAL and leaves the value as it was; the
#    spellings it takes (n/1/off/on) set it.  The value found is restored.
#  - vfio_pci_core.storm_budget and kvm.irqfd_pin_wait_ms are 0644 uints:
#    kstrtouint() refuses "-1" and "many" (EINVAL) and 2^32 (ERANGE), the
#    value stays; 0, 1 and 2^32-1 set it.  The value found is restored.
# With stock modules the parameters do not exist: every test is skipped.
set -u
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fail=1; echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

# write FILE VALUE: prints the error text of the write ("" on success).
write() {
	local out

	out=$({ printf '%s' "$2" > "$1"; } 2>&1)
	echo "${out##*: }"
}

ro=/sys/module/kvm/parameters/irqfd_fastpath
rw_params="/sys/module/kvm/parameters/irqfd_vcpu_inject
/sys/module/vfio_pci_core/parameters/fastpath"

echo "TAP version 13"
echo "1..9"

if [ ! -e "$ro" ]; then
	skip "$ro is read-only" "no such parameter (stock modules)"
else
	before=$(cat "$ro")
	err=$(write "$ro" N)
	if [ "$err" = "Permission denied" ] && [ "$(cat "$ro")" = "$before" ]; then
		ok "$ro: writing N fails with EACCES, value stays $before"
	else
		nok "$ro: writing N gave '${err:-success}', value $(cat "$ro") (was $before)"
	fi
fi

for p in $rw_params; do
	if [ ! -e "$p" ]; then
		skip "$p rejects bad values" "no such parameter (stock modules)"
		skip "$p takes n, 1, off, on" "no such parameter (stock modules)"
		continue
	fi
	before=$(cat "$p")
	bad=
	for v in maybe 2 -1 $'\n'; do
		err=$(write "$p" "$v")
		now=$(cat "$p")
		if [ "$err" != "Invalid argument" ] || [ "$now" != "$before" ]; then
			bad="$bad '${v/$'\n'/\\n}': '${err:-success}' value $now;"
		fi
	done
	if [ -z "$bad" ]; then
		ok "$p: maybe, 2, -1 and a bare newline fail with EINVAL, value stays $before"
	else
		nok "$p: want EINVAL and $before:$bad"
	fi

	bad=
	for pair in n:N 1:Y off:N on:Y; do
		err=$(write "$p" "${pair%%:*}")
		now=$(cat "$p")
		[ -z "$err" ] && [ "$now" = "${pair##*:}" ] ||
			bad="$bad '${pair%%:*}': '${err:-success}' value $now;"
	done
	err=$(write "$p" "$before")
	[ -z "$err" ] && [ "$(cat "$p")" = "$before" ] ||
		bad="$bad restoring $before: '${err:-success}';"
	if [ -z "$bad" ]; then
		ok "$p: n, 1, off, on set N, Y, N, Y; restored to $before"
	else
		nok "$p:$bad"
	fi
done

for p in /sys/module/vfio_pci_core/parameters/storm_budget \
	 /sys/module/kvm/parameters/irqfd_pin_wait_ms; do
	if [ ! -e "$p" ]; then
		skip "$p rejects bad values" "no such parameter (stock modules)"
		skip "$p takes 0, 1, 4294967295" "no such parameter (stock modules)"
		continue
	fi
	before=$(cat "$p")
	bad=
	for pair in "-1:Invalid argument" "many:Invalid argument" \
		    "4294967296:Numerical result out of range"; do
		err=$(write "$p" "${pair%%:*}")
		now=$(cat "$p")
		[ "$err" = "${pair#*:}" ] && [ "$now" = "$before" ] ||
			bad="$bad '${pair%%:*}': '${err:-success}' value $now;"
	done
	if [ -z "$bad" ]; then
		ok "$p: -1 and many fail with EINVAL, 2^32 with ERANGE, value stays $before"
	else
		nok "$p: want the errors and $before:$bad"
	fi
	bad=
	for v in 0 1 4294967295 "$before"; do
		err=$(write "$p" "$v")
		now=$(cat "$p")
		[ -z "$err" ] && [ "$now" = "$v" ] || bad="$bad '$v': '${err:-success}' value $now;"
	done
	if [ -z "$bad" ]; then
		ok "$p: 0, 1, 4294967295 set; restored to $before"
	else
		nok "$p:$bad"
	fi
done
exit $fail
