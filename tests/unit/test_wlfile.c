/* test_wlfile.c: the workload file (every field of the sample with exact
 * values, defaults, every error class with its file:line:col and field),
 * class picking by weight, the per-request draws, and the shared-prefix
 * prompt builder (exact token count, shared and unique parts). */
#include "test.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "workload/empirical.h"
#include "workload/tokenizer.h"
#include <jansson.h>

#include "workload/synthprompt.h"
#include "workload/wlfile.h"
#include "workload/workload.h"

/* Must parse, with the files it names (empirical:FILE) read from dir
 * (NULL: none may be named). Caller frees with wl_file_free. */
static struct wl_file *parse_ok_in(const char *dir, const char *text)
{
    struct wl_file *f = NULL;
    char err[1024] = "";
    if (wl_file_parse("w.json", text, strlen(text), dir, &f, err, sizeof(err)))
        fail_msg("wl_file_parse failed: %s\n%s", err, text);
    return f;
}

static struct wl_file *parse_ok(const char *text)
{
    return parse_ok_in(NULL, text);
}

/* Must fail, with the files it names read from dir (NULL: none); the
 * message must contain a and b (when not NULL), be one line, and *out
 * must be NULL. */
static void parse_bad_in(const char *dir, const char *text, const char *a, const char *b)
{
    struct wl_file *f = (struct wl_file *)1;
    char err[1024] = "";
    int rc = wl_file_parse("w.json", text, strlen(text), dir, &f, err, sizeof(err));
    assert_rejected(rc, f, err, text, a, b, NULL);
}

static void parse_bad(const char *text, const char *a, const char *b)
{
    parse_bad_in(NULL, text, a, b);
}

/* csv, in tests/data/workload, has output lengths a class must refuse: as
 * its "lengths" and as its output_tokens the parse fails with lengths_err
 * and output_err; its input column alone, as prompt_tokens, is fine. */
static void check_output_column_refused(const char *csv, const char *lengths_err,
                                        const char *output_err)
{
    char dir[512], text[256];
    test_data_path("workload", "", dir, sizeof dir);
    snprintf(text, sizeof text, "{\"classes\": [{\"name\":\"a\",\"lengths\":\"empirical:%s\"}]}",
             csv);
    parse_bad_in(dir, text, lengths_err, NULL);
    snprintf(
        text, sizeof text,
        "{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":5,\"output_tokens\":\"empirical:%s\"}]}",
        csv);
    parse_bad_in(dir, text, output_err, NULL);
    snprintf(
        text, sizeof text,
        "{\"classes\": [{\"name\":\"a\",\"output_tokens\":5,\"prompt_tokens\":\"empirical:%s\"}]}",
        csv);
    wl_file_free(parse_ok_in(dir, text));
}

/* A byte-order mark at the start of the file is skipped (jsonfile.h). */
static void test_bom(void **state)
{
    struct wl_file *f = NULL;
    ASSERT_LOADS(wl_file_load, "bom_classes.json", &f);
    assert_int_equal(f->n, 1);
    assert_string_equal(f->classes[0].name, "chat");
    wl_file_free(f);
}

/* The integer fields take an integral float (4.0, 2.56e2) and refuse a
 * fraction, naming the field and its line. */
static void test_integral_floats(void **state)
{
    struct wl_file *f = parse_ok("{\"version\": 1.0, \"classes\": [{\"name\": \"chat\", "
                                 "\"prompt_tokens\": 300, \"output_tokens\": 20, \"prefix\": "
                                 "{\"fraction\": 0.5, \"groups\": 4.0, \"tokens\": 2.56e2}}]}");
    assert_int_equal(f->classes[0].prefix.groups, 4);
    assert_int_equal(f->classes[0].prefix.tokens, 256);
    wl_file_free(f);
    parse_bad("{\"classes\": [{\"name\": \"chat\", \"prompt_tokens\": 300,\n"
              "\"output_tokens\": 20, \"prefix\": {\"fraction\": 0.5, \"groups\": 4.5, "
              "\"tokens\": 256}}]}",
              "w.json:2:60: classes[0].prefix.groups: expected a whole number in [1, ", "got 4.5");
    parse_bad("{\"version\": 1.5, \"classes\": []}", "w.json:1:13: version: expected 1", NULL);
}

