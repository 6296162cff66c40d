#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs inside the testbed (tools/testbed/run.sh, chrooted into the host's
# root): every test of a plan written by scripts/kit/conformance.sh, one
# after the other, each with its own bound.
#
#   conformance-run.sh [--kut-timeout S] [--selftest-timeout S] [--hugepages N] PLAN
#
# PLAN has one test a line: "SUITE NAME PATH [ARGS...]", SUITE kut (PATH: a
# kvm-unit-tests standalone script, run with ACCEL=kvm and Debian's
# qemu-system-x86_64) or selftests (PATH: a KVM selftest binary, run with
# ARGS, words without quoting, from tools/testing/conformance/args.txt).
# Results go to $KIT_OUT/results.txt, "SUITE NAME RESULT SECONDS" a line,
# RESULT one of pass, fail, skip, timeout, error (the test could not be
# started: no such file, no QEMU); each test's output to
# $KIT_OUT/logs/SUITE-NAME.log.  Exit code 0 when every test of the plan
# has a result line (whatever the result), 1 otherwise.
set -euo pipefail

kut_timeout=900 selftest_timeout=120 hugepages=0
while [ $# -gt 0 ]; do
	case "$1" in
	--kut-timeout) kut_timeout=$2; shift 2 ;;
	--selftest-timeout) selftest_timeout=$2; shift 2 ;;
	--hugepages) hugepages=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "conformance-run.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
plan=${1:?usage: conformance-run.sh [--kut-timeout S] [--selftest-timeout S] PLAN}
: "${KIT_OUT:?not in the testbed (no KIT_OUT)}"

# kvm-unit-tests' scripts use process substitution and /dev/fd/N;
# devtmpfs has no /dev/fd.  /tmp is a tmpfs already (the testbed's init).
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr
# POSIX named semaphores and shared memory live in /dev/shm, which
# devtmpfs lacks too (hardware_disable_test's sem_open() returned
# SEM_FAILED and the test crashed in libc).
if [ ! -d /dev/shm ]; then
	mkdir /dev/shm
	mount -t tmpfs -o mode=1777 shm /dev/shm
fi
# --hugepages N (the testbed's boots; never on a real host unasked): 2 MiB
# huge pages when there are none, for the selftests that skip without them
# (dirty_log_page_splitting_test, 2 vCPUs of 64 MiB with args.txt).
if [ "$hugepages" -gt 0 ] && [ "$(cat /proc/sys/vm/nr_hugepages)" -eq 0 ]; then
	echo "$hugepages" > /proc/sys/vm/nr_hugepages
fi

qemu=$(command -v qemu-system-x86_64 || true)
results=$KIT_OUT/results.txt
logs=$KIT_OUT/logs
mkdir -p "$logs"
: > "$results"
echo "# conformance: $(wc -l < "$plan") tests, bounds: kut ${kut_timeout}s, selftests ${selftest_timeout}s"

# A scratch working directory per test: the host root is read-only.
run_one() {
	local suite=$1 name=$2 path=$3 log=$4 args=$5 rc=0 work
	work=$(mktemp -d /tmp/conformance.XXXXXX)
	case "$suite" in
	kut)
		[ -n "$qemu" ] || { echo "no qemu-system-x86_64" > "$log"; echo error; return; }
		[ -z "$args" ] || { echo "arguments for a kvm-unit-test: $args" > "$log"; echo error; return; }
		# The script's own timeout (TIMEOUT, which overrides
		# unittests.cfg's) ends QEMU with 124; ours is a backstop.
		# A clean environment: the standalone scripts print it
		# (their "export" line has no name when nothing is configured).
		# stdin is /dev/null: the tests' QEMU (-serial stdio) would
		# otherwise read the rest of the plan from the loop below.
		(cd "$work" && env -i PATH="$PATH" HOME="$work" ACCEL=kvm QEMU="$qemu" \
			TIMEOUT="${kut_timeout}s" timeout -k 10 $((kut_timeout + 60)) \
			bash "$path") < /dev/null > "$log" 2>&1 || rc=$?
		# Exit codes of kvm-unit-tests' runner: 0 pass, 77 and 2
		# skip (premature failure, arch or check mismatch), 124
		# timeout; any other is a failure.
		case $rc in
		0) echo pass ;;
		2 | 77) echo skip ;;
		124) echo timeout ;;
		*) echo fail ;;
		esac
		;;
	selftests)
		# $args is split into words on purpose (no quoting in args.txt).
		# shellcheck disable=SC2086
		(cd "$work" && echo "# $path $args" &&
			env -i PATH="$PATH" HOME="$work" \
			timeout -k 10 "$selftest_timeout" "$path" $args) < /dev/null > "$log" 2>&1 || rc=$?
		# kselftest: 0 pass, 4 (KSFT_SKIP) skip.
		case $rc in
		0) echo pass ;;
		4) echo skip ;;
		124 | 137) echo timeout ;;
		*) echo fail ;;
		esac
		;;
	*) echo "unknown suite $suite" > "$log"; echo error ;;
	esac
	rm -rf "$work"
}

while read -r suite name path args; do
	case "$suite" in '' | '#'*) continue ;; esac
	log=$logs/$suite-$name.log
	start=$SECONDS
	if [ ! -f "$path" ]; then
		echo "cannot start: $path does not exist" > "$log"
		res=error
	else
		res=$(run_one "$suite" "$name" "$path" "$log" "$args")
	fi
	secs=$((SECONDS - start))
	echo "$suite $name $res $secs" >> "$results"
	echo "# conformance: $suite $name: $res (${secs} s)"
done < "$plan"

want=$(grep -cvE '^[[:space:]]*(#|$)' "$plan" || true)
got=$(wc -l < "$results")
[ "$want" -eq "$got" ] || { echo "# conformance: $got results for $want tests"; exit 1; }
exit 0
