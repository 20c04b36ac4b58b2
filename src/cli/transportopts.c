/* transportopts.c: the flags of the target and its transport that run,
 * replay and sweep share: the URLs and their weights, the API, the HTTP
 * client, TLS, timeouts, the SSE line bound, --images and --extra-body,
 * checked into cfg->transport (see runopts.h). Moved from runopts.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/runopts.h"
#include "cli/runopts_int.h"
#include "decode/sse.h"
#include "util/util.h"
#include "workload/chatbody.h"
#include "workload/extrabody.h"

int runopts_check_url(const char *url, char *err, size_t errlen)
{
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return runopts_errf(err, errlen,
                            "--url: expected http://HOST:PORT/... or https://..., "
                            "got \"%s\"",
                            url);
    /* A query or fragment ended up inside every path (/models came out as
     * "/v1?x=1/models"), and a blank or control byte went on the request
     * line as it was. */
    if (strpbrk(url, "?#"))
        return runopts_errf(err, errlen,
                            "--url: a base URL takes no query or fragment (paths such as "
                            "/chat/completions are appended to it), got \"%s\"",
                            url);
    for (const char *c = url; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 127)
            return runopts_errf(err, errlen,
                                "--url: a blank or control character at byte %zu of \"%s\"",
                                (size_t)(c - url) + 1, url);
    const char *a = strstr(url, "://") + 3;
    size_t n = strcspn(a, "/?#");
    if (memchr(a, '@', n))
        return runopts_errf(err, errlen,
                            "--url: user info (USER:PASSWORD@) is not taken: the "
                            "URL is written to run.json and the report; send credentials with "
                            "-H or --api-key-env");
    const char *end = a + n, *p = a;
    if (p < end && *p == '[') {
        const char *rb = memchr(p, ']', n);
        if (!rb)
            return runopts_errf(err, errlen, "--url: unbalanced [ in the host of \"%s\"", url);
        p = rb + 1;
    } else {
        while (p < end && *p != ':')
            p++;
    }
    if (p == a || (a[0] == '[' && p == a + 2))
        return runopts_errf(err, errlen, "--url: no host in \"%s\"", url);
    if (p == end)
        return 0;
    if (*p != ':')
        return runopts_errf(err, errlen, "--url: unexpected \"%.*s\" after the host in \"%s\"",
                            (int)(end - p), p, url);
    p++;
    unsigned long port = 0;
    const char *d = p;
    while (d < end && *d >= '0' && *d <= '9' && port <= 65535)
        port = port * 10 + (unsigned long)(*d++ - '0');
    if (d == p || d != end || port == 0 || port > 65535)
        return runopts_errf(err, errlen, "--url: the port must be 1 to 65535, got \"%.*s\"",
                            (int)(end - p), p);
    return 0;
}

int runopts_header_add(const char **headers, size_t *n, const char *a, char *err, size_t errlen)
{
    if (*n == RUNOPTS_MAX_HEADERS)
        return runopts_errf(err, errlen, "--header: at most %d headers", RUNOPTS_MAX_HEADERS);
    if (!strchr(a, ':'))
        return runopts_errf(err, errlen,
                            "--header: expected \"Name: value\", got a value "
                            "without a colon");
    /* The value is never repeated: it may be a secret. */
    if (!ll_header_line_ok(a))
        return runopts_errf(err, errlen,
                            "--header: expected \"Name: value\" (a token, a "
                            "colon, the value; no line breaks)");
    headers[(*n)++] = a;
    return 0;
}

int runopts_header_named(const char *const *headers, size_t n, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (strncasecmp(headers[i], name, len) == 0 && headers[i][len] == ':')
            return 1;
    return 0;
}

int runopts_check_cacert(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    int e = fd < 0 ? errno : fstat(fd, &sb) != 0 ? errno : S_ISDIR(sb.st_mode) ? EISDIR : 0;
    if (fd >= 0)
        close(fd);
    if (e)
        return runopts_errf(err, errlen, "--cacert: %s: %s", path, strerror(e));
    return 0;
}

