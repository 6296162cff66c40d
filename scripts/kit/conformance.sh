#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make conformance: kvm-unit-tests and the distro's own KVM selftests
# (tools/testing/selftests/kvm of linux-source-<line>) in the testbed, once
# with the stock modules and once with the kit's, stock against kit.
#
#   1. builds kvm-unit-tests (x86_64, standalone scripts) into
#      build/conformance/kvm-unit-tests, from the shared archive
#      (../shared/third_party/kvm-unit-tests-*.tar.xz) or KUT_SRC=a checkout;
#   2. per line, extracts the subtrees the KVM selftests need from
#      /usr/src/linux-source-<line>.tar.xz into build/conformance/<line>/linux,
#      installs the uapi headers there (make headers) and builds
#      tools/testing/selftests/kvm;
#   3. writes the plan (build/conformance/<line>/plan.txt: every test of the
#      chosen suites but those in tools/testing/conformance/exclude.txt, with
#      the arguments of tools/testing/conformance/args.txt) and
#      boots the testbed with --modules stock, then kit, each running
#      tools/testbed/conformance-run.sh on the plan;
#   4. merges the results into build/report/conformance.csv
#      (suite,test,kernel,stock,kit) and prints them.
#
# Exit code non-zero when a test does worse with the kit than with stock
# (pass > skip > fail = timeout > error), when a testbed boot reported a
# kernel splat (run.sh's 125), timed out or ended without a result, or when
# a test could not be started (result "error").
#
# Environment:
#   KLINE=6.12|6.1|all            the kernel line(s) (FLAVOUR: generic)
#   CONFORMANCE_SUITES=kut|selftests|all
#   CONFORMANCE_TESTS="a b,c"     only these tests (names as in the table;
#                                 an excluded test named here does run)
#   CONFORMANCE_MODULES="stock kit"
#   CONFORMANCE_KUT_TIMEOUT=900   seconds per kvm-unit-test
#   CONFORMANCE_SELFTEST_TIMEOUT=120  seconds per KVM selftest
#   CONFORMANCE_MEM=6144          the testbed's memory in MiB (kvm-unit-tests'
#                                 svm tests start their guest with -m 4g)
#   CONFORMANCE_BOOT_TIMEOUT=     seconds per testbed boot (default: the
#                                 sum of the plan's bounds + 600)
#   CONFORMANCE_BUILD_ONLY=1      build the suites and write the plans only
#   CONFORMANCE_REPORT_ONLY=1     no build, no boot: the table and the CSV from
#                                 the last boots' results and plans
#   KUT_SRC=DIR                   a kvm-unit-tests checkout (built out of tree)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

export KIT_T0=${KIT_T0:-$(date +%s)}
lines=${KLINE:-6.12}
[ "$lines" = all ] && lines="6.12 6.1"
for l in $lines; do
	case $l in 6.12 | 6.1) ;; *) die "KLINE=$KLINE: 6.12, 6.1 or all" ;; esac
done
FLAVOUR=${FLAVOUR:-generic}
suites=${CONFORMANCE_SUITES:-all}
[ "$suites" = all ] && suites="kut selftests"
for s in $suites; do
	case $s in kut | selftests) ;; *) die "CONFORMANCE_SUITES=$suites: kut, selftests or all" ;; esac
done
modsets=${CONFORMANCE_MODULES:-stock kit}
for m in $modsets; do
	case $m in stock | kit) ;; *) die "CONFORMANCE_MODULES=$modsets: stock and/or kit" ;; esac
done
kut_timeout=${CONFORMANCE_KUT_TIMEOUT:-900}
st_timeout=${CONFORMANCE_SELFTEST_TIMEOUT:-120}
mem=${CONFORMANCE_MEM:-6144}
[[ "$mem" =~ ^[0-9]+$ ]] || die "CONFORMANCE_MEM=$mem: MiB"
only=" $(echo "${CONFORMANCE_TESTS:-}" | tr ',' ' ' | xargs) "
exclude_file=$kit_top/tools/testing/conformance/exclude.txt
args_file=$kit_top/tools/testing/conformance/args.txt
cdir=$B/conformance
report=$B/report
mkdir -p "$cdir" "$report"

kit_need_pkgs make gcc libc6-dev binutils xz-utils gzip qemu-system-x86 python3

