#!/bin/sh
# container-smoke.sh: build the Containerfile's image and check it runs:
# its llmload prints its version and runs 40 requests against a `llmload
# sim` on this machine (the host's network), writing a results directory
# as the image's user. Needs podman (Debian's package) and a Debian 12
# base image: BASE (default docker.io/library/debian:bookworm) pulled, or
# imported where no registry is reachable:
#
#   debootstrap --variant=minbase bookworm /tmp/rootfs http://deb.debian.org/debian
#   tar -C /tmp/rootfs -c . | podman import - docker.io/library/debian:bookworm
#
# Where podman cannot start a container (a VM whose cgroups or rlimits the
# OCI runtime refuses), it runs the image's own files under chroot
# instead, which checks the same binary and runtime libraries.
# Not part of `make test` (docs/distributed.md, "A container image").
set -eu
cd "$(dirname "$0")/.."
BASE=${BASE:-docker.io/library/debian:bookworm}
PORT=${PORT:-18411}
podman build --isolation=chroot --network host -t llmload:latest \
    --build-arg BASE="$BASE" --build-arg VERSION="$(git describe --always --dirty 2>/dev/null || echo unknown)" .
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' localhost/llmload:latest
make -s all >/dev/null
build/llmload sim --port "$PORT" --profile instant --duration 120 >/dev/null 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null || true' EXIT
sleep 1
args="run --url http://127.0.0.1:$PORT/v1 --rate 20 --requests 40 --no-metrics --quiet"
if podman run --rm --network host llmload:latest --version 2>/dev/null; then
    podman run --rm --network host llmload:latest $args --out /results/smoke
    echo "container-smoke: ok (podman run)"
else
    echo "container-smoke: podman cannot start a container here; the image's files under chroot"
    c=$(podman create llmload:latest)
    m=$(podman mount "$c")
    chroot --userspec=65534:65534 "$m" /usr/local/bin/llmload --version
    chroot --userspec=65534:65534 "$m" /usr/local/bin/llmload $args --out /results/smoke
    n=$(wc -l < "$m/results/smoke/requests.jsonl")
    ok=$(grep -c '"kind":"ok"' "$m/results/smoke/requests.jsonl" || true)
    podman umount "$c" >/dev/null
    podman rm "$c" >/dev/null
    [ "$n" -eq 40 ] && [ "$ok" -eq 40 ] || { echo "container-smoke: $ok of $n ok" >&2; exit 1; }
    echo "container-smoke: ok (chroot): 40 of 40 requests ok"
fi
