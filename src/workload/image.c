/* image.c: synthetic images, their encoding, and reading an encoded
 * image's size back (image.h). */
#include "workload/image.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "util/rng.h"
#include "util/util.h"

/* Salt of an image's tag, so image pixels share no bits with prompt text
 * drawn from the same seed. */
#define IMAGE_TAG_SALT 0x696D616765ULL
/* Salt of a prefix group's image tags (image_group_tag), so a group's
 * images never share their pixels with any request's own. */
#define IMAGE_GROUP_TAG_SALT 0x6772696D67ULL
/* Side of a mosaic tile, pixels. */
#define IMAGE_TILE_PX 16
/* JPEG quality: a camera's default. */
#define IMAGE_JPEG_QUALITY 85
/* Base64 bytes image_header_size decodes at most (64 KiB of image). */
#define IMAGE_HEADER_B64_MAX (64 * 1024 / 3 * 4)

/* ---- sizes and formats ------------------------------------------------- */

/* A side: digits only, 1 .. IMAGE_SIDE_MAX. Advances *s. */
static int parse_side(const char **s, uint32_t *out)
{
    uint64_t v;
    if (ll_scan_u64(s, &v) < 0 || v == 0 || v > IMAGE_SIDE_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int image_sizes_parse(const char *s, struct image_cfg *c, char *err, size_t errlen)
{
    struct image_size sizes[IMAGE_SIZES_MAX];
    size_t n = 0;
    double total = 0;
    const char *p = s;
    for (;;) {
        const char *item = p;
        size_t item_len = strcspn(item, ",");
        struct image_size z = {.weight = 1};
        if (n == IMAGE_SIZES_MAX) {
            snprintf(err, errlen, "more than %d sizes in \"%s\"", IMAGE_SIZES_MAX, s);
            return LL_E_INVAL;
        }
        if (parse_side(&p, &z.w) < 0 || (*p != 'x' && *p != 'X') || (p++, 0) ||
            parse_side(&p, &z.h) < 0)
            goto bad;
        if (*p == ':') {
            char *end;
            errno = 0;
            z.weight = strtod(p + 1, &end);
            if (end == p + 1 || errno || !(z.weight > 0) || !isfinite(z.weight))
                goto bad;
            p = end;
        }
        if (*p != ',' && *p != '\0')
            goto bad;
        sizes[n++] = z;
        total += z.weight;
        if (*p == '\0')
            break;
        p++;
        continue;
    bad:
        snprintf(err, errlen,
                 "expected WxH with sides 1 to %d, optionally :WEIGHT (a positive number), "
                 "got \"%.*s\"",
                 IMAGE_SIDE_MAX, (int)LL_MIN(item_len, 64u), item);
        return LL_E_INVAL;
    }
    memcpy(c->sizes, sizes, n * sizeof sizes[0]);
    c->n_sizes = n;
    c->total_weight = total;
    return 0;
}

int image_format_parse(const char *s, enum image_format *out, char *err, size_t errlen)
{
    if (strcmp(s, "png") == 0) {
        *out = IMAGE_PNG;
        return 0;
    }
    if (strcmp(s, "jpeg") == 0 || strcmp(s, "jpg") == 0) {
        *out = IMAGE_JPEG;
        return 0;
    }
    snprintf(err, errlen, "expected png or jpeg, got \"%.40s\"", s);
    return LL_E_INVAL;
}

int image_cfg_parse(const char *const what[3], const char *count, const char *sizes,
                    const char *format, struct image_cfg *c, char *err, size_t errlen)
{
    char why[256];
    memset(c, 0, sizeof *c);
    if (dist_parse(count, DIST_UNIT_NONE, &c->count, why, sizeof why) != 0 ||
        dist_require_nonneg(&c->count, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", what[0], why);
        return LL_E_INVAL;
    }
    double most = c->count.kind == DIST_FIXED     ? c->count.a
                  : c->count.kind == DIST_UNIFORM ? c->count.b
                                                  : INFINITY;
    if (c->count.has_max && c->count.max < most)
        most = c->count.max;
    if (!(most <= IMAGE_PER_REQUEST_MAX)) {
        snprintf(err, errlen,
                 "%s: at most %d images per request: give a fixed count, uniform:A,B with "
                 "B <= %d, or a max= (got \"%.60s\")",
                 what[0], IMAGE_PER_REQUEST_MAX, IMAGE_PER_REQUEST_MAX, count);
        return LL_E_INVAL;
    }
    if (image_sizes_parse(sizes ? sizes : "512x512", c, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", what[1], why);
        return LL_E_INVAL;
    }
    if (format && image_format_parse(format, &c->format, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", what[2], why);
        return LL_E_INVAL;
    }
    c->set = 1;
    return 0;
}

const char *image_format_name(enum image_format f)
{
    return f == IMAGE_JPEG ? "jpeg" : "png";
}

const char *image_format_mime(enum image_format f)
{
    return f == IMAGE_JPEG ? "image/jpeg" : "image/png";
}

void image_pick_size(const struct image_cfg *c, uint64_t draw, uint32_t k, uint32_t *w, uint32_t *h)
{
    size_t i = 0;
    if (c->n_sizes > 1) {
        uint64_t x = rng_mix64(draw + (uint64_t)k * 0x9E3779B97F4A7C15ULL);
        double u = (double)(x >> 11) * 0x1.0p-53 * c->total_weight;
        while (i + 1 < c->n_sizes && u >= c->sizes[i].weight) {
            u -= c->sizes[i].weight;
            i++;
        }
    }
    *w = c->sizes[i].w;
    *h = c->sizes[i].h;
}

uint32_t image_tokens(uint32_t w, uint32_t h)
{
    uint64_t t = (uint64_t)((w + IMAGE_PATCH_PX - 1) / IMAGE_PATCH_PX) *
                 ((h + IMAGE_PATCH_PX - 1) / IMAGE_PATCH_PX);
    return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/* ---- pixels and encoders ----------------------------------------------- */

void image_buf_free(struct image_buf *b)
{
    if (!b)
        return;
    free(b->data);
    free(b->pixels);
    *b = (struct image_buf){0};
}

uint64_t image_tag(uint64_t seed, uint64_t index, uint32_t k)
{
    return rng_mix64(rng_mix64(seed ^ IMAGE_TAG_SALT) + index * 0x9E3779B97F4A7C15ULL +
                     (uint64_t)k * 0xD1B54A32D192ED03ULL);
}

uint64_t image_group_tag(uint64_t seed, uint64_t group, uint32_t k)
{
    return rng_mix64(rng_mix64(seed ^ IMAGE_GROUP_TAG_SALT) + group * 0x9E3779B97F4A7C15ULL +
                     (uint64_t)k * 0xD1B54A32D192ED03ULL);
}

/* Fill b->pixels with the image of tag: each 16x16 tile one colour, a
 * hash of the tag and the tile, blended with a gradient across the image,
 * so the picture has structure (it compresses like a graphic, not like
 * noise) and no two tags share their pixels. */
static void image_paint(uint64_t tag, uint32_t w, uint32_t h, struct image_buf *b)
{
    size_t row = (size_t)w * 3;
    b->pixels = ll_grow(b->pixels, &b->pixels_cap, row * h, 4096);
    uint32_t tiles_x = (w + IMAGE_TILE_PX - 1) / IMAGE_TILE_PX;
    for (uint32_t y = 0; y < h; y++) {
        uint8_t *px = b->pixels + row * y;
        if (y % IMAGE_TILE_PX != 0) { /* the tile row above, again */
            memcpy(px, px - row, row);
            continue;
        }
        uint32_t ty = y / IMAGE_TILE_PX;
        for (uint32_t tx = 0; tx < tiles_x; tx++) {
            uint64_t c = rng_mix64(tag + ((uint64_t)ty << 32 | tx));
            uint8_t rgb[3] = {
                (uint8_t)(((c & 0x7F) + (uint64_t)tx * 128 / tiles_x)),
                (uint8_t)(((c >> 8) & 0x7F) + (uint64_t)y * 128 / h),
                (uint8_t)((c >> 16) & 0xFF),
            };
            uint32_t x_end = LL_MIN((tx + 1) * IMAGE_TILE_PX, w);
            for (uint32_t x = tx * IMAGE_TILE_PX; x < x_end; x++)
                memcpy(px + (size_t)x * 3, rgb, 3);
        }
    }
}

/* libpng's write callback: append to the image_buf. */
static void png_put(png_structp png, png_bytep data, size_t n)
{
    struct image_buf *b = png_get_io_ptr(png);
    b->data = ll_grow(b->data, &b->cap, b->len + n, 4096);
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

static void png_flush_none(png_structp png)
{
    (void)png;
}

/* Encode b->pixels as PNG. The Up filter turns a row that repeats the one
 * above (15 of every 16 here) into zeros, and zlib's fastest level with
 * its run-length strategy writes runs of zeros at memory speed: a third of
 * the time of libpng's simplified writer (no filter, level 3) for a file
 * of about the same size (bench/image.sh). libpng reports errors by
 * longjmp, back here. */
static int encode_png(uint32_t w, uint32_t h, struct image_buf *b, char *err, size_t errlen)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        snprintf(err, errlen, "PNG encoder: out of memory");
        return LL_E_NOMEM;
    }
    b->len = 0;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        snprintf(err, errlen, "PNG encoder failed on a %ux%u image", w, h);
        return LL_E_INVAL;
    }
    png_set_write_fn(png, b, png_put, png_flush_none);
    png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
    png_set_compression_level(png, 1);
    png_write_info(png, info);
    for (uint32_t y = 0; y < h; y++)
        png_write_row(png, b->pixels + (size_t)y * w * 3);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 0;
}

/* libjpeg reports an error by calling error_exit, which must not return:
 * it jumps back to encode_jpeg with the message kept. */
struct jpeg_err {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
};

static void jpeg_error_jump(j_common_ptr cinfo)
{
    struct jpeg_err *e = (struct jpeg_err *)(void *)cinfo->err;
    cinfo->err->format_message(cinfo, e->msg);
    longjmp(e->jump, 1);
}

static int encode_jpeg(uint32_t w, uint32_t h, struct image_buf *b, char *err, size_t errlen)
{
    struct jpeg_compress_struct c;
    struct jpeg_err e;
    unsigned char *volatile out = NULL;
    unsigned long out_len = 0;
    c.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = jpeg_error_jump;
    if (setjmp(e.jump)) {
        jpeg_destroy_compress(&c);
        free(out);
        snprintf(err, errlen, "JPEG encoder: %s", e.msg);
        return LL_E_INVAL;
    }
    jpeg_create_compress(&c);
    /* libjpeg-turbo's memory destination grows a malloc'd buffer of its own. */
    unsigned char *dst = NULL;
    jpeg_mem_dest(&c, &dst, &out_len);
    c.image_width = w;
    c.image_height = h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, IMAGE_JPEG_QUALITY, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW rowp = b->pixels + (size_t)c.next_scanline * w * 3;
        jpeg_write_scanlines(&c, &rowp, 1);
    }
    jpeg_finish_compress(&c);
    out = dst;
    b->data = ll_grow(b->data, &b->cap, out_len, 4096);
    memcpy(b->data, out, out_len);
    b->len = out_len;
    jpeg_destroy_compress(&c);
    free(out);
    return 0;
}

int image_encode(enum image_format format, uint64_t seed, uint64_t index, uint32_t k, uint32_t w,
                 uint32_t h, struct image_buf *b, char *err, size_t errlen)
{
    return image_encode_tag(format, image_tag(seed, index, k), w, h, b, err, errlen);
}

int image_encode_tag(enum image_format format, uint64_t tag, uint32_t w, uint32_t h,
                     struct image_buf *b, char *err, size_t errlen)
{
    if (w == 0 || h == 0 || w > IMAGE_SIDE_MAX || h > IMAGE_SIDE_MAX) {
        snprintf(err, errlen, "image size %ux%u outside 1 to %d", w, h, IMAGE_SIDE_MAX);
        return LL_E_INVAL;
    }
    image_paint(tag, w, h, b);
    return format == IMAGE_JPEG ? encode_jpeg(w, h, b, err, errlen)
                                : encode_png(w, h, b, err, errlen);
}

/* ---- base64 ------------------------------------------------------------ */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t image_base64_len(size_t n)
{
    return (n + 2) / 3 * 4;
}

size_t image_base64(const uint8_t *src, size_t n, char *dst)
{
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];
        dst[o++] = b64_alphabet[v >> 18];
        dst[o++] = b64_alphabet[(v >> 12) & 63];
        dst[o++] = b64_alphabet[(v >> 6) & 63];
        dst[o++] = b64_alphabet[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)src[i] << 16 | (i + 1 < n ? (uint32_t)src[i + 1] << 8 : 0);
        dst[o++] = b64_alphabet[v >> 18];
        dst[o++] = b64_alphabet[(v >> 12) & 63];
        dst[o++] = i + 1 < n ? b64_alphabet[(v >> 6) & 63] : '=';
        dst[o++] = '=';
    }
    return o;
}

/* ---- reading a size back ----------------------------------------------- */

/* A base64 character's value: its place in the alphabet the encoder
 * writes with (so the two cannot disagree), or -1 when it is not one of
 * the 64. A header reads at most IMAGE_HEADER_B64_MAX of them. */
static int b64_value(unsigned char c)
{
    const char *at = memchr(b64_alphabet, c, sizeof b64_alphabet - 1);
    return at ? (int)(at - b64_alphabet) : -1;
}

/* A base64 reader that decodes on demand, so a header near the start
 * costs only its own bytes whatever the image's size. */
struct b64_reader {
    const char *s;
    size_t len, at; /* base64 characters, and the next to read */
    uint8_t out[3];
    int have, next; /* decoded bytes waiting in out, the next of them */
    int bad;        /* a character outside the alphabet came */
};

/* The next decoded byte, or -1 at the end (or on a bad character). */
static int b64_byte(struct b64_reader *r)
{
    if (r->next < r->have)
        return r->out[r->next++];
    if (r->at + 4 > r->len || r->at >= IMAGE_HEADER_B64_MAX)
        return -1;
    int v[4], n = 3;
    for (int i = 0; i < 4; i++) {
        unsigned char c = (unsigned char)r->s[r->at + (size_t)i];
        v[i] = b64_value(c);
        if (v[i] < 0 && c == '=' && i >= 2) {
            v[i] = 0;
            n = n < i - 1 ? n : i - 1;
        } else if (v[i] < 0 || n < 3) {
            r->bad = 1;
            return -1;
        }
    }
    r->at += 4;
    if (n < 3)
        r->len = r->at; /* padding ends the data */
    uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
    r->out[0] = (uint8_t)(x >> 16);
    r->out[1] = (uint8_t)(x >> 8);
    r->out[2] = (uint8_t)x;
    r->have = n;
    r->next = 1;
    return r->out[0];
}

/* n bytes into buf; -1 when the data ends first. */
static int b64_read(struct b64_reader *r, uint8_t *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int c = b64_byte(r);
        if (c < 0)
            return -1;
        buf[i] = (uint8_t)c;
    }
    return 0;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* JPEG: walk the marker segments after SOI to the first SOFn (C0-CF but
 * C4 DHT, C8 JPG and CC DAC), whose body is precision, height, width. */
static int jpeg_size(struct b64_reader *r, uint32_t *w, uint32_t *h, const char **why)
{
    for (;;) {
        uint8_t m[4];
        int c;
        do /* fill bytes before a marker are allowed */
            c = b64_byte(r);
        while (c == 0xFF);
        if (c < 0)
            goto cut;
        m[1] = (uint8_t)c;
        if (m[1] == 0xD9 || m[1] == 0xDA) {
            *why = "JPEG without a frame header before its scan";
            return -1;
        }
        if ((m[1] >= 0xD0 && m[1] <= 0xD7) || m[1] == 0x01)
            continue; /* markers without a length */
        if (b64_read(r, m + 2, 2) < 0)
            goto cut;
        uint32_t seg = (uint32_t)m[2] << 8 | m[3];
        if (seg < 2) {
            *why = "JPEG segment length below 2";
            return -1;
        }
        if (m[1] >= 0xC0 && m[1] <= 0xCF && m[1] != 0xC4 && m[1] != 0xC8 && m[1] != 0xCC) {
            uint8_t f[5];
            if (seg < 7 || b64_read(r, f, 5) < 0)
                goto cut;
            *h = (uint32_t)f[1] << 8 | f[2];
            *w = (uint32_t)f[3] << 8 | f[4];
            return 0;
        }
        for (uint32_t i = 2; i < seg; i++) {
            if (b64_byte(r) < 0)
                goto cut;
        }
        /* The next segment must start with 0xFF. */
        c = b64_byte(r);
        if (c != 0xFF) {
            if (c < 0)
                goto cut;
            *why = "JPEG segment not followed by a marker";
            return -1;
        }
    }
cut:
    *why = r->bad ? "image data is not base64" : "JPEG cut short before its frame header";
    return -1;
}

int image_header_size(const char *b64, size_t len, enum image_format *format, uint32_t *w,
                      uint32_t *h, const char **why)
{
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    struct b64_reader r = {.s = b64, .len = len};
    uint8_t head[24];
    *w = *h = 0;
    if (b64_read(&r, head, 2) < 0) {
        *why = r.bad ? "image data is not base64" : "image data too short";
        return -1;
    }
    if (head[0] == 0xFF && head[1] == 0xD8) {
        *format = IMAGE_JPEG;
        /* jpeg_size starts at the next marker's 0xFF. */
        int c = b64_byte(&r);
        if (c != 0xFF) {
            *why = c < 0 && !r.bad ? "JPEG cut short before its frame header"
                   : r.bad         ? "image data is not base64"
                                   : "JPEG SOI not followed by a marker";
            return -1;
        }
        if (jpeg_size(&r, w, h, why) < 0)
            return -1;
    } else if (head[0] == png_sig[0] && head[1] == png_sig[1]) {
        *format = IMAGE_PNG;
        /* Signature, then IHDR: length 13, "IHDR", width, height. */
        if (b64_read(&r, head + 2, 22) < 0) {
            *why = r.bad ? "image data is not base64" : "PNG cut short before its IHDR";
            return -1;
        }
        if (memcmp(head, png_sig, 8) != 0 || memcmp(head + 12, "IHDR", 4) != 0) {
            *why = "PNG without its signature and IHDR";
            return -1;
        }
        *w = be32(head + 16);
        *h = be32(head + 20);
    } else {
        *why = "image data is neither PNG nor JPEG";
        return -1;
    }
    if (*w == 0 || *h == 0) {
        *why = "image header gives a zero width or height";
        return -1;
    }
    return 0;
}
