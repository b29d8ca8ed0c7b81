# SPDX-License-Identifier: Apache-2.0
"""Screenshots as a person would look at them, in pure Python (the tests run
with the host's python3 and no imaging library): grim's PPM and GNOME Shell's
PNG read in, PNG written out, pixels compared, and the 3x3 grid's dots found on the screen
without being told where the locker draws them."""
import collections
import itertools
import struct
import zlib


class Image:
    """An RGB image: `pixel(x, y)` is an (r, g, b) tuple."""

    def __init__(self, width, height, rgb):
        self.width, self.height, self.rgb = width, height, rgb

    @classmethod
    def from_ppm(cls, data):
        """A binary PPM (P6, maxval 255), as `grim -t ppm` writes it."""
        fields, pos = [], 0
        while len(fields) < 4:
            while data[pos:pos + 1].isspace():
                pos += 1
            if data[pos:pos + 1] == b"#":
                pos = data.index(b"\n", pos) + 1
                continue
            end = pos
            while not data[end:end + 1].isspace():
                end += 1
            fields.append(data[pos:end])
            pos = end
        magic, width, height, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
        assert magic == b"P6" and maxval == 255, f"not a binary 8-bit PPM: {fields}"
        pos += 1  # the one whitespace byte after maxval
        rgb = data[pos:pos + width * height * 3]
        assert len(rgb) == width * height * 3, "the PPM is cut short"
        return cls(width, height, bytes(rgb))

    @classmethod
    def from_png(cls, data):
        """An 8-bit RGB or RGBA PNG without interlace, as GNOME Shell's
        screenshot writes it; the alpha is dropped."""
        assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
        pos, idat, header = 8, [], None
        while pos < len(data):
            length, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            if kind == b"IHDR":
                header = struct.unpack(">IIBBBBB", body)
            elif kind == b"IDAT":
                idat.append(body)
            pos += 12 + length
        width, height, depth, colour, _, _, interlace = header
        assert depth == 8 and colour in (2, 6) and interlace == 0, f"a PNG this reader does not read: {header}"
        n = 3 if colour == 2 else 4
        raw, stride = zlib.decompress(b"".join(idat)), width * n
        rows, previous = [], bytearray(stride)
        for y in range(height):
            kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            for i in range(stride):
                left = line[i - n] if i >= n else 0
                up, corner = previous[i], previous[i - n] if i >= n else 0
                if kind == 1:
                    line[i] = (line[i] + left) & 0xff
                elif kind == 2:
                    line[i] = (line[i] + up) & 0xff
                elif kind == 3:
                    line[i] = (line[i] + (left + up) // 2) & 0xff
                elif kind == 4:
                    pa, pb, pc = abs(up - corner), abs(left - corner), abs(left + up - 2 * corner)
                    line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xff
            rows.append(bytes(line) if n == 3 else bytes(b for i, b in enumerate(line) if i % 4 != 3))
            previous = line
        return cls(width, height, b"".join(rows))

    def light_text_as_black(self, level=110):
        """Light text on a dark ground as black on white, which tesseract
        reads surely: pixels brighter than `level` (luminance) black, the
        rest white."""
        out = bytearray(len(self.rgb))
        for i in range(0, len(self.rgb), 3):
            lum = (299 * self.rgb[i] + 587 * self.rgb[i + 1] + 114 * self.rgb[i + 2]) // 1000
            out[i:i + 3] = b"\0\0\0" if lum > level else b"\xff\xff\xff"
        return Image(self.width, self.height, bytes(out))

    def scaled(self, n):
        """The image n times larger, each pixel an n-by-n square: small text
        reads more surely by OCR (a "c" not taken for an "e")."""
        rows = []
        for y in range(self.height):
            row = self.rgb[y * self.width * 3:(y + 1) * self.width * 3]
            wide = b"".join(row[x:x + 3] * n for x in range(0, len(row), 3))
            rows += [wide] * n
        return Image(self.width * n, self.height * n, b"".join(rows))

    def png(self):
        """The image as PNG bytes (8-bit RGB, no filter)."""
        rows = b"".join(b"\0" + self.rgb[y * self.width * 3:(y + 1) * self.width * 3] for y in range(self.height))

        def chunk(kind, body):
            return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 6))
                + chunk(b"IEND", b""))

    def pixel(self, x, y):
        i = (int(y) * self.width + int(x)) * 3
        return tuple(self.rgb[i:i + 3])

    def colours(self):
        """{(r, g, b): how many pixels}."""
        counts = collections.Counter(self.rgb[i:i + 3] for i in range(0, len(self.rgb), 3))
        return {tuple(c): n for c, n in counts.items()}

    def background(self):
        """The colour of most pixels (of one in 31, evenly spread)."""
        counts = collections.Counter(self.rgb[i:i + 3] for i in range(0, len(self.rgb), 3 * 31))
        return tuple(counts.most_common(1)[0][0])

    def around(self, x, y, radius=2):
        """The colours of the pixels within `radius` of (x, y)."""
        return [self.pixel(x + dx, y + dy) for dy in range(-radius, radius + 1) for dx in range(-radius, radius + 1)
                if 0 <= x + dx < self.width and 0 <= y + dy < self.height]

    def blobs(self, is_ink):
        """Connected groups (4-neighbour) of pixels for which is_ink(r, g, b)
        holds: a list of (count, min_x, min_y, max_x, max_y)."""
        w, h, rgb = self.width, self.height, self.rgb
        ink = bytearray(w * h)
        plain = bytes(self.background()) * w
        for y in range(h):
            row = rgb[3 * w * y:3 * w * (y + 1)]
            if row == plain:  # most rows: nothing drawn on them
                continue
            for x in range(w):
                if is_ink(row[3 * x], row[3 * x + 1], row[3 * x + 2]):
                    ink[w * y + x] = 1
        found = []
        for start in range(w * h):
            if not ink[start]:
                continue
            ink[start] = 0
            stack, count = [start], 0
            x0, y0, x1, y1 = w, h, -1, -1
            while stack:
                p = stack.pop()
                count += 1
                x, y = p % w, p // w
                x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
                for q in ((p - 1) if x > 0 else -1, (p + 1) if x < w - 1 else -1, p - w, p + w):
                    if 0 <= q < w * h and ink[q]:
                        ink[q] = 0
                        stack.append(q)
            found.append((count, x0, y0, x1, y1))
        return found


