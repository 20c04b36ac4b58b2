#!/bin/sh
# check-layers: every #include between src/ folders goes where that folder's
# README.md allows, and no module (x.c with x.h)
# includes itself back through others.
#
#   sh scripts/check-layers.sh [SRC_DIR]      (default src; `make check-layers`)
#
# Each src/<layer>/README.md has one line
#     May include: util, decode, measure
# (or "May include: nothing"), naming the other folders whose headers its
# files may include. A project header is always included by its path from
# src/ ("measure/hist.h"), so a bare "hist.h" is an error too. Then the
# include graph of the headers must have no cycle. Prints one line per
# offence (file:line: what) and exits 1 when there is any.
set -eu
src=${1:-src}
[ -d "$src" ] || { echo "check-layers: no such directory: $src" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

fail=0
for dir in "$src"/*/; do
    dir=${dir%/}
    layer=$(basename "$dir")
    readme="$dir/README.md"
    if [ ! -f "$readme" ]; then
        echo "$readme: missing (every layer says what it may include)"
        fail=1
        continue
    fi
    allowed=$(sed -n 's/^May include: *//p' "$readme" | head -1 | tr ',' ' ')
    if [ -z "$allowed" ]; then
        echo "$readme: no \"May include:\" line"
        fail=1
        continue
    fi
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -f "$f" ] || continue
        # file:line:header for each quoted include
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
            sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/' |
            while read -r line hdr; do
                case "$hdr" in
                */*) to=${hdr%%/*} ;;
                *)
                    echo "$f:$line: \"$hdr\": include project headers by their path from src/ (e.g. \"$layer/$hdr\")"
                    echo x >> "$tmp/bad"
                    continue ;;
                esac
                if [ ! -f "$src/$hdr" ]; then
                    echo "$f:$line: \"$hdr\": no such header under $src/"
                    echo x >> "$tmp/bad"
                    continue
                fi
                echo "${f#"$src"/} $hdr" >> "$tmp/edges"
                [ "$to" = "$layer" ] && continue
                ok=0
                for a in $allowed; do [ "$a" = "$to" ] && ok=1; done
                if [ $ok -eq 0 ]; then
                    echo "$f:$line: \"$hdr\": $layer/ may not include $to/ (its README.md: May include: $(echo $allowed | sed 's/ /, /g'))"
                    echo x >> "$tmp/bad"
                fi
            done
    done
done
[ -f "$tmp/bad" ] && fail=1

# Cycles among modules (a module is x.c with x.h): x includes y's header
# and y includes x's, directly or through others. A depth-first search.
if [ -f "$tmp/edges" ]; then
    awk '{ a = $1; b = $2; sub(/\.[ch]$/, "", a); sub(/\.h$/, "", b)
           if (a != b && !seen[a, b]++) adj[a] = adj[a] " " b
           nodes[a] = 1; nodes[b] = 1 }
    function visit(n,    i, j, k, parts, m, path) {
        state[n] = 1; stack[++depth] = n
        k = split(adj[n], parts, " ")
        for (i = 1; i <= k; i++) {
            m = parts[i]
            if (state[m] == 1) {
                for (j = depth; stack[j] != m; j--) ;
                path = stack[j]
                for (j++; j <= depth; j++) path = path " -> " stack[j]
                print "include cycle: " path " -> " m
                found = 1
            } else if (state[m] == 0) visit(m)
        }
        depth--; state[n] = 2
    }
    END { for (n in nodes) if (state[n] == 0) visit(n); exit found }' "$tmp/edges" || fail=1
fi

if [ $fail -ne 0 ]; then
    echo "check-layers: FAILED (see src/<layer>/README.md and docs/architecture.md)" >&2
    exit 1
fi
echo "check-layers: ok ($(ls -d "$src"/*/ | wc -l) layers, $(wc -l < "$tmp/edges") includes)"
