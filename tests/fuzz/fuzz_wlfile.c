/* libFuzzer target for wlfile.c: any bytes as a workload file (no files
 * are opened: empirical: is refused). Checks that parse never crashes,
 * that a rejection always explains itself in one line that starts with the
 * file name, and that an accepted file holds only valid values and draws
 * inside them; then builds prompts and checks the token count rule. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "workload/synthprompt.h"
#include "workload/wlfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count_words(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ')
            continue;
        if (i == 0 || s[i - 1] == ' ')
            w++;
    }
    return w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wl_file *f = NULL;
    char err[1024];
    err[0] = '\0';
    if (wl_file_parse("fuzz.json", (const char *)data, size, NULL, &f, err,
                      sizeof(err)) != 0) {
        if (f || strncmp(err, "fuzz.json", 9) != 0 || strchr(err, '\n'))
            abort();
        return 0;
    }
    if (!f || f->n < 1 || f->n > WL_MAX_CLASSES || f->cum_weight[f->n - 1] != 1.0)
        abort();
    struct rng r;
    rng_seed(&r, size, 0);
    for (size_t i = 0; i < f->n; i++) {
        const struct wl_class *c = &f->classes[i];
        if (!(c->weight > 0) || c->name[0] == '\0' || wl_find_class(f, c->name) != (int)i)
            abort();
        if (c->prefix.fraction < 0 || c->prefix.fraction > 1)
            abort();
        for (int k = 0; k < 4; k++) {
            uint32_t p, o;
            wl_class_lengths(c, &r, &p, &o);
            if (p < 1 || o < 1)
                abort();
            int64_t g = wl_prefix_draw(&c->prefix, &r);
            if (g >= (int64_t)c->prefix.groups)
                abort();
            uint64_t after;
            (void)wl_cancel_draw(&c->cancel, &r, &after);
        }
        if (wl_pick_class(f, &r) >= f->n)
            abort();
        char buf[512];
        uint32_t n = (uint32_t)(size % 90);
        size_t len = wl_prompt_build(size, i, n, (int64_t)i - 1, c->prefix.tokens % 50, buf,
                                     sizeof(buf));
        if (len > sizeof(buf) || count_words(buf, len) != n)
            abort();
    }
    wl_file_free(f);
    return 0;
}
