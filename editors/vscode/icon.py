#!/usr/bin/env python3
# Writes icon.png (python3 icon.py icon.png).
# permaudit's icon: a shield (dark blue) with a key-hole-like check, 128x128 RGBA, no PIL.
import struct, zlib, math, sys
W = H = 128
def inside_shield(x, y):
    # top edge flat at y=12, sides straight to y=70, then curving to a point at y=118
    if y < 12 or y > 118: return False
    if y <= 70:
        return 18 <= x <= 110
    t = (y - 70) / 48.0
    half = 46 * math.sqrt(max(0.0, 1 - t * t))
    return 64 - half <= x <= 64 + half
def on_check(x, y):
    # a thick check mark: (38,66) -> (57,85) -> (92,44)
    def seg(ax, ay, bx, by):
        dx, dy = bx - ax, by - ay
        t = max(0, min(1, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)))
        return math.hypot(x - ax - t * dx, y - ay - t * dy)
    return min(seg(38, 66, 57, 85), seg(57, 85, 92, 44)) <= 7
rows = []
for y in range(H):
    row = bytearray([0])
    for x in range(W):
        s = 0
        # 4x4 supersampling for smooth edges
        cov = chk = 0
        for sy in range(4):
            for sx in range(4):
                px, py = x + (sx + .5) / 4, y + (sy + .5) / 4
                if inside_shield(px, py):
                    cov += 1
                    if on_check(px, py): chk += 1
        a = cov / 16
        if cov == 0:
            row += bytes([0, 0, 0, 0])
        else:
            f = chk / cov
            r = int(30 * (1 - f) + 255 * f); g = int(64 * (1 - f) + 255 * f); b = int(120 * (1 - f) + 255 * f)
            row += bytes([r, g, b, int(255 * a)])
    rows.append(bytes(row))
raw = b"".join(rows)
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 6, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
