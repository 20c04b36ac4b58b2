/* prom.c: the Prometheus text exposition parser and its helpers.
 *
 * I read the body one line at a time (LF, with an optional CR before it),
 * and each line is either blank, a comment ("# TYPE" is the only one that
 * matters; "# EOF" stops the parse), or a sample:
 *
 *     name [{label="value",...}] value [timestamp] [# exemplar...]
 *
 * Each sample's strings are copied, NUL-terminated and unescaped, into one
 * scratch buffer that is reused line after line, so a parse costs one
 * allocation however many samples it has. A line that does not fit this
 * shape is counted as bad and skipped; the parse itself never fails. */
#include "metrics/prom.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* A family named by a "# TYPE" line. name points into the caller's body,
 * which outlives the parse. */
struct prom_family {
    const char *name;
    size_t len;
    enum prom_type type;
};

struct prom_parser {
    prom_sample_cb *cb;
    void *ud;
    struct prom_parse_stats *st;
    char *scratch;                 /* 2 * longest possible line + slack */
    struct prom_family *fam;
    size_t n_fam, cap_fam;
    struct prom_label labels[PROM_MAX_LABELS];
};

static int is_ws(char c) { return c == ' ' || c == '\t'; }

static int is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_name_start(char c) { return is_alpha(c) || c == '_' || c == ':'; }
static int is_name_char(char c) { return is_name_start(c) || is_digit(c); }
static int is_label_start(char c) { return is_alpha(c) || c == '_'; }
static int is_label_char(char c) { return is_label_start(c) || is_digit(c); }

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Does s[0..len) equal the lower-case literal lit, ignoring case? */
static int eq_nocase(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    if (len != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (lower(s[i]) != lit[i])
            return 0;
    return 1;
}

static int eq_lit(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    return len == n && memcmp(s, lit, n) == 0;
}

/* Decimal floats only: the characters strtod needs for them and nothing
 * else, so hex floats, "infinity" spelled oddly and locale surprises never
 * get through. Overflow to infinity is refused; underflow to 0 is kept. */
int prom_parse_value(const char *s, size_t len, double *out)
{
    char tmp[128];
    const char *body = s;
    size_t blen = len;
    int neg = 0;

    if (s == NULL || out == NULL || len == 0)
        return LL_E_INVAL;
    if (body[0] == '+' || body[0] == '-') {
        neg = body[0] == '-';
        body++;
        blen--;
    }
    if (eq_nocase(body, blen, "inf") || eq_nocase(body, blen, "infinity")) {
        *out = neg ? -INFINITY : INFINITY;
        return 0;
    }
    if (eq_nocase(s, len, "nan")) {
        *out = NAN;
        return 0;
    }
    if (len >= sizeof tmp)
        return LL_E_INVAL;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!is_digit(c) && c != '.' && c != 'e' && c != 'E' && c != '+' &&
            c != '-')
            return LL_E_INVAL;
    }
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    errno = 0;
    char *end = NULL;
    double v = strtod(tmp, &end);
    if (end != tmp + len)
        return LL_E_INVAL;
    if (errno == ERANGE && isinf(v))
        return LL_E_INVAL;
    *out = v;
    return 0;
}

/* OpenMetrics' timestamp: a decimal number of seconds with a fraction or
 * an exponent (1520879607.789, 1.5e9), as milliseconds rounded to the
 * nearest, within int64. Not Inf or NaN. */
static int parse_timestamp_s(const char *s, size_t len, int64_t *out)
{
    double v;
    for (size_t i = 0; i < len; i++)
        if (!is_digit(s[i]) && s[i] != '.' && s[i] != 'e' && s[i] != 'E' && s[i] != '+' &&
            s[i] != '-')
            return LL_E_INVAL;
    if (prom_parse_value(s, len, &v) != 0 || !isfinite(v) || fabs(v) >= 9.2e15)
        return LL_E_INVAL;
    *out = (int64_t)llround(v * 1000);
    return 0;
}

