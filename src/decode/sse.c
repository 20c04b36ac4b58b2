/* sse.c: the Server-Sent Events decoder (see sse.h).
 *
 * The common case is a whole event inside one read: "data: {...}\n\n". For
 * it we hand the callback a view straight into the caller's buffer and copy
 * nothing. We copy only when we must: a line split across feeds (into
 * line_buf), an event with several data lines (joined into data_buf), or an
 * event still pending when a feed returns (its data view is moved into
 * data_buf, since the caller's buffer goes away). `event` and `id` values are
 * short and rare, so they are always copied.
 *
 * Line ends are found with memchr, once per byte for LF and once for CR:
 * each search result is cached until the scan passes it, so a buffer with
 * only CR line ends stays linear. The common event, one "data:" line and
 * the blank line, is taken in one step when it lies whole in the buffer
 * (see sse_parser_feed). */
#include "decode/sse.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

enum {
    SSE_DATA_NONE = 0,           /* no data field yet: nothing to dispatch */
    SSE_DATA_VIEW,               /* data_view points into the buffer being fed */
    SSE_DATA_OWNED,              /* data_buf holds the joined data */
};

#define SSE_BOM_DONE 3u

static const unsigned char sse_bom[3] = { 0xEF, 0xBB, 0xBF };

/* Make room for need bytes in *buf (capacity *cap), doubling. need never
 * exceeds the parser's bound, so neither does the capacity (beyond the
 * bound rounded up to the next doubling of the initial size). */
static void buf_reserve(char **buf, size_t *cap, size_t need)
{
    *buf = ll_grow(*buf, cap, need, 64);
}

void sse_parser_init(struct sse_parser *p, size_t max_line_bytes)
{
    memset(p, 0, sizeof(*p));
    p->max_line_bytes = max_line_bytes ? max_line_bytes : SSE_DEFAULT_MAX_LINE;
    p->line_cap = 512;
    p->line_buf = ll_malloc(p->line_cap);
    p->data_cap = 512;
    p->data_buf = ll_malloc(p->data_cap);
    p->event_cap = 32;
    p->event_buf = ll_malloc(p->event_cap);
    p->id_cap = 32;
    p->id_buf = ll_malloc(p->id_cap);
}

/* Drop the pending line and event (not the last event ID). */
static void clear_pending(struct sse_parser *p)
{
    p->line_len = 0;
    p->data_len = 0;
    p->data_view = NULL;
    p->data_view_len = 0;
    p->data_state = SSE_DATA_NONE;
    p->event_len = 0;
}

void sse_parser_reset(struct sse_parser *p)
{
    clear_pending(p);
    p->id_len = 0;
    p->bom_state = 0;
    p->skip_lf = 0;
    p->error = 0;
}

void sse_parser_free(struct sse_parser *p)
{
    if (!p)
        return;
    free(p->line_buf);
    free(p->data_buf);
    free(p->event_buf);
    free(p->id_buf);
    p->line_buf = p->data_buf = p->event_buf = p->id_buf = NULL;
    p->line_cap = p->data_cap = p->event_cap = p->id_cap = 0;
    clear_pending(p);
}

static int fail_proto(struct sse_parser *p)
{
    clear_pending(p);
    p->error = LL_E_PROTO;
    return LL_E_PROTO;
}

/* Move a data view into data_buf (the view's buffer is about to go). */
static void data_own(struct sse_parser *p)
{
    if (p->data_state != SSE_DATA_VIEW)
        return;
    buf_reserve(&p->data_buf, &p->data_cap, p->data_view_len);
    memcpy(p->data_buf, p->data_view, p->data_view_len);
    p->data_len = p->data_view_len;
    p->data_view = NULL;
    p->data_view_len = 0;
    p->data_state = SSE_DATA_OWNED;
}

