/* Unit tests of image.c (synthetic images, their encoders, the size
 * reader the sim uses) and of the image parts chatbody writes: the
 * images decode with the libraries themselves (libpng's and libjpeg's
 * readers) to the size asked; they are the same for the same (seed,
 * index, k) and differ otherwise; the size reader gives back every size
 * from the base64 text, and refuses damaged text with a reason wherever
 * it is cut; the flag grammar refuses bad sizes, formats and counts. */
#include <jansson.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "test.h"
#include "testutil.h"
#include "util/util.h"
#include "workload/chatbody.h"
#include "workload/image.h"
#include "workload/workload.h"

/* Encode and base64 image (seed, index, k) of w x h; caller frees. */
static char *encode_b64(enum image_format f, uint64_t seed, uint64_t index, uint32_t k, uint32_t w,
                        uint32_t h, struct image_buf *b, size_t *len)
{
    char err[128];
    assert_int_equal(image_encode(f, seed, index, k, w, h, b, err, sizeof err), 0);
    char *s = malloc(image_base64_len(b->len) + 1);
    assert_non_null(s);
    *len = image_base64(b->data, b->len, s);
    assert_int_equal(*len, image_base64_len(b->len));
    s[*len] = '\0';
    return s;
}

static void test_tokens_rule(void **state)
{
    assert_int_equal(image_tokens(1, 1), 1);
    assert_int_equal(image_tokens(28, 28), 1);
    assert_int_equal(image_tokens(29, 28), 2);
    assert_int_equal(image_tokens(512, 512), 19 * 19);
    assert_int_equal(image_tokens(1024, 768), 37 * 28);
    assert_int_equal(image_tokens(8192, 8192), 293 * 293);
}

/* A PNG read back by libpng has the size asked and the pixels painted. */
static void test_png_decodes(void **state)
{
    struct image_buf b = {0};
    char err[128];
    assert_int_equal(image_encode(IMAGE_PNG, 9, 3, 0, 300, 170, &b, err, sizeof err), 0);
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_memory(&img, b.data, b.len));
    assert_int_equal(img.width, 300);
    assert_int_equal(img.height, 170);
    img.format = PNG_FORMAT_RGB;
    uint8_t *px = malloc(PNG_IMAGE_SIZE(img));
    assert_non_null(px);
    assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
    assert_memory_equal(px, b.pixels, (size_t)300 * 170 * 3);
    free(px);
    image_buf_free(&b);
}

/* A JPEG read back by libjpeg has the size asked. */
static void test_jpeg_decodes(void **state)
{
    struct image_buf b = {0};
    char err[128];
    assert_int_equal(image_encode(IMAGE_JPEG, 9, 3, 1, 333, 97, &b, err, sizeof err), 0);
    assert_true(b.len > 100);
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr jerr;
    d.err = jpeg_std_error(&jerr);
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, b.data, b.len);
    assert_int_equal(jpeg_read_header(&d, TRUE), JPEG_HEADER_OK);
    assert_int_equal(d.image_width, 333);
    assert_int_equal(d.image_height, 97);
    jpeg_start_decompress(&d);
    JSAMPLE *row = malloc((size_t)333 * 3);
    while (d.output_scanline < d.output_height)
        jpeg_read_scanlines(&d, &row, 1);
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    free(row);
    image_buf_free(&b);
}

/* Same inputs, same bytes; another seed, index or image number, other
 * pixels (no cross-request cache hits). */
static void test_deterministic_unique(void **state)
{
    enum image_format fmts[] = {IMAGE_PNG, IMAGE_JPEG};
    for (size_t f = 0; f < 2; f++) {
        struct image_buf b = {0};
        size_t n[5];
        char *s[5] = {
            encode_b64(fmts[f], 1, 10, 0, 64, 64, &b, &n[0]),
            encode_b64(fmts[f], 1, 10, 0, 64, 64, &b, &n[1]),
            encode_b64(fmts[f], 2, 10, 0, 64, 64, &b, &n[2]),
            encode_b64(fmts[f], 1, 11, 0, 64, 64, &b, &n[3]),
            encode_b64(fmts[f], 1, 10, 1, 64, 64, &b, &n[4]),
        };
        assert_int_equal(n[0], n[1]);
        assert_memory_equal(s[0], s[1], n[0]);
        for (int i = 2; i < 5; i++)
            assert_true(n[i] != n[0] || memcmp(s[i], s[0], n[0]) != 0);
        for (int i = 0; i < 5; i++)
            free(s[i]);
        image_buf_free(&b);
    }
}