/* A sample's timestamp as milliseconds. An optional sign and decimal
 * digits, within int64, is the text format's integer milliseconds; a
 * number with a fraction or exponent is OpenMetrics' seconds
 * (parse_timestamp_s). An OpenMetrics integer (seconds) reads as
 * milliseconds: without the Content-Type the two cannot be told apart,
 * and nothing in llmload uses a timestamp; the line is not refused. */
static int parse_timestamp(const char *s, size_t len, int64_t *out)
{
    char tmp[32];
    size_t i = 0;

    if (len == 0 || len >= sizeof tmp)
        return LL_E_INVAL;
    if (s[0] == '+' || s[0] == '-')
        i = 1;
    if (i == len)
        return LL_E_INVAL;
    for (; i < len; i++)
        if (!is_digit(s[i]))
            return parse_timestamp_s(s, len, out);
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    errno = 0;
    char *end = NULL;
    long long v = strtoll(tmp, &end, 10);
    if (errno == ERANGE || end != tmp + len)
        return LL_E_INVAL;
    *out = (int64_t)v;
    return 0;
}

static void note_bad(struct prom_parser *p, size_t lineno, const char *why)
{
    struct prom_parse_stats *st = p->st;
    if (st->bad_lines < PROM_BAD_LINES_KEPT) {
        st->bad_line_no[st->bad_lines] = lineno;
        st->bad_reason[st->bad_lines] = why;
    }
    st->bad_lines++;
}

/* Is rest (what follows a family name inside a sample name) a suffix that
 * a family of type t may carry? Sets *sx when it is. */
static int suffix_allowed(enum prom_type t, const char *rest, size_t rlen,
                          enum prom_suffix *sx)
{
    static const struct {
        const char *text;
        enum prom_suffix sx;
        unsigned types;            /* bit per enum prom_type */
    } tab[] = {
        {"_bucket", PROM_SUFFIX_BUCKET, 1u << PROM_HISTOGRAM},
        {"_sum", PROM_SUFFIX_SUM, 1u << PROM_HISTOGRAM | 1u << PROM_SUMMARY},
        {"_count", PROM_SUFFIX_COUNT, 1u << PROM_HISTOGRAM | 1u << PROM_SUMMARY},
        {"_total", PROM_SUFFIX_TOTAL, 1u << PROM_COUNTER},
        {"_created", PROM_SUFFIX_CREATED,
         1u << PROM_HISTOGRAM | 1u << PROM_SUMMARY | 1u << PROM_COUNTER},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(tab); i++) {
        if ((tab[i].types & (1u << t)) && eq_lit(rest, rlen, tab[i].text)) {
            *sx = tab[i].sx;
            return 1;
        }
    }
    return 0;
}

static int family_match(const struct prom_family *f, const char *n,
                        size_t nlen, enum prom_suffix *sx)
{
    if (nlen < f->len || memcmp(n, f->name, f->len) != 0)
        return 0;
    if (nlen == f->len) {
        *sx = PROM_SUFFIX_NONE;
        return 1;
    }
    return suffix_allowed(f->type, n + f->len, nlen - f->len, sx);
}

/* The family a sample name belongs to: the latest TYPE line first (the
 * usual case: a family's samples follow its TYPE line), then the others,
 * newest first, so a repeated TYPE line overrides an older one. Linear in
 * the number of families for samples that are not under their TYPE line. */
static const struct prom_family *find_family(const struct prom_parser *p,
                                             const char *n, size_t nlen,
                                             enum prom_suffix *sx)
{
    for (size_t i = p->n_fam; i-- > 0;)
        if (family_match(&p->fam[i], n, nlen, sx))
            return &p->fam[i];
    return NULL;
}

