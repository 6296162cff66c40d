#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make status [STATUS_ARGS="--trace 10"]: the dkms package's
# kvm-irqbypass-status, from the work tree (debian/kvm-irqbypass-status).
exec "$(dirname "$0")/../../debian/kvm-irqbypass-status" ${STATUS_ARGS:-}
