/* tokenizer.c: the sim's tokenizers (words in 4-byte pieces, or in 2-byte
 * pieces with special tokens), their cumulative block hashes, /tokenize's
 * IDs, and the synthetic output words. See tokenizer.h. */
#include "workload/tokenizer.h"

#include <string.h>

#include "util/rng.h"

#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME  1099511628211ULL
#define TOKEN_PIECE_BYTES 4
#define BYTES2_PIECE_BYTES 2
/* Header byte of a special token in the hash chain (text tokens use 1-4
 * and 9-12, ID tokens 0x20). */
#define SPECIAL_TOKEN_HEADER 0x40
/* Header byte of an image token in the hash chain. */
#define IMAGE_TOKEN_HEADER 0x50
/* Numbers of the special tokens: BOS, the template's per-message tokens
 * (message token j is 2 + j), the reply opener's (9 + j). */
#define SPECIAL_BOS 1
#define SPECIAL_MESSAGE_BASE 2
#define SPECIAL_REPLY_BASE 9

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

int tokenizer_kind_parse(const char *name, enum tokenizer_kind *out)
{
    if (strcmp(name, "words") == 0)
        *out = TOKENIZER_WORDS;
    else if (strcmp(name, "bytes2") == 0)
        *out = TOKENIZER_BYTES2;
    else
        return -1;
    return 0;
}

const char *tokenizer_kind_name(enum tokenizer_kind k)
{
    return k == TOKENIZER_BYTES2 ? "bytes2" : "words";
}

static size_t piece_bytes(enum tokenizer_kind k)
{
    return k == TOKENIZER_BYTES2 ? BYTES2_PIECE_BYTES : TOKEN_PIECE_BYTES;
}

/* Tokens of text[0, len) when a word of n bytes is ceil(n / piece). */
static uint64_t count_pieces(const char *text, size_t len, size_t piece)
{
    uint64_t total = 0;
    size_t i = 0;

    while (i < len) {
        while (i < len && is_space((unsigned char)text[i]))
            i++;
        size_t start = i;
        while (i < len && !is_space((unsigned char)text[i]))
            i++;
        if (i > start)
            total += (i - start + piece - 1) / piece;
    }
    return total;
}

