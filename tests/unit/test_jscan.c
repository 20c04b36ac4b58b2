/* Unit tests for jscan.c: validation (RFC 8259 vectors, valid and not),
 * walking, lookups, numbers and strings. */
#include "test.h"

#include <string.h>

#include "decode/jscan.h"
#include "util/util.h"

/* Vectors carry their length, so embedded NUL bytes are tested too. */
struct vec {
    const char *s;
    size_t len;
};
#define V(lit) { (lit), sizeof(lit) - 1 }

static const struct vec valid_docs[] = {
    V("0"), V("-0"), V("1.5e10"), V("-1.0E-2"), V("1e+2"), V("123456789012345678901234567890"),
    V("true"), V("false"), V("null"), V("\"\""),
    V(" \t\r\n[1, 2 ,3] \n"), V("[]"), V("{}"), V("[[]]"), V("{\"\":{}}"),
    V("{\"a\":{\"b\":[null,true,false,-1.25e-3,\"x\"]}}"),
    V("\"\\u00e9\""), V("\"\\ud83d\\ude00\""), V("\"\\uD83D\\uDE00\""),
    V("\"\\/\\b\\f\\n\\r\\t\\\"\\\\\""), V("\"\\u0000\""),
    V("\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF\""),
    V("{\"a\":1,\"a\":2}"),                     /* duplicate keys are valid JSON */
    V("\"\x7F\""),                              /* DEL is not a control character in JSON */
};

static const struct vec invalid_docs[] = {
    V(""), V(" "), V("01"), V("-"), V("-a"), V("1."), V(".5"), V("1e"), V("1e+"), V("+1"),
    V("0x10"), V("NaN"), V("Infinity"), V("-Infinity"), V("1.e3"), V("--1"),
    V("tru"), V("nul"), V("truex"), V("True"), V("nulll"),
    V("[1,]"), V("[,1]"), V("[1 2]"), V("["), V("]"), V("[1]]"), V("[}"),
    V("{\"a\":1,}"), V("{\"a\"}"), V("{a:1}"), V("{\"a\" 1}"), V("{\"a\":}"), V("{,}"),
    V("{\"a\":1}}"), V("{1:2}"), V("{\"a\":1 \"b\":2}"),
    V("\"abc"), V("\"\\x\""), V("\"\\u12\""), V("\"\\u12G4\""), V("\"\\"), V("'a'"),
    V("\"\\ud800\""), V("\"\\udc00\""), V("\"\\ud800\\u0041\""), V("\"\\ud800x\""),
    V("\"\\ud800\\ud800\""), V("\"\\udbff\""),
    V("\"a\tb\""), V("\"\x01\""), V("\"a\nb\""), V("\"\x00\""),
    V("\"\xC0\xAF\""),                      /* overlong '/' */
    V("\"\xE0\x80\xAF\""),                  /* overlong, 3 bytes */
    V("\"\xED\xA0\x80\""),                  /* an encoded surrogate */
    V("\"\xF4\x90\x80\x80\""),              /* past U+10FFFF */
    V("\"\xF5\x80\x80\x80\""), V("\"\xFF\""),
    V("\"\x80\""), V("\"\xE2\x82\""), V("\"\xE2\x82"), V("\"\xC3\""),
    V("1 2"), V("{} x"), V("[]["), V("1\0"), V("\0"), V("\xEF\xBB\xBF{}"),
    V("[\x01]"), V("\xC3\xA9"),
};

static void test_validate_vectors(void **state)
{
    struct jscan_value root;

    for (size_t i = 0; i < LL_ARRAY_LEN(valid_docs); i++) {
        int rc = jscan_validate(valid_docs[i].s, valid_docs[i].len,
                                JSCAN_DEFAULT_DEPTH, &root);
        if (rc != 0)
            fail_msg("valid #%zu <%s> rejected: %d", i, valid_docs[i].s, rc);
    }
    for (size_t i = 0; i < LL_ARRAY_LEN(invalid_docs); i++) {
        int rc = jscan_validate(invalid_docs[i].s, invalid_docs[i].len,
                                JSCAN_DEFAULT_DEPTH, &root);
        if (rc != LL_E_PROTO)
            fail_msg("invalid #%zu <%s> gave %d, expected LL_E_PROTO",
                     i, invalid_docs[i].s, rc);
    }
    /* A prefix of a valid document is not valid (no reading past len). */
    const char doc[] = "{\"a\":[1,2,{\"b\":\"c\"}]}";
    for (size_t n = 0; n < sizeof(doc) - 1; n++)
        assert_int_equal(jscan_validate(doc, n, JSCAN_DEFAULT_DEPTH, NULL), LL_E_PROTO);
    assert_int_equal(jscan_validate(doc, sizeof(doc) - 1, JSCAN_DEFAULT_DEPTH, NULL), 0);
}

