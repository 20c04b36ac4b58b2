/* test_dataset.c: ShareGPT and JSONL prompt datasets: exact prompts and
 * lengths, skip counts by reason, every error with file:line:col and
 * field, uniform picking. */
#include "test.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "workload/dataset.h"
#include "util/util.h"

static struct dataset *load_ok(const char *name)
{
    struct dataset *d = NULL;
    ASSERT_LOADS(dataset_load, name, &d);
    return d;
}

static void parse_bad(const char *text, const char *a, const char *b)
{
    ASSERT_PARSE_REFUSED(dataset_parse, "d.json", struct dataset, text, a, b);
}

static void test_sharegpt(void **state)
{
    struct dataset *d = load_ok("sharegpt.json");
    assert_int_equal(d->format, DATASET_SHAREGPT);
    assert_int_equal(d->n, 2);
    size_t len;
    assert_string_equal(dataset_prompt(d, 0, &len), "What is a load tester?");
    assert_int_equal(len, 22);
    assert_int_equal(d->entries[0].prompt_bytes, 22);
    /* What|is|a|load|test r? : 1+1+1+1+2 under the 4-byte-piece rule */
    assert_int_equal(d->entries[0].prompt_tokens, 6);
    /* "A tool that sends many requests\nand measures latency." */
    assert_int_equal(d->entries[0].output_tokens, 9);
    /* the system turn is not the prompt; "user"/"assistant" count */
    assert_string_equal(dataset_prompt(d, 1, NULL), "Name three colours.");
    assert_int_equal(d->entries[1].prompt_tokens, 5);
    assert_int_equal(d->entries[1].output_tokens, 3);
    /* a3: no turns, a5: a blank prompt; a4: no reply */
    assert_int_equal(d->skipped[DATASET_SKIP_NO_PROMPT], 2);
    assert_int_equal(d->skipped[DATASET_SKIP_NO_REPLY], 1);
    assert_int_equal(d->skipped[DATASET_SKIP_BAD_TEXT], 0);
    assert_int_equal(d->skipped_total, 3);
    dataset_free(d);
    dataset_free(NULL);
}

static void test_sharegpt_escapes_and_bad_text(void **state)
{
    const char *text =
        "[{\"conversations\":[{\"from\":\"human\",\"value\":\"caf\\u00e9 \\\"x\\\"\"},"
        "{\"from\":\"gpt\",\"value\":\"one\\ttwo\\nthree\"}], \"extra\": [1]},"
        " {\"conversations\":[{\"from\":\"human\",\"value\":\"a\\u0000b\"},"
        "{\"from\":\"gpt\",\"value\":\"x\"}]},"
        " {\"conversations\":[{\"from\":\"human\",\"value\":\"hi\"},"
        "{\"from\":\"gpt\",\"value\":\" \\n \"}]}]";
    char err[512] = "";
    struct dataset *d = NULL;
    if (dataset_parse("d.json", text, strlen(text), &d, err, sizeof(err)))
        fail_msg("%s", err);
    assert_int_equal(d->n, 1);
    assert_string_equal(dataset_prompt(d, 0, NULL), "caf\xc3\xa9 \"x\"");
    assert_int_equal(d->entries[0].output_tokens, 3);
    assert_int_equal(d->skipped[DATASET_SKIP_BAD_TEXT], 1);
    assert_int_equal(d->skipped[DATASET_SKIP_NO_REPLY], 1);
    dataset_free(d);
}

static void test_jsonl(void **state)
{
    struct dataset *d = load_ok("prompts.jsonl");
    assert_int_equal(d->format, DATASET_JSONL);
    assert_int_equal(d->n, 2);
    assert_string_equal(dataset_prompt(d, 0, NULL), "Translate \"bonjour\" to English.");
    assert_int_equal(d->entries[0].output_tokens, 8);
    assert_string_equal(dataset_prompt(d, 1, NULL), "Summarise the plot of Hamlet\nin one line.");
    assert_int_equal(d->entries[1].output_tokens, 0);
    /* Summ|aris|e the plot of Haml|et in one line|. = 3+1+1+1+2+1+1+2 */
    assert_int_equal(d->entries[1].prompt_tokens, 12);
    assert_int_equal(d->skipped_total, 0);
    dataset_free(d);
}

