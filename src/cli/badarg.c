/* badarg.c: the words for a refused argument (badarg.h). */
#include "cli/badarg.h"

#include <stdio.h>
#include <string.h>

#include "util/util.h"

void badarg_say(char *err, size_t errlen, const char *cmd, enum badarg_kind k, const char *opt)
{
    static const char *const fmt[] = {
        [BADARG_UNKNOWN] = "unknown option \"%s\" (see llmload %s --help)",
        [BADARG_NEEDS_VALUE] = "%s needs a value (see llmload %s --help)",
        [BADARG_NO_VALUE] = "%s takes no value (see llmload %s --help)",
    };
    snprintf(err, errlen, fmt[k], opt, cmd);
}

/* Append s at *at in err (errlen bytes): 0, or -1 when it does not fit
 * with room left for the tail ("...)" and the pointer at --help). */
static int append(char *err, size_t errlen, size_t *at, const char *s, size_t keep)
{
    size_t n = strlen(s);
    if (*at + n + keep >= errlen)
        return -1;
    memcpy(err + *at, s, n + 1);
    *at += n;
    return 0;
}

/* "ambiguous option "--prom": could be --prometheus, --prompt-tokens"
 * and as many more of the names opts begins with name (len bytes) as fit,
 * then ", ..." when some did not (err's room is errlen: the pointer at
 * --help is kept whole when the rest fits at all). */
static void say_ambiguous(char *err, size_t errlen, const char *cmd, const char *arg,
                          const char *name, size_t len, const struct option *opts)
{
    char tail[96];
    snprintf(tail, sizeof tail, " (see llmload %s --help)", cmd);
    size_t keep = strlen(tail) + 5; /* ", ..." */
    int w = snprintf(err, errlen, "ambiguous option \"%s\": could be", arg);
    if (w < 0 || (size_t)w >= errlen)
        return;
    size_t at = (size_t)w;
    int first = 1, cut = 0;
    for (const struct option *o = opts; o->name && !cut; o++) {
        if (strncmp(o->name, name, len) != 0)
            continue;
        char one[128];
        snprintf(one, sizeof one, "%s--%s", first ? " " : ", ", o->name);
        cut = append(err, errlen, &at, one, keep) != 0;
        first = first && cut;
    }
    if (cut)
        append(err, errlen, &at, first ? " ..." : ", ...", 0);
    snprintf(err + at, errlen - at, "%s", tail);
}

/* getopt_long's view of "--name[=value]": the entry it took, or NULL with
 * *n_prefix the number of entries name begins (0: unknown, 2 or more:
 * ambiguous). An exact name wins over the names it begins, as there. */
static const struct option *long_match(const char *name, size_t len, const struct option *opts,
                                       size_t *n_prefix)
{
    const struct option *hit = NULL;
    *n_prefix = 0;
    for (const struct option *o = opts; o && o->name; o++) {
        if (strncmp(o->name, name, len) != 0)
            continue;
        if (strlen(o->name) == len)
            return o;
        hit = o;
        (*n_prefix)++;
    }
    return *n_prefix == 1 ? hit : NULL;
}

void badarg_getopt(char *err, size_t errlen, const char *cmd, char *const *argv, int ind, int c,
                   int opt, const struct option *opts)
{
    const char *arg = ind > 0 ? argv[ind - 1] : "";
    char full[160];
    if (strncmp(arg, "--", 2) != 0) { /* a short option: optopt is its letter */
        snprintf(full, sizeof full, "-%c", opt > 0 && opt < 256 ? opt : '?');
        badarg_say(err, errlen, cmd, c == ':' ? BADARG_NEEDS_VALUE : BADARG_UNKNOWN, full);
        return;
    }
    const char *name = arg + 2;
    size_t len = strcspn(name, "=");
    size_t n_prefix;
    const struct option *o = long_match(name, len, opts, &n_prefix);
    if (!o && n_prefix > 1) {
        char typed[128];
        snprintf(typed, sizeof typed, "--%.*s", (int)len, name);
        say_ambiguous(err, errlen, cmd, typed, name, len, opts);
        return;
    }
    if (!o) {
        badarg_say(err, errlen, cmd, BADARG_UNKNOWN, arg);
        return;
    }
    snprintf(full, sizeof full, "--%s", o->name);
    if (c == ':')
        badarg_say(err, errlen, cmd, BADARG_NEEDS_VALUE, full);
    else if (name[len] == '=' && o->has_arg == no_argument)
        badarg_say(err, errlen, cmd, BADARG_NO_VALUE, full);
    else /* not one of getopt_long's refusals: say what it was given */
        badarg_say(err, errlen, cmd, BADARG_UNKNOWN, arg);
}

void badarg_getopt_fail(const char *cmd, char *const *argv, int ind, int c, int opt,
                        const struct option *opts)
{
    char why[512];
    badarg_getopt(why, sizeof why, cmd, argv, ind, c, opt, opts);
    ll_usage_fail("%s", why);
}

int badarg_is_url(const char *arg)
{
    return strncmp(arg, "http://", 7) == 0 || strncmp(arg, "https://", 8) == 0;
}

void badarg_operand(char *err, size_t errlen, const char *cmd, const char *arg, int url_flag)
{
    if (url_flag && badarg_is_url(arg))
        snprintf(err, errlen,
                 "unexpected argument \"%s\": did you mean --url %s? (see llmload "
                 "%s --help)",
                 arg, arg, cmd);
    else
        snprintf(err, errlen, "unexpected argument \"%s\" (see llmload %s --help)", arg, cmd);
}