/* The blank line: hand the pending event to cb, if it had data. */
static int dispatch(struct sse_parser *p, int unterminated, sse_event_cb *cb,
                    void *ud)
{
    struct sse_event ev;

    if (p->data_state == SSE_DATA_NONE) {
        p->event_len = 0;     /* the spec resets the type buffer here too */
        return 0;
    }
    if (p->data_state == SSE_DATA_VIEW) {
        ev.data = p->data_view;
        ev.data_len = p->data_view_len;
    } else {
        ev.data = p->data_buf;
        ev.data_len = p->data_len;
    }
    ev.event = p->event_buf;
    ev.event_len = p->event_len;
    ev.id = p->id_buf;
    ev.id_len = p->id_len;
    ev.unterminated = unterminated;
    /* Clear first: the buffers keep their bytes for the callback, and a
     * callback that stops us leaves a clean state behind. */
    p->data_state = SSE_DATA_NONE;
    p->data_len = 0;
    p->data_view = NULL;
    p->data_view_len = 0;
    p->event_len = 0;
    return cb(ud, &ev);
}

/* Add one `data` value. stable says v lives in the caller's buffer for the
 * rest of this feed (so a view will do); otherwise v is in line_buf and must
 * be copied now. */
static int data_append(struct sse_parser *p, const char *v, size_t n, int stable)
{
    if (p->data_state == SSE_DATA_NONE) {
        if (stable) {
            p->data_view = v;
            p->data_view_len = n;
            p->data_state = SSE_DATA_VIEW;
            return 0;
        }
        buf_reserve(&p->data_buf, &p->data_cap, n);
        memcpy(p->data_buf, v, n);
        p->data_len = n;
        p->data_state = SSE_DATA_OWNED;
        return 0;
    }
    data_own(p);
    if (p->data_len + 1 + n > p->max_line_bytes)
        return fail_proto(p);
    buf_reserve(&p->data_buf, &p->data_cap, p->data_len + 1 + n);
    p->data_buf[p->data_len] = '\n';
    memcpy(p->data_buf + p->data_len + 1, v, n);
    p->data_len += 1 + n;
    return 0;
}

/* Interpret one line (terminator removed). Returns 0, the callback's
 * value, or LL_E_PROTO. */
static int process_line(struct sse_parser *p, const char *line, size_t n,
                        int stable, sse_event_cb *cb, void *ud)
{
    const char *name = line, *value;
    size_t name_len, value_len;

    if (n == 0)
        return dispatch(p, 0, cb, ud);
    if (line[0] == ':')
        return 0;                                  /* a comment */
    const char *colon = memchr(line, ':', n);
    if (colon) {
        name_len = (size_t)(colon - line);
        value = colon + 1;
        value_len = n - name_len - 1;
        if (value_len > 0 && *value == ' ') {
            value++;
            value_len--;
        }
    } else {
        name_len = n;                              /* the whole line names the field */
        value = line + n;
        value_len = 0;
    }

    if (name_len == 4 && memcmp(name, "data", 4) == 0)
        return data_append(p, value, value_len, stable);
    if (name_len == 5 && memcmp(name, "event", 5) == 0) {
        buf_reserve(&p->event_buf, &p->event_cap, value_len);
        memcpy(p->event_buf, value, value_len);
        p->event_len = value_len;
        return 0;
    }
    if (name_len == 5 && memcmp(name, "error", 5) == 0) {
        /* Not in the spec: older llama.cpp servers end a failed stream with
         * `error: {"code":400,"message":...}` (then `data: [DONE]`, at HTTP
         * 200). Ignored as the spec says, the request would count ok; so it
         * is an event named "error" whose data is the value. */
        buf_reserve(&p->event_buf, &p->event_cap, 5);
        memcpy(p->event_buf, "error", 5);
        p->event_len = 5;
        return data_append(p, value, value_len, stable);
    }
    if (name_len == 2 && memcmp(name, "id", 2) == 0) {
        if (memchr(value, '\0', value_len))
            return 0;                              /* the spec ignores such an id */
        buf_reserve(&p->id_buf, &p->id_cap, value_len);
        memcpy(p->id_buf, value, value_len);
        p->id_len = value_len;
        return 0;
    }
    return 0;                                      /* retry and unknown fields */
}

/* Append bytes to the partial line, within the bound. */
static int line_append(struct sse_parser *p, const char *s, size_t n)
{
    if (p->line_len + n > p->max_line_bytes)
        return fail_proto(p);
    buf_reserve(&p->line_buf, &p->line_cap, p->line_len + n);
    memcpy(p->line_buf + p->line_len, s, n);
    p->line_len += n;
    return 0;
}

/* Match a leading BOM, byte by byte across feeds. Bytes that turn out not
 * to be a BOM become the start of the first line. Returns the new read
 * position, or NULL on error. */
