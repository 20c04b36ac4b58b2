# help2comp.awk: bash and zsh completion for llmload from its --help texts.
#
#   awk -f scripts/help2comp.awk -v bash=OUT.bash -v zsh=OUT.zsh HELPS
#
# HELPS is `llmload help` after a line "@@main", then each command's
# `llmload CMD --help` after a line "@@cmd CMD" (scripts/gen-docs.sh makes
# it). What a command completes is what its help documents:
#   - the commands and their one-line summaries: `llmload help`'s list
#   - a command's options: its option lines ("  -H, --header 'N: V'  text"),
#     the value each takes named by the word after the flag; and when the
#     help says "as `llmload run`", the options of `llmload run --help` it
#     names (--url, -H, --timeout-* ...)
#   - a value named FILE (or *.jsonl) completes file names, DIR directories;
#     the names in VALUES below their words; any other value nothing
#   - the operand of the usage line (TRACE.jsonl, DIR) likewise.

BEGIN {
    # Options whose values are names from a fixed list (checked in
    # runopts.c and cmd_sim.c). gen-docs.sh fails if a name here is not
    # in the help texts, so a renamed value cannot stay behind.
    VALUES["--api"] = "openai-chat openai-completions"
    VALUES["--arrival"] = "constant poisson gamma"
    VALUES["--http-client"] = "auto native curl"
    VALUES["--on-cap"] = "queue drop"
    VALUES["--rates"] = "auto"
    VALUES["--profile"] = "default instant"
    VALUES["--tokenizer"] = "words bytes2"
    VALUES["--stall-from"] = "start first-request"
}

function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }

