/* runconfig.c: what a parsed run configuration says of itself: run.json's
 * config object, the load mode's label, the summary's facts, and the open
 * files limit raised for the run (runopts.h). Split from runopts.c, which
 * parses and checks the flags. */
#include "cli/runopts.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "measure/results.h"
#include "measure/verdict.h"
#include "sweep/steady.h"
#include "util/util.h"
#include "workload/dataset.h"
#include "workload/extrabody.h"

/* --burst's bursts, in time order, as run.json's config.bursts: each
 * one's at_ns and count, and its prompt and output tokens (null: drawn
 * as usual). A merge reads them to know the load did not hold still. */
static json_t *config_bursts_json(const struct run_config *cfg)
{
    json_t *a = json_array();
    for (size_t i = 0; i < cfg->n_bursts; i++) {
        const struct burst *b = &cfg->bursts[i];
        json_t *o = json_object();
        json_object_set_new(o, "at_ns", json_integer((json_int_t)b->at_ns));
        json_object_set_new(o, "count", json_integer(b->count));
        json_object_set_new(o, "prompt_tokens",
                            b->prompt_tokens ? json_integer(b->prompt_tokens) : json_null());
        json_object_set_new(o, "output_tokens",
                            b->output_tokens ? json_integer(b->output_tokens) : json_null());
        json_array_append_new(a, o);
    }
    return a;
}

/* The load model's keys of run.json's config into c: open, closed or
 * capped, with the keys that mode has (rate and arrival unless closed,
 * with the ramp and bursts when given; the cap; users with pace or think
 * time). */
static void config_load_json(json_t *c, const struct run_config *cfg)
{
    char buf[DIST_SPEC_MAX];
    const char *mode = cfg->mode == LOAD_OPEN     ? "open"
                       : cfg->mode == LOAD_CLOSED ? "closed"
                                                  : "capped";
    json_object_set_new(c, "load_model", json_string(mode));
    if (cfg->mode != LOAD_CLOSED) {
        json_object_set_new(c, "rate_per_s", json_real(cfg->arrival.rate_per_s));
        json_object_set_new(c, "arrival", json_string(arrival_kind_name(cfg->arrival.kind)));
        json_object_set_new(c, "burstiness", json_real(cfg->arrival.burstiness));
        if (cfg->arrival.ramp_to_per_s > 0)
            json_object_set_new(c, "ramp_to_per_s", json_real(cfg->arrival.ramp_to_per_s));
        if (cfg->n_bursts > 0)
            json_object_set_new(c, "bursts", config_bursts_json(cfg));
    }
    if (cfg->mode == LOAD_CAPPED) {
        json_object_set_new(c, "max_concurrency", json_integer(cfg->max_concurrency));
        json_object_set_new(c, "on_cap", json_string(cfg->on_cap_drop ? "drop" : "queue"));
    }
    if (cfg->mode == LOAD_CLOSED) {
        json_object_set_new(c, "users", json_integer(cfg->users));
        if (cfg->pace_ns) {
            json_object_set_new(c, "pace_ns", json_integer((json_int_t)cfg->pace_ns));
        } else {
            dist_format(&cfg->think, buf, sizeof buf);
            json_object_set_new(c, "think", json_string(buf));
        }
    }
}

/* The request lengths into c: prompt and output tokens (the empirical
 * file's spec, "dataset", or the canonical DIST), the --lengths pairs
 * file, the dataset, the images and the calibration, each when in use. */
