/* recwriter.h: one worker's requests.jsonl writer. Records are formatted
 * into a memory buffer on the worker's thread (no syscall per record) and
 * handed in batches to a writer thread of the worker's own, which write()s
 * them while the worker goes on sending: a file write can take milliseconds
 * (ext4 here took up to 5 ms for 64 KiB), which must not hold up the sends
 * due meanwhile. Every worker appends to the same O_APPEND file descriptor,
 * always whole lines, so the lines of different workers never interleave.
 *
 * Threads: everything but the writer thread itself is called from the
 * owning worker (or from driver_run before and after the worker runs). */
#ifndef LL_RECWRITER_H
#define LL_RECWRITER_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "measure/record.h"

#define RECWRITER_FLUSH_BYTES (64 * 1024)   /* a batch goes to the writer past this much */
#define RECWRITER_BACKLOG_BYTES (64u << 20) /* past this much held, a flush waits for the disk */

/* Embedded in its worker, which must not move while the stream is open
 * (the stream's cookie points at it). Zeroed memory is a writer with no
 * file: recwriter_add only counts, recwriter_reset does nothing. */
struct recwriter {
    int fd;                     /* requests.jsonl, borrowed; -1 = none */
    FILE *f;                    /* stream appending to buf; NULL without a file */
    char *buf;                  /* complete lines not yet handed to the writer */
    size_t len, cap;            /* bytes */
    uint64_t written;           /* lines written or on their way (every record without a
                                 * file); lost lines are taken back out at each flush */
    uint64_t lost;              /* lines that could not be written (disk full...) */
    int error;                  /* a write failed (said once on stderr) */
    /* the writer thread */
    pthread_t th;
    int inited;                 /* recwriter_start ran and recwriter_stop has not */
    int running;                /* the writer thread exists */
    pthread_mutex_t lock;
    pthread_cond_t wake;        /* to the writer: a batch, or stop */
    pthread_cond_t done;        /* from the writer: the batch is written */
    char *wr_buf;               /* lock: the batch being written */
    size_t wr_len, wr_cap;      /* lock: bytes; wr_len 0 = the writer is free */
    int stop;                   /* lock */
    uint64_t wr_lost;           /* lock: lines of the batches that could not be written */
};

/* Open rw's stream for the records file fd (fd < 0: no file, and rw stays
 * a counter). rw must be zeroed first. Returns 0, or LL_E_IO with the
 * reason in err. Does not start the writer thread: recwriter_start. */
int recwriter_open(struct recwriter *rw, int fd, char *err, size_t errlen);

/* Start the writer thread (without a file, or when the thread cannot be
 * created, flushes write on the caller's thread). Call while the run is
 * set up, before t = 0: a thread start can take milliseconds (far more
 * under AddressSanitizer), which inside the worker would make its first
 * sends late. */
void recwriter_start(struct recwriter *rw);

/* Append r as one JSON line. No syscall and, once the buffers have grown
 * to their working size, no allocation: the hot path. Counts r in
 * rw->written when the line was formatted (always without a file). */
void recwriter_add(struct recwriter *rw, const struct record *r);

/* Whether a batch is worth handing over now (RECWRITER_FLUSH_BYTES held). */
static inline int recwriter_full(const struct recwriter *rw)
{
    return rw->len >= RECWRITER_FLUSH_BYTES;
}

/* Hand the lines gathered so far to the writer. Without wait this does
 * not block: when the writer is still busy with the last batch the lines
 * stay here for the next call (up to RECWRITER_BACKLOG_BYTES, past which
 * it waits). With wait it returns when every line is written and folds
 * the writer's losses into written and lost. */
void recwriter_flush(struct recwriter *rw, int wait);

/* Write what is left and end the writer thread (at the worker's end, or
 * at its release when it never ran). Safe to call twice. */
void recwriter_stop(struct recwriter *rw);

/* Stop the writer if it still runs, write what is left, close the stream
 * and free the buffers. rw->written and rw->lost stay readable. */
void recwriter_reset(struct recwriter *rw);

#endif
