/* recwriter.c: one worker's requests.jsonl writer (recwriter.h).
 *
 * Two buffers swap between the worker and its writer thread: the worker
 * fills buf through a stdio cookie stream, a flush hands it over as
 * wr_buf when the writer is free and takes the writer's empty one back,
 * so in the steady state nothing is allocated and the worker never waits
 * for the disk. */
#include "driver/recwriter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

static ssize_t cookie_write(void *c, const char *buf, size_t size)
{
    struct recwriter *rw = c;
    rw->buf = ll_grow(rw->buf, &rw->cap, rw->len + size, 2 * RECWRITER_FLUSH_BYTES);
    memcpy(rw->buf + rw->len, buf, size);
    rw->len += size;
    return (ssize_t)size;
}

int recwriter_open(struct recwriter *rw, int fd, char *err, size_t errlen)
{
    rw->fd = fd;
    if (fd < 0)
        return 0;
    cookie_io_functions_t io = {.write = cookie_write};
    rw->f = fopencookie(rw, "w", io);
    if (!rw->f) {
        snprintf(err, errlen, "fopencookie: %s", strerror(errno));
        return LL_E_IO;
    }
    return 0;
}

/* Write len bytes of complete lines to the records file; the number of
 * lines that could not be written (the summary and the exit status say
 * so, since those requests have no record now). */
static uint64_t write_lines(struct recwriter *rw, const char *buf, size_t len)
{
    size_t off = 0;
    uint64_t lost = 0;
    while (off < len) {
        ssize_t n = write(rw->fd, buf + off, len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (!rw->error)
                ll_errorf("writing requests.jsonl: %s", strerror(errno));
            rw->error = 1;
            for (size_t k = off; k < len; k++)
                lost += buf[k] == '\n';
            break;
        }
        off += (size_t)n;
    }
    return lost;
}

static void *writer_main(void *arg)
{
    struct recwriter *rw = arg;
    pthread_mutex_lock(&rw->lock);
    for (;;) {
        while (rw->wr_len == 0 && !rw->stop)
            pthread_cond_wait(&rw->wake, &rw->lock);
        if (rw->wr_len == 0)
            break;
        const char *buf = rw->wr_buf;
        size_t len = rw->wr_len;
        pthread_mutex_unlock(&rw->lock);
        uint64_t lost = write_lines(rw, buf, len);
        pthread_mutex_lock(&rw->lock);
        rw->wr_lost += lost;
        rw->wr_len = 0;
        pthread_cond_broadcast(&rw->done);
    }
    pthread_mutex_unlock(&rw->lock);
    return NULL;
}

void recwriter_start(struct recwriter *rw)
{
    if (!rw->f)
        return;
    rw->inited = 1;
    pthread_mutex_init(&rw->lock, NULL);
    pthread_cond_init(&rw->wake, NULL);
    pthread_cond_init(&rw->done, NULL);
    rw->running = pthread_create(&rw->th, NULL, writer_main, rw) == 0;
}

void recwriter_add(struct recwriter *rw, const struct record *r)
{
    if (rw->f) {
        if (record_write_jsonl(rw->f, r) == 0)
            rw->written++;
    } else {
        rw->written++;
    }
}

void recwriter_flush(struct recwriter *rw, int wait)
{
    if (!rw->f)
        return;
    fflush(rw->f);
    /* A disk that cannot keep up at all: past this much, wait for it
     * rather than grow without bound. */
    if (rw->len >= RECWRITER_BACKLOG_BYTES)
        wait = 1;
    if (!rw->running) {
        uint64_t lost = write_lines(rw, rw->buf, rw->len);
        rw->lost += lost;
        rw->written -= lost;
        rw->len = 0;
        return;
    }
    pthread_mutex_lock(&rw->lock);
    if (wait)
        while (rw->wr_len > 0)
            pthread_cond_wait(&rw->done, &rw->lock);
    if (rw->wr_len == 0 && rw->len > 0) {
        char *b = rw->wr_buf;
        size_t cap = rw->wr_cap;
        rw->wr_buf = rw->buf;
        rw->wr_cap = rw->cap;
        rw->wr_len = rw->len;
        rw->buf = b;
        rw->cap = cap;
        rw->len = 0;
        pthread_cond_signal(&rw->wake);
    }
    if (wait) {
        while (rw->wr_len > 0)
            pthread_cond_wait(&rw->done, &rw->lock);
        rw->lost += rw->wr_lost;
        rw->written -= rw->wr_lost;
        rw->wr_lost = 0;
    }
    pthread_mutex_unlock(&rw->lock);
}

void recwriter_stop(struct recwriter *rw)
{
    if (!rw->inited)
        return;
    rw->inited = 0;
    recwriter_flush(rw, 1);
    if (rw->running) {
        pthread_mutex_lock(&rw->lock);
        rw->stop = 1;
        pthread_cond_signal(&rw->wake);
        pthread_mutex_unlock(&rw->lock);
        pthread_join(rw->th, NULL);
        rw->running = 0;
    }
    pthread_cond_destroy(&rw->done);
    pthread_cond_destroy(&rw->wake);
    pthread_mutex_destroy(&rw->lock);
}

void recwriter_reset(struct recwriter *rw)
{
    recwriter_stop(rw); /* (done already when the worker ran) */
    if (rw->f) {
        recwriter_flush(rw, 1);
        fclose(rw->f);
        rw->f = NULL;
    }
    free(rw->buf);
    free(rw->wr_buf);
    rw->buf = rw->wr_buf = NULL;
    rw->len = rw->cap = rw->wr_len = rw->wr_cap = 0;
}