/* The sample file, every field. */
static void test_sample_file(void **state)
{
    struct wl_file *f = NULL;
    ASSERT_LOADS(wl_file_load, "classes.json", &f);
    assert_int_equal(f->n, 3);

    const struct wl_class *c = &f->classes[0];
    assert_string_equal(c->name, "chat");
    assert_true(c->weight == 3);
    assert_int_equal(c->prompt_tokens.kind, WL_LEN_DIST);
    assert_int_equal(c->prompt_tokens.dist.kind, DIST_LOGNORMAL);
    ASSERT_NEAR(c->prompt_tokens.dist.a, log(400), 1e-12);
    ASSERT_NEAR(c->prompt_tokens.dist.b, 0.6, 0);
    assert_true(c->prompt_tokens.dist.has_max && c->prompt_tokens.dist.max == 4000);
    assert_int_equal(c->output_tokens.dist.kind, DIST_UNIFORM);
    assert_true(c->output_tokens.dist.a == 50 && c->output_tokens.dist.b == 300);
    assert_null(c->pairs);
    assert_int_equal(c->api, OAI_API_CHAT);
    assert_int_equal(c->ignore_eos, 1);
    assert_true(c->prefix.fraction == 0.5);
    assert_int_equal(c->prefix.groups, 4);
    assert_int_equal(c->prefix.tokens, 256);
    assert_int_equal(c->cancel.kind, WL_CANCEL_AFTER_TIME);
    assert_true(c->cancel.fraction == 0.1);
    assert_int_equal(c->cancel.after.kind, DIST_EXPONENTIAL);
    assert_true(c->cancel.after.a == 2e9);
    assert_true(c->slo.ttft_ns == 500 * LL_NS_PER_MS);
    assert_true(c->slo.tpot_ns == 50 * LL_NS_PER_MS);
    assert_true(c->slo.e2e_ns == 20000 * LL_NS_PER_MS);

    c = &f->classes[1];
    assert_string_equal(c->name, "summarize");
    assert_true(c->weight == 1);
    assert_non_null(c->pairs); /* pairs.csv, found beside the workload file */
    assert_int_equal(empirical_rows(c->pairs), 500);
    assert_int_equal(empirical_columns(c->pairs), 2);
    assert_int_equal(c->api, OAI_API_COMPLETIONS);
    assert_int_equal(c->ignore_eos, 0);
    assert_true(c->prefix.fraction == 0);
    assert_int_equal(c->cancel.kind, WL_CANCEL_AFTER_TOKENS);
    assert_true(c->cancel.fraction == 0.05);
    assert_true(c->cancel.after.kind == DIST_UNIFORM && c->cancel.after.a == 10 &&
                c->cancel.after.b == 40);
    assert_true(c->slo.ttft_ns == 2000500000ULL);
    assert_true(c->slo.tpot_ns == 0 && c->slo.e2e_ns == 0);

    c = &f->classes[2];
    assert_string_equal(c->name, "batch");
    assert_true(c->weight == 0.5);
    assert_int_equal(c->prompt_tokens.kind, WL_LEN_DIST);
    assert_true(c->prompt_tokens.dist.kind == DIST_FIXED && c->prompt_tokens.dist.a == 1000);
    assert_int_equal(c->output_tokens.kind, WL_LEN_EMPIRICAL);
    assert_int_equal(empirical_rows(c->output_tokens.emp), 8);
    assert_int_equal(c->api, -1);
    assert_int_equal(c->ignore_eos, -1);

    ASSERT_NEAR(f->cum_weight[0], 3 / 4.5, 1e-15);
    ASSERT_NEAR(f->cum_weight[1], 4 / 4.5, 1e-15);
    assert_true(f->cum_weight[2] == 1);
    assert_int_equal(wl_find_class(f, "summarize"), 1);
    assert_int_equal(wl_find_class(f, "nope"), -1);

    /* Lengths: joint rows from the pairs file, fixed 1000 with the
     * empirical output values for "batch". */
    struct rng r;
    rng_seed(&r, 1, 2);
    for (int i = 0; i < 200; i++) {
        uint32_t p, o;
        wl_class_lengths(&f->classes[1], &r, &p, &o);
        int found = 0;
        for (size_t k = 0; k < 500 && !found; k++)
            found = empirical_value(f->classes[1].pairs, k, 0) == p &&
                    empirical_value(f->classes[1].pairs, k, 1) == o;
        assert_true(found);
        wl_class_lengths(&f->classes[2], &r, &p, &o);
        assert_int_equal(p, 1000);
        assert_true(o == 120 || o == 80 || o == 300 || o == 45 || o == 1000 ||
                    o == 210 || o == 64 || o == 512);
    }
    wl_file_free(f);
    wl_file_free(NULL);
}

static void test_defaults_and_numbers(void **state)
{
    struct wl_file *f = parse_ok(
        "{\"classes\":[{\"name\":\"only\",\"prompt_tokens\":128,"
        "\"output_tokens\":\"normal:100,20\"}]}");
    assert_int_equal(f->n, 1);
    assert_true(f->classes[0].weight == 1);
    assert_int_equal(f->classes[0].api, -1);
    assert_int_equal(f->classes[0].ignore_eos, -1);
    assert_int_equal(f->classes[0].cancel.kind, WL_CANCEL_NONE);
    assert_true(f->classes[0].prompt_tokens.dist.a == 128);
    /* dist_require_nonneg added min=0 to the normal */
    assert_true(f->classes[0].output_tokens.dist.has_min);
    assert_true(f->classes[0].output_tokens.dist.min == 0);
    struct rng r;
    rng_seed(&r, 3, 3);
    assert_int_equal(wl_pick_class(f, &r), 0);
    wl_file_free(f);
}

/* A class may speak Anthropic's Messages API, or OpenAI's Responses API. */
static void test_api_anthropic(void **state)
{
    struct wl_file *f =
        parse_ok("{\"classes\":[{\"name\":\"claude\",\"prompt_tokens\":64,\"output_tokens\":8,"
                 "\"api\":\"anthropic-messages\"},{\"name\":\"gpt\",\"prompt_tokens\":64,"
                 "\"output_tokens\":8,\"api\":\"chat\"},{\"name\":\"resp\",\"prompt_tokens\":"
                 "64,\"output_tokens\":8,\"api\":\"openai-responses\"}]}");
    assert_int_equal(f->n, 3);
    assert_int_equal(f->classes[0].api, OAI_API_ANTHROPIC);
    assert_int_equal(f->classes[1].api, OAI_API_CHAT);
    assert_int_equal(f->classes[2].api, OAI_API_RESPONSES);
    wl_file_free(f);
}

/* A class sent to openai-embeddings (its own "api", or the run's --api)
 * may leave out output_tokens: an embedding has no output, and the file
 * had to name one that was never sent. Any other class still must. */
