/* jscan.h: a small, non-allocating JSON validator and scanner.
 *
 * This is the per-event JSON reader of the streaming decoder. jansson builds
 * a tree and allocates per value; on the hot path (one JSON document per SSE
 * event, thousands of events per second per worker) we only need to check
 * that a document is valid and read a handful of fields from it. jscan does
 * that with views into the caller's text and no allocation at all.
 *
 * The usage is two-step:
 *
 *   1. jscan_validate() checks a whole document against RFC 8259 (with a
 *      nesting limit, UTF-8 checked, unpaired \u surrogates rejected) in one
 *      linear pass and returns a view of the top-level value.
 *   2. The other functions walk values of a validated document: iterate an
 *      object's members or an array's elements, look a value up by key or
 *      path, decode numbers, compare or unescape strings. They are cheap
 *      because they may assume validity; on text that did not validate they
 *      stay inside the given bounds but their answers mean nothing.
 *
 * A value is a view: `ptr`/`len` span the value's JSON text exactly (a
 * string includes its quotes, an object its braces) inside the caller's
 * document, which must outlive it. Nothing here keeps a pointer after it
 * returns except through the views and iterators the caller holds. */
#ifndef LL_JSCAN_H
#define LL_JSCAN_H

#include <stddef.h>
#include <stdint.h>

/* The nesting depth a caller should use unless it has a reason not to. */
#define JSCAN_DEFAULT_DEPTH 64
/* The largest nesting depth jscan_validate accepts as a limit. */
#define JSCAN_DEPTH_LIMIT 1024

enum jscan_type {
    JSCAN_INVALID = 0,
    JSCAN_NULL,
    JSCAN_FALSE,
    JSCAN_TRUE,
    JSCAN_NUMBER,
    JSCAN_STRING,
    JSCAN_ARRAY,
    JSCAN_OBJECT,
};

/* A view of one JSON value: its type and its exact text in the document. */
struct jscan_value {
    enum jscan_type type;
    const char *ptr;
    size_t len;                  /* bytes of JSON text, quotes and brackets included */
};

/* A cursor over the members of an object or the elements of an array.
 * Embedded, caller-owned, nothing to free. */
struct jscan_iter {
    const char *p;
    const char *end;
    enum jscan_type type;        /* JSCAN_OBJECT or JSCAN_ARRAY */
};

/* Check that doc[0..len) is exactly one JSON text (RFC 8259): one value with
 * optional surrounding whitespace, valid UTF-8, no unpaired \u surrogate, at
 * most max_depth nested arrays/objects (1..JSCAN_DEPTH_LIMIT). doc need not
 * be NUL-terminated. On success fills *root (may be NULL) with the top-level
 * value and returns 0. Returns LL_E_PROTO for invalid JSON (including too
 * deep), LL_E_INVAL for a max_depth out of range. Linear in len; allocates
 * nothing; uses about max_depth/8 bytes of stack. */
int jscan_validate(const char *doc, size_t len, unsigned max_depth,
                   struct jscan_value *root);

/* Start iterating container v (an object or array from a validated
 * document). Returns 0, or LL_E_INVAL when v is not an object or array. */
int jscan_iter_init(struct jscan_iter *it, const struct jscan_value *v);

/* The next member of an object: its key (a JSCAN_STRING view, quotes
 * included) and its value. Returns 1 when one was produced, 0 at the end (or
 * when the iterator is over an array). */
int jscan_iter_next_member(struct jscan_iter *it, struct jscan_value *key,
                           struct jscan_value *val);

/* The next element of an array. Returns 1 or 0 at the end (or when the
 * iterator is over an object). */
int jscan_iter_next_element(struct jscan_iter *it, struct jscan_value *val);

/* Find the member of object obj whose decoded key equals key[0..key_len)
 * (escapes in the document's key are decoded before comparing). The first
 * match wins when a key repeats. Returns 0 and fills *out, or LL_E_NOTFOUND
 * (also when obj is not an object). Linear in obj->len. */
int jscan_object_get(const struct jscan_value *obj, const char *key,
                     size_t key_len, struct jscan_value *out);

/* Follow a dotted path from v: each segment is an object key, or, where the
 * current value is an array, a decimal index ("choices.0.delta.content",
 * "usage.prompt_tokens_details.cached_tokens"). Keys containing '.' cannot
 * be named this way (use jscan_object_get). path is NUL-terminated; the
 * empty path names v itself. Returns 0 and fills *out, or LL_E_NOTFOUND. */
int jscan_path_get(const struct jscan_value *v, const char *path,
                   struct jscan_value *out);

/* Decode a JSCAN_NUMBER that is written as an integer (no fraction, no
 * exponent) into *out. Returns 0; LL_E_RANGE when it has a fraction or
 * exponent or does not fit in int64_t; LL_E_INVAL when v is not a number. */
int jscan_number_int64(const struct jscan_value *v, int64_t *out);

/* Decode any JSCAN_NUMBER into *out with strtod (correctly rounded; the C
 * locale's decimal point is assumed, which is llmload's). Returns 0;
 * LL_E_RANGE when the magnitude overflows a double or the number's text is
 * longer than 320 bytes; LL_E_INVAL when v is not a number. Values that
 * underflow come back as 0 or a denormal, without error. */
int jscan_number_double(const struct jscan_value *v, double *out);

/* The number of bytes the JSCAN_STRING v decodes to in UTF-8 (escapes
 * resolved, a surrogate pair counted as its 4-byte character). 0 for a
 * value that is not a string. Linear, no allocation. */
size_t jscan_string_decoded_len(const struct jscan_value *v);

