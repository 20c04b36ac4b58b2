/* libFuzzer target for steps.jsonl's reader (sweep_json.c): the bytes as
 * one line, as `llmload report`, compare and merge read a saved sweep.
 * Checks that no input crashes it, that a refusal is one line, that
 * accepted facts write back (sweep_facts_json) to facts that read again
 * and write to the same text, and that the step's figures can be derived
 * from whatever was accepted (sweep_step_finish: the steadiness fit, the
 * verdicts), as report does with no record to add. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep.h"
#include "sweep/sweep_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t je;
    json_t *o = json_loadb((const char *)data, size, JSON_DECODE_ANY, &je);
    if (!o)
        return 0;
    char err[512] = "";
    struct sweep_step s, back;
    sweep_step_init(&s);
    sweep_step_init(&back);
    if (sweep_facts_from_json(o, &s, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n'))
            abort();
    } else {
        json_t *j = sweep_facts_json(&s.f);
        char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
        if (sweep_facts_from_json(j, &back, err, sizeof err) != 0)
            abort();
        json_t *j2 = sweep_facts_json(&back.f);
        char *again = json_dumps(j2, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text || !again || strcmp(text, again) != 0)
            abort();
        free(text);
        free(again);
        json_decref(j);
        json_decref(j2);
        struct sweep_settings set;
        sweep_settings_init(&set);
        sweep_step_finish(&s, &set);
    }
    sweep_step_free(&s);
    sweep_step_free(&back);
    json_decref(o);
    return 0;
}