static void config_lengths_json(json_t *c, const struct run_opts *o, const struct run_config *cfg)
{
    char buf[DIST_SPEC_MAX];
    dist_format(&cfg->workload.prompt_tokens, buf, sizeof buf);
    json_object_set_new(c, "prompt_tokens",
                        json_string(cfg->workload.prompt_emp ? o->prompt_tokens
                                    : cfg->workload.dataset  ? "dataset"
                                                             : buf));
    dist_format(&cfg->workload.output_tokens, buf, sizeof buf);
    json_object_set_new(c, "output_tokens",
                        json_string(cfg->workload.output_emp ? o->output_tokens : buf));
    if (cfg->workload.pairs)
        json_object_set_new(c, "lengths", json_string(o->lengths));
    if (cfg->workload.dataset) {
        json_t *ds = json_object();
        json_object_set_new(ds, "file", json_string(o->dataset));
        json_object_set_new(ds, "entries", json_integer((json_int_t)cfg->workload.dataset->n));
        json_object_set_new(ds, "skipped",
                            json_integer((json_int_t)cfg->workload.dataset->skipped_total));
        json_object_set_new(c, "dataset", ds);
    }
    if (cfg->workload.has_batch) {
        /* openai-embeddings' inputs per request (--batch), as given again. */
        dist_format(&cfg->workload.batch, buf, sizeof buf);
        json_object_set_new(c, "batch", json_string(buf));
    }
    const struct image_cfg *im = &cfg->workload.images;
    if (im->set) {
        /* As the flags would give them again: the count's canonical DIST,
         * the sizes with their weights, the format. */
        json_t *k = json_object();
        dist_format(&im->count, buf, sizeof buf);
        json_object_set_new(k, "count", json_string(buf));
        json_t *sizes = json_array();
        for (size_t i = 0; i < im->n_sizes; i++)
            json_array_append_new(sizes, json_pack("{s:I,s:I,s:f}", "w", (json_int_t)im->sizes[i].w,
                                                   "h", (json_int_t)im->sizes[i].h, "weight",
                                                   im->sizes[i].weight));
        json_object_set_new(k, "sizes", sizes);
        json_object_set_new(k, "format", json_string(image_format_name(im->format)));
        if (im->prefix_count > 0)
            json_object_set_new(k, "prefix_images", json_integer(im->prefix_count));
        json_object_set_new(c, "images", k);
    }
    if (cfg->workload.calib.tokens_per_word > 0) {
        json_t *k = json_object();
        json_object_set_new(k, "file", o->calibration ? json_string(o->calibration) : json_null());
        json_object_set_new(k, "auto", json_boolean(o->calibrate != NULL));
        json_object_set_new(k, "tokens_per_word", json_real(cfg->workload.calib.tokens_per_word));
        json_object_set_new(k, "intercept_tokens", json_real(cfg->workload.calib.intercept_tokens));
        json_object_set_new(k, "fit", calib_fit_json(&cfg->calib_fit));
        json_object_set_new(c, "calibration", k);
    }
}

/* The rest of the workload's shape into c: ignore_eos, the --workload
 * file, class names, all_unique, and the shared prefix and cancellation
 * when set. */
static void config_shape_json(json_t *c, const struct run_opts *o, const struct run_config *cfg)
{
    json_object_set_new(c, "ignore_eos", json_boolean(cfg->workload.ignore_eos));
    json_object_set_new(c, "workload_file", o->workload ? json_string(o->workload) : json_null());
    if (cfg->workload.classes) {
        json_t *names = json_array();
        for (size_t i = 0; i < cfg->workload.classes->n; i++)
            json_array_append_new(names, json_string(cfg->workload.classes->classes[i].name));
        json_object_set_new(c, "classes", names);
    }
    json_object_set_new(c, "all_unique", json_boolean(o->all_unique));
    const struct wl_prefix *px = &cfg->workload.prefix;
    if (px->fraction > 0) {
        json_t *p = json_object();
        json_object_set_new(p, "fraction", json_real(px->fraction));
        json_object_set_new(p, "groups", json_integer(px->groups));
        json_object_set_new(p, "tokens", json_integer(px->tokens));
        json_object_set_new(c, "prefix", p);
    }
    const struct wl_cancel *cx = &cfg->workload.cancel;
    if (cx->kind != WL_CANCEL_NONE) {
        json_t *k = json_object();
        char d[DIST_SPEC_MAX];
        dist_format(&cx->after, d, sizeof d);
        json_object_set_new(k, "fraction", json_real(cx->fraction));
        json_object_set_new(k, cx->kind == WL_CANCEL_AFTER_TIME ? "after" : "after_tokens",
                            json_string(d));
        json_object_set_new(c, "cancel", k);
    }
}

