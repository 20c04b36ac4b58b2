/* simlog.c: buffered per-request JSON lines for `llmload sim --log`. */
#include "sim/simlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/http.h"
#include "util/util.h"

#define SIMLOG_FLUSH_BYTES (256 * 1024)

struct simlog {
    int fd;
    struct http_buf buf;
    int failed;                     /* 1 after a write error (reported once) */
};

struct simlog *simlog_open(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "--log: cannot open \"%s\": %s", path, strerror(errno));
        return NULL;
    }
    struct simlog *l = ll_calloc(1, sizeof(*l));
    l->fd = fd;
    http_buf_init(&l->buf);
    return l;
}

/* key (its JSON text: a comma or brace, the quoted name and a colon),
 * then the value. */
static void put_u64(struct http_buf *b, const char *key, uint64_t v)
{
    http_buf_puts(b, key);
    http_buf_u64(b, v);
}

static void put_time(struct http_buf *b, const char *key, uint64_t t)
{
    if (t == SIMLOG_NO_TIME) {
        http_buf_puts(b, key);
        http_buf_puts(b, "null");
    } else {
        put_u64(b, key, t);
    }
}

/* s as a JSON string, null when NULL. */
static void put_str(struct http_buf *b, const char *key, const char *s)
{
    http_buf_puts(b, key);
    if (!s) {
        http_buf_puts(b, "null");
        return;
    }
    http_buf_puts(b, "\"");
    http_buf_json_escape(b, s, strlen(s));
    http_buf_puts(b, "\"");
}

void simlog_write(struct simlog *l, const struct simlog_entry *e)
{
    struct http_buf *b = &l->buf;
    put_str(b, "{\"id\":", e->id);
    put_str(b, ",\"path\":", e->path);
    put_u64(b, ",\"status\":", (uint64_t)(e->status < 0 ? 0 : e->status));
    put_time(b, ",\"arrival_ns\":", e->arrival_ns);
    put_time(b, ",\"first_token_ns\":", e->first_token_ns);
    put_time(b, ",\"last_token_ns\":", e->last_token_ns);
    put_time(b, ",\"end_ns\":", e->end_ns);
    put_u64(b, ",\"prompt_tokens\":", e->prompt_tokens);
    put_u64(b, ",\"cached_tokens\":", e->cached_tokens);
    if (e->images) {
        put_u64(b, ",\"images\":", e->images);
        put_u64(b, ",\"image_tokens\":", e->image_tokens);
    }
    if (e->images && e->image_hashes) {
        http_buf_puts(b, ",\"image_hashes\":[");
        for (uint32_t k = 0; k < e->images; k++) {
            char hex[24];
            snprintf(hex, sizeof hex, "%s\"%016llx\"", k ? "," : "",
                     (unsigned long long)e->image_hashes[k]);
            http_buf_puts(b, hex);
        }
        http_buf_puts(b, "]");
    }
    put_u64(b, ",\"max_tokens\":", e->max_tokens);
    put_u64(b, ",\"output_tokens\":", e->output_tokens);
    put_str(b, ",\"finish_reason\":", e->finish_reason);
    if (e->inputs)
        put_u64(b, ",\"inputs\":", e->inputs);
    if (e->fault)
        put_str(b, ",\"fault\":", e->fault);
    if (e->ignored_keys) {
        http_buf_puts(b, ",\"ignored_keys\":[");
        http_buf_puts(b, e->ignored_keys);
        http_buf_puts(b, "]");
    }
    if (e->error)
        put_str(b, ",\"error\":", e->error);
    http_buf_puts(b, "}\n");
    if (http_buf_pending(b) >= SIMLOG_FLUSH_BYTES)
        simlog_flush(l);
}

int simlog_flush(struct simlog *l)
{
    struct http_buf *b = &l->buf;
    while (http_buf_pending(b) > 0) {
        ssize_t n = write(l->fd, b->data + b->off, http_buf_pending(b));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (!l->failed)
                ll_errorf("sim: --log: write failed: %s", strerror(errno));
            l->failed = 1;
            http_buf_clear(b);
            return LL_E_IO;
        }
        http_buf_consume(b, (size_t)n);
    }
    return l->failed ? LL_E_IO : 0;
}

int simlog_close(struct simlog *l)
{
    if (!l)
        return 0;
    int rc = simlog_flush(l);
    if (close(l->fd) < 0)
        rc = LL_E_IO;
    http_buf_free(&l->buf);
    free(l);
    return rc;
}