static void test_validate_root(void **state)
{
    struct jscan_value root;
    const char doc[] = "  {\"a\": 1}\n\t";

    assert_int_equal(jscan_validate(doc, sizeof(doc) - 1, 8, &root), 0);
    assert_int_equal(root.type, JSCAN_OBJECT);
    assert_ptr_equal(root.ptr, doc + 2);
    assert_int_equal(root.len, 8);
    assert_int_equal(jscan_validate(" -12.5 ", 7, 8, &root), 0);
    assert_int_equal(root.type, JSCAN_NUMBER);
    assert_int_equal(root.len, 5);
    assert_int_equal(jscan_validate("\"s\"", 3, 8, &root), 0);
    assert_int_equal(root.type, JSCAN_STRING);
    assert_int_equal(jscan_validate("null", 4, 8, &root), 0);
    assert_int_equal(root.type, JSCAN_NULL);
    assert_int_equal(jscan_validate("[]", 2, 8, &root), 0);
    assert_int_equal(root.type, JSCAN_ARRAY);
}

static void test_depth(void **state)
{
    char doc[2 * 2000 + 1];

    /* n nested arrays: valid up to the limit, rejected one past it. */
    for (int n = 1; n <= 2000; n++) {
        memset(doc, '[', (size_t)n);
        memset(doc + n, ']', (size_t)n);
        int rc64 = jscan_validate(doc, 2 * (size_t)n, 64, NULL);
        int rc_max = jscan_validate(doc, 2 * (size_t)n, JSCAN_DEPTH_LIMIT, NULL);
        assert_int_equal(rc64, n <= 64 ? 0 : LL_E_PROTO);
        assert_int_equal(rc_max, n <= JSCAN_DEPTH_LIMIT ? 0 : LL_E_PROTO);
    }
    /* Mixed objects and arrays keep their kinds straight across the bit
     * stack's byte boundaries. */
    const char mixed[] = "{\"a\":[{\"b\":[{\"c\":[{\"d\":[{\"e\":[1]}]}]}]}]}";
    assert_int_equal(jscan_validate(mixed, sizeof(mixed) - 1, 10, NULL), 0);
    assert_int_equal(jscan_validate(mixed, sizeof(mixed) - 1, 9, NULL), LL_E_PROTO);
    const char crossed[] = "{\"a\":[{\"b\":[{\"c\":[{\"d\":[{\"e\":[1}]}]}]}]}]";
    assert_int_equal(jscan_validate(crossed, sizeof(crossed) - 1, 64, NULL), LL_E_PROTO);
    assert_int_equal(jscan_validate("[]", 2, 0, NULL), LL_E_INVAL);
    assert_int_equal(jscan_validate("[]", 2, JSCAN_DEPTH_LIMIT + 1, NULL), LL_E_INVAL);
    assert_int_equal(jscan_validate("1", 1, 1, NULL), 0);
}

