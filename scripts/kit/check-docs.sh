#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check's docs step: the lists that the documentation freezes agree
# with the code that defines them.
#   - every make target (.PHONY in the Makefile) is in make help (the
#     Makefile's header) and in Documentation/layout.rst, "Make targets";
#   - every selftest of tools/testing/selftests/kvm-irqbypass/Makefile is in
#     layout.rst, "Test names", and every test name there exists;
#   - every make check step (run_step in scripts/kit/check.sh) is in the
#     step table of Documentation/testing.rst, and every step there exists.
# Prints each difference; exits 1 if there is any.
#   check-docs.sh --self-test  first check that a stale copy of each list
#                              (one target, one selftest, one step taken
#                              out) is caught, then check the real ones
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
mk=$top/Makefile
layout=${KIT_DOCS_LAYOUT:-$top/Documentation/layout.rst}
testing=${KIT_DOCS_TESTING:-$top/Documentation/testing.rst}

if [ "${1:-}" = --self-test ]; then
	t=$(mktemp -d)
	sed -e 's/``check-guest``, //' -e 's/``vfio_msix``,//' "$layout" > "$t/layout.rst"
	grep -v '^host-unchanged ' "$testing" > "$t/testing.rst"
	st=$(KIT_DOCS_LAYOUT=$t/layout.rst KIT_DOCS_TESTING=$t/testing.rst "$0")
	rm -rf "$t"
	n=0
	grep -q "make help.*check-guest\|Make targets: check-guest" <<< "$st" && n=$((n + 1))
	grep -q "Test names: vfio_msix" <<< "$st" && n=$((n + 1))
	grep -q "step table: host-unchanged" <<< "$st" && n=$((n + 1))
	if [ "$n" -ne 3 ]; then
		echo "docs: the check missed a stale list ($n of 3 caught):"
		echo "$st"
		exit 1
	fi
	echo "docs: self-test: a stale target, selftest and step list each caught"
	exec "$0"
fi
bad=0

out=$(mktemp)
trap 'rm -f "$out"' EXIT
differ() {	# differ WHAT: report the words of stdin
	local w
	while read -r w; do
		[ -n "$w" ] && echo "docs: $1: $w"
	done | tee -a "$out"
}

# The words between a section title and the next title of a .rst file.
section() {	# section FILE TITLE
	awk -v t="$2" '
		$0 == t { on = 1; getline; next }
		on && /^[=-~^]+$/ && prev != "" { exit }
		on { print prev } { prev = $0 }' "$1"
}

# Make targets.
targets=$(awk '/^\.PHONY:/ { on = 1 } on { print } on && !/\\$/ { on = 0 }' "$mk" |
	tr -d '\\' | tr ' \t' '\n\n' | grep -v -e '^$' -e '^\.PHONY:' | sort -u)
help=$(grep '^#' "$mk" | grep -o 'make [a-z0-9-]*' | awk '{ print $2 }' | sort -u)
doc_targets=$(section "$layout" "Make targets" | grep -o '``[a-z0-9-]*``' |
	tr -d '`' | sort -u)
comm -23 <(echo "$targets") <(echo "$help") | differ "target missing from make help"
comm -23 <(echo "$targets") <(echo "$doc_targets") |
	differ "target missing from layout.rst's Make targets"

# Test names.
tests=$(make -s -C "$top/tools/testing/selftests/kvm-irqbypass" -f Makefile \
	-f - print-tests 2> /dev/null <<'EOF'
print-tests:
	@for t in $(TEST_GEN_PROGS) $(TEST_GEN_PROGS_CAMPAIGN) $(TEST_PROGS_CAMPAIGN) $(TEST_GEN_PROGS_EXTENDED); do echo $${t##*/}; done
EOF
)
[ -n "$tests" ] || { echo "docs: cannot list the selftests"; exit 1; }
tests=$(echo "$tests" | sort -u)
doc_tests=$(section "$layout" "Test names" | grep -o '``[a-z0-9_.]*``' |
	tr -d '`' | grep -v -e '\.ko$' | sort -u)
others=$(printf '%s\n' test_irqbypass module_checks module_params | sort)
comm -23 <(echo "$tests") <(echo "$doc_tests") |
	differ "selftest missing from layout.rst's Test names"
comm -23 <(echo "$doc_tests") <(sort -u <(echo "$tests") <(echo "$others")) |
	differ "layout.rst's Test names lists a test that does not exist"

# make check's steps.
steps=$(grep -o 'run_step [a-z0-9.-]*' "$top/scripts/kit/check.sh" |
	awk '{ print $2 }' | sort -u)
doc_steps=$(awk '/^step +passes when$/ { on = 1; getline; next }
	on && /^=+ +=+$/ { exit }
	on && /^[a-z0-9.-]+ / { print $1 }' "$testing" | sort -u)
comm -23 <(echo "$steps") <(echo "$doc_steps") |
	differ "make check step missing from testing.rst's step table"
comm -23 <(echo "$doc_steps") <(echo "$steps") |
	grep -v -x -e testbed -e testbed-bochs -e testbed-bochs3 |
	differ "testing.rst's step table lists a step make check does not run"

bad=$(wc -l < "$out")
if [ "$bad" -eq 0 ]; then
	echo "docs: $(echo "$targets" | wc -l) make targets, $(echo "$tests" | wc -l) selftests and $(echo "$steps" | wc -l) check steps agree with the documentation"
fi
[ "$bad" -eq 0 ]