/* Several --url and --url-weights into e (e->n 0 with one --url):
 * each URL checked, the weights one per URL. */
static int runopts_endpoints(const struct run_opts *o, struct endpoints *e, char *err,
                             size_t errlen)
{
    memset(e, 0, sizeof *e);
    if (o->n_urls < 2) {
        if (o->url_weights)
            return runopts_errf(err, errlen,
                                "--url-weights: goes with two or more --url "
                                "(requests spread over them); add them, or drop it");
        return 0;
    }
    for (size_t i = 1; i < o->n_urls; i++) {
        if (runopts_check_url(o->urls[i], err, errlen) != 0)
            return LL_E_INVAL;
    }
    uint32_t w[ENDPOINTS_MAX];
    size_t n = 0;
    if (o->url_weights) {
        if (endpoints_parse_weights(o->url_weights, w, ENDPOINTS_MAX, &n, err, errlen) != 0)
            return LL_E_INVAL;
        if (n != o->n_urls)
            return runopts_errf(err, errlen,
                                "--url-weights: %zu weight%s for %zu --url; give "
                                "one per --url, in order",
                                n, n == 1 ? "" : "s", o->n_urls);
    }
    if (endpoints_plan(e, o->urls, o->url_weights ? w : NULL, o->n_urls) != 0)
        return runopts_errf(err, errlen, "--url: could not plan %zu endpoints", o->n_urls);
    return 0;
}

/* Is url's host a loopback address (127.x.y.z, ::1, localhost)? */
int runopts_url_is_loopback(const char *url)
{
    const char *h = strstr(url, "://");
    h = h ? h + 3 : url;
    if (strncmp(h, "127.", 4) == 0 || strncmp(h, "[::1]", 5) == 0)
        return 1;
    return strncasecmp(h, "localhost", 9) == 0 && (h[9] == '\0' || h[9] == ':' || h[9] == '/');
}

/* A timeout flag, or its default when absent. */
static int timeout_flag(const char *name, const char *v, uint64_t def_ns, uint64_t *out_ns,
                        char *err, size_t errlen)
{
    *out_ns = def_ns;
    return v ? runopts_duration(name, v, out_ns, err, errlen) : 0;
}

/* Add the keys of x that replace llmload's own for api to list (len
 * bytes, ", "-joined, each once). */
static void note_replaced(const struct extrabody *x, enum oai_api api, char *list, size_t len)
{
    const char *key;
    json_t *val;
    if (!x->skip)
        return;
    json_object_foreach(x->json, key, val)
    {
        char quoted[160];
        snprintf(quoted, sizeof quoted, "\"%.150s\"", key);
        if (!extrabody_own(api, key) || strstr(list, quoted))
            continue;
        size_t at = strlen(list);
        snprintf(list + at, len - at, "%s%s", at ? ", " : "", quoted);
    }
}

/* --extra-body and the --workload classes' extra_body into
 * cfg->transport.extra: [0] for requests without a class, then one per
 * class (merged over the global one, checked against the class's API). */