/* --extra-body into c: "extra_body" (the object, or null), with
 * "extra_body_override", and "class_extra_body" {class: its merged object}
 * for the --workload classes that gave their own. */
static void config_extra_body_json(json_t *c, const struct run_opts *o,
                                   const struct run_config *cfg)
{
    const struct transport_config *tc = &cfg->transport;
    const struct wl_file *f = cfg->workload.classes;
    const struct extrabody *x = tc->extra;
    json_object_set_new(c, "extra_body", x && x[0].json ? json_incref(x[0].json) : json_null());
    json_object_set_new(c, "extra_body_override", json_boolean(o->extra_body_override));
    json_t *cls = NULL;
    for (size_t i = 1; x && f && i < tc->n_extra && i <= f->n; i++) {
        if (!x[i].own || !x[i].json)
            continue;
        if (!cls)
            cls = json_object();
        json_object_set(cls, f->classes[i - 1].name, x[i].json);
    }
    if (cls)
        json_object_set_new(c, "class_extra_body", cls);
}

/* The target and HTTP client into c: URL, API, model, streaming, the
 * client asked for and the one transport_client_choose picks, headers
 * (redacted), the key's variable and the timeouts. */
static void config_transport_json(json_t *c, const struct run_opts *o,
                                  const struct transport_config *tc, const char *model)
{
    json_object_set_new(c, "url", json_string(tc->base_url));
    /* Several --url (docs/run.md): each, and the weights when given. */
    if (tc->endpoints.n > 1) {
        json_t *urls = json_array(), *w = tc->endpoints.weighted ? json_array() : json_null();
        for (uint32_t i = 0; i < tc->endpoints.n; i++) {
            json_array_append_new(urls, json_string(tc->endpoints.url[i]));
            if (tc->endpoints.weighted)
                json_array_append_new(w, json_integer(tc->endpoints.weight[i]));
        }
        json_object_set_new(c, "urls", urls);
        json_object_set_new(c, "url_weights", w);
    }
    json_object_set_new(c, "api", json_string(oai_api_name(tc->api)));
    json_object_set_new(c, "model", model ? json_string(model) : json_null());
    json_object_set_new(c, "stream", json_boolean(tc->stream));
    json_object_set_new(c, "prompt_ids", json_boolean(tc->prompt_ids));
    json_t *range = json_null();
    if (tc->prompt_ids)
        range = json_pack("[II]", (json_int_t)tc->prompt_id_range.min,
                          (json_int_t)tc->prompt_id_range.max);
    json_object_set_new(c, "prompt_id_range", range);
    json_object_set_new(c, "http2", json_boolean(tc->http2));
    json_object_set_new(c, "http_client", json_string(o->http_client ? o->http_client : "auto"));
    const char *why_not_native;
    json_object_set_new(
        c, "http_client_used",
        json_string(transport_client_choose(tc, &why_not_native) == TRANSPORT_CLIENT_NATIVE
                        ? "native"
                        : "curl"));
    json_object_set_new(c, "insecure", json_boolean(tc->insecure));
    json_object_set_new(c, "headers", results_redact_headers(o->headers, o->n_headers));
    json_object_set_new(c, "api_key_env", json_string(runopts_api_key_env(o, tc->api)));
    json_object_set_new(c, "timeout_connect_ns", json_integer((json_int_t)tc->connect_timeout_ns));
    json_object_set_new(c, "timeout_first_token_ns",
                        json_integer((json_int_t)tc->first_token_timeout_ns));
    json_object_set_new(c, "timeout_idle_ns", json_integer((json_int_t)tc->idle_timeout_ns));
    json_object_set_new(c, "timeout_total_ns", json_integer((json_int_t)tc->total_timeout_ns));
}

const char *runopts_api_key_env(const struct run_opts *o, enum oai_api api)
{
    if (o->api_key_env)
        return o->api_key_env;
    return api == OAI_API_ANTHROPIC ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
}

/* The keys in the order run.json has always had them, so two files diff
 * cleanly: load model, limits, lengths, workload shape, transport,
 * threads, SLO. */