/* The size reader gives back every size from the base64 text, and at
 * every cut before the header is complete it refuses with a reason. */
static void test_header_size(void **state)
{
    const uint32_t sizes[][2] = {{1, 1}, {28, 29}, {512, 512}, {1024, 768}, {17, 2000}};
    enum image_format fmts[] = {IMAGE_PNG, IMAGE_JPEG};
    for (size_t f = 0; f < 2; f++) {
        for (size_t i = 0; i < LL_ARRAY_LEN(sizes); i++) {
            struct image_buf b = {0};
            size_t len;
            char *s = encode_b64(fmts[f], 4, i, 0, sizes[i][0], sizes[i][1], &b, &len);
            enum image_format got;
            uint32_t w, h;
            const char *why = NULL;
            assert_int_equal(image_header_size(s, len, &got, &w, &h, &why), 0);
            assert_int_equal(got, fmts[f]);
            assert_int_equal(w, sizes[i][0]);
            assert_int_equal(h, sizes[i][1]);
            /* Cut short: refused with a reason until the header is in,
             * then the same size. */
            int seen_ok = 0;
            for (size_t cut = 0; cut < LL_MIN(len, (size_t)1200); cut++) {
                why = NULL;
                int rc = image_header_size(s, cut, &got, &w, &h, &why);
                if (rc == 0) {
                    seen_ok = 1;
                    assert_int_equal(w, sizes[i][0]);
                    assert_int_equal(h, sizes[i][1]);
                } else {
                    assert_false(seen_ok); /* once readable, a longer cut stays so */
                    assert_non_null(why);
                }
            }
            assert_true(seen_ok);
            free(s);
            image_buf_free(&b);
        }
    }
}

static void test_header_refusals(void **state)
{
    enum image_format f;
    uint32_t w, h;
    const char *why;
    struct {
        const char *text, *why;
    } bad[] = {
        {"", "image data too short"},
        {"R0lGODlhAQABAAAAACw=", "image data is neither PNG nor JPEG"}, /* GIF */
        {"iVBO!!!!", "image data is not base64"},
        {"/9j/2Q==", "JPEG without a frame header before its scan"}, /* SOI, EOI */
        {"/9g=", "JPEG cut short before its frame header"},
        /* PNG signature and IHDR of 0 x 5 */
        {"iVBORw0KGgoAAAANSUhEUgAAAAAAAAAF", "image header gives a zero width or height"},
        {"iVBORw0KGgoAAAANSUhEUgAAAA", "PNG cut short before its IHDR"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        why = NULL;
        assert_int_equal(image_header_size(bad[i].text, strlen(bad[i].text), &f, &w, &h, &why), -1);
        assert_string_equal(why, bad[i].why);
    }
}

static void test_sizes_grammar(void **state)
{
    struct image_cfg c;
    char err[256];
    memset(&c, 0, sizeof c);
    assert_int_equal(image_sizes_parse("512x512", &c, err, sizeof err), 0);
    assert_int_equal(c.n_sizes, 1);
    assert_int_equal(c.sizes[0].w, 512);
    assert_int_equal(image_sizes_parse("512x512:3,1024x768:1", &c, err, sizeof err), 0);
    assert_int_equal(c.n_sizes, 2);
    assert_int_equal(c.sizes[1].h, 768);
    assert_true(c.total_weight == 4);
    const char *bad[] = {"",       "512",   "512x", "0x5",  "5x9000", "5x5:0",
                         "5x5:-1", "5x5:x", "5x5,", "5x5 ", "axb",    "5x5:1,6x6:2,"};
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        err[0] = '\0';
        assert_int_equal(image_sizes_parse(bad[i], &c, err, sizeof err), LL_E_INVAL);
        assert_non_null(strstr(err, "expected WxH"));
    }
    /* A side past 64 bits is refused as any side over the maximum is. */
    assert_int_equal(image_sizes_parse("99999999999999999999999x5", &c, err, sizeof err),
                     LL_E_INVAL);
    enum image_format f;
    assert_int_equal(image_format_parse("jpg", &f, err, sizeof err), 0);
    assert_int_equal(f, IMAGE_JPEG);
    assert_int_equal(image_format_parse("gif", &f, err, sizeof err), LL_E_INVAL);
    assert_string_equal(err, "expected png or jpeg, got \"gif\"");
    const char *const what[3] = {"--images", "--image-sizes", "--image-format"};
    assert_int_equal(image_cfg_parse(what, "uniform:1,3", "64x64", "jpeg", &c, err, sizeof err), 0);
    assert_true(c.set && c.format == IMAGE_JPEG);
    assert_int_equal(image_cfg_parse(what, "exponential:2", NULL, NULL, &c, err, sizeof err),
                     LL_E_INVAL);
    assert_non_null(strstr(err, "--images: at most 64 images per request"));
    assert_int_equal(image_cfg_parse(what, "exponential:2,max=5", NULL, NULL, &c, err, sizeof err),
                     0);
    assert_int_equal(image_cfg_parse(what, "65", NULL, NULL, &c, err, sizeof err), LL_E_INVAL);
    assert_int_equal(image_cfg_parse(what, "2", "7y7", NULL, &c, err, sizeof err), LL_E_INVAL);
    assert_non_null(strstr(err, "--image-sizes: expected WxH"));
}

