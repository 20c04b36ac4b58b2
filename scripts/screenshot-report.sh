#!/bin/sh
# screenshot-report.sh: render a report.html to PNG with headless Chromium,
# to check by eye that the report looks right (and to refresh the picture
# in docs/).
#
#   scripts/screenshot-report.sh [REPORT.html] [OUT.png] [WIDTH] [HEIGHT]
#
# Without REPORT.html it builds build/tests/unit/test_report_html and has it
# write its synthetic sample sweep (REPORT_SAMPLE_OUT) to build/report-sample.html.
# OUT.png defaults to build/report-screenshot.png; the window to 1280 x 4800
# (tall enough for the whole sample page).
#
# With SCREENSHOT_COMPACT=1 the picture is cut below the end of the page and
# reduced to 256 colours (lossless to the eye for this flat design, a third
# of the size), when a python3 with PIL is found (Debian: python3-pil). This
# is how docs/report-screenshot.png is made:
#
#   SCREENSHOT_COMPACT=1 scripts/screenshot-report.sh "" docs/report-screenshot.png
#
# Needs chromium (Debian: apt-get install chromium). Chromium runs with
# networking features off and a throwaway profile; the report needs no
# network anyway. Exit status: 0, or 1 with the reason on stderr.
set -eu

cd "$(dirname "$0")/.."

report=${1:-}
out=${2:-build/report-screenshot.png}
width=${3:-1280}
height=${4:-4800}

if [ -z "$report" ]; then
    make --no-print-directory build/tests/unit/test_report_html >/dev/null
    report=build/report-sample.html
    REPORT_SAMPLE_OUT=$report build/tests/unit/test_report_html
fi
if [ ! -f "$report" ]; then
    echo "screenshot-report: no such file: $report" >&2
    exit 1
fi

browser=
for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then
        browser=$b
        break
    fi
done
if [ -z "$browser" ]; then
    echo "screenshot-report: chromium not found (Debian: apt-get install chromium)" >&2
    exit 1
fi

profile=$(mktemp -d "${TMPDIR:-/tmp}/screenshot-report.XXXXXX")
trap 'rm -rf "$profile"' EXIT INT TERM

abs_report=$(cd "$(dirname "$report")" && pwd)/$(basename "$report")
mkdir -p "$(dirname "$out")"
abs_out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
rm -f "$abs_out"

# --hide-scrollbars keeps the picture clean; the flags after it keep
# Chromium from reaching out to the network on its own.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --disable-extensions \
    --user-data-dir="$profile" --window-size="$width,$height" \
    --screenshot="$abs_out" "file://$abs_report" >"$profile/log" 2>&1 || {
    cat "$profile/log" >&2
    echo "screenshot-report: chromium failed" >&2
    exit 1
}
if [ ! -s "$abs_out" ]; then
    cat "$profile/log" >&2
    echo "screenshot-report: no screenshot written" >&2
    exit 1
fi

if [ "${SCREENSHOT_COMPACT:-0}" = 1 ]; then
    py=
    for p in python3 /usr/bin/python3; do
        if "$p" -c 'import PIL' >/dev/null 2>&1; then
            py=$p
            break
        fi
    done
    if [ -z "$py" ]; then
        echo "screenshot-report: SCREENSHOT_COMPACT needs python3 with PIL; left as is" >&2
    else
        "$py" - "$abs_out" <<'PY'
import sys
from PIL import Image
path = sys.argv[1]
im = Image.open(path).convert("RGB")
w, h = im.size
px = im.load()
bg = px[2, h - 2]
last = h - 1
while last > 0 and all(px[x, last] == bg for x in range(0, w, 5)):
    last -= 1
im = im.crop((0, 0, w, min(h, last + 32)))
im = im.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
im.save(path, optimize=True)
PY
    fi
fi
echo "$out"
