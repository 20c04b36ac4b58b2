#!/bin/sh
# screenshot-report.sh: render a report.html to PNG with headless Chromium,
# to check by eye that the report looks right (and to refresh the picture
# in docs/).
#
#   scripts/screenshot-report.sh [REPORT.html] [OUT.png] [WIDTH] [HEIGHT]
#   scripts/screenshot-report.sh --compare [OUT.png] [WIDTH] [HEIGHT]
#
# REPORT.html may be any page: a report.html or a compare.html. Without it
# the script builds build/tests/unit/test_report_html and has it
# write its synthetic sample sweep (REPORT_SAMPLE_OUT) to build/report-sample.html.
# OUT.png defaults to build/report-screenshot.png; the window to 1280 x 4800
# (tall enough for the whole sample page).
#
# --compare renders a sample compare.html instead: the saved sweep
# tests/data/report/sweep-classes (baseline "base") against a copy of it
# whose every ok request decodes 1.5 times slower ("slower": last_ns and
# end_ns moved by half the first-to-last span, as
# tests/integration/test_compare_sweep.c makes it), compared by
# build/llmload into build/compare-sample/out. OUT.png defaults to
# build/compare-screenshot.png, the window to 1280 x 1670 (the curves, the
# capacity and knee table and the first rate's table; the page is cut
# there). docs/compare-screenshot.png is made so:
#
#   SCREENSHOT_COMPACT=1 scripts/screenshot-report.sh --compare docs/compare-screenshot.png
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

if [ "${1:-}" = --compare ]; then
    shift
    out=${1:-build/compare-screenshot.png}
    width=${2:-1280}
    height=${3:-1670}
    make --no-print-directory build/llmload >/dev/null
    sample=build/compare-sample
    rm -rf "$sample"
    mkdir -p "$sample/base" "$sample/slower"
    for f in run.json steps.jsonl requests.jsonl; do
        cp tests/data/report/sweep-classes/$f "$sample/base/"
    done
    cp "$sample/base/run.json" "$sample/base/steps.jsonl" "$sample/slower/"
    # The fixture's times are nanoseconds from the run's start (well under
    # 2^53), exact in awk's doubles.
    awk -v slow=1.5 '
        function num(k,    m) {
            if (!match($0, "\"" k "\":-?[0-9]+")) return ""
            m = substr($0, RSTART, RLENGTH); sub(/^[^:]*:/, "", m); return m
        }
        function put(k, v) { sub("\"" k "\":-?[0-9]+", "\"" k "\":" sprintf("%.0f", v)) }
        {
            f = num("first_ns"); l = num("last_ns"); e = num("end_ns")
            if (f != "" && l != "" && e != "") {
                add = (l - f) * (slow - 1); add = add < 0 ? -int(-add + 0.5) : int(add + 0.5)
                put("last_ns", l + add); put("end_ns", e + add)
            }
            print
        }' "$sample/base/requests.jsonl" >"$sample/slower/requests.jsonl"
    build/llmload compare "$sample/base" "$sample/slower" --label base --label slower \
        --out "$sample/out" --force --quiet
    report=$sample/out/compare.html
else
    report=${1:-}
    out=${2:-build/report-screenshot.png}
    width=${3:-1280}
    height=${4:-4800}
fi

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
