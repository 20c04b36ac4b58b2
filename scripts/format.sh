#!/bin/sh
# format: hold changed lines of C to .clang-format, and only those.
#
#   sh scripts/format.sh            format the lines you changed against HEAD
#                                   (tracked files; `git add` a new file first)
#   sh scripts/format.sh --check [BASE]
#                                   print what clang-format would change in the
#                                   lines changed since BASE and exit 1 if any
#                                   (default BASE: the commit that added
#                                   .clang-format, so every line written since)
#
# Why changed lines only: .clang-format says, in its header.
set -eu
cd "$(dirname "$0")/.."
if ! command -v git-clang-format >/dev/null 2>&1 && ! command -v clang-format >/dev/null 2>&1; then
    echo "format: clang-format is not installed (Debian: clang-format; make deps installs it)" >&2
    exit 2
fi
if [ ! -d .git ] && ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "format: not a git checkout: changed lines cannot be told" >&2
    exit 2
fi
exts=c,h
if [ "${1:-}" != "--check" ]; then
    git clang-format -f --extensions "$exts" HEAD
    exit 0
fi
base=${2:-$(git log --diff-filter=A --format=%H -1 -- .clang-format 2>/dev/null || true)}
if [ -z "$base" ] || ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
    # A shallow clone may not hold the commit that added .clang-format:
    # then the lines of the newest commit are what can be checked.
    if git rev-parse -q --verify HEAD^ >/dev/null; then
        echo "check-format: the commit that added .clang-format is not in this clone; checking the last commit's lines" >&2
        base=HEAD^
    else
        echo "check-format: no history to tell changed lines from (a one-commit clone): nothing checked" >&2
        exit 0
    fi
fi
out=$(git clang-format --diff --extensions "$exts" "$base" -- src tests bench 2>&1) || {
    echo "$out" >&2
    exit 2
}
case "$out" in
""|"no modified files to format"|"clang-format did not modify any files")
    echo "check-format: ok (lines changed since $(git rev-parse --short "$base"))"
    exit 0 ;;
esac
echo "$out"
echo "check-format: the lines above, changed since $(git rev-parse --short "$base"), are not as .clang-format says; run make format" >&2
exit 1
