#!/bin/sh
# gen-docs.sh: the man pages and shell completion of llmload, from its --help.
#
#   sh scripts/gen-docs.sh BIN OUT
#
# Writes, under OUT (the layout `make install` copies under PREFIX/share):
#   man/man1/llmload.1, man/man1/llmload-CMD.1   one per command `llmload help` lists
#   bash-completion/completions/llmload
#   zsh/site-functions/_llmload
# Everything comes from what BIN prints (`llmload help`, `llmload CMD --help`),
# so a flag added to a command's help reaches its man page and both
# completions at the next build (docs/man.md).
set -eu
bin=$1
out=$2
here=$(dirname "$0")
tmp=$out.tmp
rm -rf "$tmp"
mkdir -p "$tmp/man/man1" "$tmp/bash-completion/completions" "$tmp/zsh/site-functions"

version=$("$bin" --version | sed 's/^llmload //')
"$bin" help >"$tmp/help.main"
cmds=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { if ($1 != "help") print $1; next } { on = 0 }' \
    "$tmp/help.main")
[ -n "$cmds" ] || { echo "gen-docs: no commands in \`$bin help\`" >&2; exit 1; }

pages="llmload(1)"
for c in $cmds; do pages="$pages,llmload-$c(1)"; done

# The top-level page: the title line of `llmload help` is its summary.
summary=$(sed -n '1s/^llmload [^:]*: //p' "$tmp/help.main")
awk -f "$here/help2man.awk" -v page=llmload -v cmd= -v summary="$summary" \
    -v version="$version" -v seealso="${pages#llmload(1),}" \
    <"$tmp/help.main" >"$tmp/man/man1/llmload.1"

{ echo "@@main"; cat "$tmp/help.main"; } >"$tmp/helps"
for c in $cmds; do
    "$bin" "$c" --help >"$tmp/help.$c"
    summary=$(awk -v c="$c" '/^commands:/ { on = 1; next }
        on && $1 == c { sub(/^  [^ ]+ +/, ""); print; exit }' "$tmp/help.main")
    see=$(echo "$pages" | tr ',' '\n' | grep -vx "llmload-$c(1)" | paste -sd, -)
    awk -f "$here/help2man.awk" -v page="llmload-$c" -v cmd="$c" -v summary="$summary" \
        -v version="$version" -v seealso="$see" <"$tmp/help.$c" >"$tmp/man/man1/llmload-$c.1"
    { echo "@@cmd $c"; cat "$tmp/help.$c"; } >>"$tmp/helps"
done

awk -f "$here/help2comp.awk" -v bash="$tmp/bash-completion/completions/llmload" \
    -v zsh="$tmp/zsh/site-functions/_llmload" "$tmp/helps"

rm -f "$tmp"/help.* "$tmp/helps"
rm -rf "$out"
mv "$tmp" "$out"