/* The sizes drawn follow the weights, and workload_images sums their
 * tokens; without images nothing else a request draws changes. */
static void test_draws(void **state)
{
    struct workload w;
    test_workload_fixed(&w, 3, "100", "10");
    struct req_spec plain[50], with[50];
    for (uint64_t i = 0; i < 50; i++)
        workload_spec(&w, i, &plain[i]);
    const char *const what[3] = {"a", "b", "c"};
    char err[200];
    assert_int_equal(
        image_cfg_parse(what, "2", "28x28:3,56x56:1", NULL, &w.images, err, sizeof err), 0);
    size_t small = 0, total = 0;
    for (uint64_t i = 0; i < 50; i++) {
        workload_spec(&w, i, &with[i]);
        assert_int_equal(with[i].prompt_tokens, plain[i].prompt_tokens);
        assert_int_equal(with[i].max_tokens, plain[i].max_tokens);
        assert_int_equal(with[i].images, 2);
        uint32_t tok = 0;
        for (uint32_t k = 0; k < 2; k++) {
            uint32_t iw, ih;
            image_pick_size(&w.images, with[i].image_draw, k, &iw, &ih);
            small += iw == 28;
            total++;
            tok += image_tokens(iw, ih);
        }
        assert_int_equal(with[i].image_tokens, tok);
        assert_int_equal(chatbody_prompt_tokens(&with[i]), 100 + tok);
    }
    /* 3:1 weights over 100 draws: 75 expected; 50..95 is far outside chance. */
    assert_in_range(small, 50, 95);
}

/* chatbody's image parts for each API, parsed back with jansson. */
/* chatbody_prompt's messages for api (5 prompt tokens) parsed as JSON: it
 * writes the elements of "messages", so they are read inside [ ]. Fails
 * the test when they are not JSON; the caller json_decref's the array. */
static json_t *prompt_messages(enum oai_api api, const struct req_spec *spec)
{
    size_t need = chatbody_prompt(api, 5, spec, NULL, 0);
    char *buf = malloc(need + 3);
    assert_non_null(buf);
    assert_int_equal(chatbody_prompt(api, 5, spec, buf + 1, need), need);
    buf[0] = '[';
    buf[need + 1] = ']';
    buf[need + 2] = '\0';
    json_error_t je;
    json_t *arr = json_loads(buf, 0, &je);
    if (!arr)
        fail_msg("api %d: %s in %s", (int)api, je.text, buf);
    free(buf);
    return arr;
}