json_t *runopts_config_json(const struct run_opts *o, const struct run_config *cfg,
                            const char *model)
{
    json_t *c = json_object();
    char buf[DIST_SPEC_MAX];
    config_load_json(c, cfg);
    json_object_set_new(c, "duration_ns", json_integer((json_int_t)cfg->duration_ns));
    json_object_set_new(c, "requests", json_integer((json_int_t)cfg->max_requests));
    json_object_set_new(c, "warmup_ns", json_integer((json_int_t)cfg->warmup_ns));
    json_object_set_new(c, "cold_start", json_integer((json_int_t)cfg->cold_requests));
    json_object_set_new(c, "max_tokens_total", json_integer((json_int_t)cfg->max_tokens_total));
    json_object_set_new(c, "seed", json_integer((json_int_t)cfg->workload.seed));
    json_object_set_new(c, "prompt_salt", json_integer((json_int_t)cfg->prompt_salt));
    json_object_set_new(c, "prompt_salt_auto", json_boolean(cfg->prompt_salt_auto));
    config_lengths_json(c, o, cfg);
    config_shape_json(c, o, cfg);
    config_transport_json(c, o, &cfg->transport, model);
    config_extra_body_json(c, o, cfg);
    json_object_set_new(c, "threads", json_integer(cfg->threads));
    if (cfg->shard_launcher) {
        json_object_set_new(c, "shard", json_integer(cfg->shard));
        json_object_set_new(c, "shards", json_integer(cfg->shards));
        json_object_set_new(c, "shard_launcher", json_string(cfg->shard_launcher));
    }
    if (cfg->start_at_unix_ns) {
        char at[40];
        runopts_fmt_utc(cfg->start_at_unix_ns, at, sizeof at);
        json_object_set_new(c, "start_at", json_string(at));
    }
    json_object_set_new(c, "grace_ns", json_integer((json_int_t)cfg->grace_ns));
    if (slo_is_set(&cfg->slo)) {
        slo_format(&cfg->slo, buf, sizeof buf);
        json_object_set_new(c, "slo", json_string(buf));
    }
    if (o->prom.url)
        json_object_set_new(c, "prometheus", promopts_json(&o->prom));
    return c;
}

void runopts_fmt_utc(int64_t unix_ns, char *buf, size_t len)
{
    time_t t = (time_t)(unix_ns / (int64_t)LL_NS_PER_SEC);
    long ns = (long)(unix_ns % (int64_t)LL_NS_PER_SEC);
    struct tm tm;
    char day[32] = "?";
    if (gmtime_r(&t, &tm))
        strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%09ldZ", day, ns);
}

double runopts_shard_share(const struct run_config *cfg)
{
    return cfg->shards > 1 ? 1.0 / cfg->shards : 1.0;
}

void runopts_shard_label(const struct run_config *cfg, char *buf, size_t len)
{
    size_t n = strlen(buf);
    if (cfg->shard_launcher && n < len)
        snprintf(buf + n, len - n, " (shard %u of %u)", cfg->shard, cfg->shards);
}

void runopts_mode_label(const struct run_config *cfg, char *buf, size_t len)
{
    if (cfg->mode == LOAD_CLOSED) {
        char p[16];
        if (cfg->pace_ns)
            snprintf(buf, len, "closed-loop, %u users, pace %s", cfg->users,
                     ll_fmt_duration(cfg->pace_ns, p, sizeof p));
        else
            snprintf(buf, len, "closed-loop, %u users", cfg->users);
        return;
    }
    /* The rates, a ramp's both ends: a capped ramp said only its start
     * ("capped open-loop constant 0/s" for --rate 0 --ramp-to 40). */
    char rates[96];
    const char *kind = arrival_kind_name(cfg->arrival.kind);
    if (cfg->arrival.ramp_to_per_s > 0)
        snprintf(rates, sizeof rates, "%s, ramp %g/s to %g/s", kind, cfg->arrival.rate_per_s,
                 cfg->arrival.ramp_to_per_s);
    else
        snprintf(rates, sizeof rates, "%s %g/s", kind, cfg->arrival.rate_per_s);
    if (cfg->mode == LOAD_CAPPED)
        snprintf(buf, len, "capped open-loop %s, max-concurrency %u (%s)", rates,
                 cfg->max_concurrency, cfg->on_cap_drop ? "drop" : "queue");
    else
        snprintf(buf, len, "open-loop %s", rates);
}