# 1. kvm-unit-tests, out of tree: configure once per source, then make
# (incremental) and the standalone scripts (tests/<name>) when a .flat changed.
kut_build() {
	local src tarball bdir=$cdir/kvm-unit-tests log=$cdir/kvm-unit-tests-build.log
	if [ -n "${KUT_SRC:-}" ]; then
		src=$(cd "$KUT_SRC" && pwd) || die "KUT_SRC=$KUT_SRC: no such directory"
	else
		tarball=$(compgen -G "$kit_top/../shared/third_party/kvm-unit-tests-*.tar.xz" |
			sort | tail -n 1 || true)
		[ -n "$tarball" ] ||
			die "no ../shared/third_party/kvm-unit-tests-*.tar.xz beside the repository: set KUT_SRC"
		src=$cdir/kvm-unit-tests-src
		if [ "$(cat "$src/.kit-extracted" 2>/dev/null)" != "$(basename "$tarball")" ]; then
			step "extracting $(basename "$tarball")"
			rm -rf "$src" "$src.tmp"; mkdir -p "$src.tmp"
			tar -xJf "$tarball" -C "$src.tmp" || die "extracting $tarball failed"
			basename "$tarball" > "$src.tmp/.kit-extracted"
			mv "$src.tmp" "$src"
		fi
	fi
	[ -x "$src/configure" ] || die "$src: no kvm-unit-tests configure script"
	if [ "$(cat "$bdir/.kit-src" 2>/dev/null)" != "$src" ]; then
		rm -rf "$bdir"; mkdir -p "$bdir"
		(cd "$bdir" && "$src/configure" --arch=x86_64) > "$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; die "kvm-unit-tests: configure failed"; }
		echo "$src" > "$bdir/.kit-src"
	fi
	step "building kvm-unit-tests from ${src#"$kit_top"/} (log: ${log#"$kit_top"/})"
	make -C "$bdir" -j"$(nproc)" >> "$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "kvm-unit-tests: make failed"; }
	if [ ! -f "$bdir/.kit-standalone" ] ||
	   [ -n "$(find "$bdir/x86" -name '*.flat' -newer "$bdir/.kit-standalone")" ]; then
		make -C "$bdir" standalone >> "$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; die "kvm-unit-tests: make standalone failed"; }
		touch "$bdir/.kit-standalone"
	fi
	# Every test of unittests.cfg, in its order.
	sed -n 's/^\[\(.*\)\]$/\1/p' "$src/x86/unittests.cfg" > "$cdir/kut-tests.txt"
	step "kvm-unit-tests: $(wc -l < "$cdir/kut-tests.txt") tests in x86/unittests.cfg"
}

