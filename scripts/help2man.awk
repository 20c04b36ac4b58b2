# help2man.awk: one command's --help text (stdin) as a man page (stdout).
#
#   llmload run --help | awk -f scripts/help2man.awk -v page=llmload-run \
#       -v cmd=run -v summary='one load point...' -v version=v1 -v seealso='llmload(1)'
#
# The help text is the one source: the man page is a re-typesetting of it,
# so the two cannot say different things (docs/man.md). What it expects of
# the text (every usage function in src/cli/ keeps to it):
#   - "usage: llmload ..." (and indented "llmload ..." lines after it): SYNOPSIS;
#     anything before the usage line (the top-level help's title) is skipped
#   - an option line is two spaces then a flag ("  --url BASE   text");
#     the text starts after the first run of two or more spaces, or at the
#     column where the other option lines' text starts; lines indented deeper
#     continue the text
#   - "  name   text" lines under "commands:" are commands (llmload(1))
#   - a paragraph at column 0 that ends with ":" and is followed by an
#     option line is a group heading; other paragraphs are prose
#   - the paragraph that starts "Exit status:" becomes EXIT STATUS

# Roff-escape one line of text: backslashes, the hyphens of option-like
# words as \- (a minus: no break, and searchable as typed), `code` in bold.
function esc(s,    out, i, c, prev, inopt, n) {
    gsub(/\\/, "\\e", s)
    out = ""; prev = " "; inopt = 0; n = length(s)
    for (i = 1; i <= n; i++) {
        c = substr(s, i, 1)
        if (c == "-" && (inopt || index(" ([`'\"/,|=", prev) > 0)) {
            out = out "\\-"; inopt = 1
        } else {
            if (c !~ /[-A-Za-z0-9*]/) inopt = 0
            out = out c
        }
        prev = c
    }
    while (match(out, /`[^`]*`/))
        out = substr(out, 1, RSTART - 1) "\\fB" substr(out, RSTART + 1, RLENGTH - 2) "\\fR" \
              substr(out, RSTART + RLENGTH)
    return out
}

# Print a text line, guarded against a leading control character.
function text(s) {
    if (s ~ /^[.']/) s = "\\&" s
    print s
}

function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }

# An option's spec (-H, --header 'N: V'): flags bold, their values italic.
function fmtspec(spec,    n, t, i, out, w, comma) {
    n = split(spec, t, / +/); out = ""
    for (i = 1; i <= n; i++) {
        w = t[i]; comma = ""
        if (w ~ /^-/ && w ~ /,$/) { comma = ","; w = substr(w, 1, length(w) - 1) }
        out = out (i > 1 ? " " : "") (w ~ /^-/ ? "\\fB" : "\\fI") esc(w) "\\fR" comma
    }
    return out
}

# A usage line: llmload and the command bold, flags bold, the rest italic.
function fmtusage(u,    n, t, i, out, w, pre, post) {
    n = split(trim(u), t, / +/); out = ""
    for (i = 1; i <= n; i++) {
        w = t[i]; pre = ""; post = ""
        while (w ~ /^\[/) { pre = pre "["; w = substr(w, 2) }
        while (w ~ /\]$/) { post = post "]"; w = substr(w, 1, length(w) - 1) }
        if (w == "llmload" || w == cmd || w ~ /^-/) w = "\\fB" esc(w) "\\fR"
        else w = "\\fI" esc(w) "\\fR"
        out = out (i > 1 ? " " : "") pre w post
    }
    return out
}

function isitem(l) { return l ~ /^  [^ (]/ }
function iscont(l) { return l ~ /^   +[^ ]/ }

# Where option text starts: the column most option lines put it at.
function desc_column(    i, r, d, best, bestn) {
    for (i = 1; i <= n; i++) {
        if (!isitem(L[i])) continue
        r = substr(L[i], 3)
        if (match(r, /  +/)) cnt[2 + RSTART + RLENGTH]++
    }
    best = 0; bestn = 0
    for (d in cnt) if (cnt[d] > bestn) { best = d + 0; bestn = cnt[d] }
    return best
}

function section(name) {
    if (cur != name) { print ".SH " name; cur = name }
}

# An option (or command) line and the lines that continue it.
function item(i,    r, spec, d, col) {
    r = substr(L[i], 3)
    if (match(r, /  +/)) {
        spec = substr(r, 1, RSTART - 1); d = substr(r, RSTART + RLENGTH)
    } else if (col0 > 3 && length(L[i]) >= col0 && substr(L[i], col0 - 1, 1) == " " &&
               substr(L[i], col0, 1) != " ") {
        spec = trim(substr(L[i], 3, col0 - 3)); d = substr(L[i], col0)
    } else {
        spec = r; d = ""
    }
    print ".TP"
    if (in_commands) {
        text("\\fB" esc(spec) "\\fR")
        d = esc(d)
        if (spec != "help") d = d "; see \\fBllmload\\-" esc(spec) "\\fR(1)"
        if (d != "") text(d)
    } else {
        text(fmtspec(spec))
        if (d != "") text(esc(d))
    }
    while (i < n && iscont(L[i + 1])) text(esc(trim(L[++i])))
    return i
}

# A group heading: a short one as .SS, a long one's title as .SS and the
# rest (its parenthesis, its prose) as a paragraph.
function heading(h,    t, rest, p) {
    sub(/:$/, "", h)
    if (h == "commands") { section("COMMANDS"); in_commands = 1; return }
    section("OPTIONS"); in_commands = 0
    if (length(h) <= 50) { print ".SS \"" esc(h) "\""; return }
    p = index(h, " (")
    if (p == 0) p = index(h, ": ")
    if (p == 0) { print ".PP"; text(esc(h)); return }
    t = substr(h, 1, p - 1); rest = trim(substr(h, p + 1))
    print ".SS \"" esc(t) "\""
    print ".PP"
    text(esc(rest))
}

{ L[++n] = $0 }

END {
    col0 = desc_column()
    up = toupper(page); gsub(/-/, "\\-", up)
    print ".\\\" Generated from `" (cmd == "" ? "llmload" : "llmload " cmd) " --help` by scripts/gen-docs.sh; do not edit."
    print ".TH " up " 1 \"\" \"llmload " version "\" \"llmload manual\""
    print ".nh"
    print ".ad l"
    print ".SH NAME"
    text(esc(page) " \\- " esc(summary))
    print ".SH SYNOPSIS"
    i = 1
    while (i <= n && L[i] !~ /^usage: /) i++
    if (i > n) { print "help2man.awk: no usage line" > "/dev/stderr"; exit 1 }
    text(fmtusage(substr(L[i], 8)))
    while (i < n && L[i + 1] ~ /^ +llmload /) { print ".br"; text(fmtusage(L[++i])) }
    cur = "SYNOPSIS"; nex = 0
    for (i++; i <= n; i++) {
        l = L[i]
        if (l ~ /^ *$/) continue
        if (isitem(l)) {
            if (cur == "SYNOPSIS" || cur == "DESCRIPTION") section(in_commands ? "COMMANDS" : "OPTIONS")
            i = item(i); continue
        }
        if (l ~ /^  \(/ || iscont(l)) {          # an indented note between options
            print ".PP"
            while (i <= n && L[i] ~ /^  +[^ ]/ && !isitem(L[i])) text(esc(trim(L[i++])))
            i--; continue
        }
        # a paragraph at column 0
        j = i; para = l
        while (j < n && L[j + 1] ~ /^[^ ]/) para = para "\n" L[++j]
        if (para ~ /^Exit status:/) {
            ex[++nex] = para; i = j; continue
        }
        if (para ~ /:$/ && j < n && isitem(L[j + 1])) {
            gsub(/\n/, " ", para); heading(para); i = j; continue
        }
        if (cur == "SYNOPSIS") section("DESCRIPTION")
        print ".PP"
        m = split(para, pl, "\n")
        for (k = 1; k <= m; k++) text(esc(pl[k]))
        i = j
    }
    if (nex) {
        section("EXIT STATUS")
        for (k = 1; k <= nex; k++) {
            sub(/^Exit status: */, "", ex[k])
            m = split(ex[k], pl, "\n")
            print ".PP"
            for (q = 1; q <= m; q++) text(esc(pl[q]))
        }
    }
    section("SEE ALSO")
    m = split(seealso, pl, ",")
    for (k = 1; k <= m; k++) {
        s = pl[k]; sub(/\(1\)$/, "", s); gsub(/-/, "\\-", s)   # \- : no line break in a name
        text("\\fB" s "\\fR(1)" (k < m ? "," : ""))
    }
    print ".PP"
    print "The documentation in \\fIdocs/\\fR of the llmload source tree."
}