static void test_embeddings_no_output(void **state)
{
    static const char own[] = "{\"classes\":[{\"name\":\"e\",\"prompt_tokens\":64,"
                              "\"api\":\"openai-embeddings\"}]}";
    static const char bare[] = "{\"classes\":[{\"name\":\"e\",\"prompt_tokens\":64}]}";
    struct wl_file *f = parse_ok(own);
    assert_int_equal(f->classes[0].api, OAI_API_EMBEDDINGS);
    assert_int_equal(f->classes[0].output_tokens.kind, WL_LEN_DIST);
    ASSERT_NEAR(f->classes[0].output_tokens.dist.a, 1, 0);
    wl_file_free(f);
    char err[512];
    assert_int_equal(wl_file_parse_api("w.json", bare, strlen(bare), NULL, OAI_API_EMBEDDINGS, &f,
                                       err, sizeof err),
                     0);
    ASSERT_NEAR(f->classes[0].output_tokens.dist.a, 1, 0);
    wl_file_free(f);
    assert_int_equal(
        wl_file_parse_api("w.json", bare, strlen(bare), NULL, OAI_API_CHAT, &f, err, sizeof err),
        LL_E_INVAL);
    assert_string_equal(err, "w.json:1:13: classes[0].output_tokens: missing: expected a DIST "
                             "(e.g. \"lognormal:median=500,sigma=0.5\") or \"empirical:FILE\", "
                             "or \"lengths\"");
    assert_int_equal(wl_file_parse("w.json", bare, strlen(bare), NULL, &f, err, sizeof err),
                     LL_E_INVAL);
}

/* A misspelt "api" on a class that leaves out output_tokens is named as
 * the fault: it read "output_tokens: missing", though the class meant
 * openai-embeddings, which needs none. */
static void test_embeddings_api_misspelt(void **state)
{
    static const char typo[] = "{\"classes\":[{\"name\":\"e\",\"prompt_tokens\":64,"
                               "\"api\":\"embedings\"}]}";
    struct wl_file *f = NULL;
    char err[512];
    assert_int_equal(wl_file_parse_api("w.json", typo, strlen(typo), NULL, OAI_API_EMBEDDINGS, &f,
                                       err, sizeof err),
                     LL_E_INVAL);
    assert_null(f);
    assert_string_equal(err, "w.json:1:50: classes[0].api: expected \"chat\", \"completions\", "
                             "\"anthropic-messages\", \"openai-responses\" or "
                             "\"openai-embeddings\" (as --api takes them), got \"embedings\"");
}

#define CLS "{\"name\":\"a\",\"prompt_tokens\":10,\"output_tokens\":5"

/* A class's extra_body is kept as given (checked against its API later,
 * by runopts); anything but an object is refused where it stands. */
static void test_extra_body(void **state)
{
    struct wl_file *f = parse_ok("{\"classes\":[" CLS ",\"extra_body\":{\"temperature\":0,"
                                 "\"tools\":[{\"type\":\"function\"}]}}, {\"name\":\"b\","
                                 "\"prompt_tokens\":1,\"output_tokens\":1}]}");
    assert_non_null(f->classes[0].extra_body);
    assert_int_equal(json_object_size(f->classes[0].extra_body), 2);
    assert_int_equal(json_array_size(json_object_get(f->classes[0].extra_body, "tools")), 1);
    assert_null(f->classes[1].extra_body);
    wl_file_free(f);
    parse_bad("{\"classes\": [" CLS ",\"extra_body\":[1]}]}",
              "w.json:1:", "classes[0].extra_body: expected an object");
    parse_bad("{\"classes\": [" CLS ",\"extra_body\":\"{}\"}]}", "classes[0].extra_body",
              "got \"{}\"");
    parse_bad("{\"classes\": [" CLS ",\"extra_body\":{\"a\":1,\"a\":2}}]}",
              "w.json:1:", "duplicate");
}

/* A class's "images": the count, sizes and format as the flags take them. */
static void test_images(void **state)
{
    struct wl_file *f =
        parse_ok("{\"classes\":[" CLS ",\"images\":{\"count\":\"uniform:1,3\","
                 "\"sizes\":\"64x32:2,8x8\",\"format\":\"jpeg\"}}, {\"name\":\"b\","
                 "\"prompt_tokens\":1,\"output_tokens\":1,\"images\":{\"count\":2}}]}");
    const struct image_cfg *a = &f->classes[0].images, *b = &f->classes[1].images;
    assert_true(a->set && b->set);
    assert_int_equal(a->n_sizes, 2);
    assert_int_equal(a->sizes[0].w, 64);
    assert_int_equal(a->sizes[0].h, 32);
    assert_true(a->sizes[0].weight == 2);
    assert_int_equal(a->format, IMAGE_JPEG);
    assert_int_equal(b->n_sizes, 1);
    assert_int_equal(b->sizes[0].w, 512); /* the default */
    assert_int_equal(b->format, IMAGE_PNG);
    assert_int_equal(a->prefix_count, 0);
    wl_file_free(f);
    /* Shared images: with a count, or alone (no own image: count 0). */
    f = parse_ok("{\"classes\":[" CLS ",\"images\":{\"count\":1,\"prefix_images\":3}}, "
                 "{\"name\":\"b\",\"prompt_tokens\":1,\"output_tokens\":1,"
                 "\"images\":{\"prefix_images\":2,\"sizes\":\"56x56\"}}]}");
    a = &f->classes[0].images;
    b = &f->classes[1].images;
    assert_true(a->set && b->set);
    assert_int_equal(a->prefix_count, 3);
    assert_int_equal(b->prefix_count, 2);
    assert_int_equal(b->count.kind, DIST_FIXED);
    assert_true(b->count.a == 0);
    assert_int_equal(b->sizes[0].w, 56);
    wl_file_free(f);
    parse_bad("{\"classes\": [" CLS ",\"images\":{\"prefix_images\":0}}]}",
              "classes[0].images: prefix_images: expected a whole number of images each prefix "
              "group shares, 1 to 64",
              "got 0");
    parse_bad("{\"classes\": [" CLS ",\"images\":{\"prefix_images\":1.5}}]}",
              "classes[0].images: prefix_images: expected a whole number", "got 1.5");
    parse_bad("{\"classes\": [" CLS ",\"images\":{\"prefix_images\":\"2\"}}]}",
              "classes[0].images: prefix_images: expected a whole number", NULL);
    parse_bad("{\"classes\": [" CLS ",\"images\":2}]}",
              "w.json:1:", "classes[0].images: expected an object {\"count\": DIST");
    parse_bad("{\"classes\": [" CLS ",\"images\":{}}]}", "classes[0].images: count: expected",
              "got nothing");
    parse_bad("{\"classes\": [" CLS ",\"images\":{\"count\":99}}]}",
              "classes[0].images: count: at most 64 images per request", NULL);
    parse_bad("{\"classes\": [" CLS ",\"images\":{\"count\":1,\"sizes\":\"9\"}}]}",
              "classes[0].images: sizes: expected WxH", "got \"9\"");
    parse_bad("{\"classes\": [" CLS ",\"images\":{\"count\":1,\"format\":\"gif\"}}]}",
              "classes[0].images: format: expected png or jpeg", NULL);
    parse_bad("{\"classes\": [" CLS ",\"images\":{\"count\":1,\"sizes\":5}}]}",
              "classes[0].images: sizes: expected a string", "got 5");
    parse_bad("{\"classes\": [" CLS ",\"images\":{\"count\":1,\"size\":\"5x5\"}}]}",
              "classes[0].images.size: unknown field",
              "(allowed: count, prefix_images, sizes, format)");
}

