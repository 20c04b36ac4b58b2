/* Unit tests of --extra-body (workload/extrabody.c) and the request body
 * writer (http/body.c): the flag's value inline and from @FILE, its errors,
 * the keys llmload writes for each API refused unless overridden, a class
 * merged over the global one, and every API's body (streamed or not, text
 * or token IDs, with and without extra fields, with members overridden)
 * parsed back with jansson, duplicate keys refused. */
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http/body.h"
#include "test.h"
#include "testutil.h"
#include "util/util.h"
#include "workload/extrabody.h"
#include "workload/workload.h"

static json_t *obj(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    return j;
}

static void test_parse_inline_and_file(void **state)
{
    char err[1024];
    json_t *j = NULL;
    assert_int_equal(
        extrabody_parse_arg("--extra-body", "{\"temperature\":0,\"top_k\":1}", &j, err, sizeof err),
        0);
    assert_int_equal(json_integer_value(json_object_get(j, "top_k")), 1);
    json_decref(j);

    char path[] = "/tmp/test_extrabody_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = "{\n  \"chat_template_kwargs\": {\"enable_thinking\": false}\n}\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    char arg[64];
    snprintf(arg, sizeof arg, "@%s", path);
    assert_int_equal(extrabody_parse_arg("--extra-body", arg, &j, err, sizeof err), 0);
    assert_true(json_is_false(
        json_object_get(json_object_get(j, "chat_template_kwargs"), "enable_thinking")));
    json_decref(j);

    /* The file's syntax error: the file, its line and column. */
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    const char bad[] = "{\n  \"temperature\": 0,\n  \"top_k\" 1\n}\n";
    assert_int_equal(write(fd, bad, sizeof bad - 1), (ssize_t)(sizeof bad - 1));
    close(fd);
    int rc = extrabody_parse_arg("--extra-body", arg, &j, err, sizeof err);
    assert_rejected(rc, j, err, arg, "--extra-body", path, ":3:");
    unlink(path);
    rc = extrabody_parse_arg("--extra-body", arg, &j, err, sizeof err);
    assert_rejected(rc, j, err, arg, "--extra-body", path, NULL);
}

static void test_parse_refusals(void **state)
{
    static const struct bad_input cases[] = {
        {"[1,2]", "got an array"},
        {"0", "got a number"},
        {"\"temperature\"", "got a string"},
        {"null", "got null"},
        {"", "empty"},
        {"   ", "empty"},
        {"{\"temperature\":0", "invalid JSON"},
        {"{temperature:0}", "invalid JSON"},
        {"{\"a\":1,\"a\":2}", "invalid JSON"}, /* a key given twice */
        {"@", "@FILE"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        char err[1024];
        json_t *j = NULL;
        int rc = extrabody_parse_arg("--extra-body", cases[i].in, &j, err, sizeof err);
        assert_rejected(rc, j, err, cases[i].in, "--extra-body", cases[i].why, NULL);
    }
}

/* Each API's own keys are refused, with the key and the API named; others
 * pass, for that API. */
static void test_own_keys_refused(void **state)
{
    static const struct {
        enum oai_api api;
        const char *key;
        int own;
    } cases[] = {
        {OAI_API_CHAT, "model", 1},
        {OAI_API_CHAT, "messages", 1},
        {OAI_API_CHAT, "max_tokens", 1},
        {OAI_API_CHAT, "max_completion_tokens", 1},
        {OAI_API_CHAT, "stream", 1},
        {OAI_API_CHAT, "stream_options", 1},
        {OAI_API_CHAT, "ignore_eos", 1},
        {OAI_API_CHAT, "prompt", 0},
        {OAI_API_CHAT, "temperature", 0},
        {OAI_API_COMPLETIONS, "prompt", 1},
        {OAI_API_COMPLETIONS, "stream_options", 1},
        {OAI_API_COMPLETIONS, "messages", 0},
        {OAI_API_COMPLETIONS, "max_completion_tokens", 0},
        {OAI_API_ANTHROPIC, "messages", 1},
        {OAI_API_ANTHROPIC, "max_tokens", 1},
        {OAI_API_ANTHROPIC, "stream", 1},
        {OAI_API_ANTHROPIC, "stream_options", 0},
        {OAI_API_ANTHROPIC, "top_k", 0},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        char text[128], err[1024];
        snprintf(text, sizeof text, "{\"%s\":1}", cases[i].key);
        json_t *g = obj(text);
        struct extrabody x;
        int rc =
            extrabody_build(g, NULL, cases[i].api, 0, "--extra-body", "cls", &x, err, sizeof err);
        if (cases[i].own) {
            assert_rejected(rc, x.json, err, text, "--extra-body", cases[i].key,
                            oai_api_name(cases[i].api));
            assert_message_has(err, "--extra-body-override", text);
            /* Overridden: llmload leaves its own member out. */
            assert_int_equal(extrabody_build(g, NULL, cases[i].api, 1, "--extra-body", "cls", &x,
                                             err, sizeof err),
                             0);
            assert_int_equal(x.skip, extrabody_own(cases[i].api, cases[i].key));
            assert_true(x.skip != 0);
        } else {
            assert_int_equal(rc, 0);
            assert_int_equal(x.skip, 0);
            assert_int_equal(extrabody_own(cases[i].api, cases[i].key), 0);
        }
        extrabody_free(&x);
        json_decref(g);
    }
}

/* A class's extra_body wins per key over the global one; a clash names
 * where the key came from. */
static void test_class_merge(void **state)
{
    char err[1024];
    json_t *g = obj("{\"temperature\":0.5,\"top_k\":1}");
    json_t *c = obj("{\"temperature\":0,\"seed\":7}");
    struct extrabody x;
    assert_int_equal(extrabody_build(g, c, OAI_API_CHAT, 0, "--extra-body", "w.json: classes[0]",
                                     &x, err, sizeof err),
                     0);
    assert_true(x.own);
    assert_int_equal(json_object_size(x.json), 3);
    assert_true(json_real_value(json_object_get(x.json, "temperature")) == 0 ||
                json_integer_value(json_object_get(x.json, "temperature")) == 0);
    assert_int_equal(json_integer_value(json_object_get(x.json, "seed")), 7);
    assert_string_equal(x.frag, ",\"temperature\":0,\"top_k\":1,\"seed\":7");
    assert_int_equal(x.frag_len, strlen(x.frag));
    extrabody_free(&x);
    json_decref(c);

    c = obj("{\"max_tokens\":3}");
    int rc = extrabody_build(g, c, OAI_API_CHAT, 0, "--extra-body", "w.json: classes[0]", &x, err,
                             sizeof err);
    assert_rejected(rc, x.json, err, "class max_tokens", "w.json: classes[0]", "max_tokens", NULL);
    json_decref(c);
    json_decref(g);

    /* Nothing to add: nothing built. */
    assert_int_equal(extrabody_build(NULL, NULL, OAI_API_CHAT, 0, "a", "b", &x, err, sizeof err),
                     0);
    assert_null(x.json);
    assert_null(x.frag);
}

static void spec_of(uint64_t index, struct req_spec *out)
{
    struct workload w;
    test_workload_fixed(&w, 3, "40", "9");
    workload_spec(&w, index, out);
}

/* body_write through its retry contract: no room says how much, then fills. */
static json_t *built(const struct body_params *p, enum oai_api api, const struct req_spec *s,
                     const struct extrabody *x, char **text)
{
    size_t need = body_write(p, api, s, x, NULL, 0);
    char *buf = malloc(need + 1);
    assert_non_null(buf);
    assert_int_equal(body_write(p, api, s, x, buf, need), need);
    buf[need] = '\0';
    json_error_t jerr;
    json_t *j = json_loads(buf, JSON_REJECT_DUPLICATES, &jerr);
    if (!j)
        fail_msg("body is not JSON (%s at %d): %s", jerr.text, jerr.column, buf);
    *text = buf;
    return j;
}

/* Every API, streamed or not, text or IDs, ignore_eos or not, with no
 * extra fields, with some, and with each own key overridden in turn (and
 * all at once): the body is one JSON object with each key once, llmload's
 * members where not overridden, the extra ones as given. */
static void test_bodies_valid_every_api(void **state)
{
    static const char *const extras[] = {
        NULL,
        ("{\"temperature\":0,\"top_k\":1,\"chat_template_kwargs\":{\"enable_thinking\":false},"
         "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{}}}],"
         "\"response_format\":{\"type\":\"json_object\"},\"k\\\"ey\":\"v\\n\"}"),
        "{\"model\":\"other\"}",
        "{\"max_tokens\":7}",
        "{\"max_completion_tokens\":7}",
        "{\"stream\":false}",
        "{\"stream_options\":{\"include_usage\":false}}",
        "{\"ignore_eos\":false}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
        "{\"prompt\":\"x\"}",
        "{\"input\":\"x\"}",
        "{\"max_output_tokens\":7}",
        ("{\"model\":\"m\",\"messages\":[],\"prompt\":\"p\",\"max_tokens\":1,\"stream\":true,"
         "\"stream_options\":{},\"ignore_eos\":true,\"max_completion_tokens\":2}"),
    };
    for (int api = 0; api < OAI_API_COUNT; api++) {
        for (int mode = 0; mode < 8; mode++) {
            int stream = mode & 1, ids = (mode >> 1) & 1, eos = (mode >> 2) & 1;
            if (ids && api != OAI_API_COMPLETIONS)
                continue;
            struct body_params p = {.model_json = "sim\\\"m",
                                    .model_json_len = strlen("sim\\\"m"),
                                    .seed = 11,
                                    .stream = stream,
                                    .prompt_ids = ids,
                                    .prompt_id_range = {CHATBODY_ID_MIN, CHATBODY_ID_MAX}};
            struct req_spec s;
            spec_of((uint64_t)mode, &s);
            s.ignore_eos = eos;
            for (size_t e = 0; e < LL_ARRAY_LEN(extras); e++) {
                struct extrabody x = {0};
                json_t *g = extras[e] ? obj(extras[e]) : NULL;
                char err[1024];
                assert_int_equal(extrabody_build(g, NULL, (enum oai_api)api, 1, "--extra-body", "c",
                                                 &x, err, sizeof err),
                                 0);
                char *text;
                json_t *b = built(&p, (enum oai_api)api, &s, extras[e] ? &x : NULL, &text);
                /* Each extra key as given. */
                const char *key;
                json_t *val;
                json_object_foreach(g, key, val)
                {
                    if (!json_equal(json_object_get(b, key), val))
                        fail_msg("api %d mode %d: \"%s\" not as given in %s", api, mode, key, text);
                }
                /* llmload's own, unless overridden. */
                int resp = api == OAI_API_RESPONSES;
                /* Embeddings: model and input only (no output, no stream). */
                int emb = api == OAI_API_EMBEDDINGS;
                const char *prompt_key = api == OAI_API_COMPLETIONS ? "prompt"
                                         : resp || emb              ? "input"
                                                                    : "messages";
                const char *max_key = resp ? "max_output_tokens" : "max_tokens";
                if (!(x.skip & EXTRABODY_MODEL))
                    assert_string_equal(json_string_value(json_object_get(b, "model")), "sim\"m");
                if (!(x.skip & EXTRABODY_PROMPT)) {
                    json_t *pr = json_object_get(b, prompt_key);
                    assert_true(ids ? json_array_size(pr) == 40
                                    : (json_is_array(pr) || json_is_string(pr)));
                }
                if (!(x.skip & EXTRABODY_MAX_TOKENS) && !emb)
                    assert_int_equal(json_integer_value(json_object_get(b, max_key)), 9);
                if (!(x.skip & EXTRABODY_STREAM) && !emb)
                    assert_int_equal(json_is_true(json_object_get(b, "stream")), stream);
                int so = stream && api != OAI_API_ANTHROPIC && !resp && !emb;
                if (!(x.skip & EXTRABODY_STREAM_OPTIONS) &&
                    !(g && json_object_get(g, "stream_options"))) /* Anthropic's: extra */
                    assert_int_equal(json_object_get(b, "stream_options") != NULL, so);
                if (!(x.skip & EXTRABODY_IGNORE_EOS) && !(g && json_object_get(g, "ignore_eos")))
                    assert_int_equal(json_object_get(b, "ignore_eos") != NULL, eos && !emb);
                /* Nothing else: the extra keys, and llmload's that it wrote. */
                const struct {
                    const char *key;
                    unsigned bit;
                    int written;
                } mine[] = {
                    {"model", EXTRABODY_MODEL, 1},
                    {prompt_key, EXTRABODY_PROMPT, 1},
                    {max_key, EXTRABODY_MAX_TOKENS, !emb},
                    {"stream", EXTRABODY_STREAM, !emb},
                    {"stream_options", EXTRABODY_STREAM_OPTIONS, so},
                    {"ignore_eos", EXTRABODY_IGNORE_EOS, eos && !emb},
                };
                size_t want = g ? json_object_size(g) : 0;
                for (size_t k = 0; k < LL_ARRAY_LEN(mine); k++)
                    want += mine[k].written && !(x.skip & mine[k].bit) &&
                            !(g && json_object_get(g, mine[k].key));
                if (json_object_size(b) != want)
                    fail_msg("api %d mode %d: %zu keys, want %zu: %s", api, mode,
                             json_object_size(b), want, text);
                free(text);
                json_decref(b);
                json_decref(g);
                extrabody_free(&x);
            }
        }
    }
}

/* Overriding max_completion_tokens in chat leaves max_tokens out (a
 * server given both may refuse, or read either). */
static void test_max_completion_tokens_replaces(void **state)
{
    char err[1024], *text;
    json_t *g = obj("{\"max_completion_tokens\":5}");
    struct extrabody x;
    assert_int_equal(
        extrabody_build(g, NULL, OAI_API_CHAT, 1, "--extra-body", "c", &x, err, sizeof err), 0);
    struct body_params p = {.model_json = "m", .model_json_len = 1, .seed = 1, .stream = 1};
    struct req_spec s;
    spec_of(0, &s);
    json_t *b = built(&p, OAI_API_CHAT, &s, &x, &text);
    assert_null(json_object_get(b, "max_tokens"));
    assert_int_equal(json_integer_value(json_object_get(b, "max_completion_tokens")), 5);
    assert_non_null(json_object_get(b, "messages"));
    free(text);
    json_decref(b);
    extrabody_free(&x);
    json_decref(g);
}

/* clang-format off */
TEST_MAIN(cmocka_unit_test(test_parse_inline_and_file),
          cmocka_unit_test(test_parse_refusals),
          cmocka_unit_test(test_own_keys_refused),
          cmocka_unit_test(test_class_merge),
          cmocka_unit_test(test_bodies_valid_every_api),
          cmocka_unit_test(test_max_completion_tokens_replaces))
/* clang-format on */
