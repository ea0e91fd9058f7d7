#!/usr/bin/env python3
"""Turns a capture (.cap) into a seed for the L7 fuzz targets (fuzz/l7_driver.h's script
format): client role, each chunk split into pieces of at most 256 bytes. A developer tool:
  seeds.py X.cap [udp] > fuzz/seeds/fuzz_l7_PROTO/X"""
import sys

out = bytearray([1 | (4 if len(sys.argv) > 2 else 0)])
for line in open(sys.argv[1]):
    fd, d, hx = line.split()
    if d == "c":
        continue  # one connection per seed
    data = bytes.fromhex(hx)
    for i in range(0, len(data), 256):
        piece = data[i:i + 256]
        out += bytes([1 if d == "<" else 0, len(piece) - 1]) + piece
sys.stdout.buffer.write(bytes(out))