void runopts_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0 && getrlimit(RLIMIT_NOFILE, &rl) != 0)
            return;
    }
    /* Grow the descriptor table now, while the process has one thread.
     * The kernel grows it by doubling, and in a process with several
     * threads every doubling waits for an RCU grace period
     * (expand_fdtable): 8-13 ms on the development VM, so the worker that
     * opened the 256th, 512th, ... connection stalled that long mid-run
     * and every send due meanwhile was late. A duplicate at the highest
     * descriptor we want sizes the table once (about 8 bytes a slot, in
     * the kernel). */
    rlim_t want = rl.rlim_cur < RUNOPTS_FD_TABLE ? rl.rlim_cur : RUNOPTS_FD_TABLE;
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    if (want > 1 && (rlim_t)fd < want - 1) {
        /* F_DUPFD, not dup2: it never replaces a descriptor that is open
         * up there (one inherited, say); it takes the next free one. */
        int hi = fcntl(fd, F_DUPFD, (int)(want - 1));
        if (hi >= 0)
            close(hi);
    }
    close(fd);
}

/* The part of a run's window whose in-flight count says whether a
 * backlog grew: from past the fill-up (the system starts empty at t = 0
 * and fills for as long as a request stays in it when nothing waits ahead
 * of it: the run's least TTFT, warm-up included, plus the 90th percentile of the ok requests'
 * streaming, end - first; a warm-up may already cover it) to the last
 * arrival offered (after it the count only drains, as a --requests run's
 * window goes on to). Into *from_ns, *to_ns; 1 when that part spans at
 * least SWEEP_BACKLOG_SPAN_MIN_NS, else 0 (the backlog is not judged: no ok
 * request to size the fill by, or a window hardly longer than it). */
static int run_backlog_span(const struct run_config *cfg, const struct driver_result *res,
                            uint64_t *from_ns, uint64_t *to_ns)
{
    /* The run's least TTFT, the warm-up's included: the window's alone
     * is a queued one when the warm-up built a backlog, which put the
     * fill-up past the window (100/s against a sim serving 22/s, 1.5 s
     * of warm-up: its least TTFT 1.9 s, the backlog never judged). */
    uint64_t least = res->ttft_least_ns ? res->ttft_least_ns : UINT64_MAX;
    if (hist_count(res->ttft_first_half))
        least = LL_MIN(least, hist_min(res->ttft_first_half));
    if (hist_count(res->ttft_second_half))
        least = LL_MIN(least, hist_min(res->ttft_second_half));
    if (least == UINT64_MAX || !hist_count(res->stream))
        return 0;
    uint64_t fill = least + hist_percentile(res->stream, 90);
    *from_ns = LL_MAX(cfg->warmup_ns, fill);
    *to_ns = LL_MIN(cfg->warmup_ns + res->window_ns, res->last_sched_ns);
    return *to_ns > *from_ns && *to_ns - *from_ns >= SWEEP_BACKLOG_SPAN_MIN_NS;
}