static void add_family(struct prom_parser *p, const char *name, size_t len,
                       enum prom_type t)
{
    if (p->n_fam == p->cap_fam) {
        p->cap_fam = p->cap_fam ? 2 * p->cap_fam : 32;
        p->fam = ll_realloc(p->fam, p->cap_fam * sizeof *p->fam);
    }
    p->fam[p->n_fam].name = name;
    p->fam[p->n_fam].len = len;
    p->fam[p->n_fam].type = t;
    p->n_fam++;
}

/* A comment line (line[0] == '#'). Returns NULL when it is fine (HELP and
 * other comments are skipped whatever they hold), or why it is bad; sets
 * *eof for "# EOF". */
static const char *parse_comment(struct prom_parser *p, const char *line,
                                 size_t len, int *eof)
{
    size_t i = 1, w;

    while (i < len && is_ws(line[i]))
        i++;
    w = i;
    while (i < len && !is_ws(line[i]))
        i++;
    if (eq_lit(line + w, i - w, "EOF")) {
        while (i < len && is_ws(line[i]))
            i++;
        if (i == len)
            *eof = 1;
        return NULL;
    }
    if (!eq_lit(line + w, i - w, "TYPE"))
        return NULL;

    size_t ws_start = i;
    while (i < len && is_ws(line[i]))
        i++;
    if (i == ws_start)
        return "malformed TYPE line";
    size_t name_at = i;
    if (i == len || !is_name_start(line[i]))
        return "malformed TYPE line";
    while (i < len && is_name_char(line[i]))
        i++;
    size_t name_len = i - name_at;
    ws_start = i;
    while (i < len && is_ws(line[i]))
        i++;
    if (i == ws_start)
        return "malformed TYPE line";
    w = i;
    while (i < len && !is_ws(line[i]))
        i++;
    size_t tlen = i - w;
    while (i < len && is_ws(line[i]))
        i++;
    if (i != len)
        return "malformed TYPE line";

    const char *t = line + w;
    enum prom_type type;
    if (eq_lit(t, tlen, "counter"))
        type = PROM_COUNTER;
    else if (eq_lit(t, tlen, "gauge"))
        type = PROM_GAUGE;
    else if (eq_lit(t, tlen, "histogram"))
        type = PROM_HISTOGRAM;
    else if (eq_lit(t, tlen, "summary"))
        type = PROM_SUMMARY;
    else if (eq_lit(t, tlen, "untyped") || eq_lit(t, tlen, "unknown") ||
             eq_lit(t, tlen, "info") || eq_lit(t, tlen, "stateset") ||
             eq_lit(t, tlen, "gaugehistogram"))
        type = PROM_UNTYPED;
    else
        return "unknown TYPE";
    add_family(p, line + name_at, name_len, type);
    return NULL;
}

/* Where parse_sample is in one line: line[i..len) is still to read, and
 * out is the next free byte of the parser's scratch buffer, which holds
 * the sample's unescaped, NUL-terminated strings. */
struct sample_cursor {
    const char *line;
    size_t len, i;
    char *out;
};

static void skip_ws(struct sample_cursor *c)
{
    while (c->i < c->len && is_ws(c->line[c->i]))
        c->i++;
}

/* Copy s[0..n) to the scratch buffer, NUL-terminated; returns the copy. */
static const char *scratch_copy(struct sample_cursor *c, const char *s,
                                size_t n)
{
    char *at = c->out;
    memcpy(at, s, n);
    at[n] = '\0';
    c->out += n + 1;
    return at;
}

/* A label's quoted value, the cursor just past its opening '"', unescaped
 * (\\, \" and \n) into the scratch buffer as lab->value and value_len.
 * Returns NULL, or why the line is bad. */