static int runopts_extra_body(const struct run_opts *o, struct run_config *cfg, char *err,
                              size_t errlen)
{
    struct transport_config *tc = &cfg->transport;
    const struct wl_file *f = cfg->workload.classes;
    int any_class = 0;
    for (size_t i = 0; f && i < f->n; i++)
        any_class |= f->classes[i].extra_body != NULL;
    if (o->extra_body_override && !o->extra_body && !any_class)
        return runopts_errf(err, errlen,
                            "--extra-body-override: goes with --extra-body (or a "
                            "--workload class's extra_body); add one, or drop it");
    if (!o->extra_body && !any_class)
        return 0;
    json_t *global = NULL;
    if (o->extra_body) {
        int rc = extrabody_parse_arg("--extra-body", o->extra_body, &global, err, errlen);
        if (rc != 0)
            return rc;
    }
    /* One per class whenever there are classes: a class's API may differ
     * from --api, and its own keys with it. */
    size_t n = 1 + (f ? f->n : 0);
    struct extrabody *x = ll_calloc(n, sizeof *x);
    tc->extra = x;
    tc->n_extra = n;
    char replaced[256] = ""; /* the keys of llmload's that an extra value replaces */
    int rc = extrabody_build(global, NULL, tc->api, o->extra_body_override, "--extra-body",
                             "--extra-body", &x[0], err, errlen);
    note_replaced(&x[0], tc->api, replaced, sizeof replaced);
    for (size_t i = 1; rc == 0 && i < n; i++) {
        const struct wl_class *k = &f->classes[i - 1];
        enum oai_api api = k->api >= 0 ? (enum oai_api)k->api : tc->api;
        char where[WL_NAME_MAX + 512], gwhere[WL_NAME_MAX + 64];
        snprintf(where, sizeof where, "%s: classes[%zu] (\"%s\").extra_body", o->workload, i - 1,
                 k->name);
        snprintf(gwhere, sizeof gwhere, "--extra-body (class \"%s\")", k->name);
        rc = extrabody_build(global, k->extra_body, api, o->extra_body_override, gwhere, where,
                             &x[i], err, errlen);
        note_replaced(&x[i], api, replaced, sizeof replaced);
    }
    json_decref(global);
    if (rc != 0)
        return LL_E_INVAL;
    /* Once: a sweep parses its flags again for every step. */
    static int warned;
    if (replaced[0] && !warned) {
        warned = 1;
        ll_errorf("warning: --extra-body-override: the extra body sends %s in place of "
                  "llmload's; token counts and streaming may no longer match what llmload "
                  "expects",
                  replaced);
    }
    return 0;
}

/* A class that gets shared images but has no shared prefix to share them. */
#define PREFIX_IMAGES_ALONE                                                                        \
    "%s: class \"%s\" has prefix_images but no \"prefix\": shared images belong to a prefix "      \
    "group; give the class a \"prefix\" or drop its prefix_images"

/* --images, --prefix-images, --image-size(s), --image-format into
 * cfg->workload.images, and the refusals: an API whose body cannot carry
 * images (completions and embeddings, for the flags or for a class that
 * gets them; so token-ID prompts, which go to completions only, never
 * meet images), sessions, and shared images without a shared prefix to
 * belong to. A shared prefix with images is fine: the group's images and
 * its text come first, each request's own images after them
 * (chatbody.c). */