/* Steady state, by a sweep step's rule (docs/sweep.md, "Steady"; docs/run.md,
 * "Steady"): did the TTFT tail rise from the window's first half to its
 * second, or the requests in the system grow? Judged where the offered
 * load holds still over the window: not a ramp, a switch, bursts or a
 * trace's own times, not an INVALID run (its latencies carry the
 * client's own delay: 4/s with every send 1 s late read steady true,
 * and a generator falling further behind reads "not steady ... the load
 * outran what was served", blaming the load for the client's fault),
 * and not a run a signal or the spend guard cut short
 * (a stop_reason: offering ended inside the window, and the drain that
 * followed was measured as part of it, which hid a backlog of seconds
 * behind a steady true). Not sessions either: their requests in the
 * system grow with the run until the first sessions end, and a later turn
 * carries a longer context, both by design (a 10 s run of 4 sessions/s of
 * 6 turns read "in-flight requests grew by 19.3" at a TTFT p50 of 13 ms).
 * The backlog is judged past the fill-up alone (run_backlog_span): a run
 * of 2 s requests at 8/s over 4 s, without a warm-up, read "in-flight
 * requests grew by 14.8" while the count rose to its level once and held
 * it. Neither test possible (too few requests for the tail, a window too
 * short past the fill-up): not judged. Each case not judged says which in
 * steady_unjudged (sweep_steady_unjudged's words): a bare null told "run
 * longer" from "a ramp" by nothing. A closed loop's warning does not
 * blame the load: its users send only as answers come, so what grew was
 * the time each waited (40 users thinking 1 s, a 1.5 s stall in the
 * second half: "the load outran what was served", 0b1a117's parent). Nor
 * the server alone: more users than it serves at once fill its queue for
 * as long as they take to come round, at a rate it serves throughout (80
 * users thinking 2 s, a sim serving two at once, TPOT flat at 4.4 ms: in
 * flight "grew by 45.4" over 4 s, and 0b1a117 said "the server slowed").
 * An open loop's names both of its causes too: a rate past capacity, or
 * a server that slowed or stalled at a rate it holds (30/s of 8 tokens,
 * a 1.5 s stall: TTFT p75 from 11 ms to 929 ms, and the parent sent the
 * user to llmload sweep alone). */
static void run_steady(const struct run_config *cfg, const struct driver_result *res,
                       struct summary_info *info)
{
    info->steady_judged = 0;
    info->steady_warning[0] = '\0';
    struct sweep_steady_case c = {
        .trace = cfg->trace != NULL,
        .sessions = cfg->mode == LOAD_SESSIONS,
        .bursts = cfg->n_bursts > 0,
        .rate_changes = cfg->arrival.ramp_to_per_s != 0 || cfg->arrival.switch_to_per_s != 0,
        .no_first_token = cfg->transport.api == OAI_API_EMBEDDINGS,
        .invalid = info->invalid,
        .interrupted = res->interrupted,
        .stop_reason = res->stop_reason,
    };
    if (sweep_steady_unjudged(&c, info->steady_unjudged, sizeof info->steady_unjudged))
        return;
    /* The time the halves' requests were scheduled over: the window up to
     * the last arrival (a --requests run's window runs on through the
     * drain, when nothing more was scheduled). */
    uint64_t end = LL_MIN(cfg->warmup_ns + res->window_ns, res->last_sched_ns);
    uint64_t offered_ns = end > cfg->warmup_ns ? end - cfg->warmup_ns : 0;
    struct sweep_tail_test tail;
    sweep_tail_test(res->ttft_first_half, res->ttft_second_half, offered_ns, &tail);
    uint64_t from = 0, to = 0;
    int backlog = run_backlog_span(cfg, res, &from, &to);
    c.tested = 1;
    c.tail_judged = tail.judged;
    c.tail_ok_min = LL_MIN(hist_count(res->ttft_first_half), hist_count(res->ttft_second_half));
    c.backlog_judged = backlog;
    c.backlog_span_ns = to > from ? to - from : 0;
    c.done = res->stats.completed;
    c.failed = res->stats.completed - LL_MIN(res->stats.by_kind[REC_OK], res->stats.completed);
    c.requests_bound = cfg->max_requests > 0 && cfg->duration_ns == 0;
    if (sweep_steady_unjudged(&c, info->steady_unjudged, sizeof info->steady_unjudged))
        return;
    double grew =
        backlog ? sweep_inflight_growth(res->series, res->n_series, from, to, to - from, 0) : 0;
    char why[160];
    info->steady_judged = 1;
    info->steady = sweep_steady_verdict(&tail, grew, res->inflight_mean, "run", why, sizeof why);
    if (info->steady)
        return;
    if (cfg->mode == LOAD_CLOSED)
        snprintf(info->steady_warning, sizeof info->steady_warning,
                 "not steady: %s: at a fixed %u users the time each waited grew (a closed "
                 "loop sends only as answers come, so the load did not): its users were still "
                 "filling the server's queue (a longer --warmup skips that) or the server "
                 "slowed (a stall, a cache filling), so these latencies depend on when the "
                 "run started and how long it ran",
                 why, cfg->users);
    else
        snprintf(info->steady_warning, sizeof info->steady_warning,
                 "not steady: %s: the load outran what was served: a rate past what the "
                 "server holds, whose latencies grow with the run's length (llmload sweep "
                 "finds the rate it holds), or the server slowed or stalled within the run",
                 why);
}