/* 1 when JSCAN_STRING v decodes exactly to s[0..len), else 0 (also for a
 * value that is not a string). */
int jscan_string_equals(const struct jscan_value *v, const char *s, size_t len);

/* Unescape JSCAN_STRING v into buf (cap >= 1 bytes), always NUL-terminated.
 * When the decoded string does not fit in cap - 1 bytes it is truncated at a
 * UTF-8 character boundary. *out_len (may be NULL) gets the bytes written,
 * NUL excluded. Returns 0, LL_E_RANGE when truncated (buf still holds the
 * truncated string), or LL_E_INVAL when v is not a string or cap is 0. A
 * \u0000 escape is written as a NUL byte, so check *out_len rather than
 * strlen when that matters. */
int jscan_string_unescape(const struct jscan_value *v, char *buf, size_t cap,
                          size_t *out_len);

/* ---- the single-pass reader ----------------------------------------------
 *
 * When a caller reads a few fields from each of many small documents (the
 * per-event hot path), validating first and walking after touches every
 * byte twice or more. The reader does both in one pass: the caller walks
 * the document with the calls below, and every byte it does not descend
 * into is validated as it is skipped. The document is valid exactly when
 * the walk ends with jscan_reader_finish() returning 0.
 *
 * Protocol: after jscan_reader_next_member() or _next_element() returns 1,
 * consume the value exactly once, with jscan_reader_value() (any value,
 * validated and returned as a view) or jscan_reader_enter() (an object or
 * array, then iterate it to its end, when next_* returns 0). The root value
 * is consumed the same way. After the first error every call returns 0 (or
 * JSCAN_INVALID) and jscan_reader_finish() reports it. Nothing allocates. */
struct jscan_reader {
    const char *p;
    const char *end;
    unsigned depth;              /* containers entered and not yet left */
    unsigned max_depth;
    int first;                   /* just entered: no comma before the next item */
    int key_escaped;             /* the last key read held an escape */
    int error;                   /* 0, or LL_E_PROTO / LL_E_INVAL once failed */
};

/* Start reading doc[0..len) with at most max_depth (1..JSCAN_DEPTH_LIMIT)
 * nested containers; an out-of-range max_depth makes finish return
 * LL_E_INVAL. */
void jscan_reader_init(struct jscan_reader *r, const char *doc, size_t len,
                       unsigned max_depth);

/* The type of the value to be consumed next (from its first byte; not yet
 * validated), or JSCAN_INVALID at the end or after an error. */
enum jscan_type jscan_reader_peek(struct jscan_reader *r);

/* Validate and consume the next value; *out (may be NULL) gets its view.
 * Returns 1, or 0 on invalid text. */
int jscan_reader_value(struct jscan_reader *r, struct jscan_value *out);

/* Consume the opening bracket of the next value, an object or an array.
 * Returns 1, or 0 when it is neither (an error) or too deep. */
int jscan_reader_enter(struct jscan_reader *r);

/* Inside an entered object: read the next key (validated; *key may be NULL)
 * and its colon, and return 1; or consume the closing brace and return 0
 * (also on error). */
int jscan_reader_next_member(struct jscan_reader *r, struct jscan_value *key);

/* Inside an entered array: position at the next element and return 1; or
 * consume the closing bracket and return 0 (also on error). */
int jscan_reader_next_element(struct jscan_reader *r);

/* After the root value: 0 when the whole document was valid (every
 * container closed, only whitespace after the root), else LL_E_PROTO (or
 * LL_E_INVAL for a bad max_depth). */
int jscan_reader_finish(struct jscan_reader *r);

/* ---- raw scanning, for hand-written decoders -----------------------------
 *
 * The reader above costs a function call or two per token. A decoder that
 * walks a fixed shape itself (openai.c) instead keeps its own pointer and
 * calls these two for the parts it does not read byte by byte: each
 * validates exactly one value, with the same rules as jscan_validate(), and
 * returns where it ends. Nothing allocates; nothing reads outside
 * [p, end). */

/* Validate the one value starting exactly at p (no leading whitespace)
 * with at most max_depth (0..JSCAN_DEPTH_LIMIT; 0 admits no object or
 * array) nested containers inside it. Returns the pointer just past the
 * value, or NULL when the text there is not a valid value (or p >= end, or
 * max_depth is out of range). What follows the value is not looked at. */
const char *jscan_scan_value(const char *p, const char *end, unsigned max_depth);

/* Validate the string whose opening quote is at p (p < end and *p == '"'
 * are the caller's to check; the byte at p is not read, so a caller that
 * has already checked a plain prefix of the string may pass the prefix's
 * last byte instead). Returns the pointer just past the closing quote, or
 * NULL when the string is invalid or unterminated. *escaped gets 1 when
 * the string (from p on) holds a backslash escape, else 0: without one,
 * its decoded text is exactly the bytes between the quotes. */
const char *jscan_scan_string(const char *p, const char *end, int *escaped);

/* The type a value's first byte announces: JSCAN_INVALID for a byte no
 * value starts with. */
static inline enum jscan_type jscan_type_of(unsigned char c)
{
    switch (c) {
    case '{': return JSCAN_OBJECT;
    case '[': return JSCAN_ARRAY;
    case '"': return JSCAN_STRING;
    case 't': return JSCAN_TRUE;
    case 'f': return JSCAN_FALSE;
    case 'n': return JSCAN_NULL;
    default: return c == '-' || (c >= '0' && c <= '9') ? JSCAN_NUMBER : JSCAN_INVALID;
    }
}

#endif