# 2. The KVM selftests of the line's linux-source (KLINE, kit_target done):
# only the subtrees that `make headers` and the selftests' build read.
st_paths="Makefile Kbuild Kconfig scripts include arch/x86 tools usr"
st_build() {
	local dir=$cdir/$KLINE src=$cdir/$KLINE/linux tarball=/usr/src/$SRCPKG.tar.xz
	local log=$cdir/$KLINE/selftests-build.log stamp m members=()
	local st_out=$src/tools/testing/selftests/kvm
	kit_need_pkgs "$SRCPKG"
	[ -f "$tarball" ] || die "$tarball missing (apt-get install $SRCPKG)"
	mkdir -p "$dir"
	stamp="$SRCVER $st_paths"
	if [ "$(cat "$src/.kit-extracted" 2>/dev/null)" != "$stamp" ]; then
		step "extracting $SRCPKG $SRCVER ($st_paths) for the KVM selftests"
		rm -rf "$src" "$src.tmp"; mkdir -p "$src.tmp"
		for m in $st_paths; do members+=("$SRCPKG/$m"); done
		tar -xJf "$tarball" -C "$src.tmp" --strip-components=1 "${members[@]}" ||
			die "extracting $tarball failed"
		echo "$stamp" > "$src.tmp/.kit-extracted"
		mv "$src.tmp" "$src"
	fi
	step "building the KVM selftests of $SRCPKG $SRCVER (log: ${log#"$kit_top"/})"
	make -C "$src" ARCH=x86 headers > "$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "make headers in ${src#"$kit_top"/} failed"; }
	# -k: a program that does not build is reported and left out, the
	# others run (6.1.192's dirty_log_test calls a TEST_ASSERT_EQ that its
	# test_util.h lacks).
	# OUTPUT explicitly: the selftests' lib.mk defaults it to the current
	# directory only at MAKELEVEL 0, and under `make conformance` it is 1,
	# which made the objects and programs land in / and /lib.
	make -k -C "$src/tools/testing/selftests/kvm" OUTPUT="$st_out" -j"$(nproc)" \
		>> "$log" 2>&1 || true
	# The list the selftests' Makefile builds (TEST_GEN_PROGS, absolute).
	# shellcheck disable=SC2016 # make expands it
	printf 'kit-print-progs:\n\t@echo $(TEST_GEN_PROGS)\n' > "$dir/print-progs.mk"
	make -s -C "$src/tools/testing/selftests/kvm" OUTPUT="$st_out" \
		-f Makefile -f "$dir/print-progs.mk" kit-print-progs | tr ' ' '\n' | sed '/^$/d' > "$dir/selftests-all.txt"
	: > "$dir/selftests.txt"
	: > "$dir/selftests-nobuild.txt"
	while read -r m; do
		if [ -x "$m" ]; then
			echo "$m" >> "$dir/selftests.txt"
		else
			basename "$m" >> "$dir/selftests-nobuild.txt"
		fi
	done < "$dir/selftests-all.txt"
	[ -s "$dir/selftests.txt" ] ||
		{ tail -n 20 "$log" >&2; die "building the KVM selftests failed"; }
	step "KVM selftests: $(wc -l < "$dir/selftests.txt") of $(wc -l < "$dir/selftests-all.txt") programs built"
	if [ -s "$dir/selftests-nobuild.txt" ]; then
		step "KVM selftests that do not build (left out; ${log#"$kit_top"/}): $(xargs < "$dir/selftests-nobuild.txt")"
	fi
}

# entry FILE SUITE NAME: the rest of the test's "SUITE NAME ..." line in
# FILE (exclude.txt: the reason; args.txt: the arguments), NAME@LINE for
# $KLINE alone; status 1 if none.
entry() {
	awk -v s="$2" -v n="$3" -v l="$3@$KLINE" '$1 == s && ($2 == n || $2 == l) {
			$1 = $2 = ""; sub(/^ +/, ""); print; f = 1; exit }
		END { exit !f }' <(sed 's/#.*//' "$1")
}

# 3. The plan of one line: "SUITE NAME PATH [ARGS...]" a line.
write_plan() {
	local plan=$1 s n p
	# The selftests' build makes the directory; kvm-unit-tests alone do not.
	mkdir -p "$(dirname "$plan")"
	for s in $suites; do
		case $s in
		kut)
			while read -r n; do
				echo "kut $n $cdir/kvm-unit-tests/tests/$n"
			done < "$cdir/kut-tests.txt" ;;
		selftests)
			while read -r p; do
				echo "selftests $(basename "$p") $p"
			done < "$cdir/$KLINE/selftests.txt" ;;
		esac
	done | while read -r s n p; do
		if [ "$only" != "  " ]; then
			[[ "$only" == *" $n "* ]] || continue
		elif entry "$exclude_file" "$s" "$n" > /dev/null; then
			continue
		fi
		echo "$s $n $p $(entry "$args_file" "$s" "$n" || true)"
	done | sed 's/ *$//' > "$plan.tmp"
	for n in $only; do
		awk -v n="$n" '$2 == n { f = 1 } END { exit !f }' "$plan.tmp" ||
			die "CONFORMANCE_TESTS: no test $n in the suites $suites of $KLINE"
	done
	[ -s "$plan.tmp" ] || die "no test to run"
	# A new file: a testbed may still be reading the last one.
	mv "$plan.tmp" "$plan"
}

report_only=${CONFORMANCE_REPORT_ONLY:-0}
if [ "$report_only" != 1 ]; then
	if [[ " $suites " == *" kut "* ]]; then kut_build; fi
	for KLINE in $lines; do
		kit_target
		if [[ " $suites " == *" selftests "* ]]; then st_build; fi
		write_plan "$cdir/$KLINE/plan.txt"
		step "$KLINE: $(wc -l < "$cdir/$KLINE/plan.txt") tests in ${cdir#"$kit_top"/}/$KLINE/plan.txt"
	done
fi
[ "${CONFORMANCE_BUILD_ONLY:-0}" = 1 ] && exit 0