static void test_errors(void **state)
{
    parse_bad("", "w.json: empty file", NULL);
    parse_bad(" \n\t\n", "w.json: empty file", NULL);
    parse_bad("{\"classes\": [\n  {\"name\": \"a\",}]}", "w.json:2:", "invalid JSON");
    /* A YAML file says what the file must be; a JSON typo does not. */
    parse_bad("classes:\n  - name: a\n", "w.json:1:7: invalid JSON: invalid token near 'classes'",
              " (JSON expected: YAML and other formats are not read)");
    parse_bad("{\"classes\": [], \"classes\": []}", "w.json:1:", "duplicate");
    parse_bad("[1]", "w.json:1:1: expected an object", NULL);
    parse_bad("{\"clases\": []}", "w.json:1:12: clases: unknown field \"clases\"",
              "(allowed: version, classes)");
    parse_bad("{\"version\": 2, \"classes\": [" CLS "}]}",
              "w.json:1:13: version: expected 1", NULL);
    parse_bad("{\"classes\": []}", "w.json:1:13: classes: expected an array of 1 to 256",
              "got []");
    parse_bad("{}", "w.json:1:1: classes: expected an array", "got nothing");
    parse_bad("{\"classes\": [7]}", "w.json:1:14: classes[0]: expected a class object", NULL);
    /* weight: position on line 2 */
    parse_bad("{\"classes\": [\n {\"name\": \"a\", \"weight\": -2,\n"
              "  \"prompt_tokens\": 10, \"output_tokens\": 5}]}",
              "w.json:2:26: classes[0].weight: expected a number > 0", "got -2");
    parse_bad("{\"classes\": [" CLS ",\"weight\":0}]}", "classes[0].weight: expected a number > 0",
              "got 0");
    parse_bad("{\"classes\": [" CLS ",\"weight\":\"3\"}]}", "classes[0].weight", "got \"3\"");
    parse_bad("{\"classes\": [" CLS ",\"promt\":1}]}",
              "w.json:1:71: classes[0].promt: unknown field \"promt\"",
              "(allowed: name, weight, prompt_tokens, output_tokens, lengths, api, "
              "ignore_eos, prefix, cancel, slo, extra_body, images)");
    parse_bad("{\"classes\": [" CLS "}, " CLS "}]}",
              "w.json:1:73: classes[1].name: class name \"a\" is already used by classes[0]",
              NULL);
    parse_bad("{\"classes\": [{\"name\":\"a b\",\"prompt_tokens\":1,\"output_tokens\":1}]}",
              "w.json:1:22: classes[0].name: expected a name", "got \"a b\"");
    parse_bad("{\"classes\": [{\"prompt_tokens\":1,\"output_tokens\":1}]}",
              "w.json:1:14: classes[0].name: expected a name", "got nothing");
    parse_bad("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":\"zipf:2\",\"output_tokens\":1}]}",
              "w.json:1:42: classes[0].prompt_tokens: ", NULL);
    parse_bad("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":\"normal:-5,1\",\"output_tokens\":1}]}",
              "classes[0].prompt_tokens: ", NULL);
    /* A length that rounds to 0 would be sent as 1: refused, not bent. */
    parse_bad("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":10,\"output_tokens\":0}]}",
              "w.json:1:61: classes[0].output_tokens: a length of 0 tokens (it would be sent as "
              "1); expected at least 1",
              NULL);
    parse_bad("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":\"uniform:0,0.4\","
              "\"output_tokens\":1}]}",
              "classes[0].prompt_tokens: 99% of the lengths round to 0 tokens", NULL);
    /* So is an empirical file's, and a "lengths" pairs file's (the parent
     * sent each 0 as 1): zero_outputs.csv is 10,0 20,0 30,0. */
    check_output_column_refused(
        "zero_outputs.csv",
        "w.json:1:36: classes[0].lengths: empirical:zero_outputs.csv: 3 of its 3 output lengths "
        "round to 0 tokens (each would be sent as 1); expected lengths of at least 1",
        "classes[0].output_tokens: empirical:zero_outputs.csv: 3 of its 3 output lengths round "
        "to 0 tokens");
    parse_bad("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":-4,\"output_tokens\":1}]}",
              "classes[0].prompt_tokens: ", NULL);
    parse_bad("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":\"500ms\",\"output_tokens\":1}]}",
              "classes[0].prompt_tokens: ", NULL);
    parse_bad("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":10}]}",
              "w.json:1:14: classes[0].output_tokens: missing", NULL);
    parse_bad("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":10,\"output_tokens\":true}]}",
              "classes[0].output_tokens: expected a DIST string", "got true");
    parse_bad("{\"classes\": [{\"name\":\"a\",\"lengths\":\"empirical:x.csv\"}]}",
              "classes[0].lengths: empirical files are not allowed here", NULL);
    parse_bad("{\"classes\": [" CLS ",\"lengths\":\"empirical:x.csv\"}]}",
              "classes[0].lengths: expected either \"lengths\"", NULL);
    parse_bad("{\"classes\": [{\"name\":\"a\",\"lengths\":\"uniform:1,2\"}]}",
              "classes[0].lengths: expected \"empirical:FILE\"", NULL);
    parse_bad("{\"classes\": [" CLS ",\"api\":\"grpc\"}]}",
              "classes[0].api: expected \"chat\", \"completions\", \"anthropic-messages\", "
              "\"openai-responses\" or \"openai-embeddings\"",
              "got \"grpc\"");
    parse_bad("{\"classes\": [" CLS ",\"ignore_eos\":\"yes\"}]}",
              "classes[0].ignore_eos: expected true or false", NULL);
    parse_bad("{\"classes\": [" CLS ",\"prefix\":{\"fraction\":1.5,\"groups\":1,\"tokens\":8}}]}",
              "w.json:1:84: classes[0].prefix.fraction: expected a fraction", "got 1.5");
    parse_bad("{\"classes\": [" CLS ",\"prefix\":{\"fraction\":0.5,\"groups\":0,\"tokens\":8}}]}",
              "classes[0].prefix.groups: expected a whole number in [1, 1000000]", "got 0");
    parse_bad("{\"classes\": [" CLS ",\"prefix\":{\"fraction\":0.5,\"groups\":2,\"tokens\":2.5}}]}",
              "classes[0].prefix.tokens: expected a whole number", "got 2.5");
    parse_bad("{\"classes\": [" CLS ",\"prefix\":{\"fraction\":0.5,\"groups\":2}}]}",
              "classes[0].prefix.tokens: missing", NULL);
    parse_bad("{\"classes\": [" CLS ",\"prefix\":{\"fraction\":0.5,\"groups\":2,\"tokens\":4,\"len\":3}}]}",
              "classes[0].prefix.len: unknown field", "(allowed: fraction, groups, tokens)");
    parse_bad("{\"classes\": [" CLS ",\"prefix\":0.5}]}",
              "classes[0].prefix: expected an object", NULL);
    parse_bad("{\"classes\": [" CLS ",\"cancel\":{\"fraction\":0.1}}]}",
              "classes[0].cancel: expected exactly one of \"after\"", NULL);
    parse_bad("{\"classes\": [" CLS ",\"cancel\":{\"fraction\":0.1,\"after\":\"1s\",\"after_tokens\":5}}]}",
              "classes[0].cancel: expected exactly one of \"after\"", NULL);
    parse_bad("{\"classes\": [" CLS ",\"cancel\":{\"fraction\":0,\"after\":\"1s\"}}]}",
              "classes[0].cancel.fraction: expected a fraction of requests in (0, 1]", NULL);
    parse_bad("{\"classes\": [" CLS ",\"cancel\":{\"fraction\":0.2,\"after\":\"-1s\"}}]}",
              "classes[0].cancel.after: ", NULL);
    parse_bad("{\"classes\": [" CLS ",\"slo\":{\"ttft_ms\":\"500ms\"}}]}",
              "classes[0].slo.ttft_ms: expected a number of milliseconds > 0", "got \"500ms\"");
    parse_bad("{\"classes\": [" CLS ",\"slo\":{\"ttft_ms\":-1}}]}",
              "classes[0].slo.ttft_ms: expected a number of milliseconds", NULL);
    parse_bad("{\"classes\": [" CLS ",\"slo\":{\"ttft\":100}}]}",
              "classes[0].slo.ttft: unknown field", "(allowed: ttft_ms, tpot_ms, e2e_ms)");

    char err[256];
    struct wl_file *f = (struct wl_file *)1;
    int rc = wl_file_load("/nonexistent/w.json", &f, err, sizeof(err));
    assert_load_missing(rc, f, err, "/nonexistent/w.json");
}

