"""pngplot.py: line charts as PNG files with the Python standard library only (zlib, struct).

    line_chart(path, series, title=..., xlabel=..., ylabel=..., xlog2=True, ylog10=True)

series is a list of (label, [(x, y), ...], dashed).  With xlog2 the x axis is log2(x) with
ticks at whole powers of two labelled by the exponent; with ylog10 the y axis is log10(y) with
ticks at decades labelled 1K, 10M, 1G ...  Points with y None or <= 0 (on a log axis) break the
line.  Text is drawn with a built-in 5x7 bitmap font (upper case; lower case prints as upper).
"""
import math
import struct
import zlib

# 5x7 glyphs: seven rows of five bits, 0x10 the leftmost column.
FONT = {
    '0': (0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E), '1': (0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E),
    '2': (0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F), '3': (0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E),
    '4': (0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02), '5': (0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E),
    '6': (0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E), '7': (0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08),
    '8': (0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E), '9': (0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C),
    'A': (0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11), 'B': (0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E),
    'C': (0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E), 'D': (0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C),
    'E': (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F), 'F': (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10),
    'G': (0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F), 'H': (0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11),
    'I': (0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E), 'J': (0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C),
    'K': (0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11), 'L': (0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F),
    'M': (0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11), 'N': (0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11),
    'O': (0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E), 'P': (0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10),
    'Q': (0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D), 'R': (0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11),
    'S': (0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E), 'T': (0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04),
    'U': (0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E), 'V': (0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04),
    'W': (0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A), 'X': (0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11),
    'Y': (0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04), 'Z': (0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F),
    ' ': (0,) * 7, '.': (0, 0, 0, 0, 0, 0x0C, 0x0C), ',': (0, 0, 0, 0, 0x0C, 0x04, 0x08),
    '-': (0, 0, 0, 0x1F, 0, 0, 0), '_': (0, 0, 0, 0, 0, 0, 0x1F), '(': (0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02),
    ')': (0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08), '/': (0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10),
    '^': (0x04, 0x0A, 0x11, 0, 0, 0, 0), '+': (0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0),
    ':': (0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0), '%': (0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03),
    '=': (0, 0, 0x1F, 0, 0x1F, 0, 0), '*': (0, 0x04, 0x15, 0x0E, 0x15, 0x04, 0),
    '<': (0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02), '>': (0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08),
    '[': (0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E), ']': (0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E),
    '#': (0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A), '?': (0x0E, 0x11, 0x01, 0x02, 0x04, 0, 0x04),
}
# Ten distinguishable line colours (matplotlib's tab10).
PALETTE = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
           (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)]
WHITE, BLACK, GRID, AXIS = (255, 255, 255), (0, 0, 0), (225, 225, 225), (90, 90, 90)