/* A byte-order mark at the start of the file is skipped (jsonfile.h). */
static void test_bom(void **state)
{
    struct dataset *d = load_ok("bom_prompts.jsonl");
    assert_int_equal(d->format, DATASET_JSONL);
    assert_int_equal(d->n, 1);
    assert_int_equal(d->entries[0].output_tokens, 8);
    dataset_free(d);
}

/* output_tokens takes an integral float and refuses a fraction. */
static void test_integral_floats(void **state)
{
    struct dataset *d = NULL;
    char err[512] = "";
    const char *text = "{\"prompt\": \"Say hi.\", \"output_tokens\": 8.0}\n";
    if (dataset_parse("d.jsonl", text, strlen(text), &d, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(d->entries[0].output_tokens, 8);
    dataset_free(d);
    parse_bad("{\"prompt\": \"Say hi.\", \"output_tokens\": 8.5}\n",
              "d.json:1:40: output_tokens: expected a whole number in [1, ", "got 8.5");
}

static void test_errors(void **state)
{
    parse_bad("", "d.json: empty file", NULL);
    parse_bad("  \n", "d.json: empty file", NULL);
    parse_bad("\n  hello", "d.json:2:3: expected a ShareGPT JSON array ('[') or JSON Lines",
              "got \"hello\"");
    parse_bad("[{\"conversations\": [", "d.json:1:", "invalid JSON");
    parse_bad("[\n {\"conversations\": [\n  7]}]",
              "d.json:3:3: conversations[]: expected a turn object", "got 7");
    parse_bad("[3]", "d.json:1:2: expected a conversation object", "got 3");
    parse_bad("[{\"conversations\": {}}]", "d.json:1:20: conversations: expected an array",
              NULL);
    parse_bad("[{\"conversations\": [{\"value\": \"x\"}]}]",
              "d.json:1:21: from: expected a string", NULL);
    parse_bad("[{\"conversations\": [{\"from\": \"human\", \"value\": 5}]}]",
              "d.json:1:21: value: expected the turn's text as a string", NULL);
    parse_bad("[{\"conversations\": []}, {\"id\": 1}]",
              "d.json: no usable entries: 2 conversations skipped (2 without a prompt, "
              "0 without a reply, 0 with bad text)", NULL);
    parse_bad("{\"prompt\": \"x\", \"id\": 1}\n",
              "d.json:1:17: id: unknown field (allowed: prompt, output_tokens)", NULL);
    parse_bad("{\"prompt\": \"x\"}\n{\"prompt\": \"y\", \"output_tokens\": 0}\n",
              "d.json:2:34: output_tokens: expected a whole number in [1, 100000000]",
              "got 0");
    parse_bad("{\"prompt\": \"x\"}\n{\"prompt\": \"y\", \"output_tokens\": \"5\"}\n",
              "d.json:2:34: output_tokens", NULL);
    parse_bad("{\"prompt\": \" \"}\n", "d.json:1:12: prompt: expected a non-empty string", NULL);
    parse_bad("{\"prompt\": 5}\n", "d.json:1:12: prompt: expected a non-empty string", NULL);
    parse_bad("{\"output_tokens\": 5}\n", "d.json:1:1: prompt: missing", NULL);
    parse_bad("{\"prompt\": \"x\"}\n[1]\n", "d.json:2:1: expected one object per line", NULL);
    parse_bad("{\"prompt\": \"x\"}\n{\"prompt\": \"x\"\n", "d.json:2:", "invalid JSON");

    char err[256];
    struct dataset *d = (struct dataset *)1;
    int rc = dataset_load("/nonexistent/d.json", &d, err, sizeof(err));
    assert_load_missing(rc, d, err, "/nonexistent/d.json");
}

static void test_pick_and_words(void **state)
{
    struct dataset *d = load_ok("prompts.jsonl");
    struct rng r;
    rng_seed(&r, 8, 8);
    size_t counts[2] = {0, 0};
    for (int i = 0; i < 20000; i++)
        counts[dataset_pick(d, &r)]++;
    ASSERT_NEAR(counts[0] / 20000.0, 0.5, 0.02);
    dataset_free(d);

    assert_int_equal(dataset_count_words("", 0), 0);
    assert_int_equal(dataset_count_words("  \t\n ", 5), 0);
    assert_int_equal(dataset_count_words("a", 1), 1);
    assert_int_equal(dataset_count_words(" a  bb\tc\r\nd ", 12), 4);
}

UNIT_TESTS(test_sharegpt, test_sharegpt_escapes_and_bad_text, test_jsonl, test_errors, test_bom,
           test_integral_floats, test_pick_and_words)