static void test_iterate(void **state)
{
    const char doc[] = "{ \"a\" : [1, \"x,]}\", {\"k\":[]}, null ] , \"b\\\"\":true,\"c\":{} }";
    struct jscan_value root, k, v, e;
    struct jscan_iter it, ai;
    int members = 0, elems = 0;

    assert_int_equal(jscan_validate(doc, sizeof(doc) - 1, 8, &root), 0);
    assert_int_equal(jscan_iter_init(&it, &root), 0);
    while (jscan_iter_next_member(&it, &k, &v)) {
        members++;
        if (members == 1) {
            assert_true(jscan_string_equals(&k, "a", 1));
            assert_int_equal(v.type, JSCAN_ARRAY);
            assert_int_equal(jscan_iter_init(&ai, &v), 0);
            static const enum jscan_type types[] = {
                JSCAN_NUMBER, JSCAN_STRING, JSCAN_OBJECT, JSCAN_NULL };
            static const size_t lens[] = { 1, 6, 8, 4 };
            while (jscan_iter_next_element(&ai, &e)) {
                assert_true(elems < 4);
                assert_int_equal(e.type, types[elems]);
                assert_int_equal(e.len, lens[elems]);
                elems++;
            }
            /* An array iterator yields no members. */
            assert_int_equal(jscan_iter_next_member(&ai, &k, &v), 0);
        } else if (members == 2) {
            assert_true(jscan_string_equals(&k, "b\"", 2));
            assert_int_equal(v.type, JSCAN_TRUE);
        } else {
            assert_true(jscan_string_equals(&k, "c", 1));
            assert_int_equal(v.type, JSCAN_OBJECT);
            assert_int_equal(v.len, 2);
        }
    }
    assert_int_equal(members, 3);
    assert_int_equal(elems, 4);
    assert_int_equal(jscan_iter_init(&it, &k), LL_E_INVAL);
    assert_int_equal(jscan_iter_next_member(&it, &k, &v), 0);

    /* Empty containers. */
    assert_int_equal(jscan_validate(" [ ] ", 5, 8, &root), 0);
    assert_int_equal(jscan_iter_init(&it, &root), 0);
    assert_int_equal(jscan_iter_next_element(&it, &e), 0);
}

