#!/bin/sh
# The report's screenshot test (issue 5): render the sample sweep report in
# headless Chromium and check the picture is the page, not an error or a
# blank: a PNG of the asked size whose compressed size shows real content
# (a blank 1280x2400 page compresses to about 10 KB; the report's charts to
# several hundred); then compare.html (issue 21) of the saved sweep
# against a slower copy of it, the same way. Skips, saying so, where Chromium is not installed
# (Debian: apt-get install chromium). Run by `make check-report` and CI.
# Last, a single run's page (test_report_run's fixture) the same way.
set -eu
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
    # CI installs it (make check-report, as root): there a skip would hide
    # a report that no longer renders.
    if [ -n "${CI:-}" ]; then
        echo "report-screenshot: chromium is not installed, and CI must render" >&2
        exit 1
    fi
    echo "report-screenshot: skipped (chromium not installed)"
    exit 0
fi
# check_png FILE MIN WHAT: FILE is a 1280x2400 PNG (IHDR: width and
# height, big-endian, at bytes 16..23) of at least MIN bytes, else exits 1
# naming WHAT; sets size.
check_png() {
    magic=$(od -An -tx1 -N8 "$1" | tr -d ' \n')
    [ "$magic" = "89504e470d0a1a0a" ] || { echo "report-screenshot: $1 is not a PNG" >&2; exit 1; }
    w=$(od -An -tu1 -j16 -N4 "$1" | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')
    h=$(od -An -tu1 -j20 -N4 "$1" | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')
    if [ "$w" -ne 1280 ] || [ "$h" -ne 2400 ]; then
        echo "report-screenshot: $1: expected 1280x2400, got ${w}x${h}" >&2
        exit 1
    fi
    size=$(wc -c <"$1")
    if [ "$size" -lt "$2" ]; then
        echo "report-screenshot: $1 is only $size bytes: a blank or broken $3?" >&2
        exit 1
    fi
}

out=build/report-screenshot-test.png
sh scripts/screenshot-report.sh "" "$out" 1280 2400 >/dev/null
check_png "$out" 100000 page
echo "report-screenshot: 1 passed, 0 failed (${w}x${h}, $size bytes)"

# compare.html the same way: the saved sweep (tests/data/report/sweep-classes)
# against a copy of it decoding 1.5 times slower, as
# `scripts/screenshot-report.sh --compare` makes it, curves and tables rendered.
out=build/compare-screenshot-test.png
sh scripts/screenshot-report.sh --compare "$out" 1280 2400 >/dev/null
check_png "$out" 50000 compare.html
# The slower copy is slower: some row of compare.json is called worse.
grep -q '"verdict": *"worse"' build/compare-sample/out/compare.json || {
    echo "report-screenshot: the slower sweep came out worse nowhere" >&2
    exit 1
}
echo "report-screenshot: compare.html passed ($size bytes)"

# A single run's report.html (docs/report.md, "A single run's page"): the
# fixture of test_report_run, rendered the same way.
make --no-print-directory build/tests/unit/test_report_run >/dev/null
REPORT_RUN_SAMPLE_OUT=build/report-run-sample.html build/tests/unit/test_report_run
out=build/report-run-screenshot-test.png
sh scripts/screenshot-report.sh build/report-run-sample.html "$out" 1280 2400 >/dev/null
check_png "$out" 100000 "run page"
echo "report-screenshot: a run's report.html passed ($size bytes)"
