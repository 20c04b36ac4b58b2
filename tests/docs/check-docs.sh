#!/bin/sh
# check-docs.sh: the man pages and completion scripts say what --help says,
# groff typesets the pages without a warning, bash takes the completion,
# and `make install` puts all of it where it belongs (docs/man.md).
#
#   sh tests/docs/check-docs.sh BIN OUT     (make check-docs; part of make test)
#
# BIN is the built llmload, OUT the tree scripts/gen-docs.sh wrote from it.
# For the top level (`llmload help`) and each command (`llmload CMD --help`):
#   - every option the help prints (--flag, -H, and --timeout-* as written)
#     is in that command's man page, as typeset, and in both completion
#     scripts (a --prefix-* by some option of that prefix);
#   - every option of the help's option lines ("  --flag ...") is offered by
#     bash for `llmload CMD -<TAB>`, and is in the command's _arguments of
#     the zsh function.
set -u
bin=$1
out=$2
cd "$(dirname "$0")/../.."
build=$(dirname "$bin")
out=$(cd "$out" && pwd) || exit 1
bash_comp=$out/bash-completion/completions/llmload
zsh_comp=$out/zsh/site-functions/_llmload
man1=$out/man/man1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
    echo "check-docs: FAIL: $*" >&2
    fails=$((fails + 1))
}

# grep -E for option o as a word of its own ("--out", not "--output-tokens").
word() {
    o=$(printf '%s' "$1" | sed 's/\*/\\*/g')
    printf '(^|[^-A-Za-z0-9])%s([^-A-Za-z0-9]|$)' "$o"
}
# Every option a help text prints, one a line.
options() {
    grep -oE -- '(^|[^-A-Za-z0-9])--?[A-Za-z][-A-Za-z0-9]*\*?' "$1" | sed 's/^[^-]*//' | sort -u
}
# The options of a help's option lines.
documented() {
    grep -E '^  -' "$1" | sed 's/^  //; s/  .*//; s/^/ /' | grep -oE -- ' --?[A-Za-z][-A-Za-z0-9]*' |
        sed 's/^ //' | sort -u
}
# A man page as a reader sees it (no bold, no hyphenation, long lines).
render() {
    if command -v groff >/dev/null 2>&1; then
        groff -man -Tascii -rLL=250n -P-cbou "$1" 2>/dev/null
    else
        sed 's/\\-/-/g; s/\\f[BIRP]//g; s/\\e/\\/g' "$1"
    fi
}
# What bash offers for the words given, with the cursor on the last.
bash_complete() {
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _llmload
             printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_comp" "$@"
}

[ -f "$bash_comp" ] || fail "$bash_comp: not generated"
[ -f "$zsh_comp" ] || fail "$zsh_comp: not generated"
"$bin" help >"$tmp/help" || fail "llmload help: exit $?"
cmds=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { if ($1 != "help") print $1; next } { on = 0 }' \
    "$tmp/help")
[ -n "$cmds" ] || fail "no commands in llmload help"

for c in "" $cmds; do
    if [ -z "$c" ]; then
        page=$man1/llmload.1; h=$tmp/help; what="llmload help"
    else
        page=$man1/llmload-$c.1; h=$tmp/help.$c; what="llmload $c --help"
        "$bin" "$c" --help >"$h" || fail "$what: exit $?"
    fi
    [ -f "$page" ] || { fail "$page: missing"; continue; }
    if command -v groff >/dev/null 2>&1; then
        groff -man -Tutf8 -ww -z "$page" 2>"$tmp/warn"
        [ -s "$tmp/warn" ] && fail "groff warns about $page: $(cat "$tmp/warn")"
    fi
    if command -v man >/dev/null 2>&1; then
        MANWIDTH=80 man -l "$page" >/dev/null 2>&1 || fail "man -l $page failed"
    fi
    render "$page" >"$tmp/page"
    for o in $(options "$h"); do
        grep -qE -- "$(word "$o")" "$tmp/page" || fail "$what prints $o; $(basename "$page") does not"
        for f in "$bash_comp" "$zsh_comp"; do
            case $o in
            *\*) grep -qE -- "$(echo "$o" | sed 's/\*$//')[a-z]" "$f" ;;
            *) grep -qE -- "$(word "$o")" "$f" ;;
            esac || fail "$what prints $o; $(basename "$f") does not have it"
        done
    done
    [ -z "$c" ] && continue
    bash_complete llmload "$c" - >"$tmp/offered"
    sed -n "/^        $c)\$/,/^            ;;\$/p" "$zsh_comp" >"$tmp/zsh.$c"
    for o in $(documented "$h"); do
        grep -qx -- "$o" "$tmp/offered" || fail "bash does not complete $o for llmload $c"
        grep -qE -- "'\\*$o[=+[]" "$tmp/zsh.$c" || fail "_llmload has no $o for llmload $c"
    done