static uint32_t saturate(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

uint32_t tokenizer_count(const char *text, size_t len)
{
    return saturate(count_pieces(text, len, TOKEN_PIECE_BYTES));
}

uint32_t tokenizer_count_text(enum tokenizer_kind k, const char *text, size_t len)
{
    return saturate(count_pieces(text, len, piece_bytes(k)));
}

uint32_t tokenizer_prompt_count(enum tokenizer_kind k, const struct tokenizer_prompt *p)
{
    uint64_t total = count_pieces(p->text, p->len, piece_bytes(k));
    if (k == TOKENIZER_BYTES2) {
        if (p->n_msgs == 0)
            total += TOKENIZER_BYTES2_BOS_TOKENS;
        else
            total += (uint64_t)TOKENIZER_BYTES2_MESSAGE_TOKENS * p->n_msgs +
                     TOKENIZER_BYTES2_REPLY_TOKENS;
    }
    return saturate(total);
}

static uint64_t fnv_byte(uint64_t h, unsigned char b)
{
    return (h ^ b) * FNV_PRIME;
}

/* The running state of a block-hash walk. */
struct hash_walk {
    uint64_t h;
    uint32_t block_tokens;          /* >= 1 */
    uint32_t in_block;              /* tokens since the last full block */
    uint32_t written;
    uint32_t max_out;               /* >= 1 */
    uint64_t *out;
};

/* One token ended: close a full block. Returns 1 when out is full. */
static int walk_token_end(struct hash_walk *w)
{
    if (++w->in_block == w->block_tokens) {
        w->in_block = 0;
        w->out[w->written++] = w->h;
        if (w->written == w->max_out)
            return 1;
    }
    return 0;
}

/* A walk over the text tokens of text[0, len): runs of at most piece bytes
 * of its words, white space between words dropped. */
struct pieces {
    const char *text;
    size_t len;
    size_t piece; /* the longest token, in bytes (>= 1) */
    size_t at;    /* where the next token's search starts */
    int in_word;  /* a token was returned: only white space opens a word */
};

/* The next text token: *s gets its start and *word_start whether it opens
 * a word. Returns its length (1..piece), or 0 at the end of the text. */
static size_t pieces_next(struct pieces *it, const char **s, int *word_start)
{
    size_t i = it->at, n = 0;

    *word_start = !it->in_word;
    while (i < it->len && is_space((unsigned char)it->text[i])) {
        i++;
        *word_start = 1;
    }
    while (n < it->piece && i + n < it->len && !is_space((unsigned char)it->text[i + n]))
        n++;
    *s = it->text + i;
    it->at = i + n;
    it->in_word = 1;
    return n;
}

/* Each text token is hashed as one header byte, (word_start << 3) | length,
 * then its bytes. The header makes the encoding prefix-free, so token
 * boundaries and word starts are part of the hash. */
static uint64_t hash_piece(uint64_t h, const char *s, size_t n, int word_start)
{
    h = fnv_byte(h, (unsigned char)((word_start << 3) | (int)n));
    for (size_t k = 0; k < n; k++)
        h = fnv_byte(h, (unsigned char)s[k]);
    return h;
}

/* Hash each text token into the walk. Returns 1 when out is full. */
static int walk_text(struct hash_walk *w, const char *text, size_t len, size_t piece)
{
    struct pieces it = {text, len, piece, 0, 0};
    const char *s;
    size_t n;
    int word_start;

    while ((n = pieces_next(&it, &s, &word_start)) > 0) {
        w->h = hash_piece(w->h, s, n, word_start);
        if (walk_token_end(w))
            return 1;
    }
    return 0;
}

/* A special token number: header 0x40, then the number. Returns 1 when
 * out is full. */
static int walk_special(struct hash_walk *w, unsigned number)
{
    w->h = fnv_byte(w->h, SPECIAL_TOKEN_HEADER);
    w->h = fnv_byte(w->h, (unsigned char)number);
    return walk_token_end(w);
}

uint32_t tokenizer_block_hashes(const char *text, size_t len, uint32_t block_tokens,
                                uint64_t *out, uint32_t max_out)
{
    struct hash_walk w = {FNV_OFFSET, block_tokens, 0, 0, max_out, out};

    if (block_tokens == 0 || max_out == 0)
        return 0;
    walk_text(&w, text, len, TOKEN_PIECE_BYTES);
    return w.written;
}

/* Each of im's tokens: the header byte and the image's hash. Returns 1
 * when out is full. */
static int walk_image(struct hash_walk *w, const struct tokenizer_image *im)
{
    for (uint32_t t = 0; t < im->tokens; t++) {
        w->h = fnv_byte(w->h, IMAGE_TOKEN_HEADER);
        for (int k = 0; k < 8; k++)
            w->h = fnv_byte(w->h, (unsigned char)(im->hash >> (8 * k)));
        if (walk_token_end(w))
            return 1;
    }
    return 0;
}

/* The text [start, end) of p with the images that stand in it (those from
 * *next_img whose offset is at most end), each before the text after its
 * offset. Returns 1 when out is full. */
static int walk_span(struct hash_walk *w, const struct tokenizer_prompt *p, size_t *next_img,
                     size_t start, size_t end, size_t piece)
{
    size_t from = start;
    while (*next_img < p->n_images && p->images[*next_img].at <= end) {
        const struct tokenizer_image *im = &p->images[(*next_img)++];
        size_t at = im->at < from ? from : im->at;
        if (walk_text(w, p->text + from, at - from, piece) || walk_image(w, im))
            return 1;
        from = at;
    }
    return walk_text(w, p->text + from, end - from, piece);
}

uint32_t tokenizer_prompt_block_hashes(enum tokenizer_kind k, const struct tokenizer_prompt *p,
                                       uint32_t block_tokens, uint64_t *out, uint32_t max_out)
{
    struct hash_walk w = {FNV_OFFSET, block_tokens, 0, 0, max_out, out};
    size_t piece = piece_bytes(k), next_img = 0;

    if (k != TOKENIZER_BYTES2 && p->n_images == 0)
        return tokenizer_block_hashes(p->text, p->len, block_tokens, out, max_out);
    if (block_tokens == 0 || max_out == 0)
        return 0;
    if (k != TOKENIZER_BYTES2) {
        walk_span(&w, p, &next_img, 0, p->len, piece);
        return w.written;
    }
    if (p->n_msgs == 0) {
        if (!walk_special(&w, SPECIAL_BOS))
            walk_span(&w, p, &next_img, 0, p->len, piece);
        return w.written;
    }
    size_t start = 0;
    for (size_t m = 0; m < p->n_msgs; m++) {
        size_t end = p->msg_ends[m];
        if (end > p->len)
            end = p->len;
        if (end < start)
            end = start;
        for (unsigned j = 0; j < TOKENIZER_BYTES2_MESSAGE_TOKENS; j++)
            if (walk_special(&w, SPECIAL_MESSAGE_BASE + j))
                return w.written;
        if (walk_span(&w, p, &next_img, start, end, piece))
            return w.written;
        start = end;
    }
    for (unsigned j = 0; j < TOKENIZER_BYTES2_REPLY_TOKENS; j++)
        if (walk_special(&w, SPECIAL_REPLY_BASE + j))
            break;
    return w.written;
}

uint64_t tokenizer_image_hash(const char *p, size_t n)
{
    /* 8 bytes a step through a multiply-xorshift, then the tail and the
     * length: not FNV's byte at a time, as an image is tens to hundreds of
     * KB and the sim hashes it on its one thread. */
    uint64_t h = FNV_OFFSET ^ (n * 0x9E3779B97F4A7C15ULL);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        h = (h ^ v) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = fnv_byte(h, (unsigned char)p[i]);
    return rng_mix64(h);
}

uint32_t tokenizer_ids(enum tokenizer_kind k, const char *text, size_t len, int add_special,
                       uint32_t *out, uint32_t max_out)
{
    const uint32_t span = TOKENIZER_TEXT_ID_MAX - TOKENIZER_TEXT_ID_MIN + 1;
    struct pieces it = {text, len, piece_bytes(k), 0, 0};
    const char *s;
    size_t m;
    int word_start;
    uint64_t n = 0;

    if (add_special && k == TOKENIZER_BYTES2) {
        if (n < max_out)
            out[n] = TOKENIZER_BOS_ID;
        n++;
    }
    while ((m = pieces_next(&it, &s, &word_start)) > 0) {
        uint64_t h = hash_piece(FNV_OFFSET, s, m, word_start);
        if (n < max_out)
            out[n] = TOKENIZER_TEXT_ID_MIN + (uint32_t)(h % span);
        n++;
    }
    return saturate(n);
}

/* Header byte of an ID token: text tokens' headers are 1-4 and 9-12. */
#define ID_TOKEN_HEADER 0x20

uint32_t tokenizer_block_hashes_ids(const uint32_t *ids, size_t n, uint32_t block_tokens,
                                    uint64_t *out, uint32_t max_out)
{
    uint64_t h = FNV_OFFSET;
    uint32_t in_block = 0, written = 0;

    if (block_tokens == 0 || max_out == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = ids[i];
        h = fnv_byte(h, ID_TOKEN_HEADER);
        for (int k = 0; k < 4; k++)
            h = fnv_byte(h, (unsigned char)(id >> (8 * k)));
        if (++in_block == block_tokens) {
            in_block = 0;
            out[written++] = h;
            if (written == max_out)
                break;
        }
    }
    return written;
}

size_t tokenizer_output_token(uint64_t req_seed, uint32_t index, char *buf, size_t len)
{
    uint64_t r = rng_mix64(req_seed ^ rng_mix64((uint64_t)index + 0x9e3779b97f4a7c15ULL));
    size_t letters = 1 + (size_t)(r & 3);
    size_t n = 1 + letters;

    if (buf == NULL || len < n)
        return 0;
    r >>= 2;
    buf[0] = ' ';
    for (size_t k = 0; k < letters; k++) {
        buf[1 + k] = (char)('a' + (int)(r % 26));
        r /= 26;
    }
    if (len > n)
        buf[n] = '\0';
    return n;
}
