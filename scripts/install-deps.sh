#!/bin/sh
# Install the Debian packages that building and testing llmload need.
#
# Run as root on Debian or Ubuntu: installs whatever is missing (and nothing
# when all is there, so it is cheap to call before every build). Run as
# anyone else: prints the exact apt-get line and exits non-zero when
# something is missing. Arguments name more packages than the build's own
# (`make check-report` asks for chromium and a font).
set -eu

PKGS="build-essential pkg-config libcurl4-openssl-dev libjansson-dev libpng-dev libjpeg62-turbo-dev libcmocka-dev clang clang-format curl groff-base openmpi-bin prometheus openssl $*"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done

[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: not a Debian system; install the equivalents of:$missing" >&2
    exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages; run as root:" >&2
    echo "  apt-get install -y$missing" >&2
    exit 1
fi

echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