/* A class's lengths pass the checks the length flags pass: a median beyond
 * any context is refused (the parent sent max_tokens 4000000000), a p99
 * beyond most contexts is the file's warning, and an empirical file with a
 * length above DIST_TOKENS_MAX is refused (the parent cut it to 4e9). */
static void test_length_limits(void **state)
{
    (void)state;
    parse_bad("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":10,"
              "\"output_tokens\":\"lognormal:100,0.5\"}]}",
              "w.json:1:61: classes[0].output_tokens: lognormal:100,0.5: a median of 2.69e+43 "
              "tokens, beyond any model's context (at most 10000000): lognormal:MU,SIGMA takes "
              "MU as the log of the median; for a median of 100 tokens write "
              "lognormal:median=100,sigma=0.5",
              NULL);
    parse_bad("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":\"uniform:1,20000000\","
              "\"output_tokens\":5}]}",
              "w.json:1:42: classes[0].prompt_tokens: uniform:1,20000000: a median of 1e+07 "
              "tokens, beyond any model's context",
              NULL);
    parse_bad("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":20000000,\"output_tokens\":5}]}",
              "classes[0].prompt_tokens: fixed:20000000: a median of 2e+07 tokens", NULL);
    struct wl_file *f = parse_ok("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":10,"
                                 "\"output_tokens\":\"lognormal:median=100000,sigma=2\"},"
                                 "{\"name\":\"b\",\"prompt_tokens\":\"exponential:1e6\","
                                 "\"output_tokens\":5}]}");
    assert_string_equal(f->warn,
                        "w.json:1:61: classes[0].output_tokens: lognormal:median=100000,"
                        "sigma=2: 1% of the lengths are above 1.05e+07 tokens, beyond most "
                        "models' context (add max=N to bound them)");
    wl_file_free(f);
    f = parse_ok("{\"classes\": [" CLS "}]}");
    assert_string_equal(f->warn, "");
    wl_file_free(f);
    /* huge_outputs.csv is 10,20 30,1e12. */
    check_output_column_refused(
        "huge_outputs.csv",
        "w.json:1:36: classes[0].lengths: empirical:huge_outputs.csv: 1 of its 2 output "
        "lengths are above 100000000 tokens (the largest 1e+12); expected at most 100000000",
        "classes[0].output_tokens: empirical:huge_outputs.csv: 1 of its 2 output lengths are "
        "above 100000000 tokens");
    /* A drawn length beyond the cap is the cap, which a trace line takes. */
    assert_int_equal(dist_to_tokens(1e12), DIST_TOKENS_MAX);
    assert_int_equal(DIST_TOKENS_MAX, 100000000u);
}

