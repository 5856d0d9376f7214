#!/usr/bin/env bash
# Makes the pictures of the HTML report in docs/ from a real run:
# docs/report-top.png (the top of the page: run status and seed 000, the
# README's picture) and docs/report-seed001.png (seed 001's panels).
#
#   scripts/report-screenshots.sh          # a small run first (a few minutes)
#   scripts/report-screenshots.sh RUN      # an existing run directory
#
# The small run: seven targets (native x86_64 and six under QEMU, arm64's
# LL/SC variant among them) x the atomic and spinlock suites, the quick
# profile. Headless Chromium (Debian's `chromium`, which `cargo xtask test`
# installs) takes each picture with the flags xtask/tests/e2e/html.rs uses.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=x86_64,aarch64,aarch64-llsc,powerpc64,mips32,riscv64,s390x
SUITES=atomic,spinlock
WIDTH=1400

work=$(mktemp -d "${TMPDIR:-/tmp}/lockmatrix-screenshots.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ $# -ge 1 ]; then
    run=$(realpath "$1")
else
    # --no-gate: a picture of the report, whatever the gate says of this tree.
    cargo xtask matrix --targets "$TARGETS" --suites "$SUITES" --no-gate \
        --results "$work/results"
    run=$(ls -d "$work"/results/*/ | sort | tail -n 1)
fi
cargo xtask report --html "$run" -o "$work/report.html"

chromium=$(command -v chromium || command -v chromium-browser) || {
    echo "chromium is not installed: apt-get install chromium" >&2
    exit 2
}

# shot FILE HEIGHT [SECTION]: the page WIDTH x HEIGHT px from its top, or
# the section with id SECTION alone (a copy of the page that hides the
# others: headless Chromium takes its picture before it scrolls).
shot() {
    local page=$work/report.html
    if [ $# -ge 3 ]; then
        page=$work/$3.html
        sed "s|</head>|<style>body > :not(#$3) {display: none}</style></head>|" \
            "$work/report.html" >"$page"
    fi
    "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --no-first-run --disable-extensions \
        --user-data-dir="$work/profile" \
        --window-size="$WIDTH,$2" --screenshot="$1" \
        "file://$page" 2>"$work/chromium.log" || {
        cat "$work/chromium.log" >&2
        exit 1
    }
    echo "wrote $1 ($(stat -c %s "$1") bytes)"
}

shot docs/report-top.png 1100
shot docs/report-seed001.png 660 seed001
