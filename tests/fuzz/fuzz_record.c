/* libFuzzer target for requests.jsonl's reader (record.c): the bytes as
 * one line and as a whole file. Checks that no input crashes it, that
 * every rejection is one line (a whole file's starting with its path),
 * and that an accepted line writes back (record_write_jsonl) to a line
 * that parses and writes back to itself: what report, compare and merge
 * read from a results directory is what run wrote. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* r written as its line into a new string (caller frees); NULL when the
 * memory stream could not be had. */
static char *line_of(const struct record *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    if (record_write_jsonl(f, r) != 0)
        abort();
    fclose(f);
    return buf;
}

static char path[64]; /* the whole input as a file, one per process */

static void remove_file(void)
{
    unlink(path);
}

static void count_record(void *ud, const struct record *r)
{
    (void)r;
    (*(uint64_t *)ud)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char err[512], cls[REC_CLASS_NAME_MAX], cls2[REC_CLASS_NAME_MAX];
    struct record r, back;

    err[0] = '\0';
    if (record_parse_jsonl(text, size, &r, cls, sizeof cls, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n'))
            abort();
    } else {
        char *line = line_of(&r);
        if (!line)
            return 0;
        if (record_parse_jsonl(line, strlen(line), &back, cls2, sizeof cls2, err, sizeof err) != 0)
            abort();
        char *again = line_of(&back);
        if (!again || strcmp(line, again) != 0 || back.id != r.id || back.kind != r.kind ||
            back.sched_ns != r.sched_ns || back.step != r.step)
            abort();
        free(line);
        free(again);
    }

    /* The whole input as a file: the reader's line split, its blank-line
     * rule and its check of a request's line seen twice. */
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/fuzz_record.%ld.jsonl", (long)getpid());
        atexit(remove_file);
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    size_t wrote = fwrite(data, 1, size, f);
    if (fclose(f) != 0 || wrote != size)
        return 0;
    uint64_t n = 0;
    err[0] = '\0';
    if (record_read_file(path, 0, count_record, &n, err, sizeof err) != 0) {
        if (strncmp(err, path, strlen(path)) != 0 || strchr(err, '\n'))
            abort();
    }
    return 0;
}