class Canvas:
    """An RGB pixel buffer with the few drawing operations a chart needs."""

    def __init__(self, width, height):
        self.w, self.h = width, height
        self.px = bytearray(WHITE * (width * height))

    def set(self, x, y, c):
        if 0 <= x < self.w and 0 <= y < self.h:
            i = 3 * (y * self.w + x)
            self.px[i:i + 3] = bytes(c)

    def rect(self, x0, y0, x1, y1, c):
        for y in range(max(0, y0), min(self.h, y1 + 1)):
            for x in range(max(0, x0), min(self.w, x1 + 1)):
                self.set(x, y, c)

    def line(self, x0, y0, x1, y1, c, width=1, dash=0):
        """Bresenham's line with a square brush; dash > 0 draws dash pixels on, dash off."""
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err, step = dx + dy, 0
        while True:
            if not dash or (step // dash) % 2 == 0:
                self.rect(x0 - width // 2, y0 - width // 2, x0 + (width - 1) // 2, y0 + (width - 1) // 2, c)
            step += 1
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x, y, s, c=BLACK, scale=2, vertical=False):
        """Draw s with its top left at (x, y); vertical reads bottom to top, starting at (x, y)."""
        for ch in s.upper():
            rows = FONT.get(ch, FONT['?'])
            for r, bits in enumerate(rows):
                for col in range(5):
                    if bits & (0x10 >> col):
                        for a in range(scale):
                            for b in range(scale):
                                if vertical:
                                    self.set(x + r * scale + a, y - col * scale - b, c)
                                else:
                                    self.set(x + col * scale + a, y + r * scale + b, c)
            if vertical:
                y -= 6 * scale
            else:
                x += 6 * scale

    def png(self):
        """The image as PNG bytes (8-bit RGB, no filtering)."""
        raw = b''.join(b'\0' + bytes(self.px[3 * y * self.w:3 * (y + 1) * self.w]) for y in range(self.h))

        def chunk(kind, data):
            return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
        return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', self.w, self.h, 8, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))


def text_width(s, scale=2):
    return 6 * scale * len(s) - scale


def si(v):
    """1000 -> 1K, 1e9 -> 1G, 0.01 -> 0.01."""
    for f, suffix in ((1e12, 'T'), (1e9, 'G'), (1e6, 'M'), (1e3, 'K')):
        if v >= f:
            return ('%g' % (v / f)) + suffix
    return '%g' % v


def line_chart(path, series, title='', xlabel='', ylabel='', xlog2=True, ylog10=True,
               width=1000, height=560, legend_width=250):
    """Write a PNG line chart of series [(label, [(x, y), ...], dashed), ...] to path."""
    fx = (lambda v: math.log2(v)) if xlog2 else float
    fy = (lambda v: math.log10(v)) if ylog10 else float
    pts = [(fx(x), fy(y)) for _, data, _ in series for x, y in data
           if y is not None and (not ylog10 or y > 0) and (not xlog2 or x > 0)]
    if not pts:
        raise ValueError('no points to plot in %s' % path)
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    if ylog10:
        y0, y1 = math.floor(y0), math.ceil(y1)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    if y1 == y0:
        y0, y1 = y0 - 1, y1 + 1
    left, right, top, bottom = 90, width - legend_width, 50, height - 70
    cv = Canvas(width, height)

    def px(x, y):
        return (round(left + (x - x0) / (x1 - x0) * (right - left)),
                round(bottom - (y - y0) / (y1 - y0) * (bottom - top)))

    # Grid and tick labels.
    xticks = range(math.ceil(x0), math.floor(x1) + 1) if xlog2 else _nice_ticks(x0, x1)
    xstep = max(1, len(xticks) // 12)
    for i, t in enumerate(xticks):
        X, _ = px(t, y0)
        cv.line(X, top, X, bottom, GRID)
        if i % xstep == 0:
            lab = '%d' % t if xlog2 else '%g' % t
            cv.text(X - text_width(lab) // 2, bottom + 8, lab)
    yticks = range(int(y0), int(y1) + 1) if ylog10 else _nice_ticks(y0, y1)
    for t in yticks:
        _, Y = px(x0, t)
        cv.line(left, Y, right, Y, GRID)
        lab = si(10 ** t) if ylog10 else '%g' % t
        cv.text(left - 8 - text_width(lab), Y - 7, lab)
    cv.line(left, top, left, bottom, AXIS, 2)
    cv.line(left, bottom, right, bottom, AXIS, 2)
    cv.text((left + right - text_width(title)) // 2, 14, title)
    cv.text((left + right - text_width(xlabel)) // 2, height - 30, xlabel)
    cv.text(12, (top + bottom + text_width(ylabel)) // 2, ylabel, vertical=True)

    # Lines, markers and the legend.
    for i, (label, data, dashed) in enumerate(series):
        c = PALETTE[i % len(PALETTE)]
        prev = None
        for x, y in sorted(data):
            if y is None or (ylog10 and y <= 0):
                prev = None
                continue
            p = px(fx(x), fy(y))
            if prev:
                cv.line(prev[0], prev[1], p[0], p[1], c, 2, 6 if dashed else 0)
            cv.rect(p[0] - 2, p[1] - 2, p[0] + 2, p[1] + 2, c)
            prev = p
        ly = top + 10 + 24 * i
        cv.line(right + 16, ly + 6, right + 46, ly + 6, c, 3, 5 if dashed else 0)
        cv.text(right + 54, ly, label[:16])
    with open(path, 'wb') as f:
        f.write(cv.png())


def _nice_ticks(lo, hi):
    """About six round tick values between lo and hi."""
    step = 10 ** math.floor(math.log10((hi - lo) / 5))
    for m in (1, 2, 5, 10):
        if (hi - lo) / (step * m) <= 7:
            step *= m
            break
    return [k * step for k in range(math.ceil(lo / step), math.floor(hi / step) + 1)]
