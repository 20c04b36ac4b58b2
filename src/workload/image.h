/* image.h: the synthetic images of image inputs (--images, --image-size,
 * --image-sizes, --image-format; docs/workload.md), and the one rule the
 * client and the sim share for what an image costs (image_tokens).
 *
 * An image is a function of (content seed, request index, image number):
 * a mosaic of 16x16-pixel tiles over a gradient, each tile's colour a hash
 * of a 64-bit tag of all three and of the tile, so no two images of a run
 * have the same pixels (a server's image cache never hits across
 * requests), and the same run sends the same bytes again. It is encoded
 * as PNG (libpng: the Up filter, zlib level 1) or baseline JPEG
 * (libjpeg-turbo, quality 85), then sent base64'd in a data URL.
 *
 * A prefix group's shared images (--prefix-images) are functions of
 * (content seed, group, image number) instead, on a tag of their own
 * (image_group_tag): every request of the group sends the same bytes, and
 * no group's image is any request's own. */
#ifndef LL_IMAGE_H
#define LL_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "workload/dist.h"

enum image_format { IMAGE_PNG, IMAGE_JPEG };

/* Sizes in a weighted list, and the largest side an image may have. */
#define IMAGE_SIZES_MAX 16
#define IMAGE_SIDE_MAX 8192
/* The most images one request may carry (a larger draw is refused when
 * the flag is parsed: the DIST's max must be at most this). */
#define IMAGE_PER_REQUEST_MAX 64

/* The vision encoder's patch side the sim charges by (image_tokens). */
#define IMAGE_PATCH_PX 28

struct image_size {
    uint32_t w, h; /* pixels, 1 .. IMAGE_SIDE_MAX */
    double weight; /* > 0 */
};

/* The image settings of a run or of a class. */
struct image_cfg {
    int set;           /* 0: no images */
    struct dist count; /* images per request (--images DIST) */
    struct image_size sizes[IMAGE_SIZES_MAX];
    size_t n_sizes; /* >= 1 when set */
    double total_weight;
    enum image_format format;
    /* --prefix-images N (a class's "prefix_images"): images each request
     * of a prefix group carries before its prefix text, the same for the
     * whole group (0 .. IMAGE_PER_REQUEST_MAX; 0 = none). A request
     * without a shared prefix gets none. */
    uint32_t prefix_count;
};

/* Parse --image-size WxH ("512x512") or --image-sizes "512x512:3,1024x768:1"
 * (a weight after each size, default 1) into c->sizes. Returns 0, or
 * LL_E_INVAL with a one-line reason naming the bad part in err. */
int image_sizes_parse(const char *s, struct image_cfg *c, char *err, size_t errlen);

/* Parse --image-format: "png" or "jpeg" (also "jpg"). Returns 0 or
 * LL_E_INVAL with a reason in err. */
int image_format_parse(const char *s, enum image_format *out, char *err, size_t errlen);

/* An images setting, of the flags or of a --workload class, into c:
 * count a DIST of images per request, sizes an image_sizes_parse list
 * (NULL: 512x512), format png or jpeg (NULL: png); what[0..2] name the
 * count, the sizes and the format in errors. The count must stay at most
 * IMAGE_PER_REQUEST_MAX: fixed, uniform:A,B with B at most that, or a
 * max= at most that. Returns 0 (c->set = 1), or LL_E_INVAL with a
 * one-line reason in err. */
int image_cfg_parse(const char *const what[3], const char *count, const char *sizes,
                    const char *format, struct image_cfg *c, char *err, size_t errlen);

/* "png" or "jpeg"; the MIME type "image/png" or "image/jpeg". Static. */
const char *image_format_name(enum image_format f);
const char *image_format_mime(enum image_format f);

/* Image k's size in a request whose image draw is draw (req_spec's
 * image_draw): a pure function of both, by the weights. */
void image_pick_size(const struct image_cfg *c, uint64_t draw, uint32_t k, uint32_t *w,
                     uint32_t *h);

/* The prefill tokens an image of w x h pixels costs on the sim (and the
 * client's expectation): ceil(w / 28) * ceil(h / 28), Qwen2-VL's 28-pixel
 * patches after its 2x2 merge. */
uint32_t image_tokens(uint32_t w, uint32_t h);

/* A growable byte buffer the encoders write into; image_buf_free frees. */
struct image_buf {
    uint8_t *data;
    size_t len, cap;
    uint8_t *pixels; /* the RGB scratch the encoder reads */
    size_t pixels_cap;
};
void image_buf_free(struct image_buf *b);

/* Encode image (seed, index, k) of w x h pixels as format into b (b->len
 * set; earlier contents replaced). Returns 0, or LL_E_NOMEM / LL_E_INVAL
 * (the encoder failed) with a reason in err. */
int image_encode(enum image_format format, uint64_t seed, uint64_t index, uint32_t k, uint32_t w,
                 uint32_t h, struct image_buf *b, char *err, size_t errlen);

/* The same for the image of tag (image_tag or image_group_tag). */
int image_encode_tag(enum image_format format, uint64_t tag, uint32_t w, uint32_t h,
                     struct image_buf *b, char *err, size_t errlen);

/* The 64-bit tag that fixes an image's pixels: image k of request index
 * (its own images), or image k of prefix group group (the group's shared
 * images). Pure functions of their arguments; no group tag equals a
 * request tag but by a 64-bit collision. */
uint64_t image_tag(uint64_t seed, uint64_t index, uint32_t k);
uint64_t image_group_tag(uint64_t seed, uint64_t group, uint32_t k);

/* Base64 (RFC 4648, with padding) of src[0, n) into dst, which has room
 * for image_base64_len(n) bytes (no NUL). Returns that length. */
size_t image_base64_len(size_t n);
size_t image_base64(const uint8_t *src, size_t n, char *dst);

/* The size of an encoded image given as base64 text b64[0, len) (a data
 * URL's payload), read from its header alone: PNG's IHDR, or the first
 * SOFn frame header of a JPEG, decoding no more than the first 64 KiB.
 * Returns 0 with *format, *w and *h set, or -1 with a reason (static) in
 * *why: not base64, not PNG or JPEG, or a header cut short or with a zero
 * side. Allocates nothing. */
int image_header_size(const char *b64, size_t len, enum image_format *format, uint32_t *w,
                      uint32_t *h, const char **why);

#endif
