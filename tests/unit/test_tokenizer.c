/* Unit tests for workload/tokenizer.c: token counts on awkward whitespace and
 * long words, block hashes that agree exactly on shared prefixes, output
 * tokens that re-count exactly, and the bytes2 tokenizer's counts, special
 * tokens, hashes and /tokenize IDs (all against hand-computed values). */
#include "test.h"

#include <string.h>

#include "workload/tokenizer.h"

static uint32_t count_str(const char *s)
{
    return tokenizer_count(s, strlen(s));
}

static void test_count(void **state)
{
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

/* The words rule's hashes, by hand: FNV-1a 64 over (12 "hell"), (1 "o"),
 * (12 "worl"), (1 "d"). Pins the default tokenizer's keys byte for byte. */
static void test_words_hash_golden(void **state)
{
    uint64_t h[4];
    assert_int_equal(tokenizer_block_hashes("hello world", 11, 1, h, 4), 4);
    assert_true(h[0] == 0x1a8c424aa021872cULL);
    assert_true(h[1] == 0x153699346e94ebc8ULL);
    assert_true(h[2] == 0x5e326ceb59d9862cULL);
    assert_true(h[3] == 0xe47b60105229ba49ULL);
    /* The prompt form under words: no special tokens, messages ignored. */
    size_t ends[2] = {5, 11};
    struct tokenizer_prompt chat = {"hello world", 11, ends, 2, NULL, 0};
    struct tokenizer_prompt comp = {"hello world", 11, NULL, 0, NULL, 0};
    uint64_t g[4];
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_WORDS, &chat, 1, g, 4), 4);
    assert_memory_equal(g, h, sizeof h);
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_WORDS, &comp, 1, g, 4), 4);
    assert_memory_equal(g, h, sizeof h);
    assert_int_equal(tokenizer_prompt_count(TOKENIZER_WORDS, &chat), 4);
    assert_int_equal(tokenizer_prompt_count(TOKENIZER_WORDS, &comp), 4);
}

static void test_kind_names(void **state)
{
    enum tokenizer_kind k = TOKENIZER_BYTES2;
    assert_int_equal(tokenizer_kind_parse("words", &k), 0);
    assert_int_equal(k, TOKENIZER_WORDS);
    assert_int_equal(tokenizer_kind_parse("bytes2", &k), 0);
    assert_int_equal(k, TOKENIZER_BYTES2);
    assert_int_equal(tokenizer_kind_parse("bytes", &k), -1);
    assert_int_equal(tokenizer_kind_parse("", &k), -1);
    assert_int_equal(k, TOKENIZER_BYTES2);
    assert_string_equal(tokenizer_kind_name(TOKENIZER_WORDS), "words");
    assert_string_equal(tokenizer_kind_name(TOKENIZER_BYTES2), "bytes2");
}

static uint32_t b2(const char *s)
{
    return tokenizer_count_text(TOKENIZER_BYTES2, s, strlen(s));
}

/* bytes2 text: a word of n bytes is ceil(n / 2). */
static void test_bytes2_count(void **state)
{
    assert_int_equal(tokenizer_count_text(TOKENIZER_BYTES2, NULL, 0), 0);
    assert_int_equal(b2(""), 0);
    assert_int_equal(b2(" \t\n "), 0);
    assert_int_equal(b2("a"), 1);
    assert_int_equal(b2("of"), 1);
    assert_int_equal(b2("the"), 2);
    assert_int_equal(b2("tree"), 2);
    assert_int_equal(b2("hello"), 3);
    assert_int_equal(b2("hello world"), 6);
    /* The synthetic prompt words: 1 token for 2 letters, 2 for 3 or 4. */
    assert_int_equal(b2("the of and to in tree"), 2 + 1 + 2 + 1 + 1 + 2);
    assert_int_equal(b2("  x\t yz\n"), 2);
    assert_int_equal(b2("\xc3\xa9"), 1);              /* "é": 2 bytes */
    assert_int_equal(b2("\xc3\xa9\xc3\xa9\xc3\xa9"), 3);
    assert_int_equal(tokenizer_count_text(TOKENIZER_BYTES2, "abcde", 3), 2);
    char big[1001];
    memset(big, 'x', sizeof big);
    assert_int_equal(tokenizer_count_text(TOKENIZER_BYTES2, big, 1000), 500);
    assert_int_equal(tokenizer_count_text(TOKENIZER_BYTES2, big, 1001), 501);
    /* The words kind through the same door is tokenizer_count. */
    assert_int_equal(tokenizer_count_text(TOKENIZER_WORDS, "hello world", 11), 4);
    assert_int_equal(tokenizer_count_text(TOKENIZER_WORDS, big, 1001), 251);
}