static int runopts_images(const struct run_opts *o, struct run_config *cfg, char *err,
                          size_t errlen)
{
    struct image_cfg *c = &cfg->workload.images;
    const struct wl_file *f = cfg->workload.classes;
    if (o->image_size && o->image_sizes)
        return runopts_errf(err, errlen,
                            "--image-size and --image-sizes: give one (a single "
                            "size, or a weighted list)");
    const char *sizes = o->image_size ? o->image_size : o->image_sizes;
    const char *const what[3] = {"--images", o->image_size ? "--image-size" : "--image-sizes",
                                 "--image-format"};
    if (!o->images && !o->prefix_images && (sizes || o->image_format))
        return runopts_errf(err, errlen,
                            "%s: goes with --images DIST (images per request) or "
                            "--prefix-images N",
                            sizes ? what[1] : what[2]);
    if (o->image_size && strchr(o->image_size, ','))
        return runopts_errf(err, errlen, "--image-size: one WxH; a list goes to --image-sizes");
    uint32_t shared = 0;
    if (o->prefix_images && runopts_count_upto("--prefix-images", o->prefix_images,
                                               IMAGE_PER_REQUEST_MAX, &shared, err, errlen) != 0)
        return LL_E_INVAL;
    /* Shared images alone: no image of a request's own. */
    const char *count = o->images ? o->images : o->prefix_images ? "0" : NULL;
    if (count && image_cfg_parse(what, count, sizes, o->image_format, c, err, errlen) != 0)
        return LL_E_INVAL;
    c->prefix_count = shared;
    /* The flag that gave the command line's images, for the refusals. */
    const char *flag = o->images ? "--images" : "--prefix-images";
    int any = c->set, shared_used = 0;
    for (size_t i = 0; f && i < f->n; i++) {
        const struct wl_class *k = &f->classes[i];
        int has = k->images.set || c->set;
        enum oai_api api = k->api >= 0 ? (enum oai_api)k->api : cfg->transport.api;
        any |= has;
        if (k->images.set && k->images.prefix_count > 0 && !(k->prefix.fraction > 0) &&
            !o->all_unique)
            return runopts_errf(err, errlen, PREFIX_IMAGES_ALONE, o->workload, k->name);
        shared_used |= !k->images.set && k->prefix.fraction > 0;
        if (has && (api == OAI_API_COMPLETIONS || api == OAI_API_EMBEDDINGS))
            return runopts_errf(err, errlen,
                                "%s: class \"%s\" sends images to %s, whose %s is text only; "
                                "images go to openai-chat, anthropic-messages or "
                                "openai-responses",
                                k->images.set ? o->workload : flag, k->name, oai_api_name(api),
                                api == OAI_API_COMPLETIONS ? "\"prompt\"" : "\"input\"");
    }
    if (shared && !o->all_unique && (f ? !shared_used : !(cfg->workload.prefix.fraction > 0)))
        return runopts_errf(err, errlen,
                            f ? "--prefix-images: no class of %s that takes the command line's "
                                "images has a \"prefix\"; the shared images belong to a prefix "
                                "group"
                              : "--prefix-images: needs a shared prefix (--prefix-fraction F "
                                "--prefix-tokens L): the images are shared by a prefix group%s",
                            f ? o->workload : "");
    enum oai_api run_api = cfg->transport.api;
    if (!f && c->set && (run_api == OAI_API_COMPLETIONS || run_api == OAI_API_EMBEDDINGS))
        return runopts_errf(err, errlen,
                            "%s: %s takes a text %s only; images go to openai-chat, "
                            "anthropic-messages or openai-responses (--api)",
                            flag, oai_api_name(run_api),
                            run_api == OAI_API_COMPLETIONS ? "\"prompt\"" : "\"input\"");
    if (any && cfg->mode == LOAD_SESSIONS)
        return runopts_errf(err, errlen,
                            "%s: a session resends its conversation, and earlier "
                            "turns' images are not kept; --sessions does not take images",
                            c->set ? flag : o->workload);
    return 0;
}

/* The transport: URL, API, --prompt-ids, stream, client, TLS, timeouts
 * and the SSE line bound. */
