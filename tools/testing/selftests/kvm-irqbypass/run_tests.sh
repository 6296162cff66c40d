#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run the kvm-irqbypass selftests and pass their TAP through, one header
# line per binary.  Exits non-zero if any binary failed (or did not run).
#
# Arguments: the tests to run (default: TEST_GEN_PROGS of the Makefile);
#            --campaign: the reliability campaign instead
#            (Documentation/reliability.rst), --all: both.
# Environment: KVM_IRQBYPASS_ITERS (interrupts per test, default 500),
#              KVM_IRQBYPASS_TIMEOUT (seconds per wait, default 60),
#              KVM_IRQBYPASS_TEST_TIMEOUT (seconds per binary, default 1200),
#              EDU_BDF (PCI address of the edu device, default: scan).

DIR=$(dirname "$(readlink -f "$0")")
# The lists are the Makefile's, written next to this script at build time.
LIST=$DIR/run_tests.list
TESTS=() CAMPAIGN=()
if [ -r "$LIST" ]; then
	while read -r kind name; do
		case $kind in
		default) TESTS+=("$name") ;;
		campaign) CAMPAIGN+=("$name") ;;
		esac
	done < "$LIST"
fi
LIMIT=${KVM_IRQBYPASS_TEST_TIMEOUT:-1200}

case "${1:-}" in
--campaign) TESTS=("${CAMPAIGN[@]}") ;;
--all) TESTS+=("${CAMPAIGN[@]}") ;;
?*) TESTS=("$@") ;;
esac
if [ ${#TESTS[@]} -eq 0 ]; then
	echo "Bail out! $LIST: not built (make -C $DIR)"
	exit 1
fi

passed=0
failed=0
failed_names=()
for t in "${TESTS[@]}"; do
	echo "# ===== $t"
	if [ ! -x "$DIR/$t" ]; then
		echo "Bail out! $DIR/$t: not built (make -C $DIR)"
		rc=127
	else
		# A hung binary is a failure, never a hung run.
		start=$SECONDS
		timeout --kill-after=10 "$LIMIT" "$DIR/$t"
		rc=$?
		[ $rc -eq 124 ] && echo "# $t: killed after ${LIMIT}s"
		echo "# $t: $((SECONDS - start)) s"
	fi
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
	else
		echo "# $t: exit code $rc"
		failed=$((failed + 1))
		failed_names+=("$t")
	fi
done

echo "# ===== summary"
[ $failed -gt 0 ] && echo "# failed: ${failed_names[*]}"
echo "selftests: $passed passed, $failed failed"
[ $failed -eq 0 ]