static void test_lookup(void **state)
{
    const char doc[] =
        "{\"choices\":[{\"delta\":{\"content\":\"hi\"}},{\"delta\":{\"content\":null}}],"
        "\"usage\":{\"prompt_tokens_details\":{\"cached_tokens\":7}},"
        "\"a\\u0062\":1,\"dup\":1,\"dup\":2,\"x.y\":3}";
    struct jscan_value root, v;

    assert_int_equal(jscan_validate(doc, sizeof(doc) - 1, 8, &root), 0);
    assert_int_equal(jscan_path_get(&root, "choices.0.delta.content", &v), 0);
    assert_int_equal(v.type, JSCAN_STRING);
    assert_true(jscan_string_equals(&v, "hi", 2));
    assert_int_equal(jscan_path_get(&root, "choices.1.delta.content", &v), 0);
    assert_int_equal(v.type, JSCAN_NULL);
    assert_int_equal(jscan_path_get(&root, "choices.2", &v), LL_E_NOTFOUND);
    assert_int_equal(jscan_path_get(&root, "choices.x", &v), LL_E_NOTFOUND);
    assert_int_equal(jscan_path_get(&root, "choices.0.delta.content.z", &v), LL_E_NOTFOUND);
    assert_int_equal(jscan_path_get(&root, "usage.prompt_tokens_details.cached_tokens", &v), 0);
    int64_t n = 0;
    assert_int_equal(jscan_number_int64(&v, &n), 0);
    assert_int_equal(n, 7);
    assert_int_equal(jscan_path_get(&root, "", &v), 0);
    assert_int_equal(v.type, JSCAN_OBJECT);
    /* Keys are compared decoded; the first duplicate wins. */
    assert_int_equal(jscan_object_get(&root, "ab", 2, &v), 0);
    assert_int_equal(jscan_object_get(&root, "dup", 3, &v), 0);
    assert_int_equal(jscan_number_int64(&v, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(jscan_object_get(&root, "x.y", 3, &v), 0);
    assert_int_equal(jscan_object_get(&root, "missing", 7, &v), LL_E_NOTFOUND);
    assert_int_equal(jscan_object_get(&v, "a", 1, &v), LL_E_NOTFOUND);  /* not an object */
}

static int64_t int_of(const char *s, int *rc)
{
    struct jscan_value v;
    int64_t n = -12345;
    assert_int_equal(jscan_validate(s, strlen(s), 8, &v), 0);
    *rc = jscan_number_int64(&v, &n);
    return n;
}

static void test_numbers(void **state)
{
    int rc;
    struct jscan_value v;
    double d = 0;

    assert_true(int_of("9223372036854775807", &rc) == INT64_MAX);
    assert_int_equal(rc, 0);
    assert_true(int_of("-9223372036854775808", &rc) == INT64_MIN);
    assert_int_equal(rc, 0);
    assert_true(int_of("-0", &rc) == 0);
    assert_int_equal(rc, 0);
    int_of("9223372036854775808", &rc);
    assert_int_equal(rc, LL_E_RANGE);
    int_of("-9223372036854775809", &rc);
    assert_int_equal(rc, LL_E_RANGE);
    int_of("99999999999999999999999", &rc);
    assert_int_equal(rc, LL_E_RANGE);
    int_of("1.0", &rc);
    assert_int_equal(rc, LL_E_RANGE);
    int_of("1e3", &rc);
    assert_int_equal(rc, LL_E_RANGE);

    assert_int_equal(jscan_validate("1.5e3", 5, 8, &v), 0);
    assert_int_equal(jscan_number_double(&v, &d), 0);
    assert_true(d == 1500.0);
    assert_int_equal(jscan_validate("-0.1", 4, 8, &v), 0);
    assert_int_equal(jscan_number_double(&v, &d), 0);
    assert_true(d == -0.1);
    assert_int_equal(jscan_validate("1e400", 5, 8, &v), 0);
    assert_int_equal(jscan_number_double(&v, &d), LL_E_RANGE);
    assert_int_equal(jscan_validate("1e-400", 6, 8, &v), 0);
    assert_int_equal(jscan_number_double(&v, &d), 0);
    assert_true(d == 0.0);
    assert_int_equal(jscan_validate("\"1\"", 3, 8, &v), 0);
    assert_int_equal(jscan_number_double(&v, &d), LL_E_INVAL);
    assert_int_equal(jscan_number_int64(&v, &(int64_t){0}), LL_E_INVAL);
}

static void test_strings(void **state)
{
    struct jscan_value v;
    char buf[32];
    size_t n = 0;
    /* a, e-acute (2 bytes), U+1F600 from a surrogate pair (4), LF (1) */
    const char doc[] = "\"a\\u00e9\\ud83d\\ude00\\n\"";

    assert_int_equal(jscan_validate(doc, sizeof(doc) - 1, 8, &v), 0);
    assert_int_equal(jscan_string_decoded_len(&v), 8);
    assert_int_equal(jscan_string_unescape(&v, buf, sizeof(buf), &n), 0);
    assert_int_equal(n, 8);
    assert_memory_equal(buf, "a\xC3\xA9\xF0\x9F\x98\x80\n", 9);
    assert_true(jscan_string_equals(&v, "a\xC3\xA9\xF0\x9F\x98\x80\n", 8));
    assert_false(jscan_string_equals(&v, "a\xC3\xA9\xF0\x9F\x98\x80", 7));
    assert_false(jscan_string_equals(&v, "a\xC3\xA9\xF0\x9F\x98\x80\nx", 9));

    /* Truncation stops at a character boundary. */
    assert_int_equal(jscan_string_unescape(&v, buf, 3, &n), LL_E_RANGE);
    assert_int_equal(n, 1);
    assert_string_equal(buf, "a");
    assert_int_equal(jscan_string_unescape(&v, buf, 4, &n), LL_E_RANGE);
    assert_int_equal(n, 3);
    assert_int_equal(jscan_string_unescape(&v, buf, 8, &n), LL_E_RANGE);
    assert_int_equal(n, 7);
    assert_int_equal(jscan_string_unescape(&v, buf, 9, &n), 0);
    assert_int_equal(n, 8);
    assert_int_equal(jscan_string_unescape(&v, buf, 0, &n), LL_E_INVAL);

    /* Raw UTF-8 is copied and truncated whole too. */
    const char raw[] = "\"\xE2\x82\xAC\xE2\x82\xAC\"";
    assert_int_equal(jscan_validate(raw, sizeof(raw) - 1, 8, &v), 0);
    assert_int_equal(jscan_string_decoded_len(&v), 6);
    assert_int_equal(jscan_string_unescape(&v, buf, 6, &n), LL_E_RANGE);
    assert_int_equal(n, 3);

    /* A plain run is copied whole only when it fits, NUL included. */
    const char plain[] = "\"abcdef\"";
    assert_int_equal(jscan_validate(plain, sizeof(plain) - 1, 8, &v), 0);
    assert_int_equal(jscan_string_unescape(&v, buf, 6, &n), LL_E_RANGE);
    assert_int_equal(n, 5);
    assert_string_equal(buf, "abcde");
    assert_int_equal(jscan_string_unescape(&v, buf, 7, &n), 0);
    assert_int_equal(n, 6);
    assert_string_equal(buf, "abcdef");

    /* Every simple escape. */
    const char esc[] = "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\"";
    assert_int_equal(jscan_validate(esc, sizeof(esc) - 1, 8, &v), 0);
    assert_int_equal(jscan_string_unescape(&v, buf, sizeof(buf), &n), 0);
    assert_int_equal(n, 9);
    assert_memory_equal(buf, "\"\\/\b\f\n\r\tA", 9);
    assert_int_equal(jscan_string_decoded_len(&v), 9);

    /* \u0000 decodes to a NUL byte. */
    assert_int_equal(jscan_validate("\"x\\u0000y\"", 10, 8, &v), 0);
    assert_int_equal(jscan_string_unescape(&v, buf, sizeof(buf), &n), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(buf, "x\0y", 3);

    /* Not a string. */
    assert_int_equal(jscan_validate("12", 2, 8, &v), 0);
    assert_int_equal(jscan_string_decoded_len(&v), 0);
    assert_false(jscan_string_equals(&v, "12", 2));
    assert_int_equal(jscan_string_unescape(&v, buf, sizeof(buf), &n), LL_E_INVAL);
    assert_string_equal(buf, "");
}

/* Walk a whole document with the reader, entering every container. */
static void reader_walk(struct jscan_reader *r, int *values)
{
    enum jscan_type t = jscan_reader_peek(r);

    if (t == JSCAN_OBJECT) {
        struct jscan_value k;
        if (!jscan_reader_enter(r))
            return;
        while (jscan_reader_next_member(r, &k)) {
            assert_int_equal(k.type, JSCAN_STRING);
            reader_walk(r, values);
        }
    } else if (t == JSCAN_ARRAY) {
        if (!jscan_reader_enter(r))
            return;
        while (jscan_reader_next_element(r))
            reader_walk(r, values);
    } else {
        struct jscan_value v;
        if (jscan_reader_value(r, &v)) {
            assert_int_equal(v.type, t);
            (*values)++;
        }
    }
}

/* The reader, entering everything or skipping everything, accepts exactly
 * what the validator accepts. */
/* check(doc, valid, ud) on every document of valid_docs (valid 1), then
 * of invalid_docs (valid 0). */
static void for_every_doc(void (*check)(const struct vec *doc, int valid, void *ud), void *ud)
{
    for (size_t i = 0; i < LL_ARRAY_LEN(valid_docs); i++)
        check(&valid_docs[i], 1, ud);
    for (size_t i = 0; i < LL_ARRAY_LEN(invalid_docs); i++)
        check(&invalid_docs[i], 0, ud);
}

/* Walk doc entering everything, then skip it whole: both must end as the
 * validator does. *ud counts the scalars walked. */
static void reader_agrees(const struct vec *doc, int valid, void *ud)
{
    struct jscan_reader r;
    int want = valid ? 0 : LL_E_PROTO;
    jscan_reader_init(&r, doc->s, doc->len, JSCAN_DEFAULT_DEPTH);
    reader_walk(&r, ud);
    if (jscan_reader_finish(&r) != want)
        fail_msg("reader walk of <%s>: expected %d", doc->s, want);
    jscan_reader_init(&r, doc->s, doc->len, JSCAN_DEFAULT_DEPTH);
    jscan_reader_value(&r, NULL);
    if (jscan_reader_finish(&r) != want)
        fail_msg("reader skip of <%s>: expected %d", doc->s, want);
}

static void test_reader_agrees(void **state)
{
    struct jscan_reader r;
    int values = 0;

    for_every_doc(reader_agrees, &values);
    /* {"a":{"b":[null,true,false,-1.25e-3,"x"]}} has 5 scalars. */
    values = 0;
    const char doc[] = "{\"a\":{\"b\":[null,true,false,-1.25e-3,\"x\"]},\"c\":[]}";
    jscan_reader_init(&r, doc, sizeof(doc) - 1, 3);
    reader_walk(&r, &values);
    assert_int_equal(jscan_reader_finish(&r), 0);
    assert_int_equal(values, 5);
    /* Depth counts entered containers and skipped ones alike. */
    jscan_reader_init(&r, doc, sizeof(doc) - 1, 2);
    reader_walk(&r, &values);
    assert_int_equal(jscan_reader_finish(&r), LL_E_PROTO);
    jscan_reader_init(&r, doc, sizeof(doc) - 1, 0);
    assert_int_equal(jscan_reader_finish(&r), LL_E_INVAL);
    /* Escaped keys are flagged. */
    const char esc[] = "{\"a\\u0062\":1,\"c\":2}";
    jscan_reader_init(&r, esc, sizeof(esc) - 1, 4);
    struct jscan_value k;
    assert_int_equal(jscan_reader_enter(&r), 1);
    assert_int_equal(jscan_reader_next_member(&r, &k), 1);
    assert_int_equal(r.key_escaped, 1);
    assert_true(jscan_string_equals(&k, "ab", 2));
    jscan_reader_value(&r, NULL);
    assert_int_equal(jscan_reader_next_member(&r, &k), 1);
    assert_int_equal(r.key_escaped, 0);
    jscan_reader_value(&r, NULL);
    assert_int_equal(jscan_reader_next_member(&r, &k), 0);
    assert_int_equal(jscan_reader_finish(&r), 0);
}

/* The raw scanners agree with the validator: a valid document's value
 * ends exactly where the validator's root does, an invalid one is refused
 * or leaves bytes behind. */
static int is_json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* A valid doc's scanned value ends where the validator's root does; an
 * invalid one is refused or leaves more than white space behind. */
static void scan_agrees(const struct vec *doc, int valid, void *ud)
{
    (void)ud;
    struct jscan_value root;
    const char *p = doc->s, *end = doc->s + doc->len;
    while (p < end && is_json_space(*p))
        p++;
    const char *q = jscan_scan_value(p, end, JSCAN_DEFAULT_DEPTH);
    const char *t = q;
    while (t && t < end && is_json_space(*t))
        t++;
    if (valid) {
        assert_int_equal(jscan_validate(doc->s, doc->len, JSCAN_DEFAULT_DEPTH, &root), 0);
        if (q != root.ptr + root.len)
            fail_msg("scan of valid <%s> ends at %td", doc->s, q ? q - p : -1);
    } else if (q && t == end) {
        fail_msg("scan of invalid <%s> accepted it", doc->s);
    }
}

static void test_scan(void **state)
{
    int escaped = 7;

    for_every_doc(scan_agrees, NULL);
    /* Only the value is looked at, not what follows it. */
    const char two[] = "{\"a\":[1,\"x\"]} junk";
    assert_ptr_equal(jscan_scan_value(two, two + sizeof(two) - 1, 2), two + 13);
    /* Depth: 0 admits scalars only; out of range and empty input fail. */
    assert_ptr_equal(jscan_scan_value(two, two + sizeof(two) - 1, 1), NULL);
    const char arr[] = "[]", num[] = "12";
    assert_ptr_equal(jscan_scan_value(arr, arr + 2, 0), NULL);
    assert_ptr_equal(jscan_scan_value(num, num + 2, 0), num + 2);
    assert_ptr_equal(jscan_scan_value(num, num + 2, JSCAN_DEPTH_LIMIT + 1), NULL);
    assert_ptr_equal(jscan_scan_value(num, num, 1), NULL);

    /* Strings: the end, the escape flag (reset when there is none), and a
     * start in the middle of an already checked plain prefix. */
    const char str[] = "\"abc\\n\xC3\xA9\",";
    const char *end = str + sizeof(str) - 1;
    assert_ptr_equal(jscan_scan_string(str, end, &escaped), end - 1);
    assert_int_equal(escaped, 1);
    const char plain[] = "\"abcdefghijklmnopqrstuvwxyz\"";
    assert_ptr_equal(jscan_scan_string(plain, plain + sizeof(plain) - 1, &escaped),
                     plain + sizeof(plain) - 1);
    assert_int_equal(escaped, 0);
    assert_ptr_equal(jscan_scan_string(plain + 20, plain + sizeof(plain) - 1, &escaped),
                     plain + sizeof(plain) - 1);
    assert_ptr_equal(jscan_scan_string(plain, plain + sizeof(plain) - 2, &escaped), NULL);
    const char ctl[] = "\"a\x01\"";
    assert_ptr_equal(jscan_scan_string(ctl, ctl + 4, &escaped), NULL);
}

UNIT_TESTS(test_validate_vectors, test_validate_root, test_depth, test_iterate, test_lookup,
           test_numbers, test_strings, test_reader_agrees, test_scan)