static void test_chatbody_parts(void **state)
{
    struct workload w;
    test_workload_fixed(&w, 3, "5", "5");
    struct req_spec spec;
    workload_spec(&w, 7, &spec);
    static const size_t ends[2] = {4, 8};
    struct req_image_data im = {.mime = "image/png", .b64 = "AAAABBBB", .ends = ends, .n = 2};
    spec.images = 2;
    spec.image_data = &im;
    enum oai_api apis[] = {OAI_API_CHAT, OAI_API_ANTHROPIC, OAI_API_RESPONSES};
    for (size_t a = 0; a < 3; a++) {
        json_t *arr = prompt_messages(apis[a], &spec);
        json_t *msg = json_array_get(arr, 0);
        assert_string_equal(json_string_value(json_object_get(msg, "role")), "user");
        json_t *content = json_object_get(msg, "content");
        assert_int_equal(json_array_size(content), 3);
        json_t *p0 = json_array_get(content, 0), *p1 = json_array_get(content, 1);
        json_t *txt = json_array_get(content, 2);
        if (apis[a] == OAI_API_CHAT) {
            assert_string_equal(json_string_value(json_object_get(p0, "type")), "image_url");
            assert_string_equal(
                json_string_value(json_object_get(json_object_get(p1, "image_url"), "url")),
                "data:image/png;base64,BBBB");
            assert_string_equal(json_string_value(json_object_get(txt, "type")), "text");
        } else if (apis[a] == OAI_API_ANTHROPIC) {
            json_t *src = json_object_get(p1, "source");
            assert_string_equal(json_string_value(json_object_get(p0, "type")), "image");
            assert_string_equal(json_string_value(json_object_get(src, "type")), "base64");
            assert_string_equal(json_string_value(json_object_get(src, "media_type")), "image/png");
            assert_string_equal(json_string_value(json_object_get(src, "data")), "BBBB");
        } else {
            assert_string_equal(json_string_value(json_object_get(msg, "type")), "message");
            assert_string_equal(json_string_value(json_object_get(p0, "type")), "input_image");
            assert_string_equal(json_string_value(json_object_get(p0, "image_url")),
                                "data:image/png;base64,AAAA");
            assert_string_equal(json_string_value(json_object_get(txt, "type")), "input_text");
        }
        /* The text part is the prompt without images. */
        spec.image_data = NULL;
        char plain[256];
        size_t n = chatbody_prompt(apis[a], 5, &spec, plain, sizeof plain);
        plain[n] = '\0';
        spec.image_data = &im;
        assert_non_null(strstr(plain, json_string_value(json_object_get(txt, "text"))));
        json_decref(arr);
    }
}

/* A prefix group's shared images: their tag is a pure function of (seed,
 * group, k), so the same group encodes to the same bytes and another
 * group, seed or image number to others, and no group tag is a request's
 * own tag; their sizes come from the group alone (workload_group_draw),
 * the same in every request of the group. */