static const char *bom_skip(struct sse_parser *p, const char *s, const char *end)
{
    while (s < end && p->bom_state < SSE_BOM_DONE) {
        if ((unsigned char)*s != sse_bom[p->bom_state]) {
            unsigned matched = p->bom_state;
            p->bom_state = SSE_BOM_DONE;
            if (matched && line_append(p, (const char *)sse_bom, matched) < 0)
                return NULL;
            return s;
        }
        p->bom_state++;
        s++;
    }
    return s;
}

int sse_parser_feed(struct sse_parser *p, const char *buf, size_t len,
                    sse_event_cb *cb, void *ud)
{
    const char *s = buf, *end = buf + len;
    const char *lf = NULL, *cr = NULL;   /* cached next LF / CR (end = none) */
    int rc;

    if (p->error)
        return p->error;
    if (len == 0)
        return 0;
    if (p->bom_state < SSE_BOM_DONE) {
        s = bom_skip(p, s, end);
        if (!s)
            return LL_E_PROTO;
    }
    if (p->skip_lf && s < end) {
        p->skip_lf = 0;
        if (*s == '\n')
            s++;
    }

    while (s < end) {
        if (!lf || lf < s) {
            lf = memchr(s, '\n', (size_t)(end - s));
            if (!lf)
                lf = end;
        }
        if (!cr || cr < s) {
            cr = memchr(s, '\r', (size_t)(end - s));
            if (!cr)
                cr = end;
        }
        const char *t = lf < cr ? lf : cr;

        /* The common event: "data:" or "data: " then the value, LF, and the
         * blank line's LF, all in this buffer, with no line pending and no
         * CR up to there. The same as the two lines through process_line:
         * the value is data (a view, as it lies in this feed), then the
         * event goes out. */
        if (t == lf && lf + 1 < end && lf[1] == '\n' && lf + 1 < cr && p->line_len == 0 &&
            p->data_state == SSE_DATA_NONE && lf - s >= 5 && memcmp(s, "data:", 5) == 0 &&
            (size_t)(lf - s) <= p->max_line_bytes) {
            const char *v = s + 5;
            if (v < lf && *v == ' ')
                v++;
            p->data_view = v;
            p->data_view_len = (size_t)(lf - v);
            p->data_state = SSE_DATA_VIEW;
            s = lf + 2;
            rc = dispatch(p, 0, cb, ud);
            if (rc)
                return rc;
            continue;
        }
        if (t == end) {                          /* a partial line: keep it */
            if (line_append(p, s, (size_t)(end - s)) < 0)
                return LL_E_PROTO;
            break;
        }
        if (p->line_len > 0) {                   /* finishes a line begun earlier */
            if (line_append(p, s, (size_t)(t - s)) < 0)
                return LL_E_PROTO;
            rc = process_line(p, p->line_buf, p->line_len, 0, cb, ud);
            p->line_len = 0;
        } else {
            if ((size_t)(t - s) > p->max_line_bytes)
                return fail_proto(p);
            rc = process_line(p, s, (size_t)(t - s), 1, cb, ud);
        }
        if (rc)
            return rc;
        if (*t == '\r') {
            if (t + 1 < end) {
                s = t[1] == '\n' ? t + 2 : t + 1;
            } else {
                s = t + 1;
                p->skip_lf = 1;                  /* the LF may come next feed */
            }
        } else {
            s = t + 1;
        }
    }
    data_own(p);
    return 0;
}

int sse_parser_finish(struct sse_parser *p, sse_event_cb *cb, void *ud)
{
    int rc = 0;

    if (p->error)
        return p->error;
    if (p->bom_state > 0 && p->bom_state < SSE_BOM_DONE) {
        /* The stream ended inside what looked like a BOM: those bytes are
         * text. */
        unsigned matched = p->bom_state;
        p->bom_state = SSE_BOM_DONE;
        if (line_append(p, (const char *)sse_bom, matched) < 0)
            return LL_E_PROTO;
    }
    if (p->line_len > 0) {
        rc = process_line(p, p->line_buf, p->line_len, 0, cb, ud);
        p->line_len = 0;
    }
    if (rc == 0 && p->data_state != SSE_DATA_NONE)
        rc = dispatch(p, 1, cb, ud);
    if (!p->error)
        clear_pending(p);
    p->skip_lf = 0;
    return rc;
}
