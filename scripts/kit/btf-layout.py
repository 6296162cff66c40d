#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Print the memory layout of structs as a module's BTF describes them.

    btf-layout.py BASE MODULE STRUCT...

BASE is the kernel's vmlinux or its bzImage (vmlinuz: the payload is
decompressed here); MODULE a .ko, .ko.xz or .ko.zst whose split BTF sits on
BASE's.  For each STRUCT one line per member, embedded structs, unions and
the first element of arrays of them expanded:

    STRUCT.path bit_offset size type

A struct the module defines itself is taken before the kernel's: that is
the one its code was compiled with.  A struct in neither prints
"STRUCT absent".  Used by scripts/kit/abi-guard.sh, which compares the
kit's modules with Debian's where CONFIG_MODVERSIONS is off (7.x).
"""

import gzip
import lzma
import struct
import subprocess
import sys

KINDS_EXTRA = {1: 4, 3: 12, 14: 4, 17: 4}   # fixed trailing bytes per kind
KINDS_VLEN = {4: 12, 5: 12, 6: 8, 13: 8, 15: 12, 19: 12}
STRUCT, UNION, ARRAY, TYPEDEF, INT, PTR, ENUM, FWD = 4, 5, 3, 8, 1, 2, 6, 7
QUALIFIERS = (9, 10, 11, 18)                 # volatile, const, restrict, type_tag
FUNC_PROTO, FLOAT, ENUM64 = 13, 16, 19


def decompress(data):
    """The bytes of a possibly compressed file."""
    if data[:4] == b'\x28\xb5\x2f\xfd':
        return subprocess.run(['zstd', '-dcq'], input=data, check=True,
                              stdout=subprocess.PIPE).stdout
    if data[:6] == b'\xfd7zXZ\x00':
        return lzma.LZMADecompressor().decompress(data)
    if data[:2] == b'\x1f\x8b':
        return gzip.decompress(data)
    return data


def vmlinux_of(data):
    """vmlinux from a bzImage (setup header 'HdrS'), or data itself."""
    if data[0x202:0x206] != b'HdrS':
        return data
    setup = data[0x1f1] or 4
    off, length = struct.unpack_from('<II', data, 0x248)
    start = (setup + 1) * 512 + off
    payload = data[start:start + length]
    if payload[:4] == b'\x28\xb5\x2f\xfd':
        payload = payload[:-4]          # the kernel appends the size
    return decompress(payload)


def elf_section(data, name):
    """The contents of an ELF64 section, or None."""
    if data[:4] != b'\x7fELF':
        raise SystemExit('btf-layout: not an ELF file')
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)

    def sh(i):
        return struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize)
    strtab = sh(shstrndx)
    for i in range(shnum):
        s = sh(i)
        end = data.index(b'\0', strtab[4] + s[0])
        if data[strtab[4] + s[0]:end].decode() == name:
            return data[s[4]:s[4] + s[5]]
    return None


class BTF:
    """Types of a BTF blob, split on an optional base."""

    def __init__(self, blob, base=None):
        magic, _, _, hlen, toff, tlen, soff, slen = \
            struct.unpack_from('<HBBIIIII', blob, 0)
        if magic != 0xeb9f:
            raise SystemExit('btf-layout: bad BTF magic')
        self.base = base
        self.kernel = self
        self.strs = blob[hlen + soff:hlen + soff + slen]
        self.types = list(base.types) if base else [None]
        self.nbase = len(self.types)
        self.str_base = len(base.strs) if base else 0
        self.own = {}
        types = blob[hlen + toff:hlen + toff + tlen]
        pos = 0
        while pos < len(types):
            name_off, info, size = struct.unpack_from('<III', types, pos)
            kind, vlen = (info >> 24) & 0x1f, info & 0xffff
            pos += 12
            extra = types[pos:pos + KINDS_EXTRA.get(kind, 0) +
                          vlen * KINDS_VLEN.get(kind, 0)]
            if kind not in KINDS_EXTRA and kind not in KINDS_VLEN and \
               kind not in (PTR, FWD, TYPEDEF, 12, FLOAT) + QUALIFIERS:
                raise SystemExit('btf-layout: unknown BTF kind %d' % kind)
            pos += len(extra)
            self.types.append((name_off, kind, vlen, info >> 31, size, extra))
            if kind in (STRUCT, UNION) and base:
                self.own.setdefault(self.name(name_off), len(self.types) - 1)

    def name(self, off):
        if self.base and off >= self.str_base:
            s, off = self.strs, off - self.str_base
        elif self.base:
            return self.base.name(off)
        else:
            s = self.strs
        return s[off:s.index(b'\0', off)].decode()

    def find(self, wanted):
        """(btf, id) of the struct or union: the module's own, else the
        kernel's full definition (a distilled base has only its size)."""
        if wanted in self.own:
            return self, self.own[wanted]
        k = self.kernel
        for i, t in enumerate(k.types):
            if t and t[1] in (STRUCT, UNION) and t[2] and \
               k.name(t[0]) == wanted:
                return k, i
        return None, None

    def strip(self, tid):
        while self.types[tid][1] in QUALIFIERS + (TYPEDEF,):
            tid = self.types[tid][4]
        return tid

    def size(self, tid):
        tid = self.strip(tid)
        _, kind, _, _, size, extra = self.types[tid]
        if kind == PTR:
            return 8
        if kind == ARRAY:
            elem, _, n = struct.unpack_from('<III', extra)
            return n * self.size(elem)
        return size if kind in (INT, STRUCT, UNION, ENUM, ENUM64, FLOAT) else 0

    def describe(self, tid, depth=0):
        if tid == 0:
            return 'void'
        name_off, kind, _, _, ref, extra = self.types[tid]
        nm = self.name(name_off)
        if kind in (STRUCT, UNION, FWD, ENUM, ENUM64):
            tag = {STRUCT: 'struct', UNION: 'union', ENUM: 'enum',
                   ENUM64: 'enum'}.get(kind, 'struct')
            return '%s %s' % (tag, nm or '(anon)')
        if kind in (INT, FLOAT, TYPEDEF):
            return nm
        if kind in QUALIFIERS:
            return self.describe(ref, depth)
        if kind == PTR:
            return self.describe(ref, depth + 1) + '*' if depth < 4 else 'ptr'
        if kind == ARRAY:
            elem, _, n = struct.unpack_from('<III', extra)
            return '%s[%d]' % (self.describe(elem, depth), n)
        if kind == FUNC_PROTO:
            return 'fn'
        return 'kind%d' % kind

    def layout(self, tid, path, base_bits, out):
        _, _, vlen, kflag, _, extra = self.types[tid]
        for i in range(vlen):
            m_name, m_type, m_off = struct.unpack_from('<III', extra, i * 12)
            bits = m_off & 0xffffff if kflag else m_off
            width = m_off >> 24 if kflag else 0
            mname = self.name(m_name) or '(anon%d)' % i
            p = '%s.%s' % (path, mname)
            size = '%d:%d' % (self.size(m_type), width) if width else \
                str(self.size(m_type))
            out.append('%s %d %s %s' % (p, base_bits + bits, size,
                                         self.describe(m_type)))
            inner = self.strip(m_type)
            if self.types[inner][1] == ARRAY:
                elem = struct.unpack_from('<III', self.types[inner][5])[0]
                inner, p = self.strip(elem), p + '[0]'
            if self.types[inner][1] not in (STRUCT, UNION):
                continue
            btf = self
            if inner < self.nbase and self.kernel is not self and \
               not self.types[inner][2] and self.types[inner][0]:
                btf, inner = self.find(self.name(self.types[inner][0]))
            if btf:
                btf.layout(inner, p, base_bits + bits, out)


def load_btf(path, kernel=None):
    """The kernel's BTF, or a module's split on it.  Out-of-tree modules
    of 6.13 and later are split on their own distilled .BTF.base, which
    the loader relocates onto the kernel's."""
    with open(path, 'rb') as f:
        data = f.read()
    data = decompress(data)
    if kernel is None:
        data = vmlinux_of(data)
    blob = elf_section(data, '.BTF')
    if blob is None:
        raise SystemExit('btf-layout: %s has no .BTF section' % path)
    if kernel is None:
        return BTF(blob)
    distilled = elf_section(data, '.BTF.base')
    btf = BTF(blob, BTF(distilled) if distilled else kernel)
    btf.kernel = kernel
    return btf


def main(argv):
    if len(argv) < 4:
        raise SystemExit(__doc__)
    mod = load_btf(argv[2], load_btf(argv[1]))
    for wanted in argv[3:]:
        btf, tid = mod.find(wanted)
        if btf is None:
            print('%s absent' % wanted)
            continue
        out = []
        btf.layout(tid, wanted, 0, out)
        print('%s size %d' % (wanted, btf.size(tid)))
        print('\n'.join(out))


if __name__ == '__main__':
    main(sys.argv)