static const char *parse_label_value(struct sample_cursor *c,
                                     struct prom_label *lab)
{
    const char *line = c->line;
    size_t len = c->len, i = c->i, vlen = 0;
    char *out = c->out;
    lab->value = out;
    for (;;) {
        if (i == len)
            return "unterminated label value";
        char ch = line[i++];
        if (ch == '"')
            break;
        if (ch == '\\') {
            if (i == len)
                return "unterminated label value";
            char e = line[i++];
            if (e == '\\' || e == '"')
                ch = e;
            else if (e == 'n')
                ch = '\n';
            else
                return "bad escape in label value";
        }
        if (vlen == PROM_MAX_LABEL_VALUE_BYTES)
            return "label value too long";
        out[vlen++] = ch;
    }
    out[vlen] = '\0';
    lab->value_len = vlen;
    c->out += vlen + 1;
    c->i = i;
    return NULL;
}

/* One name="value" pair, the cursor at the label name's first byte (a
 * valid start), into lab. Returns NULL, or why the line is bad. */
static const char *parse_label(struct sample_cursor *c, struct prom_label *lab)
{
    size_t ln_at = c->i;
    while (c->i < c->len && is_label_char(c->line[c->i]))
        c->i++;
    lab->name = scratch_copy(c, c->line + ln_at, c->i - ln_at);
    skip_ws(c);
    if (c->i == c->len || c->line[c->i] != '=')
        return "expected '=' after label name";
    c->i++;
    skip_ws(c);
    if (c->i == c->len || c->line[c->i] != '"')
        return "expected '\"' before label value";
    c->i++;
    return parse_label_value(c, lab);
}

/* The label set, the cursor just past its '{', into p->labels; the count
 * in *n_labels. Leaves the cursor after the '}' and the blanks after it.
 * Returns NULL, or why the line is bad. */