static void test_group_images(void **state)
{
    assert_true(image_group_tag(5, 3, 0) == image_group_tag(5, 3, 0));
    assert_true(image_group_tag(5, 3, 0) != image_group_tag(5, 4, 0));
    assert_true(image_group_tag(5, 3, 0) != image_group_tag(6, 3, 0));
    assert_true(image_group_tag(5, 3, 0) != image_group_tag(5, 3, 1));
    for (uint64_t g = 0; g < 64; g++)
        for (uint32_t k = 0; k < 4; k++)
            for (uint64_t i = 0; i < 64; i++)
                assert_true(image_group_tag(5, g, k) != image_tag(5, i, k));
    /* Same tag, same bytes; another group's tag, other bytes. */
    struct image_buf a = {0}, b = {0};
    char err[128];
    assert_int_equal(
        image_encode_tag(IMAGE_PNG, image_group_tag(9, 1, 0), 64, 48, &a, err, sizeof err), 0);
    assert_int_equal(
        image_encode_tag(IMAGE_PNG, image_group_tag(9, 1, 0), 64, 48, &b, err, sizeof err), 0);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    assert_int_equal(
        image_encode_tag(IMAGE_PNG, image_group_tag(9, 2, 0), 64, 48, &b, err, sizeof err), 0);
    assert_true(a.len != b.len || memcmp(a.data, b.data, a.len) != 0);
    /* image_encode is the request's own tag. */
    assert_int_equal(image_encode(IMAGE_PNG, 9, 4, 1, 64, 48, &a, err, sizeof err), 0);
    assert_int_equal(image_encode_tag(IMAGE_PNG, image_tag(9, 4, 1), 64, 48, &b, err, sizeof err),
                     0);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    image_buf_free(&a);
    image_buf_free(&b);

    /* The draw: deterministic in (seed, group), other for another seed
     * or group. */
    assert_true(workload_group_draw(3, 0) == workload_group_draw(3, 0));
    assert_true(workload_group_draw(3, 0) != workload_group_draw(3, 1));
    assert_true(workload_group_draw(3, 0) != workload_group_draw(4, 0));

    /* Through workload_spec: every request of a group gets the group's
     * count, draw and tokens; one without a prefix gets none; the own
     * images and every other draw are as without shared images. */
    struct workload w;
    test_workload_fixed(&w, 3, "100", "10");
    w.prefix = (struct wl_prefix){.fraction = 0.7, .groups = 3, .tokens = 40};
    const char *const what[3] = {"a", "b", "c"};
    assert_int_equal(
        image_cfg_parse(what, "1", "28x28:1,56x56:1,84x84:1", NULL, &w.images, err, sizeof err), 0);
    struct req_spec plain[200];
    for (uint64_t i = 0; i < 200; i++)
        workload_spec(&w, i, &plain[i]);
    w.images.prefix_count = 2;
    uint64_t draw_of[3] = {0, 0, 0};
    int seen[3] = {0, 0, 0}, unshared = 0, sizes_differ = 0;
    for (uint64_t i = 0; i < 200; i++) {
        struct req_spec s;
        workload_spec(&w, i, &s);
        assert_int_equal(s.prefix_id, plain[i].prefix_id);
        assert_int_equal(s.images, 1);
        assert_true(s.image_draw == plain[i].image_draw);
        assert_int_equal(s.cancel_kind, plain[i].cancel_kind);
        if (s.prefix_id < 0) {
            unshared++;
            assert_int_equal(s.prefix_images, 0);
            assert_int_equal(s.prefix_image_tokens, 0);
            assert_int_equal(s.image_tokens, plain[i].image_tokens);
            continue;
        }
        assert_int_equal(s.prefix_images, 2);
        assert_true(s.prefix_image_draw == workload_group_draw(3, (uint64_t)s.prefix_id));
        if (seen[s.prefix_id])
            assert_true(s.prefix_image_draw == draw_of[s.prefix_id]);
        seen[s.prefix_id] = 1;
        draw_of[s.prefix_id] = s.prefix_image_draw;
        uint32_t tok = 0;
        for (uint32_t k = 0; k < 2; k++) {
            uint32_t iw, ih;
            image_pick_size(&w.images, s.prefix_image_draw, k, &iw, &ih);
            tok += image_tokens(iw, ih);
        }
        assert_int_equal(s.prefix_image_tokens, tok);
        assert_int_equal(s.image_tokens, plain[i].image_tokens + tok);
        assert_int_equal(chatbody_prompt_tokens(&s), s.prompt_tokens + s.image_tokens);
    }
    assert_true(seen[0] && seen[1] && seen[2] && unshared > 0);
    /* Three groups of two images from three sizes: not all the same sizes
     * (each group's draw is its own). */
    for (int g = 1; g < 3; g++)
        for (uint32_t k = 0; k < 2; k++) {
            uint32_t w0, h0, w1, h1;
            image_pick_size(&w.images, draw_of[0], k, &w0, &h0);
            image_pick_size(&w.images, draw_of[g], k, &w1, &h1);
            sizes_differ |= w0 != w1;
        }
    assert_true(sizes_differ);
}

/* The prompt cut after its prefix: PREFIX, a space and REST are the
 * whole text; PREFIX is the same in every request of a group. */
