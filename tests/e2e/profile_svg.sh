#!/bin/bash
# profile_svg: `vigil profile PID --format svg -o F` on tgt_profile split
# writes a self-contained flame graph: well-formed XML (xmllint --noout),
# the functions hot_a and hot_b named in it, no external resource (no
# href/src to http(s) or file), and it renders: headless Chromium's
# screenshot of it (1200x800) must not be blank: at least 5 % of its pixels
# have FlameGraph's warm colors (red >= 190, blue <= 90, red > green; the
# six-frame-deep graph covers about 10 %).  The frames' <title>s say
# "NAME — FILE (N samples, P%)": hot_a 70 +- 10 %, hot_b 30 +- 10 %.  The
# PNG and the SVG are kept next to the meson logs (path printed).  Skips
# only when chromium is not installed (scripts/install-deps.sh).
source "$(dirname "$0")/lib.sh"

command -v xmllint >/dev/null || skip "xmllint (libxml2-utils) not installed"
chrome=$(command -v chromium || command -v chromium-browser || true)
[[ -n $chrome ]] || skip "chromium is not installed (headless screenshot of the flame graph)"

truth=$T/truth
start_target tgt_profile "$truth" split
wait_truth "$truth" ready
pid=$(truth_get "$truth" pid)

vg svg profile "$pid" --duration 2000 --freq 999 --format svg -o "$T/flame.svg"
assert_rc 0
[[ -s $T/flame.svg ]] || { show_last; fail "$LAST_CMD: $T/flame.svg empty or missing"; }
xmllint --noout "$T/flame.svg" 2>"$T/xmllint.err" || { head -5 "$T/xmllint.err" >&2; fail "$T/flame.svg is not well-formed XML"; }
for fn in hot_a hot_b; do
	grep -q "$fn" "$T/flame.svg" || fail "$fn not in the flame graph"
done
! grep -Eiq '(href|src)="(https?:|file:|//)' "$T/flame.svg" || fail "the SVG refers to an external resource: $(grep -Eio '(href|src)="(https?:|file:|//)[^"]*' "$T/flame.svg" | head -3)"

vg_py "$T/flame.svg" <<'PY' || fail "the flame graph's frame titles: see above"
import re, sys
from vgcheck import *
svg = open(sys.argv[1], encoding="utf-8").read()
for fn, want in (("hot_a", 70.0), ("hot_b", 30.0)):
    got = [float(p) for p in re.findall(r"<title>" + fn + r" [^<]*\(\d+ samples?, ([0-9.]+)%\)</title>", svg)]
    check(len(got) == 1 and abs(got[0] - want) <= 10,
          f"svg: the <title> of {fn} must say {want} +- 10 % (one frame), got {got!r}")
    if got:
        print(f"svg: {fn} {got[0]} %")
done()
PY

keep=$(dirname "$VIGIL")/meson-logs
[[ -d $keep && -w $keep ]] || keep=$T
set +e
HOME=$T timeout 90 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$T/chrome" --screenshot="$T/flame.png" --window-size=1200,800 \
	"file://$T/flame.svg" >"$T/chrome.out" 2>&1
crc=$?
set -e
[[ $crc == 0 && -s $T/flame.png ]] || { tail -n 15 "$T/chrome.out" >&2; fail "chromium --headless --screenshot failed (exit $crc)"; }
cp "$T/flame.png" "$keep/profile_svg.png"
cp "$T/flame.svg" "$keep/profile_svg.svg"
echo "screenshot: $keep/profile_svg.png (flame graph: $keep/profile_svg.svg)"

vg_py "$T/flame.png" <<'PY'
import struct, sys, zlib
from vgcheck import *
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    fail("the screenshot is not a PNG")
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, typ = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if typ == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif typ == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = hdr
if depth != 8 or ctype not in (2, 6) or interlace:
    fail(f"unexpected PNG layout: depth {depth}, color type {ctype}, interlace {interlace}")
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
warm = 0
colors = set()
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        r, g, bl = line[x], line[x + 1], line[x + 2]
        if r >= 190 and bl <= 90 and r > g:
            warm += 1
        if len(colors) < 64:
            colors.add((r, g, bl))
    prev = line
frac = warm / (w * h)
print(f"screenshot {w}x{h}: {100 * frac:.1f} % warm pixels, {len(colors)}{'+' if len(colors) == 64 else ''} colors")
check(frac >= 0.05, f"the rendered flame graph is (nearly) blank: {100 * frac:.2f} % warm pixels, colors {sorted(colors)[:8]!r}")
check(len(colors) >= 8, f"the screenshot has only {len(colors)} colors")
done()
PY
echo "ok"