static const char *parse_label_set(struct prom_parser *p,
                                   struct sample_cursor *c, size_t *n_labels)
{
    for (;;) {
        skip_ws(c);
        if (c->i == c->len)
            return "unterminated label set";
        if (c->line[c->i] == '}') {
            c->i++;
            break;
        }
        if (!is_label_start(c->line[c->i]))
            return "bad label name";
        if (*n_labels == PROM_MAX_LABELS)
            return "too many labels";
        const char *why = parse_label(c, &p->labels[(*n_labels)++]);
        if (why)
            return why;
        skip_ws(c);
        if (c->i < c->len && c->line[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->len && c->line[c->i] == '}') {
            c->i++;
            break;
        }
        return "expected ',' or '}' in label set";
    }
    skip_ws(c);
    return NULL;
}

/* The value, an optional timestamp and an optional "# exemplar", which I
 * ignore, into smp. Returns NULL, or why the line is bad. */
static const char *parse_value_part(struct sample_cursor *c,
                                    struct prom_sample *smp)
{
    const char *line = c->line;
    size_t len = c->len, i = c->i;
    size_t v_at = i;
    while (i < len && !is_ws(line[i]))
        i++;
    if (i == v_at)
        return "missing value";
    if (prom_parse_value(line + v_at, i - v_at, &smp->value) != 0)
        return "bad value";
    while (i < len && is_ws(line[i]))
        i++;
    if (i < len && line[i] != '#') {
        size_t t_at = i;
        while (i < len && !is_ws(line[i]))
            i++;
        if (parse_timestamp(line + t_at, i - t_at, &smp->timestamp_ms) != 0)
            return "bad timestamp";
        smp->has_timestamp = 1;
        while (i < len && is_ws(line[i]))
            i++;
    }
    /* Whatever follows '#' is an OpenMetrics exemplar, which I ignore. */
    if (i < len && line[i] != '#')
        return "junk after value";
    c->i = i;
    return NULL;
}

/* Set smp's type, suffix and family from the TYPE line that names
 * name[0..name_len), or untyped with itself as family when none does. A
 * family name shorter than the sample's is copied to the scratch buffer. */
static void resolve_family(const struct prom_parser *p,
                           struct sample_cursor *c, const char *name,
                           size_t name_len, struct prom_sample *smp)
{
    enum prom_suffix sx = PROM_SUFFIX_NONE;
    const struct prom_family *f = find_family(p, name, name_len, &sx);
    if (f == NULL) {
        smp->type = PROM_UNTYPED;
        smp->suffix = PROM_SUFFIX_NONE;
        smp->family = smp->name;
        return;
    }
    smp->type = f->type;
    smp->suffix = sx;
    if (f->len == name_len)
        smp->family = smp->name;
    else
        smp->family = scratch_copy(c, f->name, f->len);
}

/* A sample line, leading whitespace already skipped: name, label set,
 * value, timestamp. Delivers the sample through p->cb and returns NULL,
 * or returns why the line is bad (nothing delivered). The strings live in
 * p->scratch until the next line. */
static const char *parse_sample(struct prom_parser *p, const char *line,
                                size_t len, size_t lineno)
{
    struct sample_cursor c = {line, len, 0, p->scratch};
    size_t n_labels = 0;
    struct prom_sample smp;
    const char *why;

    memset(&smp, 0, sizeof smp);
    if (!is_name_start(line[0]))
        return "bad metric name";
    while (c.i < len && is_name_char(line[c.i]))
        c.i++;
    size_t name_len = c.i;
    smp.name = scratch_copy(&c, line, name_len);

    size_t ws_start = c.i;
    skip_ws(&c);
    int spaced = c.i > ws_start;
    if (c.i < len && line[c.i] == '{') {
        c.i++;
        if ((why = parse_label_set(p, &c, &n_labels)) != NULL)
            return why;
    } else if (!spaced) {
        return c.i == len ? "missing value" : "bad metric name";
    }
    if ((why = parse_value_part(&c, &smp)) != NULL)
        return why;

    resolve_family(p, &c, line, name_len, &smp);
    smp.labels = n_labels ? p->labels : NULL;
    smp.n_labels = n_labels;
    smp.line = lineno;
    p->cb(p->ud, &smp);
    p->st->samples++;
    return NULL;
}

/* One line, without its line end. Returns 1 when "# EOF" says stop. */
static int parse_line(struct prom_parser *p, const char *line, size_t len,
                      size_t lineno)
{
    const char *why = NULL;
    int eof = 0;

    if (len > PROM_MAX_LINE_BYTES) {
        note_bad(p, lineno, "line too long");
        return 0;
    }
    if (memchr(line, '\0', len) != NULL) {
        note_bad(p, lineno, "NUL byte in line");
        return 0;
    }
    while (len > 0 && is_ws(line[0])) {
        line++;
        len--;
    }
    if (len == 0)
        return 0;
    if (line[0] == '#')
        why = parse_comment(p, line, len, &eof);
    else
        why = parse_sample(p, line, len, lineno);
    if (why != NULL)
        note_bad(p, lineno, why);
    return eof;
}

int prom_parse(const char *buf, size_t len, prom_sample_cb *cb, void *ud,
               struct prom_parse_stats *stats)
{
    struct prom_parse_stats local;
    struct prom_parser p;

    if (cb == NULL || (buf == NULL && len > 0))
        return LL_E_INVAL;
    if (stats == NULL)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    memset(&p, 0, sizeof p);
    p.cb = cb;
    p.ud = ud;
    p.st = stats;
    /* Name, family and label strings of one line: each at most the line's
     * length plus its NULs (a label's raw text is longer than its name,
     * value and two NULs), so twice the longest line is enough. */
    p.scratch = ll_malloc(2 * LL_MIN(len, (size_t)PROM_MAX_LINE_BYTES) + 16);

