#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make checkpatch: the distro source's checkpatch.pl --strict over our own
# C files and headers and over our hook patches.  Distro code is not ours to
# restyle, so only files we wrote are checked.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kit_target
cp=$B/src/$SRCPKG-$SRCVER/scripts/checkpatch.pl
[ -f "$cp" ] || "$kit_top/scripts/kit/build.sh" > /dev/null
[ -f "$cp" ] || die "$cp missing"

cd "$kit_top"
mapfile -t files < <(git ls-files -- '*.c' '*.h' | grep -v '^build/')
# patches/bochs-*: fixes to Bochs (C++, LGPL), in that project's style;
# patches/qemu-*: changes to QEMU, in QEMU's style (its checkpatch).
mapfile -t patches < <(git ls-files -- 'patches/*.patch' ':!patches/bochs-*' ':!patches/qemu-*')
fail=0
opts=(--no-tree --strict --quiet --show-types --no-summary
      --ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES)
if [ ${#files[@]} -gt 0 ]; then
	perl "$cp" "${opts[@]}" -f "${files[@]}" || fail=1
fi
# On stdin: given the path of a file git tracks, checkpatch checks it as a
# source file (every line "added"), not as a patch.
for p in "${patches[@]}"; do
	perl "$cp" "${opts[@]}" - < "$p" | sed "s#^\(\#[0-9]*: FILE: \)#\1$p: #" ||
		fail=1
done
echo "checkpatch: ${#files[@]} files, ${#patches[@]} patches: $([ $fail = 0 ] && echo clean || echo ISSUES)"
exit $fail
