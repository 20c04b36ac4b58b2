/* badarg.h: the words for an argument a command refuses before any of its
 * values is checked: an unknown option, an ambiguous prefix, a flag given
 * a value it takes none of or missing the one it needs, an operand too
 * many. Every command's parser words them here, so that each reads the
 * same way and names what went wrong, where getopt_long says only '?'.
 *
 * Each writes one line into the caller's err (errlen bytes, truncated past
 * it), which the command prints as "llmload: <err>" and ends with status
 * 2; badarg_getopt_fail does both, for the commands whose main function
 * parses its flags itself (demo, compare, merge, report). */
#ifndef LL_BADARG_H
#define LL_BADARG_H

#include <getopt.h>
#include <stddef.h>

/* What a parser found wrong with one option. */
enum badarg_kind {
    BADARG_UNKNOWN,     /* no option of that name */
    BADARG_NEEDS_VALUE, /* "--rate" with nothing after it */
    BADARG_NO_VALUE,    /* "--quiet=1" */
};

/* The reason for kind k about option opt (as the user should read it,
 * "--rate" or "-H"), pointing at `llmload cmd --help`. */
void badarg_say(char *err, size_t errlen, const char *cmd, enum badarg_kind k, const char *opt);

/* The reason getopt_long refused an argument, in err. c is what it
 * returned (':' for a missing value, with ":" first in its optstring;
 * anything else is taken as '?'), ind and opt its optind and optopt just
 * after, argv the array it walked and opts its long-option table (ended by
 * a zeroed entry; may be NULL). Tells an ambiguous prefix ("--prom": could
 * be --prometheus, --prompt-tokens, ...: every option it begins, in the
 * table's order, as many as err holds), a value given to a flag that takes
 * none and a missing value (each naming the option in full) from an
 * unknown option, as getopt_long matched them: an exact name first, then
 * a unique prefix. */
void badarg_getopt(char *err, size_t errlen, const char *cmd, char *const *argv, int ind, int c,
                   int opt, const struct option *opts);

/* badarg_getopt's reason printed as "llmload: <reason>", then
 * exit(LL_EXIT_USAGE) through ll_usage_fail: for a command's main
 * function only. */
void badarg_getopt_fail(const char *cmd, char *const *argv, int ind, int c, int opt,
                        const struct option *opts) __attribute__((noreturn));

/* 1 when arg looks like a URL (http:// or https://), else 0. */
int badarg_is_url(const char *arg);

/* The reason for an operand arg the command does not take. When url_flag
 * is 1 (the command has --url) and arg looks like a URL, says "did you
 * mean --url <arg>?". */
void badarg_operand(char *err, size_t errlen, const char *cmd, const char *arg, int url_flag);

#endif