    size_t pos = 0;
    while (pos < len) {
        const char *line = buf + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t llen = nl ? (size_t)(nl - line) : len - pos;
        pos += llen + (nl ? 1 : 0);
        if (llen > 0 && line[llen - 1] == '\r')
            llen--;
        stats->lines++;
        if (parse_line(&p, line, llen, stats->lines)) {
            stats->saw_eof = 1;
            break;
        }
    }
    free(p.fam);
    free(p.scratch);
    return 0;
}

/* --- struct prom_scrape: the samples, copied into an arena ------------- */

struct prom_arena_block {
    struct prom_arena_block *next;
    size_t used, cap;
    char *data;                    /* from malloc, so suitably aligned */
};

#define PROM_ARENA_BLOCK_BYTES 65536

/* n bytes that live until prom_scrape_free, 16-byte aligned. */
static void *arena_alloc(struct prom_scrape *s, size_t n)
{
    struct prom_arena_block *b = s->arena;

    n = (n + 15) & ~(size_t)15;
    if (b == NULL || b->cap - b->used < n) {
        b = ll_malloc(sizeof *b);
        b->cap = LL_MAX(n, (size_t)PROM_ARENA_BLOCK_BYTES);
        b->data = ll_malloc(b->cap);
        b->used = 0;
        b->next = s->arena;
        s->arena = b;
    }
    void *r = b->data + b->used;
    b->used += n;
    return r;
}

static const char *arena_strdup(struct prom_scrape *s, const char *str,
                                size_t len)
{
    char *d = arena_alloc(s, len + 1);
    memcpy(d, str, len);
    d[len] = '\0';
    return d;
}

static void scrape_collect(void *ud, const struct prom_sample *in)
{
    struct prom_scrape *s = ud;

    if (s->n_samples == s->cap_samples) {
        s->cap_samples = s->cap_samples ? 2 * s->cap_samples : 64;
        s->samples = ll_realloc(s->samples,
                                s->cap_samples * sizeof *s->samples);
    }
    struct prom_sample *o = &s->samples[s->n_samples++];
    *o = *in;
    o->name = arena_strdup(s, in->name, strlen(in->name));
    o->family = in->family == in->name
                    ? o->name
                    : arena_strdup(s, in->family, strlen(in->family));
    if (in->n_labels > 0) {
        struct prom_label *labs =
            arena_alloc(s, in->n_labels * sizeof *labs);
        for (size_t i = 0; i < in->n_labels; i++) {
            const struct prom_label *l = &in->labels[i];
            labs[i].name = arena_strdup(s, l->name, strlen(l->name));
            labs[i].value = arena_strdup(s, l->value, l->value_len);
            labs[i].value_len = l->value_len;
        }
        o->labels = labs;
    } else {
        o->labels = NULL;
    }
}

int prom_scrape_parse(const char *buf, size_t len, struct prom_scrape **out)
{
    if (out == NULL || (buf == NULL && len > 0))
        return LL_E_INVAL;
    struct prom_scrape *s = ll_calloc(1, sizeof *s);
    int rc = prom_parse(buf, len, scrape_collect, s, &s->stats);
    if (rc != 0)
        goto fail;
    *out = s;
    return 0;
fail:
    prom_scrape_free(s);
    return rc;
}

void prom_scrape_free(struct prom_scrape *s)
{
    if (s == NULL)
        return;
    struct prom_arena_block *b = s->arena;
    while (b != NULL) {
        struct prom_arena_block *next = b->next;
        free(b->data);
        free(b);
        b = next;
    }
    free(s->samples);
    free(s);
}

const char *prom_sample_label(const struct prom_sample *smp, const char *name)
{
    for (size_t i = 0; i < smp->n_labels; i++)
        if (strcmp(smp->labels[i].name, name) == 0)
            return smp->labels[i].value;
    return NULL;
}

static int labels_include(const struct prom_sample *smp,
                          const struct prom_label *match, size_t n_match)
{
    for (size_t i = 0; i < n_match; i++) {
        const char *v = prom_sample_label(smp, match[i].name);
        if (v == NULL || strcmp(v, match[i].value) != 0)
            return 0;
    }
    return 1;
}

int prom_scrape_find(const struct prom_scrape *s, const char *name,
                     const struct prom_label *match, size_t n_match,
                     size_t *pos)
{
    if (s == NULL || name == NULL || pos == NULL)
        return LL_E_INVAL;
    for (size_t i = *pos; i < s->n_samples; i++) {
        if (strcmp(s->samples[i].name, name) == 0 &&
            labels_include(&s->samples[i], match, n_match)) {
            *pos = i;
            return 0;
        }
    }
    return LL_E_NOTFOUND;
}

double prom_scrape_sum(const struct prom_scrape *s, const char *name,
                       const struct prom_label *match, size_t n_match,
                       size_t *n_found)
{
    double sum = 0.0;
    size_t n = 0;

    for (size_t pos = 0;
         prom_scrape_find(s, name, match, n_match, &pos) == 0; pos++) {
        sum += s->samples[pos].value;
        n++;
    }
    if (n_found != NULL)
        *n_found = n;
    return sum;
}

/* --- histograms ------------------------------------------------------- */

/* Which histogram part of family a sample is, by its name alone (so it
 * works with no TYPE line too): _bucket, _sum, _count or none. */
static enum prom_suffix hist_part(const struct prom_sample *smp,
                                  const char *family, size_t flen)
{
    if (strncmp(smp->name, family, flen) != 0)
        return PROM_SUFFIX_NONE;
    const char *rest = smp->name + flen;
    if (strcmp(rest, "_bucket") == 0)
        return PROM_SUFFIX_BUCKET;
    if (strcmp(rest, "_sum") == 0)
        return PROM_SUFFIX_SUM;
    if (strcmp(rest, "_count") == 0)
        return PROM_SUFFIX_COUNT;
    return PROM_SUFFIX_NONE;
}

/* Add count to the bucket with upper bound le, inserting it in order. */
static int hist_add(struct prom_histogram *h, double le, double count)
{
    size_t i = 0;
    while (i < h->n_buckets && h->le[i] < le)
        i++;
    if (i < h->n_buckets && h->le[i] == le) {
        h->count[i] += count;
        return 0;
    }
    if (h->n_buckets == PROM_HIST_MAX_BUCKETS)
        return LL_E_RANGE;
    memmove(&h->le[i + 1], &h->le[i], (h->n_buckets - i) * sizeof h->le[0]);
    memmove(&h->count[i + 1], &h->count[i],
            (h->n_buckets - i) * sizeof h->count[0]);
    h->le[i] = le;
    h->count[i] = count;
    h->n_buckets++;
    return 0;
}

int prom_scrape_histogram(const struct prom_scrape *s, const char *family,
                          const struct prom_label *match, size_t n_match,
                          struct prom_histogram *out)
{
    if (s == NULL || family == NULL || out == NULL)
        return LL_E_INVAL;
    size_t flen = strlen(family);
    out->n_buckets = 0;
    out->sum = 0.0;
    out->total = 0.0;
    for (size_t i = 0; i < s->n_samples; i++) {
        const struct prom_sample *smp = &s->samples[i];
        enum prom_suffix part = hist_part(smp, family, flen);
        if (part == PROM_SUFFIX_NONE || !labels_include(smp, match, n_match))
            continue;
        if (part == PROM_SUFFIX_SUM) {
            out->sum += smp->value;
        } else if (part == PROM_SUFFIX_COUNT) {
            out->total += smp->value;
        } else {
            const char *le_text = prom_sample_label(smp, "le");
            double le;
            if (le_text == NULL ||
                prom_parse_value(le_text, strlen(le_text), &le) != 0 ||
                isnan(le))
                return LL_E_INVAL;
            int rc = hist_add(out, le, smp->value);
            if (rc != 0)
                return rc;
        }
    }
    return out->n_buckets > 0 ? 0 : LL_E_NOTFOUND;
}

int prom_histogram_delta(const struct prom_histogram *later,
                         const struct prom_histogram *earlier,
                         struct prom_histogram *out)
{
    if (later == NULL || earlier == NULL || out == NULL)
        return LL_E_INVAL;
    if (earlier->n_buckets == 0) {
        if (out != later)
            *out = *later;
        return 0;
    }
    if (later->n_buckets != earlier->n_buckets)
        return LL_E_INVAL;
    for (size_t i = 0; i < later->n_buckets; i++) {
        if (later->le[i] != earlier->le[i])
            return LL_E_INVAL;
        if (later->count[i] < earlier->count[i])
            return LL_E_RANGE;
    }
    if (later->total < earlier->total)
        return LL_E_RANGE;
    /* Checked first, written second, so out may alias later. */
    double sum = later->sum - earlier->sum;
    double total = later->total - earlier->total;
    size_t n = later->n_buckets;
    for (size_t i = 0; i < n; i++) {
        out->le[i] = later->le[i];
        out->count[i] = later->count[i] - earlier->count[i];
    }
    out->n_buckets = n;
    out->sum = sum;
    out->total = total;
    return 0;
}

/* Prometheus' histogram_quantile() for classic buckets, with its
 * conventions: rank = q * N; the bucket is the first whose cumulative
 * count reaches rank; linear interpolation between its lower bound (the
 * previous bound, or 0 for the first bucket) and its upper bound; a rank
 * in the +Inf bucket gives the highest finite bound. */
int prom_histogram_quantile(const struct prom_histogram *h, double q,
                            double *out)
{
    double cum[PROM_HIST_MAX_BUCKETS];

    if (h == NULL || out == NULL)
        return LL_E_INVAL;
    if (!(q >= 0.0 && q <= 1.0))
        return LL_E_RANGE;
    size_t n = h->n_buckets;
    if (n < 2 || n > PROM_HIST_MAX_BUCKETS || !(isinf(h->le[n - 1]) &&
                                               h->le[n - 1] > 0))
        return LL_E_INVAL;
    /* A scrape can catch buckets mid-update; read counts as their running
     * maximum, as Prometheus does, so the search below stays valid. */
    for (size_t i = 0; i < n; i++) {
        double c = isnan(h->count[i]) ? 0.0 : h->count[i];
        cum[i] = (i > 0 && cum[i - 1] > c) ? cum[i - 1] : c;
    }
    double obs = cum[n - 1];
    if (!(obs > 0.0))
        return LL_E_NOTFOUND;
    double rank = q * obs;
    size_t b = 0;
    while (b < n - 1 && cum[b] < rank)
        b++;
    if (b == n - 1) {
        *out = h->le[n - 2];
        return 0;
    }
    if (b == 0 && h->le[0] <= 0.0) {
        *out = h->le[0];
        return 0;
    }
    double start = b == 0 ? 0.0 : h->le[b - 1];
    double end = h->le[b];
    double below = b == 0 ? 0.0 : cum[b - 1];
    double in_bucket = cum[b] - below;
    if (!(in_bucket > 0.0)) {
        /* Only rank 0 lands in an empty bucket: the lowest bound. */
        *out = start;
        return 0;
    }
    *out = start + (end - start) * ((rank - below) / in_bucket);
    return 0;
}

const char *prom_type_name(enum prom_type t)
{
    switch (t) {
    case PROM_UNTYPED: return "untyped";
    case PROM_COUNTER: return "counter";
    case PROM_GAUGE: return "gauge";
    case PROM_HISTOGRAM: return "histogram";
    case PROM_SUMMARY: return "summary";
    }
    return "?";
}

const char *prom_suffix_name(enum prom_suffix x)
{
    switch (x) {
    case PROM_SUFFIX_NONE: return "";
    case PROM_SUFFIX_BUCKET: return "_bucket";
    case PROM_SUFFIX_SUM: return "_sum";
    case PROM_SUFFIX_COUNT: return "_count";
    case PROM_SUFFIX_TOTAL: return "_total";
    case PROM_SUFFIX_CREATED: return "_created";
    }
    return "?";
}
