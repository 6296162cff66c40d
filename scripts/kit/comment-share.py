#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
#
# comment-share.py FILE...: per C file, its lines, non-blank lines, the
# non-blank lines that hold only comment, and that share, then the total;
# exits 1 if any file's share is above 1/3 (the kit's rule for kernel
# files, Documentation/layout.rst).  A line with code and a trailing
# comment counts as code.
import re
import sys


def share(path):
    text = open(path, encoding='utf-8').read()
    lines = text.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    in_block = False
    nonblank = comment = 0
    for line in lines:
        s = line.strip()
        if not s:
            continue
        nonblank += 1
        code = ''
        i = 0
        while i < len(s):
            if in_block:
                j = s.find('*/', i)
                if j < 0:
                    i = len(s)
                else:
                    in_block = False
                    i = j + 2
            elif s.startswith('/*', i):
                in_block = True
                i += 2
            elif s.startswith('//', i):
                break
            else:
                code += s[i]
                i += 1
        if not code.strip():
            comment += 1
    return len(lines), nonblank, comment


def main():
    over = 0
    tot = [0, 0, 0]
    print(f"{'file':52} {'lines':>6} {'nonblank':>8} {'comment':>7} {'share':>6}")
    for path in sys.argv[1:]:
        n, nb, c = share(path)
        tot = [tot[0] + n, tot[1] + nb, tot[2] + c]
        pct = 100.0 * c / nb if nb else 0.0
        flag = ' > 1/3' if nb and 3 * c > nb else ''
        over += bool(flag)
        print(f"{path:52} {n:6} {nb:8} {c:7} {pct:5.1f}%{flag}")
    pct = 100.0 * tot[2] / tot[1] if tot[1] else 0.0
    print(f"{'total':52} {tot[0]:6} {tot[1]:8} {tot[2]:7} {pct:5.1f}%")
    return 1 if over else 0


sys.exit(main())