/* Two classes with prefixes of 2 groups each share none: class a's ids are
 * 0 and 1, b's 2 and 3, and their prompts differ from the first word (the
 * parent gave both classes ids 0 and 1, and b's first 100 words were a's). */
static void test_prefix_per_class(void **state)
{
    (void)state;
    struct wl_file *f =
        parse_ok("{\"classes\": [{\"name\":\"a\",\"prompt_tokens\":300,\"output_tokens\":5,"
                 "\"prefix\":{\"fraction\":1,\"groups\":2,\"tokens\":100}},"
                 "{\"name\":\"n\",\"prompt_tokens\":300,\"output_tokens\":5},"
                 "{\"name\":\"b\",\"prompt_tokens\":300,\"output_tokens\":5,"
                 "\"prefix\":{\"fraction\":1,\"groups\":2,\"tokens\":200}}]}");
    assert_int_equal(f->classes[0].prefix.first_group, 0);
    assert_int_equal(f->classes[2].prefix.first_group, 2);
    struct workload w = {.seed = 11, .classes = f};
    int seen[2][4] = {{0}};
    char first[2][4][8] = {{""}};
    char *buf = malloc(4096);
    assert_non_null(buf);
    for (uint64_t i = 0; i < 400; i++) {
        struct req_spec sp;
        workload_spec(&w, i, &sp);
        if (sp.class_idx == 1) {
            assert_int_equal(sp.prefix_id, -1);
            continue;
        }
        int k = sp.class_idx == 0 ? 0 : 1;
        assert_true(sp.prefix_id >= 2 * k && sp.prefix_id < 2 * k + 2);
        seen[k][sp.prefix_id]++;
        size_t n = workload_prompt(w.seed, &sp, buf, 4096);
        assert_true(n < 4096);
        char *sp1 = memchr(buf, ' ', n);
        assert_non_null(sp1);
        snprintf(first[k][sp.prefix_id], sizeof first[k][sp.prefix_id], "%.*s", (int)(sp1 - buf),
                 buf);
    }
    for (int g = 0; g < 2; g++) {
        assert_true(seen[0][g] > 0 && seen[1][2 + g] > 0);
        for (int h = 2; h < 4; h++)
            assert_true(strcmp(first[0][g], first[1][h]) != 0);
    }
    free(buf);
    wl_file_free(f);
}

/* A class reads empirical:FILE#input / #output as the flags do (the parent
 * tried to open "pairs.csv#output"); another '#' names no column; a
 * "lengths" file takes both; a cancellation point of 0 tokens is refused,
 * not sent as 1. */
static void test_empirical_column_and_cancel_zero(void **state)
{
    (void)state;
    char dir[512];
    test_data_path("workload", "", dir, sizeof dir);
    struct wl_file *f = parse_ok_in(dir, "{\"classes\": [{\"name\":\"a\",\"output_tokens\":5,"
                                         "\"prompt_tokens\":\"empirical:pairs.csv#output\"}]}");
    assert_int_equal(f->classes[0].prompt_tokens.kind, WL_LEN_EMPIRICAL);
    assert_int_equal(f->classes[0].prompt_tokens.col, EMPIRICAL_COL_OUTPUT);
    wl_file_free(f);
    static const char *const bad[][2] = {
        {"{\"classes\": [{\"name\":\"a\",\"output_tokens\":5,"
         "\"prompt_tokens\":\"empirical:pairs.csv#bogus\"}]}",
         "w.json:1:60: classes[0].prompt_tokens: empirical:pairs.csv#bogus: expected #input or "
         "#output after the file name"},
        {"{\"classes\": [{\"name\":\"a\",\"output_tokens\":5,"
         "\"prompt_tokens\":\"empirical:values.jsonl#input\"}]}",
         "classes[0].prompt_tokens: values.jsonl has one column; #input and #output name a "
         "column of a two-column file"},
        {"{\"classes\": [{\"name\":\"a\",\"lengths\":\"empirical:pairs.csv#input\"}]}",
         "classes[0].lengths: takes both columns; drop the #column from "
         "\"empirical:pairs.csv#input\""},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++)
        parse_bad_in(dir, bad[i][0], bad[i][1], NULL);
    parse_bad("{\"classes\": [" CLS ",\"cancel\":{\"fraction\":0.5,\"after_tokens\":\"0\"}}]}",
              "classes[0].cancel.after_tokens: a length of 0 tokens", NULL);
    parse_bad("{\"classes\": [" CLS ",\"cancel\":{\"fraction\":0.5,\"after_tokens\":"
              "\"uniform:0,0.4\"}}]}",
              "classes[0].cancel.after_tokens: 99% of the lengths round to 0 tokens", NULL);
    parse_bad("{\"classes\": [" CLS ",\"cancel\":{\"fraction\":0.5,\"after_tokens\":0}}]}",
              "classes[0].cancel.after_tokens: a length of 0 tokens", NULL);
    f = parse_ok("{\"classes\": [" CLS ",\"cancel\":{\"fraction\":0.5,\"after_tokens\":1}}]}");
    wl_file_free(f);
}

