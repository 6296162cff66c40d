#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make sparse: run sparse over the whole kit build (C=2: every file, not
# only rebuilt ones) and fail on any warning that the stock build of the
# same source does not have.  Warnings are compared as a multiset of
# "file: message" (line numbers dropped: hook patches move lines).
#
# The stock baseline is recorded per target in
# scripts/kit/sparse-baseline/<line>-<flavour>.txt; `sparse.sh --baseline`
# (re)computes it from build/<krel>.stock/, the distro code with build glue
# only.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kit_target
kit_need_pkgs sparse
base=$kit_top/scripts/kit/sparse-baseline/$KLINE-$FLAVOUR.txt

# sparse output -> sorted "path: severity: message" lines, paths relative to
# the tree (or <headers>/ for the headers package).
normalise() {
	awk -v p="$1/" '{ if (index($0, p) == 1) $0 = substr($0, length(p) + 1); print }' |
		sed -n -E 's#^/usr/src/linux-headers-[^/]*/#<headers>/#
			   s#^([^ :]+/)?arch/x86/kvm/\.\./\.\./\.\./virt/#virt/#
			   s#^([^ :]+):[0-9]+:[0-9]+: (warning|error): #\1: \2: #p' |
		LC_ALL=C sort
}

run_sparse() {
	local tree=$1 log=$2
	kit_make "$tree" C=2 CHECK=sparse CF=-fmax-warnings=unlimited modules > "$log.raw" 2>&1 ||
		{ tail -n 30 "$log.raw" >&2; die "sparse build failed (log: $log.raw)"; }
	normalise "$tree" < "$log.raw" > "$log"
}

if [ "${1:-}" = --baseline ] || [ ! -f "$base" ]; then
	step "sparse baseline: stock $SRCPKG $SRCVER ($KLINE $FLAVOUR)"
	KIT_STOCK=1 "$kit_top/scripts/kit/build.sh" > "$B/stock-build.log" 2>&1 ||
		{ tail -n 30 "$B/stock-build.log" >&2; die "stock build failed"; }
	mkdir -p "$(dirname "$base")"
	run_sparse "$B/$KREL.stock" "$B/sparse-stock-$KREL.txt"
	{
		echo "# sparse over stock $SRCPKG $SRCVER, $KREL: $(wc -l < "$B/sparse-stock-$KREL.txt") lines"
		cat "$B/sparse-stock-$KREL.txt"
	} > "$base"
	step "baseline written: ${base#"$kit_top"/}"
	[ "${1:-}" = --baseline ] && exit 0
fi

"$kit_top/scripts/kit/build.sh" > "$B/build-$KREL.log" 2>&1 ||
	{ tail -n 30 "$B/build-$KREL.log" >&2; die "build failed"; }
ours=$B/sparse-$KREL.txt
step "sparse over build/$KREL"
run_sparse "$B/$KREL" "$ours"
new=$(LC_ALL=C comm -13 <(grep -v '^#' "$base" | LC_ALL=C sort) "$ours" || true)
nb=$(grep -vc '^#' "$base" || true)
echo "sparse: $(wc -l < "$ours") warnings/errors (stock baseline: $nb), new: $(printf '%s' "$new" | grep -c . || true)"
if [ -n "$new" ]; then
	echo "$new" | sed 's/^/sparse: new: /'
	exit 1
fi