/* bytes2 prompts: BOS for completions; 7 per message + 3 for chat. */
static void test_bytes2_prompt_count(void **state)
{
    struct tokenizer_prompt comp = {"hello world", 11, NULL, 0, NULL, 0};
    assert_int_equal(tokenizer_prompt_count(TOKENIZER_BYTES2, &comp), 6 + 1);
    struct tokenizer_prompt empty = {NULL, 0, NULL, 0, NULL, 0};
    assert_int_equal(tokenizer_prompt_count(TOKENIZER_BYTES2, &empty), 1);
    size_t one_end[1] = {11};
    struct tokenizer_prompt one = {"hello world", 11, one_end, 1, NULL, 0};
    assert_int_equal(tokenizer_prompt_count(TOKENIZER_BYTES2, &one), 6 + 7 + 3);
    /* Two messages "hello" and "the a", joined by "\n". */
    size_t two_end[2] = {5, 11};
    struct tokenizer_prompt two = {"hello\nthe a", 11, two_end, 2, NULL, 0};
    assert_int_equal(tokenizer_prompt_count(TOKENIZER_BYTES2, &two), 3 + 2 + 1 + 14 + 3);
    /* One message with empty content: the template alone. */
    size_t zero_end[1] = {0};
    struct tokenizer_prompt blank = {"", 0, zero_end, 1, NULL, 0};
    assert_int_equal(tokenizer_prompt_count(TOKENIZER_BYTES2, &blank), 10);
}

/* bytes2 block hashes: special tokens are tokens of the chain. */
static void test_bytes2_hashes(void **state)
{
    /* By hand: FNV-1a 64 over (0x40 0x01) BOS, (10 "ab"), (9 "c"). */
    struct tokenizer_prompt comp = {"ab c", 4, NULL, 0, NULL, 0};
    uint64_t h[4];
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_BYTES2, &comp, 1, h, 4), 3);
    assert_true(h[0] == 0x090c0707b5a4387aULL);
    assert_true(h[1] == 0x1972246ff1671713ULL);
    assert_true(h[2] == 0xeaf976ca4132f5d7ULL);
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_BYTES2, &comp, 2, h, 4), 1);
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_BYTES2, &comp, 0, h, 4), 0);
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_BYTES2, &comp, 1, NULL, 0), 0);
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_BYTES2, &comp, 1, h, 2), 2);

    /* Chat "ab": 7 + 1 + 3 = 11 tokens, two blocks of 4, five of 2. */
    size_t e1[1] = {2};
    struct tokenizer_prompt c1 = {"ab", 2, e1, 1, NULL, 0};
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_BYTES2, &c1, 4, h, 4), 2);
    uint64_t k[8];
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_BYTES2, &c1, 2, k, 8), 5);

    /* Two conversations with the same first message (8 words: 8 tokens
     * after 7 template tokens) and the next message's 7 template tokens:
     * equal for 22 tokens, so blocks of 5 tokens 0-3 match, block 4 not. */
    const char *ta = "aa bb cc dd ee ff gg hh\nxx";
    const char *tb = "aa bb cc dd ee ff gg hh\nyy zz";
    size_t ea[2] = {23, strlen(ta)}, eb[2] = {23, strlen(tb)};
    struct tokenizer_prompt pa = {ta, strlen(ta), ea, 2, NULL, 0},
                            pb = {tb, strlen(tb), eb, 2, NULL, 0};
    assert_int_equal(tokenizer_prompt_count(TOKENIZER_BYTES2, &pa), 8 + 1 + 17);
    uint64_t ha[8], hb[8];
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_BYTES2, &pa, 5, ha, 8), 5);
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_BYTES2, &pb, 5, hb, 8), 5);
    assert_true(ha[0] == hb[0] && ha[1] == hb[1] && ha[2] == hb[2] && ha[3] == hb[3]);
    assert_true(ha[4] != hb[4]);
    /* The template matters: the same text as completions shares nothing. */
    struct tokenizer_prompt pc = {ta, strlen(ta), NULL, 0, NULL, 0};
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_BYTES2, &pc, 5, hb, 8), 2);
    assert_true(ha[0] != hb[0]);
    /* And bytes2 text keys differ from words text keys ("abcd" is one
     * words token, two bytes2 tokens). */
    assert_int_equal(tokenizer_block_hashes("abcd", 4, 1, ha, 1), 1);
    assert_true(ha[0] != h[0]);
}