def distance(a, b):
    return sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5


def is_red(c):
    r, g, b = c
    return r >= 150 and g <= 100 and b <= 100


def find_grid(image, tolerance=3):
    """The centres of the 3x3 grid's dots, {1: (x, y), ..., 9: (x, y)} in the
    phone layout (1 top left), found as nine round blobs of one size that
    stand out from the background and sit on three rows and three columns; None
    when the screen shows no such grid."""
    bg = image.background()
    # Far from the background colour: dots, lines, text, whatever is drawn.
    blobs = image.blobs(lambda r, g, b: abs(r - bg[0]) + abs(g - bg[1]) + abs(b - bg[2]) > 120)
    round_ones = []
    for count, x0, y0, x1, y1 in blobs:
        w, h = x1 - x0 + 1, y1 - y0 + 1
        # A filled disc or a ring: about as wide as high, and not a speck.
        if w >= 6 and abs(w - h) <= max(2, w // 8) and count >= 0.25 * w * h:
            round_ones.append(((x0 + x1) / 2, (y0 + y1) / 2, w))
    for _, _, size in sorted(round_ones, key=lambda b: b[2]):
        same = [b for b in round_ones if abs(b[2] - size) <= tolerance]
        if len(same) < 9:
            continue
        # Rows and columns of at least three: the grid's, and maybe a line of
        # round letters (o, a, e) of the same size; the grid is the 3x3 of
        # them spaced evenly, as wide apart as high.
        rows = [r for r in cluster([b[1] for b in same], tolerance)
                if sum(1 for b in same if abs(b[1] - r) <= tolerance) >= 3]
        cols = [c for c in cluster([b[0] for b in same], tolerance)
                if sum(1 for b in same if abs(b[0] - c) <= tolerance) >= 3]
        for rs in itertools.combinations(sorted(rows), 3):
            for cs in itertools.combinations(sorted(cols), 3):
                step = rs[1] - rs[0]
                if not (abs(rs[2] - rs[1] - step) <= 2 * tolerance and abs(cs[1] - cs[0] - step) <= 2 * tolerance
                        and abs(cs[2] - cs[1] - step) <= 2 * tolerance):
                    continue
                grid = {}
                for i, r in enumerate(rs):
                    for j, c in enumerate(cs):
                        match = [b for b in same if abs(b[1] - r) <= tolerance and abs(b[0] - c) <= tolerance]
                        if len(match) == 1:
                            grid[3 * i + j + 1] = (round(match[0][0]), round(match[0][1]))
                if len(grid) == 9:
                    return grid
    return None


def cluster(values, tolerance):
    """The centres of groups of values closer than tolerance to each other."""
    groups = []
    for v in sorted(values):
        if groups and v - groups[-1][-1] <= tolerance:
            groups[-1].append(v)
        else:
            groups.append([v])
    return [sum(g) / len(g) for g in groups]
