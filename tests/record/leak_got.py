#!/usr/bin/python3
"""leak_got.py PID: the allocator entries in the GOTs (and data pointers) of every module PID
maps but the dynamic linker and galatop's sampler, as "MODULE SYMBOL OFFSET VALUE" lines,
the values read through /proc/PID/mem: what test_leak.sh compares before, while and after
galatop injects its sampler. The relocations come from readelf (binutils), independently of
galatop's own reading."""
import re
import subprocess
import sys

NAMES = {"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign",
         "aligned_alloc", "memalign", "valloc", "pvalloc", "mallocx", "rallocx", "dallocx",
         "sdallocx", "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm"}
RELOC = re.compile(r"^([0-9a-f]+)\s+[0-9a-f]+\s+(R_X86_64_JUMP_SLOT|R_X86_64_GLOB_DAT|"
                   r"R_X86_64_64)\s+[0-9a-f]+\s+([^@\s]+)\S*\s+\+\s+0$")


def main():
    pid = sys.argv[1]
    bases = {}
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            f = line.split()
            if len(f) >= 6 and f[5].startswith("/") and int(f[2], 16) == 0 and f[5] not in bases:
                bases[f[5]] = int(f[0].split("-")[0], 16)
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
                print(f"{path} {m.group(3)} {off:#x} {value:#x}")


main()