/* /tokenize's IDs: one per token, BOS only with add_special under bytes2. */
static void test_ids(void **state)
{
    uint32_t ids[16];
    assert_int_equal(tokenizer_ids(TOKENIZER_BYTES2, "hello the a", 11, 1, ids, 16), 7);
    assert_int_equal(ids[0], TOKENIZER_BOS_ID);
    for (int i = 1; i < 7; i++)
        assert_in_range(ids[i], TOKENIZER_TEXT_ID_MIN, TOKENIZER_TEXT_ID_MAX);
    uint32_t again[16];
    assert_int_equal(tokenizer_ids(TOKENIZER_BYTES2, "hello the a", 11, 0, again, 16), 6);
    assert_memory_equal(again, ids + 1, 6 * sizeof(uint32_t));
    /* Equal tokens, equal IDs: "ab" at a word start both times. */
    assert_int_equal(tokenizer_ids(TOKENIZER_BYTES2, "ab ab abab", 10, 0, ids, 16), 4);
    assert_int_equal(ids[0], ids[1]);
    assert_int_equal(ids[0], ids[2]);
    assert_true(ids[3] != ids[2]);            /* "ab" inside a word is another token */
    /* Counting without room, and a short buffer: only max_out written. */
    assert_int_equal(tokenizer_ids(TOKENIZER_BYTES2, "hello", 5, 1, NULL, 0), 4);
    uint32_t two[3] = {0, 0, 77};
    assert_int_equal(tokenizer_ids(TOKENIZER_BYTES2, "hello", 5, 1, two, 2), 4);
    assert_int_equal(two[0], TOKENIZER_BOS_ID);
    assert_int_equal(two[2], 77);
    /* words: no special tokens, so add_special adds nothing. */
    assert_int_equal(tokenizer_ids(TOKENIZER_WORDS, "hello the a", 11, 1, ids, 16), 4);
    assert_in_range(ids[0], TOKENIZER_TEXT_ID_MIN, TOKENIZER_TEXT_ID_MAX);
    assert_int_equal(tokenizer_ids(TOKENIZER_WORDS, "", 0, 1, ids, 16), 0);
}

/* Images in the block hashes: an image's tokens stand where it stood, keyed
 * by its bytes' hash. Two prompts whose image and text agree share the
 * blocks they cover; another image at the same place shares none after
 * it; the text alone (no images) hashes as before. */
static void test_image_hashes(void **state)
{
    const char *img_a = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB",
               *img_b = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAAB";
    uint64_t ha = tokenizer_image_hash(img_a, strlen(img_a));
    uint64_t hb = tokenizer_image_hash(img_b, strlen(img_b));
    assert_true(ha == tokenizer_image_hash(img_a, strlen(img_a)));
    assert_true(ha != hb);
    assert_true(tokenizer_image_hash(img_a, 31) != ha);
    /* "aa bb\nxx yy" with a 4-token image at 0 and one at 5 (before "\nxx"):
     * 4 + 2 + 4 + 2 = 12 tokens, three blocks of 4. */
    const char *text = "aa bb\nxx yy", *other = "aa bb\nzz ww";
    struct tokenizer_image same[2] = {{0, 4, ha}, {5, 4, ha}};
    struct tokenizer_image second_other[2] = {{0, 4, ha}, {5, 4, hb}};
    struct tokenizer_image first_other[2] = {{0, 4, hb}, {5, 4, ha}};
    struct tokenizer_prompt p1 = {text, strlen(text), NULL, 0, same, 2};
    struct tokenizer_prompt p2 = {other, strlen(other), NULL, 0, same, 2};
    struct tokenizer_prompt p3 = {text, strlen(text), NULL, 0, second_other, 2};
    struct tokenizer_prompt p4 = {text, strlen(text), NULL, 0, first_other, 2};
    uint64_t h1[4], h2[4], h3[4], h4[4];
    for (int k = 0; k < 2; k++) {
        enum tokenizer_kind kind = k ? TOKENIZER_BYTES2 : TOKENIZER_WORDS;
        uint32_t n = tokenizer_prompt_block_hashes(kind, &p1, 4, h1, 4);
        assert_int_equal(n, 3); /* words 12 tokens; bytes2 13 (a BOS) */
        assert_int_equal(tokenizer_prompt_block_hashes(kind, &p2, 4, h2, 4), n);
        assert_int_equal(tokenizer_prompt_block_hashes(kind, &p3, 4, h3, 4), n);
        assert_int_equal(tokenizer_prompt_block_hashes(kind, &p4, 4, h4, 4), n);
        /* Same image, same text up to it: the first blocks agree. */
        assert_true(h1[0] == h2[0]);
        assert_true(h1[0] == h3[0]);
        /* The second image differs from token 6 (7 with bytes2's BOS) on:
         * blocks 1 and 2 differ. */
        assert_true(h1[1] != h3[1] && h1[2] != h3[2]);
        /* The first image differs: nothing agrees. */
        assert_true(h1[0] != h4[0] && h1[1] != h4[1] && h1[2] != h4[2]);
        /* Different text after the second image. */
        assert_true(h1[2] != h2[2]);
    }
    /* No images: the text's hashes, as before. */
    struct tokenizer_prompt plain = {text, strlen(text), NULL, 0, NULL, 0};
    uint64_t g[4], t[4];
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_WORDS, &plain, 1, g, 4), 4);
    assert_int_equal(tokenizer_block_hashes(text, strlen(text), 1, t, 4), 4);
    assert_memory_equal(g, t, sizeof g);
    /* An image alone: its tokens make blocks. */
    struct tokenizer_image only = {0, 8, ha};
    struct tokenizer_prompt img = {"", 0, NULL, 0, &only, 1};
    assert_int_equal(tokenizer_prompt_block_hashes(TOKENIZER_WORDS, &img, 4, g, 4), 2);
}

UNIT_TESTS(test_count, test_block_hashes, test_output_tokens, test_block_hashes_ids,
           test_words_hash_golden, test_kind_names, test_bytes2_count, test_bytes2_prompt_count,
           test_bytes2_hashes, test_ids, test_image_hashes)