void runopts_summary_info(const struct run_config *cfg, const struct driver_result *res,
                          const char *model, const char *kept, int check_achieved, char *slo_buf,
                          size_t slo_len, struct summary_info *info)
{
    info->window_ns = res->window_ns;
    info->warmup_ns = cfg->warmup_ns;
    info->offering_ns =
        summary_offering_ns(cfg->duration_ns, cfg->warmup_ns, res->window_ns, res->last_sched_ns);
    info->offering_ran_on =
        summary_offering_ran_on(cfg->duration_ns, cfg->warmup_ns, res->window_ns);
    info->cold_requests = cfg->cold_requests;
    info->cold = cfg->cold_requests ? &res->cold : NULL;
    info->inflight_mean = res->inflight_mean;
    info->inflight_max = res->inflight_max;
    info->target_url = cfg->transport.base_url;
    info->model = model;
    info->version = LL_VERSION;
    info->seed = cfg->workload.seed;
    info->has_prompt_salt = 1;
    info->prompt_salt = cfg->prompt_salt;
    info->prompt_salt_auto = cfg->prompt_salt_auto;
    info->interrupted = res->interrupted;
    info->stop_reason = res->stop_reason;
    info->records_written = res->records_written;
    info->shard = cfg->shard;
    info->shards = cfg->shards;
    info->prompts = driver_prompts(cfg);
    if (slo_is_set(&cfg->slo)) {
        slo_format(&cfg->slo, slo_buf, slo_len);
        info->slo = slo_buf;
    }
    /* A trace's classes have no SLO of their own (the run's). */
    const struct wl_file *wf = cfg->trace ? NULL : cfg->workload.classes;
    for (size_t k = 0; wf && k < wf->n; k++)
        info->slo_by_class |= slo_is_set(&wf->classes[k].slo);
    /* The self-check: did the generator's lateness change what it reports? */
    struct verdict_input v = {
        .lateness = res->stats.lateness,
        .tolerance = cfg->lateness_tolerance,
        .late_sends = res->late_sends,
        .late_asleep = res->late_asleep,
        .cpu_ns = res->worker_cpu_ns,
        .invol_switches = res->worker_invol_switches,
        .wall_ns = res->worker_wall_ns,
        .kept = kept,
        .check_achieved = check_achieved,
        .scheduled = res->stats.scheduled,
        .sent_in_window = res->sent_in_window,
    };
    verdict_latencies(&v, &res->stats);
    struct verdict vd;
    info->invalid = verdict_judge(&v, &vd);
    snprintf(info->invalid_reason, sizeof info->invalid_reason, "%s", vd.reason);
    info->invalid_cause = vd.cause;
    snprintf(info->lateness_warning, sizeof info->lateness_warning, "%s", vd.warning);
    summary_cut_short_warning(&res->stats, info->cut_short_warning, sizeof info->cut_short_warning);
    info->lateness_moved = vd.worst;
    info->lateness_tolerance = v.tolerance > 0 ? v.tolerance : VERDICT_TOLERANCE_DEFAULT;
    run_steady(cfg, res, info);
    /* The prefix cache: did it start warm? */
    const struct stats *st = &res->stats;
    info->workload_share_known = isfinite(res->workload_cached_share);
    info->workload_cached_share = res->workload_cached_share;
    double reported = st->cached_reported && st->prompt_tokens
                          ? (double)st->cached_tokens / (double)st->prompt_tokens
                          : NAN;
    verdict_cache_carryover(reported, res->workload_cached_share, st->cached_reported,
                            info->cache_warning, sizeof info->cache_warning);
}