/* Weights 1, 2, 7: 200k picks, frequencies within 0.006 (about 6 SE). */
static void test_pick_frequencies(void **state)
{
    struct wl_file *f = parse_ok(
        "{\"classes\":[" CLS ",\"weight\":1},"
        "{\"name\":\"b\",\"prompt_tokens\":1,\"output_tokens\":1,\"weight\":2},"
        "{\"name\":\"c\",\"prompt_tokens\":1,\"output_tokens\":1,\"weight\":7}]}");
    size_t counts[3] = {0, 0, 0};
    struct rng r;
    rng_seed(&r, 99, 0);
    enum { N = 200000 };
    for (int i = 0; i < N; i++) {
        size_t k = wl_pick_class(f, &r);
        assert_true(k < 3);
        counts[k]++;
    }
    ASSERT_NEAR((double)counts[0] / N, 0.1, 0.006);
    ASSERT_NEAR((double)counts[1] / N, 0.2, 0.006);
    ASSERT_NEAR((double)counts[2] / N, 0.7, 0.006);
    wl_file_free(f);
}

static void test_prefix_and_cancel_draws(void **state)
{
    struct wl_prefix p = {.fraction = 0.3, .groups = 4, .tokens = 16};
    struct rng r;
    rng_seed(&r, 5, 5);
    enum { N = 100000 };
    size_t none = 0, groups[4] = {0, 0, 0, 0};
    for (int i = 0; i < N; i++) {
        int64_t g = wl_prefix_draw(&p, &r);
        if (g < 0) {
            none++;
        } else {
            assert_true(g < 4);
            groups[g]++;
        }
    }
    ASSERT_NEAR((double)none / N, 0.7, 0.01);
    for (int g = 0; g < 4; g++)
        ASSERT_NEAR((double)groups[g] / N, 0.075, 0.005);
    struct wl_prefix off = {0};
    assert_int_equal(wl_prefix_draw(&off, &r), -1);
    struct wl_prefix all = {.fraction = 1, .groups = 1, .tokens = 3};
    assert_int_equal(wl_prefix_draw(&all, &r), 0);

    struct wl_cancel c = {.kind = WL_CANCEL_AFTER_TIME, .fraction = 0.25};
    char err[128];
    assert_int_equal(dist_parse("2s", DIST_UNIT_DURATION_NS, &c.after, err, sizeof(err)), 0);
    size_t yes = 0;
    for (int i = 0; i < N; i++) {
        uint64_t after = 0;
        if (wl_cancel_draw(&c, &r, &after)) {
            yes++;
            assert_true(after == 2 * LL_NS_PER_SEC);
        }
    }
    ASSERT_NEAR((double)yes / N, 0.25, 0.01);
    struct wl_cancel nc = {0};
    uint64_t after = 7;
    assert_int_equal(wl_cancel_draw(&nc, &r, &after), 0);
    assert_true(after == 7);
}

/* Split text into words: single spaces, no leading or trailing space,
 * every word 1..4 bytes of [a-z0-9]. Returns the word count; word starts
 * into starts[] (up to max). */