done

# bash takes the script, and completes commands, options, values and files.
bash -c '. "$1"; complete -p llmload' _ "$bash_comp" | grep -q -- '-F _llmload llmload' ||
    fail "complete -p llmload: not registered"
expect() { # expect WANT WORDS...: bash offers WANT (a line) for WORDS
    want=$1; shift
    bash_complete "$@" | grep -qx -- "$want" || fail "bash: \"$*\" does not offer $want"
}
expect run llmload ru
expect calibrate llmload help cal
expect --workload llmload run --work
expect openai-completions llmload run --api ''
expect openai-chat llmload calibrate --api ''
expect poisson llmload sweep --arrival ''
mkdir -p "$tmp/files/sub" && : >"$tmp/files/trace.jsonl"
(
    cd "$tmp/files" || exit 1
    for w in --workload --dataset --cacert --calibration --dump-schedule; do
        bash_complete llmload run "$w" tr | grep -qx trace.jsonl || echo "run $w"
    done
    bash_complete llmload replay tr | grep -qx trace.jsonl || echo "replay TRACE"
    bash_complete llmload run --lengths empirical : | grep -qx trace.jsonl || echo "run --lengths empirical:"
    bash_complete llmload run --out '' | grep -qx sub || echo "run --out"
    bash_complete llmload run --out '' | grep -qx trace.jsonl && echo "run --out offers a file"
    bash_complete llmload run --url '' | grep -q . && echo "run --url offers something"
) >"$tmp/filefail"
while read -r l; do fail "bash: file completion: $l"; done <"$tmp/filefail"

if command -v zsh >/dev/null 2>&1; then
    zsh -n "$zsh_comp" || fail "zsh -n $zsh_comp"
else
    echo "check-docs: zsh is not installed: _llmload checked by text only" >&2
fi
head -1 "$zsh_comp" | grep -qx '#compdef llmload' || fail "_llmload: no #compdef line"

# make install, with PREFIX and with DESTDIR.
for how in "PREFIX=$tmp/p" "DESTDIR=$tmp/d PREFIX=/usr"; do
    root=$tmp/p
    [ "${how#DESTDIR}" != "$how" ] && root=$tmp/d/usr
    # shellcheck disable=SC2086
    ${MAKE:-make} --no-print-directory -s install BUILD="$build" $how >"$tmp/install.log" 2>&1 ||
        { fail "make install $how: $(cat "$tmp/install.log")"; continue; }
    for f in bin/llmload share/man/man1/llmload.1 share/bash-completion/completions/llmload \
        share/zsh/site-functions/_llmload $(for c in $cmds; do echo "share/man/man1/llmload-$c.1"; done); do
        [ -f "$root/$f" ] || fail "make install $how: no $f"
    done
    [ -x "$root/bin/llmload" ] || fail "make install $how: bin/llmload not executable"
done

if [ "$fails" -gt 0 ]; then
    echo "check-docs: $fails failure(s)" >&2
    exit 1
fi
echo "check-docs: ok ($(echo $cmds | wc -w) commands: man pages, bash and zsh completion, install)"