static void test_prompt_parts(void **state)
{
    struct workload w;
    test_workload_fixed(&w, 8, "uniform:30,60", "5");
    w.prefix = (struct wl_prefix){.fraction = 0.5, .groups = 2, .tokens = 20};
    char prefix_of[2][1024] = {"", ""};
    int shared = 0;
    for (uint64_t i = 0; i < 40; i++) {
        struct req_spec s;
        workload_spec(&w, i, &s);
        char all[1024], pre[1024], rest[1024], joined[2100];
        size_t n = workload_prompt(8, &s, all, sizeof all);
        assert_int_equal(workload_prompt_part(8, &s, WORKLOAD_PROMPT_ALL, pre, sizeof pre), n);
        assert_memory_equal(pre, all, n);
        all[n] = '\0';
        size_t np = workload_prompt_part(8, &s, WORKLOAD_PROMPT_PREFIX, pre, sizeof pre);
        size_t nr = workload_prompt_part(8, &s, WORKLOAD_PROMPT_REST, rest, sizeof rest);
        pre[np] = '\0';
        rest[nr] = '\0';
        if (s.prefix_id < 0) {
            assert_int_equal(np, 0);
            assert_string_equal(rest, all);
            continue;
        }
        shared++;
        snprintf(joined, sizeof joined, "%s %s", pre, rest);
        assert_string_equal(joined, all);
        if (prefix_of[s.prefix_id][0])
            assert_string_equal(pre, prefix_of[s.prefix_id]);
        snprintf(prefix_of[s.prefix_id], sizeof prefix_of[0], "%s", pre);
    }
    assert_true(shared > 5);
    assert_string_not_equal(prefix_of[0], prefix_of[1]);
}

/* With a shared prefix the user message is the group's images, the
 * prefix text, the request's own images, the rest of the text. */
static void test_chatbody_shared_layout(void **state)
{
    struct workload w;
    test_workload_fixed(&w, 3, "30", "5");
    w.prefix = (struct wl_prefix){.fraction = 1, .groups = 1, .tokens = 10};
    struct req_spec spec;
    workload_spec(&w, 7, &spec);
    assert_int_equal(spec.prefix_id, 0);
    static const size_t ends[3] = {4, 8, 12};
    struct req_image_data im = {
        .mime = "image/png", .b64 = "GGGGHHHHOOOO", .ends = ends, .n = 3, .n_prefix = 2};
    spec.images = 1;
    spec.prefix_images = 2;
    spec.image_data = &im;
    enum oai_api apis[] = {OAI_API_CHAT, OAI_API_ANTHROPIC, OAI_API_RESPONSES};
    char pre[256], rest[256];
    size_t np = workload_prompt_part(5, &spec, WORKLOAD_PROMPT_PREFIX, pre, sizeof pre - 1);
    size_t nr = workload_prompt_part(5, &spec, WORKLOAD_PROMPT_REST, rest, sizeof rest - 1);
    pre[np] = rest[nr] = '\0';
    for (size_t a = 0; a < 3; a++) {
        json_t *arr = prompt_messages(apis[a], &spec);
        json_t *content = json_object_get(json_array_get(arr, 0), "content");
        assert_int_equal(json_array_size(content), 5);
        const char *want[5] = {"GGGG", "HHHH", pre, "OOOO", rest};
        for (size_t k = 0; k < 5; k++) {
            json_t *part = json_array_get(content, k);
            const char *got;
            if (k == 2 || k == 4)
                got = json_string_value(json_object_get(part, "text"));
            else if (apis[a] == OAI_API_ANTHROPIC)
                got = json_string_value(json_object_get(json_object_get(part, "source"), "data"));
            else if (apis[a] == OAI_API_RESPONSES)
                got = json_string_value(json_object_get(part, "image_url")) + 22;
            else
                got =
                    json_string_value(json_object_get(json_object_get(part, "image_url"), "url")) +
                    22;
            assert_non_null(got);
            assert_string_equal(got, want[k]);
        }
        json_decref(arr);
    }
}

UNIT_TESTS(test_tokens_rule, test_png_decodes, test_jpeg_decodes, test_deterministic_unique,
           test_header_size, test_header_refusals, test_sizes_grammar, test_draws,
           test_chatbody_parts, test_group_images, test_prompt_parts, test_chatbody_shared_layout)
