#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make campaign: the reliability campaign (Documentation/reliability.rst)
# alone in the testbed, without the other steps of make check.
#   MODULES=kit|stock                  module set (default kit)
#   CAMPAIGN="stress_rt fuzz_ioctls"   a subset (default: all of it)
#   CAMPAIGN_ENV="KVM_IRQBYPASS_VMS=100 KVM_IRQBYPASS_SEED=7"
#                                      bounds and seeds for the tests
# Log: build/testbed/<krel>/campaign-<modules>/console.log.  Exit code as
# scripts/kit/testbed.sh (124 timeout, 125 kernel splat, 99 testbed).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

kit_target
modules=${MODULES:-kit}
case "$modules" in kit|stock) ;; *) die "MODULES=kit|stock" ;; esac
[ "$modules" = stock ] || "$kit_top/scripts/kit/build.sh"
sel=$B/selftests
make -s -C "$kit_top/tools/testing/selftests/kvm-irqbypass" OUTPUT="$sel"
# The clocksource watchdog marked the TSC unstable at the start of
# stress_rt (rt testbed first, 6.12 generic on 7 December 2026: 565 us of
# skew against the HPET over 511 ms), and the sched_clock static-key flip
# then died on TCG's text-patching int3 (Documentation/reliability.rst).
append=tsc=reliable
# shellcheck disable=SC2086 # word splitting wanted: lists of names
set -- ${CAMPAIGN:---campaign}
# shellcheck disable=SC2086
exec "$kit_top/scripts/kit/testbed.sh" --modules "$modules" \
	--name "campaign-$modules" --timeout 3600 --append "$append" \
	--trace-events vfio_fastpath -- \
	env ${CAMPAIGN_ENV:-} "$sel/run_tests.sh" "$@"