static size_t check_words(const char *s, size_t n, size_t *starts, size_t max)
{
    size_t words = 0, i = 0;
    assert_true(n > 0);
    while (i < n) {
        size_t st = i;
        while (i < n && s[i] != ' ') {
            assert_true((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9'));
            i++;
        }
        assert_true(i - st >= 1 && i - st <= 4);
        if (words < max)
            starts[words] = st;
        words++;
        if (i < n) {
            assert_true(s[i] == ' ');
            i++;
            assert_true(i < n); /* no trailing space */
        }
    }
    return words;
}

static char *build(uint64_t seed, uint64_t index, uint32_t n, int64_t group,
                   uint32_t l, size_t *len)
{
    size_t need = wl_prompt_build(seed, index, n, group, l, NULL, 0);
    char *buf = malloc(need + 1);
    assert_non_null(buf);
    assert_int_equal(wl_prompt_build(seed, index, n, group, l, buf, need), need);
    buf[need] = '\0';
    assert_true(need <= (size_t)n * 5);
    *len = need;
    return buf;
}

static void test_prompt_build(void **state)
{
    size_t starts[4096];
    const uint32_t ns[] = {1, 2, 3, 4, 5, 7, 64, 255, 256, 257, 260, 1000, 4000};

    /* Exact token count under the rule, and under the sim's own tokenizer. */
    for (size_t k = 0; k < LL_ARRAY_LEN(ns); k++) {
        for (int64_t g = -1; g < 3; g++) {
            size_t len;
            char *s = build(11, 1234 + k, ns[k], g, 256, &len);
            assert_int_equal(check_words(s, len, starts, 4096), ns[k]);
            assert_int_equal(tokenizer_count(s, len), ns[k]);
            free(s);
        }
    }

    /* Same group: identical prefix bytes (the first 256 words); the rest
     * (from the nonce) differs between requests. Different groups: the
     * prefixes differ. */
    enum { REQS = 300, L = 256, N = 300 };
    char *pre[REQS];
    size_t pre_len[REQS];
    char *rest[REQS];
    for (int i = 0; i < REQS; i++) {
        size_t len;
        char *s = build(77, (uint64_t)i, N, i % 3, L, &len);
        assert_int_equal(check_words(s, len, starts, 4096), N);
        pre_len[i] = starts[L] - 1; /* bytes before the space ahead of word L */
        pre[i] = strndup(s, pre_len[i]);
        rest[i] = strdup(s + starts[L]);
        assert_non_null(pre[i]);
        assert_non_null(rest[i]);
        free(s);
    }
    for (int i = 0; i < REQS; i++) {
        for (int j = i + 1; j < REQS; j++) {
            if (i % 3 == j % 3)
                assert_string_equal(pre[i], pre[j]);
            else
                assert_true(strcmp(pre[i], pre[j]) != 0);
            assert_true(strcmp(rest[i], rest[j]) != 0);
        }
    }
    for (int i = 0; i < REQS; i++) {
        free(pre[i]);
        free(rest[i]);
    }

    /* The prefix depends on the seed, and a short prompt is the first n
     * words of the prefix. */
    size_t la, lb, lc;
    char *a = build(1, 0, 40, 5, 32, &la);
    char *b = build(2, 0, 40, 5, 32, &lb);
    char *c = build(1, 9, 20, 5, 32, &lc);
    assert_true(strncmp(a, b, 60) != 0);
    assert_true(lc < la && strncmp(a, c, lc) == 0 && a[lc] == ' ');
    free(a);
    free(b);
    free(c);

    /* Without a prefix the nonce comes first: the first 4 words differ
     * between every pair of requests. */
    char *first[REQS];
    for (int i = 0; i < REQS; i++) {
        size_t len;
        char *s = build(77, (uint64_t)i, 10, -1, 0, &len);
        check_words(s, len, starts, 4096);
        first[i] = strndup(s, starts[4] - 1);
        free(s);
    }
    for (int i = 0; i < REQS; i++)
        for (int j = i + 1; j < REQS; j++)
            assert_true(strcmp(first[i], first[j]) != 0);
    for (int i = 0; i < REQS; i++)
        free(first[i]);

    /* Deterministic, and a short buffer is never overrun. */
    char small[16], big[64];
    memset(small, '#', sizeof(small));
    size_t need = wl_prompt_build(3, 4, 12, 1, 4, small, 10);
    assert_true(need > 10);
    assert_true(small[10] == '#');
    assert_int_equal(wl_prompt_build(3, 4, 12, 1, 4, big, sizeof(big)), need);
    assert_memory_equal(small, big, 10);
    assert_int_equal(wl_prompt_build(3, 4, 0, -1, 0, big, sizeof(big)), 0);
}

/* The prompt salt (workload_content_seed): 0 is none (the seed itself,
 * the bytes of before salts); any other salt is a salted seed, the same
 * for the same pair. Under two salts the same schedule's prompts share no
 * word: unique ones differ in their nonce, and prefixed ones from their
 * tag on, while requests of one group under one salt still share their
 * whole prefix. */
static void test_prompt_salt(void **state)
{
    assert_int_equal(workload_content_seed(77, 0), 77);
    uint64_t s1 = workload_content_seed(77, 1), s2 = workload_content_seed(77, 2);
    assert_int_equal(workload_content_seed(77, 1), s1);
    assert_true(s1 != s2 && s1 != workload_content_seed(78, 1));
    assert_true((s1 & WL_SEED_SALTED) && (s2 & WL_SEED_SALTED));

    size_t starts[4096];
    enum { GROUPS = 50, L = 64, N = 100 };
    for (int64_t g = -1; g < GROUPS; g++) {
        size_t la, lb, lc;
        char *a = build(s1, 10, N, g, L, &la);
        char *b = build(s2, 10, N, g, L, &lb);
        char *c = build(s1, 11, N, g, L, &lc); /* another request of a's group */
        assert_int_equal(check_words(a, la, starts, 4096), N);
        size_t first = starts[1] - 1;
        assert_true(strncmp(a, b, first) != 0 || b[first] != ' '); /* the first word differs */
        if (g >= 0) {
            size_t pre = starts[L] - 1;
            assert_memory_equal(a, c, pre);
        }
        free(a);
        free(b);
        free(c);
    }
    /* Distinct groups keep distinct tags (the first two words) under a
     * salted seed. */
    char *tags[GROUPS];
    for (int64_t g = 0; g < GROUPS; g++) {
        size_t len;
        char *a = build(s1, 3, N, g, L, &len);
        check_words(a, len, starts, 4096);
        tags[g] = strndup(a, starts[2] - 1);
        free(a);
    }
    for (int i = 0; i < GROUPS; i++) {
        for (int j = i + 1; j < GROUPS; j++)
            assert_true(strcmp(tags[i], tags[j]) != 0);
    }
    for (int i = 0; i < GROUPS; i++)
        free(tags[i]);
}

UNIT_TESTS(test_sample_file, test_bom, test_integral_floats, test_defaults_and_numbers,
           test_api_anthropic, test_errors, test_length_limits, test_prefix_per_class,
           test_empirical_column_and_cancel_zero, test_images, test_pick_frequencies,
           test_prefix_and_cancel_draws, test_prompt_build, test_prompt_salt, test_extra_body,
           test_embeddings_no_output, test_embeddings_api_misspelt)