# For zsh: text inside '...' and [...] of an _arguments spec.
function zdesc(s) {
    gsub(/['\\]/, "", s); gsub(/\[/, "(", s); gsub(/\]/, ")", s); gsub(/:/, "\\:", s)
    return s
}
function zmsg(s) { gsub(/[^A-Za-z0-9_.|-]+/, " ", s); return trim(s) }

# How a value named arg completes: file, dir, or a list of words (or "").
function kind(flag, arg) {
    if (arg ~ /FILE/ || arg ~ /\.jsonl?$/) return "file"
    if (arg ~ /DIR/) return "dir"
    if (flag in VALUES) return "values"
    return ""
}

# Record option f (value arg, "" for none) of command c, once.
function addopt(c, f, arg, desc,    k) {
    k = c SUBSEP f
    if (k in ARG) return
    ARG[k] = arg; DESC[k] = desc
    OPTS[c] = OPTS[c] (OPTS[c] == "" ? "" : " ") f
}

/^@@main$/ { c = ""; section = "main"; next }
/^@@cmd / { c = $2; CMDS[++ncmd] = c; section = "cmd"; next }

{ TEXT[c] = TEXT[c] "\n" $0; ALLTEXT = ALLTEXT "\n" $0 }

section == "main" && /^commands:/ { incmds = 1; next }
section == "main" && incmds && /^  [a-z]/ {
    name = $1; sub(/^  [^ ]+ +/, "", $0)
    if (name != "help") SUMMARY[name] = $0
    next
}
section == "main" { incmds = 0; next }

# The usage line's operand.
section == "cmd" && /^usage: / {
    depth = 0
    for (i = 3; i <= NF; i++) {
        w = $i
        if (w ~ /^\[/) depth++
        if (depth > 0 || w ~ /^-/) { if (w ~ /\]$/) depth--; continue }
        if (w ~ /\.jsonl?$/ || w ~ /FILE/) OPERAND[c] = "file"
        else if (w ~ /DIR/) OPERAND[c] = "dir"
    }
    next
}

# An option line: its flags and their value.
section == "cmd" && /^  -/ {
    line = substr($0, 3)
    if (match(line, /  +/)) { spec = substr(line, 1, RSTART - 1); desc = substr(line, RSTART + RLENGTH) }
    else { spec = line; desc = "" }
    pending = ""
    n = split(spec, t, / +/)
    for (i = 1; i <= n; i++) {
        if (t[i] !~ /^-/) continue
        if (t[i] ~ /,$/) { pending = pending " " substr(t[i], 1, length(t[i]) - 1); continue }
        arg = (i < n && t[i + 1] !~ /^-/) ? t[i + 1] : ""
        m = split(pending, al, " ")
        for (j = 1; j <= m; j++) {
            addopt(c, al[j], arg, desc); ALIAS[c SUBSEP al[j]] = t[i]; ALIAS[c SUBSEP t[i]] = al[j]
        }
        addopt(c, t[i], arg, desc)
        pending = ""
        lastc = c; lastk = c SUBSEP t[i]
    }
    next
}
# The first line of text of an option whose spec filled its line.
section == "cmd" && /^   +[^ ]/ && lastk != "" && DESC[lastk] == "" { DESC[lastk] = trim($0) }
section == "cmd" { if ($0 !~ /^   /) lastk = "" }

# Options of `llmload run` that a paragraph saying "as `llmload run`"
# names (with its alias: -H brings --header), "--timeout-*" all of that prefix.
function inherit(c,    txt, f, p, n, o, i, np, para, k, named) {
    np = split(TEXT[c], para, "\n\n")
    txt = ""
    for (k = 1; k <= np; k++) if (index(para[k], "as `llmload run`") > 0) txt = txt "\n" para[k] "\n"
    n = split(OPTS["run"], o, " ")
    for (i = 1; i <= n; i++) {
        f = o[i]
        named = txt ~ ("[^-A-Za-z0-9]" f "([^-A-Za-z0-9]|$)")
        p = f
        while (!named && match(p, /-[^-]+$/) && RSTART > 2) {
            p = substr(p, 1, RSTART - 1)
            named = index(txt, p "-*") > 0
        }
        if (!named) continue
        addopt(c, f, ARG["run" SUBSEP f], DESC["run" SUBSEP f])
        if (("run" SUBSEP f) in ALIAS) {
            p = ALIAS["run" SUBSEP f]; addopt(c, p, ARG["run" SUBSEP p], DESC["run" SUBSEP p])
        }
    }
}

function emit_bash(out,    i, c, n, o, j, k, files, dirs, args, vals, f, q) {
    q = "'"
    print "# bash completion for llmload(1): generated from `llmload help` and each" > out
    print "# command's --help by scripts/gen-docs.sh (docs/man.md); do not edit." > out
    print "" > out
    print "# Complete the current word ($cur) as file names (-f) or directories (-d)." > out
    print "_llmload_files()\n{\n    local IFS=$'\\n'\n    compopt -o filenames 2>/dev/null" > out
    print "    COMPREPLY=($(compgen \"$1\" -- \"$cur\"))\n}\n" > out
    print "_llmload()\n{" > out
    print "    local cur=${COMP_WORDS[COMP_CWORD]} prev= cmds" > out
    cmds = ""
    for (i = 1; i <= ncmd; i++) cmds = cmds (i > 1 ? " " : "") CMDS[i]
    print "    cmds=" q cmds " help" q > out
    print "    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}" > out
    print "    # --flag=value and empirical:FILE: bash splits the word at = and :" > out
    print "    if [[ $cur == = ]]; then\n        cur=\n    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then" > out
    print "        prev=${COMP_WORDS[COMP_CWORD-2]}\n    fi" > out
    print "    if [[ $cur == : || $prev == : ]] && ((COMP_CWORD > 1)) &&" > out
    print "        [[ ${COMP_WORDS[COMP_CWORD-1]} == empirical || ${COMP_WORDS[COMP_CWORD-2]} == empirical ]]; then" > out
    print "        [[ $cur == : ]] && cur=\n        _llmload_files -f\n        return\n    fi" > out
    print "    if ((COMP_CWORD == 1)); then" > out
    print "        COMPREPLY=($(compgen -W \"$cmds --help --version\" -- \"$cur\"))\n        return\n    fi" > out
    print "    local opts= files= dirs= args= operand=" > out
    print "    case ${COMP_WORDS[1]} in" > out
    for (i = 1; i <= ncmd; i++) {
        c = CMDS[i]; files = ""; dirs = ""; args = ""; vals = ""
        n = split(OPTS[c], o, " ")
        for (j = 1; j <= n; j++) {
            f = o[j]; k = kind(f, ARG[c SUBSEP f])
            if (ARG[c SUBSEP f] == "") continue
            if (k == "file") files = files " " f
            else if (k == "dir") dirs = dirs " " f
            else args = args " " f
        }
        print "    " c ")" > out
        print "        opts=" q OPTS[c] q > out
        if (files != "") print "        files=" q substr(files, 2) q > out
        if (dirs != "") print "        dirs=" q substr(dirs, 2) q > out
        if (args != "") print "        args=" q substr(args, 2) q > out
        if (OPERAND[c] != "") print "        operand=" OPERAND[c] > out
        print "        ;;" > out
    }
    print "    help)\n        COMPREPLY=($(compgen -W \"$cmds\" -- \"$cur\"))\n        return\n        ;;" > out
    print "    *) return ;;\n    esac" > out
    print "    if [[ \" $files \" == *\" $prev \"* ]]; then\n        _llmload_files -f\n        return" > out
    print "    elif [[ \" $dirs \" == *\" $prev \"* ]]; then\n        _llmload_files -d\n        return" > out
    print "    elif [[ \" $args \" == *\" $prev \"* ]]; then" > out
    print "        case $prev in" > out
    for (f in VALUES)
        print "        " f ") COMPREPLY=($(compgen -W " q VALUES[f] q " -- \"$cur\")) ;;" > out
    print "        esac\n        return\n    fi" > out
    print "    if [[ $cur == -* ]]; then" > out
    print "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))" > out
    print "    elif [[ $operand == file ]]; then\n        _llmload_files -f" > out
    print "    elif [[ $operand == dir ]]; then\n        _llmload_files -d\n    fi\n}\n" > out
    print "complete -F _llmload llmload" > out
    close(out)
}

function emit_zsh(out,    i, c, n, o, j, f, a, k, act, spec, d) {
    print "#compdef llmload" > out
    print "# zsh completion for llmload(1): generated from `llmload help` and each" > out
    print "# command's --help by scripts/gen-docs.sh (docs/man.md); do not edit." > out
    print "" > out
    print "_llmload() {" > out
    print "    local curcontext=$curcontext state line ret=1" > out
    print "    local -a cmds" > out
    print "    cmds=(" > out
    for (i = 1; i <= ncmd; i++) print "        '" CMDS[i] ":" zdesc(SUMMARY[CMDS[i]]) "'" > out
    print "        'help:the help of a command'" > out
    print "    )" > out
    print "    _arguments -C '(- :)--help[list the commands]' '(- :)--version[print the version]' \\" > out
    print "        '1: :->cmd' '*:: :->args' && ret=0" > out
    print "    case $state in" > out
    print "    cmd) _describe -t commands 'llmload command' cmds && ret=0 ;;" > out
    print "    args)" > out
    print "        curcontext=${curcontext%:*:*}:llmload-$words[1]:" > out
    print "        case $words[1] in" > out
    for (i = 1; i <= ncmd; i++) {
        c = CMDS[i]
        print "        " c ")" > out
        print "            _arguments -s -S \\" > out
        n = split(OPTS[c], o, " ")
        for (j = 1; j <= n; j++) {
            f = o[j]; a = ARG[c SUBSEP f]; k = kind(f, a); d = zdesc(DESC[c SUBSEP f])
            if (a == "") { spec = "*" f "[" d "]" }
            else {
                act = k == "file" ? "_files" : k == "dir" ? "_files -/" \
                      : k == "values" ? "(" VALUES[f] ")" : " "
                spec = "*" f (f ~ /^--/ ? "=" : "+") "[" d "]:" zmsg(a) ":" act
            }
            print "                '" spec "' \\" > out
        }
        if (OPERAND[c] == "file") print "                '1:file:_files' \\" > out
        if (OPERAND[c] == "dir") print "                '1:directory:_files -/' \\" > out
        print "                && ret=0" > out
        print "            ;;" > out
    }
    print "        help) _describe -t commands 'llmload command' cmds && ret=0 ;;" > out
    print "        esac" > out
    print "        ;;" > out
    print "    esac" > out
    print "    return ret" > out
    print "}" > out
    print "" > out
    print "_llmload \"$@\"" > out
    close(out)
}

END {
    for (i = 1; i <= ncmd; i++) {
        c = CMDS[i]
        if (c != "run" && index(TEXT[c], "as `llmload run`") > 0) inherit(c)
        # every command takes --help (`llmload help` says so), documented or not
        addopt(c, "--help", "", "this text")
        if (!(c in SUMMARY)) { print "help2comp.awk: " c " is not in llmload help" > "/dev/stderr"; exit 1 }
    }
    for (f in VALUES) {
        n = split(VALUES[f], o, " ")
        for (j = 1; j <= n; j++) if (index(ALLTEXT, o[j]) == 0) {
            print "help2comp.awk: " f " value " o[j] " is in no --help text" > "/dev/stderr"; exit 1
        }
    }
    emit_bash(bash)
    emit_zsh(zsh)
}