# Boots (lib.sh's kit_boots, which builds the kit first): results land in
# build/testbed/<krel>/conformance-<modules>/.
boot_what=conformance
boot_lines=$lines
boot_flavours=${FLAVOUR:-generic}
boot_modsets=$modsets
boot_logdir=$report
boot_desc="the tests of build/conformance/<line>/plan.txt"
boot_cmd() {
	local plan=$cdir/$KLINE/plan.txt bt
	bt=${CONFORMANCE_BOOT_TIMEOUT:-$(awk -v k="$kut_timeout" -v s="$st_timeout" \
		'{ t += ($1 == "kut") ? k + 70 : s + 20 } END { print t + 600 }' "$plan")}
	step "$label, $m modules: $(wc -l < "$plan") tests (boot bound ${bt} s)"
	boot_opts=(--timeout "$bt" --mem "$mem")
	boot_argv=("$kit_top/tools/testbed/conformance-run.sh"
		--kut-timeout "$kut_timeout" --selftest-timeout "$st_timeout"
		--hugepages 128 "$plan")
}
boot_collect() {
	case $1 in
	0) ;;
	125) failed+=("$KLINE/$m: kernel splat (${dir#"$kit_top"/}/splats.txt)") ;;
	124) failed+=("$KLINE/$m: testbed timed out (${boot_opts[*]})") ;;
	*) failed+=("$KLINE/$m: testbed exited $1 (${dir#"$kit_top"/}/console.log)") ;;
	esac
}
failed=()
[ "$report_only" = 1 ] || kit_boots

# 4. Merge: one row per planned test; a missing result is "error".
csv=$report/conformance.csv
# run.sh empties the run directory first: no stale results.
results_file() {
	echo "$B/testbed/$KREL/conformance-$1/results.txt"
}
rank() {
	case $1 in pass) echo 3 ;; skip) echo 2 ;; fail | timeout) echo 1 ;; *) echo 0 ;; esac
}
result() {
	local f
	[[ " $modsets " == *" $1 "* ]] || { echo -; return; }
	f=$(results_file "$1")
	[ -f "$f" ] || { echo error; return; }
	awk -v s="$2" -v n="$3" '$1 == s && $2 == n { r = $3 } END { print (r == "" ? "error" : r) }' "$f"
}
worse=() errors=()
echo "suite,test,kernel,stock,kit" > "$csv.tmp"
table=$(
	printf '%-10s %-44s %-14s %-8s %-8s\n' suite test kernel stock kit
	for KLINE in $lines; do
		kit_target
		label=$KLINE-$FLAVOUR
		while read -r s n _; do
			rs=$(result stock "$s" "$n")
			rk=$(result kit "$s" "$n")
			echo "$s,$n,$label,$rs,$rk" >> "$csv.tmp"
			mark=
			if [ "$rs" != - ] && [ "$rk" != - ] && [ "$(rank "$rk")" -lt "$(rank "$rs")" ]; then
				mark="  <- worse with kit"
			fi
			printf '%-10s %-44s %-14s %-8s %-8s%s\n' "$s" "$n" "$label" "$rs" "$rk" "$mark"
		done < "$cdir/$KLINE/plan.txt"
	done
)
mv "$csv.tmp" "$csv"
echo "$table"
while IFS=, read -r s n l rs rk; do
	if [ "$rs" != - ] && [ "$rk" != - ] && [ "$(rank "$rk")" -lt "$(rank "$rs")" ]; then
		worse+=("$l $s $n: stock $rs, kit $rk")
	fi
	if [ "$rs" = error ] || [ "$rk" = error ]; then
		errors+=("$l $s $n: could not start or no result")
	fi
done < <(tail -n +2 "$csv")

summary=$(tail -n +2 "$csv" | awk -F, '{ s[$4]++; k[$5]++ }
	END { printf "stock:"; for (r in s) printf " %d %s", s[r], r
	      printf "; kit:"; for (r in k) printf " %d %s", k[r], r; print "" }')
step "conformance: $(($(wc -l < "$csv") - 1)) tests, $summary"
step "conformance finished in $(($(date +%s) - KIT_T0)) s: ${csv#"$kit_top"/}"
rc=0
for f in "${worse[@]}" "${errors[@]}" "${failed[@]}"; do
	echo "kit: conformance: $f" >&2
	rc=1
done
exit $rc