int runopts_transport(const struct run_opts *o, uint64_t seed, struct run_config *cfg, char *err,
                      size_t errlen)
{
    struct transport_config *tc = &cfg->transport;
    tc->base_url = o->url ? o->url : RUNOPTS_DEFAULT_URL;
    if (runopts_check_url(tc->base_url, err, errlen) != 0 ||
        runopts_endpoints(o, &tc->endpoints, err, errlen) != 0)
        return LL_E_INVAL;
    tc->api = OAI_API_CHAT;
    if (o->api) {
        int a = oai_api_from_name(o->api);
        if (a < 0) {
            char names[256];
            oai_api_list(names, sizeof names);
            return runopts_errf(err, errlen, "--api: expected %s, got \"%s\"", names, o->api);
        }
        tc->api = (enum oai_api)a;
    }
    if ((tc->api == OAI_API_ANTHROPIC || tc->api == OAI_API_RESPONSES) && o->calibrate)
        return runopts_errf(err, errlen,
                            "--calibrate: its probes speak OpenAI chat, not "
                            "%s; fit against an OpenAI chat endpoint of the same "
                            "model with llmload calibrate and pass --calibration FILE",
                            oai_api_name(tc->api));
    tc->stream = !o->no_stream;
    if (runopts_embeddings_check(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    if (o->prompt_ids && runopts_prompt_ids_check(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    if (runopts_images(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    tc->prompt_ids = o->prompt_ids;
    tc->prompt_id_range = (struct chatbody_id_range){CHATBODY_ID_MIN, CHATBODY_ID_MAX};
    if (o->prompt_id_range && !o->prompt_ids)
        return runopts_errf(err, errlen,
                            "--prompt-id-range: goes with --prompt-ids (token-ID "
                            "prompts); add it, or drop --prompt-id-range");
    if (o->prompt_id_range &&
        runopts_prompt_id_range(o->prompt_id_range, &tc->prompt_id_range, err, errlen) != 0)
        return LL_E_INVAL;
    tc->ignore_eos = o->ignore_eos;
    tc->http2 = o->http2;
    if (!o->http_client || strcmp(o->http_client, "auto") == 0)
        tc->client = TRANSPORT_CLIENT_AUTO;
    else if (strcmp(o->http_client, "native") == 0)
        tc->client = TRANSPORT_CLIENT_NATIVE;
    else if (strcmp(o->http_client, "curl") == 0)
        tc->client = TRANSPORT_CLIENT_CURL;
    else
        return runopts_errf(err, errlen,
                            "--http-client: expected auto, native or curl, got "
                            "\"%s\"",
                            o->http_client);
    if (tc->client == TRANSPORT_CLIENT_NATIVE && o->http2)
        return runopts_errf(err, errlen,
                            "--http-client native: speaks HTTP/1.1 only; drop "
                            "--http2 or use curl");
    for (size_t i = 0; i < o->n_urls; i++) {
        if (tc->client == TRANSPORT_CLIENT_NATIVE && strncasecmp(o->urls[i], "http://", 7) != 0)
            return runopts_errf(err, errlen,
                                "--http-client native: plain http:// only (got "
                                "\"%.80s\"); use curl for TLS",
                                o->urls[i]);
    }
    /* The environment's choice, which transport_client_choose takes when
     * no --http-client is given: refused here as the flag is, naming it,
     * rather than failing after the probes with a flag never passed. */
    const char *env = getenv("LLMLOAD_HTTP_CLIENT");
    const char *tls_url = strncasecmp(tc->base_url, "http://", 7) != 0 ? tc->base_url : NULL;
    for (size_t i = 0; i < o->n_urls && !tls_url; i++)
        if (strncasecmp(o->urls[i], "http://", 7) != 0)
            tls_url = o->urls[i];
    if (tc->client == TRANSPORT_CLIENT_AUTO && env && strcmp(env, "native") == 0 && tls_url)
        return runopts_errf(err, errlen,
                            "LLMLOAD_HTTP_CLIENT=native: plain http:// only (got \"%.80s\"); "
                            "unset it, or set it to curl, for TLS",
                            tls_url);
    if (o->cacert && runopts_check_cacert(o->cacert, err, errlen) != 0)
        return LL_E_INVAL;
    tc->insecure = o->insecure;
    tc->cacert = o->cacert;
    if (timeout_flag("--timeout-connect", o->t_connect, 10 * LL_NS_PER_SEC, &tc->connect_timeout_ns,
                     err, errlen) != 0 ||
        timeout_flag("--timeout-first-token", o->t_first, 60 * LL_NS_PER_SEC,
                     &tc->first_token_timeout_ns, err, errlen) != 0 ||
        timeout_flag("--timeout-idle", o->t_idle, 30 * LL_NS_PER_SEC, &tc->idle_timeout_ns, err,
                     errlen) != 0 ||
        timeout_flag("--timeout-total", o->t_total, 600 * LL_NS_PER_SEC, &tc->total_timeout_ns, err,
                     errlen) != 0)
        return LL_E_INVAL;
    tc->max_line_bytes = SSE_DEFAULT_MAX_LINE;
    if (o->max_line) {
        uint64_t m;
        if (runopts_count("--max-line", o->max_line, 64, &m, err, errlen) != 0)
            return LL_E_INVAL;
        if (m > (64u << 20))
            return runopts_errf(err, errlen, "--max-line: at most 64M, got \"%s\"", o->max_line);
        tc->max_line_bytes = (size_t)m;
    }
    tc->seed = workload_content_seed(seed, cfg->prompt_salt);
    return runopts_extra_body(o, cfg, err, errlen);
}
