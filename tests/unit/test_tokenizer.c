/* Unit tests for sim/tokenizer.c: token counts on awkward whitespace and
 * long words, block hashes that agree exactly on shared prefixes, and
 * output tokens that re-count exactly. */
#include "test.h"

#include <string.h>

#include "sim/tokenizer.h"

static uint32_t count_str(const char *s)
{
    return tokenizer_count(s, strlen(s));
}

static void test_count(void **state)
{
    (void)state;
    assert_int_equal(tokenizer_count(NULL, 0), 0);
    assert_int_equal(count_str(""), 0);
    assert_int_equal(count_str("   \t\n  "), 0);
    assert_int_equal(count_str("a"), 1);
    assert_int_equal(count_str("cat"), 1);
    assert_int_equal(count_str("four"), 1);
    assert_int_equal(count_str("fives"), 2);
    assert_int_equal(count_str("abcdefgh"), 2);
    assert_int_equal(count_str("abcdefghi"), 3);
    assert_int_equal(count_str("hello world"), 4);
    assert_int_equal(count_str("  a   b\t\tc\n\nd\r\ne\v\ff  "), 6);
    assert_int_equal(count_str("one,two. three!"), 2 + 2); /* punctuation is part of a word */
    /* Bytes, not characters: "é" is 2 bytes, "ééé" is 6 -> 2 tokens. */
    assert_int_equal(count_str("\xc3\xa9\xc3\xa9\xc3\xa9"), 2);
    /* Only len bytes are read. */
    assert_int_equal(tokenizer_count("abcd efgh", 4), 1);
    assert_int_equal(tokenizer_count("abcdefgh", 5), 2);

    /* A 1000-byte word is 250 tokens; 1001 bytes, 251. */
    char big[1001];
    memset(big, 'x', sizeof(big));
    assert_int_equal(tokenizer_count(big, 1000), 250);
    assert_int_equal(tokenizer_count(big, 1001), 251);
}

static void test_block_hashes(void **state)
{
    (void)state;
    uint64_t a[8], b[8];
    /* 8 tokens: abcd|ef, g, h, i, j, k, l */
    const char *ta = "abcdef g h i j k l";

    assert_int_equal(tokenizer_block_hashes(ta, strlen(ta), 4, a, 8), 2);
    assert_int_equal(tokenizer_block_hashes(ta, strlen(ta), 3, a, 8), 2); /* 6 of 8 */
    assert_int_equal(tokenizer_block_hashes(ta, strlen(ta), 9, a, 8), 0);
    assert_int_equal(tokenizer_block_hashes(ta, strlen(ta), 0, a, 8), 0);
    assert_int_equal(tokenizer_block_hashes(ta, strlen(ta), 1, a, 3), 3);
    assert_int_equal(tokenizer_block_hashes(ta, strlen(ta), 4, NULL, 0), 0);

    /* Whitespace kind and amount do not matter. */
    const char *tb = "  abcdef\tg\n\nh i   j k l\n";
    assert_int_equal(tokenizer_block_hashes(ta, strlen(ta), 4, a, 8), 2);
    assert_int_equal(tokenizer_block_hashes(tb, strlen(tb), 4, b, 8), 2);
    assert_true(a[0] == b[0] && a[1] == b[1]);

    /* Equal first block, different second. */
    const char *tc = "abcdef g h i j k Z";
    assert_int_equal(tokenizer_block_hashes(tc, strlen(tc), 4, b, 8), 2);
    assert_true(a[0] == b[0]);
    assert_true(a[1] != b[1]);

    /* A change in the first block changes every later hash. */
    const char *td = "abcdeF g h i j k l";
    assert_int_equal(tokenizer_block_hashes(td, strlen(td), 4, b, 8), 2);
    assert_true(a[0] != b[0] && a[1] != b[1]);

    /* Same bytes, different token boundaries or word starts: different. */
    uint64_t x[2], y[2];
    assert_int_equal(tokenizer_block_hashes("abcdefgh", 8, 2, x, 2), 1);
    assert_int_equal(tokenizer_block_hashes("abcd efgh", 9, 2, y, 2), 1);
    assert_true(x[0] != y[0]);
    assert_int_equal(tokenizer_block_hashes("ab cd", 5, 2, x, 2), 1);
    assert_int_equal(tokenizer_block_hashes("abc d", 5, 2, y, 2), 1);
    assert_true(x[0] != y[0]);

    /* The hash of block i is the same whatever follows it. */
    assert_int_equal(tokenizer_block_hashes("a b c d", 7, 2, x, 2), 2);
    assert_int_equal(tokenizer_block_hashes("a b q", 5, 2, y, 2), 1);
    assert_true(x[0] == y[0]);
}

