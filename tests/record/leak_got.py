#!/usr/bin/python3
"""leak_got.py PID: the allocator entries in the GOTs (and data pointers) of every module PID
maps but the dynamic linker and galatop's sampler, as "MODULE SYMBOL OFFSET VALUE [lazy]"
lines, the values read through /proc/PID/mem ("lazy": the value points into the module
itself, a PLT stub not bound yet): what test_leak.sh compares before, while and after galatop
injects its sampler. The relocations come from readelf (binutils), independently of
galatop's own reading.

leak_got.py --same BEFORE AFTER: the entries of BEFORE (its modules) that AFTER does not hold
as they were, one per line, exit status 1 if any; a lazy entry bound since to the definition
the other modules hold for its symbol counts as the same (the program's own first call of it
binds it)."""
import re
import subprocess
import sys

NAMES = {"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign",
         "aligned_alloc", "memalign", "valloc", "pvalloc", "mallocx", "rallocx", "dallocx",
         "sdallocx", "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm"}
RELOC = re.compile(r"^([0-9a-f]+)\s+[0-9a-f]+\s+(R_X86_64_JUMP_SLOT|R_X86_64_GLOB_DAT|"
                   r"R_X86_64_64)\s+[0-9a-f]+\s+([^@\s]+)\S*\s+\+\s+0$")


def same(before_path, after_path):
    def load(path):
        with open(path) as f:
            return {tuple(l.split()[:3]): l.split()[3:] for l in f if l.strip()}
    before, after = load(before_path), load(after_path)
    bound = {}
    for (mod, sym, off), v in before.items():
        if len(v) == 1:
            bound.setdefault(sym, set()).add(v[0])
    bad = 0
    for key, v in before.items():
        a = after.get(key)
        if a == v or (a and len(v) == 2 and len(a) == 1 and a[0] in bound.get(key[1], ())):
            continue
        print(" ".join(key), " ".join(v), "->", " ".join(a) if a else "gone")
        bad += 1
    sys.exit(1 if bad else 0)


def main():
    if sys.argv[1] == "--same":
        same(sys.argv[2], sys.argv[3])
    pid = sys.argv[1]
    bases = {}
    spans = {}
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            f = line.split()
            if len(f) < 6 or not f[5].startswith("/"):
                continue
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            spans.setdefault(f[5], []).append((lo, hi))
            if int(f[2], 16) == 0 and f[5] not in bases:
                bases[f[5]] = lo
    with open(f"/proc/{pid}/mem", "rb") as mem:
        for path, base in sorted(bases.items()):
            if "/ld-linux" in path or "libgalatop-leak" in path:
                continue
            head = subprocess.run(["readelf", "-hW", path], capture_output=True, text=True)
            if "ELF64" not in head.stdout:
                continue
            if re.search(r"Type:\s+EXEC", head.stdout):
                base = 0
            rel = subprocess.run(["readelf", "-rW", path], capture_output=True, text=True)
            for line in rel.stdout.splitlines():
                m = RELOC.match(line.strip())
                if not m or m.group(3) not in NAMES:
                    continue
                off = int(m.group(1), 16)
                mem.seek(base + off)
                value = int.from_bytes(mem.read(8), "little")
                lazy = any(lo <= value < hi for lo, hi in spans[path])
                print(f"{path} {m.group(3)} {off:#x} {value:#x}" + (" lazy" if lazy else ""))


main()