static void test_output_tokens(void **state)
{
    (void)state;
    char text[5 * 1000 + 1];
    size_t len = 0;
    char buf[TOKENIZER_OUTPUT_TOKEN_MAX_BYTES + 1];
    int differs = 0;

    for (uint32_t i = 0; i < 1000; i++) {
        size_t n = tokenizer_output_token(42, i, buf, sizeof(buf));
        assert_in_range(n, 2, 5);
        assert_int_equal(buf[0], ' ');
        assert_int_equal(buf[n], '\0');
        for (size_t k = 1; k < n; k++)
            assert_in_range(buf[k], 'a', 'z');
        memcpy(text + len, buf, n);
        len += n;
        /* Re-count every prefix now and then. */
        if (i % 97 == 0)
            assert_int_equal(tokenizer_count(text, len), i + 1);
        /* Same (seed, index), same token; another seed differs somewhere. */
        char again[8];
        assert_int_equal(tokenizer_output_token(42, i, again, sizeof(again)), n);
        assert_memory_equal(again, buf, n);
        char other[8];
        size_t m = tokenizer_output_token(43, i, other, sizeof(other));
        differs |= m != n || memcmp(other, buf, n) != 0;
    }
    assert_int_equal(tokenizer_count(text, len), 1000);
    assert_true(differs);

    /* A short buffer gets nothing; an exact one gets no NUL. */
    size_t n = tokenizer_output_token(7, 3, buf, sizeof(buf));
    char exact[5] = {'#', '#', '#', '#', '#'};
    assert_int_equal(tokenizer_output_token(7, 3, exact, n - 1), 0);
    assert_int_equal(tokenizer_output_token(7, 3, exact, n), n);
    assert_memory_equal(exact, buf, n);
    assert_int_equal(tokenizer_output_token(7, 3, NULL, 0), 0);
}

/* Block hashes of ID prompts: whole blocks only, equal exactly on equal
 * leading IDs, FNV-1a over (0x20, id little-endian) per token. */
static void test_block_hashes_ids(void **state)
{
    (void)state;
    uint32_t a[40], b[40];
    uint64_t ha[4], hb[4];
    for (uint32_t i = 0; i < 40; i++)
        a[i] = b[i] = 1000 + i * 7;

    assert_int_equal(tokenizer_block_hashes_ids(a, 40, 16, ha, 4), 2); /* 32 of 40 */
    assert_int_equal(tokenizer_block_hashes_ids(a, 40, 41, ha, 4), 0);
    assert_int_equal(tokenizer_block_hashes_ids(a, 40, 0, ha, 4), 0);
    assert_int_equal(tokenizer_block_hashes_ids(a, 40, 1, ha, 3), 3);
    assert_int_equal(tokenizer_block_hashes_ids(a, 40, 16, NULL, 0), 0);
    assert_int_equal(tokenizer_block_hashes_ids(NULL, 0, 16, ha, 4), 0);
    assert_int_equal(tokenizer_block_hashes_ids(a, 32, 16, ha, 4), 2);  /* exactly full */

    /* Equal first block, a different ID in the second. */
    b[20] = 99;
    assert_int_equal(tokenizer_block_hashes_ids(a, 40, 16, ha, 4), 2);
    assert_int_equal(tokenizer_block_hashes_ids(b, 40, 16, hb, 4), 2);
    assert_true(ha[0] == hb[0]);
    assert_true(ha[1] != hb[1]);
    /* A change in the first block changes every later hash. */
    b[20] = a[20];
    b[0] = a[0] + 1;
    assert_int_equal(tokenizer_block_hashes_ids(b, 40, 16, hb, 4), 2);
    assert_true(ha[0] != hb[0] && ha[1] != hb[1]);
    /* Block i does not depend on what follows it. */
    assert_int_equal(tokenizer_block_hashes_ids(a, 17, 16, hb, 4), 1);
    assert_true(ha[0] == hb[0]);
    /* Every byte of an ID counts: ids differing only in the high byte. */
    uint32_t x = 5, y = 5u | (1u << 24);
    assert_int_equal(tokenizer_block_hashes_ids(&x, 1, 1, ha, 1), 1);
    assert_int_equal(tokenizer_block_hashes_ids(&y, 1, 1, hb, 1), 1);
    assert_true(ha[0] != hb[0]);

    /* Hand-computed FNV-1a 64: bytes 20 01 00 00 00, then 20 39 30 00 00. */
    uint32_t two[2] = {1, 12345};
    assert_int_equal(tokenizer_block_hashes_ids(two, 2, 1, ha, 2), 2);
    assert_true(ha[0] == 0xaee53e812508e05eULL);
    assert_true(ha[1] == 0x57a9f397e8a8ddc3ULL);

    /* An ID prompt never shares a block with a text prompt: the four
     * bytes "abcd" as one ID and as one word. */
    uint32_t abcd = 0x64636261u;
    assert_int_equal(tokenizer_block_hashes_ids(&abcd, 1, 1, ha, 1), 1);
    assert_int_equal(tokenizer_block_hashes("abcd", 4, 1, hb, 1), 1);
    assert_true(ha[0] != hb[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_block_hashes),
        cmocka_unit_test(test_output_tokens),
        cmocka_unit_test(test_block_hashes_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
