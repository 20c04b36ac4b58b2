/* cmd_sim.c: `llmload sim`, the built-in simulated inference server.
 * Parses the flags into a server_config (profile first, then every engine
 * flag overriding it), prints the base address as the first line of
 * stdout, and runs the server until SIGINT/SIGTERM or --duration. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/badarg.h"
#include "cli/cmds.h"
#include "sim/engine.h"
#include "sim/faults.h"
#include "sim/gpu.h"
#include "sim/profile.h"
#include "sim/server.h"
#include "util/util.h"
#include "workload/tokenizer.h"

#define SIM_DEFAULT_PORT 8000
#define SIM_DEFAULT_MAX_TOKENS 16
#define SIM_DEFAULT_MAX_BODY_BYTES (8u * 1024 * 1024)
#define SIM_DEFAULT_MAX_HEAD_BYTES (64u * 1024)
#define SIM_DEFAULT_CONN_BUFFER_BYTES (8u * 1024 * 1024)
#define SIM_DEFAULT_SLOW_HEADERS_NS (2 * LL_NS_PER_SEC)

struct sim_args {
    struct server_config cfg;
    struct sim_profile profile;
    const char *profile_name;
    int have_seed;
    uint64_t seed;
    int explain;
    int help;
    int stall_at_set, stall_for_set;
    const char *gpu_flag; /* the last --gpus/--gpu-* flag given, or NULL */
    int bad;              /* a flag was refused: err says why */
    char err[512];        /* the first refusal's one-line reason */
};

/* How a flag's value is kept, in struct sim_args at the flag's off. */
enum sim_store {
    SIM_CODE,   /* on_first or on_second's code takes it */
    SIM_STR,    /* const char *: the value as given */
    SIM_SET,    /* int: set to lo (a flag without a value) */
    SIM_NS,     /* uint64_t: a duration (parse_dur) */
    SIM_WHOLE,  /* an unsigned integer size bytes wide, in [lo, hi] (parse_whole) */
    SIM_NONNEG, /* double: a non-negative number (parse_nonneg) */
};

/* A flag of llmload sim, as data: its name, whether it takes a value, and
 * where and how that value is kept; gpu: a --gpus/--gpu-* flag, which
 * needs --gpu-metrics. */
struct sim_opt {
    const char *name;
    int has_arg;
    enum sim_store store;
    size_t off, size;
    uint64_t lo, hi;
    int gpu;
};

/* Where a field of the server's configuration is, and how wide. */
#define CFG(f) offsetof(struct sim_args, cfg.f), sizeof(((struct sim_args *)0)->cfg.f)
/* SIM_WHOLE keeps --max-body and --conn-buffer (size_t) as 8 bytes. */
_Static_assert(sizeof(size_t) == sizeof(uint64_t), "size_t is not 64 bits");

/* clang-format off */
static const struct sim_opt sim_opts[] = {
    {"--host", 1, SIM_STR, CFG(host), 0, 0, 0},
    {"--port", 1, SIM_WHOLE, CFG(port), 0, 65535, 0},
    {"--profile", 1, SIM_CODE, 0, 0, 0, 0, 0},
    {"--model-name", 1, SIM_CODE, 0, 0, 0, 0, 0},
    {"--duration", 1, SIM_CODE, 0, 0, 0, 0, 0},
    {"--seed", 1, SIM_CODE, 0, 0, 0, 0, 0},
    {"--log", 1, SIM_STR, CFG(log_path), 0, 0, 0},
    {"--explain", 0, SIM_SET, offsetof(struct sim_args, explain), sizeof(int), 1, 0, 0},
    {"--help", 0, SIM_CODE, 0, 0, 0, 0, 0},
    {"-h", 0, SIM_CODE, 0, 0, 0, 0, 0},
    {"--max-num-seqs", 1, SIM_WHOLE, CFG(engine.max_num_seqs), 1, UINT32_MAX, 0},
    {"--kv-tokens", 1, SIM_WHOLE, CFG(engine.kv_tokens), 1, (uint64_t)1 << 50, 0},
    {"--block-tokens", 1, SIM_WHOLE, CFG(engine.block_tokens), 1, 1 << 20, 0},
    {"--prefill-chunk", 1, SIM_WHOLE, CFG(engine.prefill_chunk_tokens), 1, UINT32_MAX, 0},
    {"--step-base", 1, SIM_NS, CFG(engine.step_base_ns), 0, 0, 0},
    {"--step-per-prefill-token", 1, SIM_NS, CFG(engine.step_prefill_token_ns), 0, 0, 0},
    {"--step-per-seq", 1, SIM_NS, CFG(engine.step_seq_ns), 0, 0, 0},
    {"--queue-limit", 1, SIM_WHOLE, CFG(engine.queue_limit), 0, UINT32_MAX, 0},
    {"--output-len-median", 1, SIM_CODE, 0, 0, 0, 0, 0},
    {"--output-len-sigma", 1, SIM_NONNEG, CFG(engine.natural_len_sigma), 0, 0, 0},
    {"--no-prefix-cache", 0, SIM_SET, CFG(engine.prefix_cache), 0, 0, 0},
    {"--cold-first", 1, SIM_NS, CFG(engine.cold_first_ns), 0, 0, 0},
    {"--stall-at", 1, SIM_CODE, 0, 0, 0, 0, 0},
    {"--stall-for", 1, SIM_CODE, 0, 0, 0, 0, 0},
    {"--stall-from", 1, SIM_CODE, 0, 0, 0, 0, 0},
    {"--fault", 1, SIM_CODE, 0, 0, 0, 0, 0},
    {"--slow-headers-delay", 1, SIM_NS, CFG(slow_headers_delay_ns), 0, 0, 0},
    {"--role-chunk", 0, SIM_SET, CFG(role_chunk), 1, 0, 0},
    {"--tokens-per-event", 1, SIM_WHOLE, CFG(tokens_per_event), 1, 1 << 20, 0},
    {"--default-max-tokens", 1, SIM_WHOLE, CFG(default_max_tokens), 1, 1 << 30, 0},
    {"--max-body", 1, SIM_WHOLE, CFG(max_body_bytes), 1, (uint64_t)1 << 32, 0},
    {"--conn-buffer", 1, SIM_WHOLE, CFG(conn_buffer_bytes), 1024, (uint64_t)1 << 34, 0},
    {"--tokenizer", 1, SIM_CODE, 0, 0, 0, 0, 0},
    {"--no-usage", 0, SIM_SET, CFG(no_usage), 1, 0, 0},
    {"--context-tokens", 1, SIM_WHOLE, CFG(context_tokens), 2, UINT32_MAX, 0},
    {"--vocab", 1, SIM_WHOLE, CFG(vocab), 1, TOKENIZER_ID_MAX + 1, 0},
    {"--prompt-counter-excludes-cached", 0, SIM_SET, CFG(prompt_excludes_cached), 1, 0, 0},
    {"--embeddings-dim", 1, SIM_WHOLE, CFG(embeddings_dim), 1, SERVER_MAX_EMBEDDINGS_DIM, 0},
    {"--gpu-metrics", 0, SIM_SET, CFG(gpu_metrics), 1, 0, 0},
    {"--gpus", 1, SIM_WHOLE, CFG(gpu.gpus), 1, GPU_MAX_GPUS, 1},
    {"--gpu-idle-watts", 1, SIM_NONNEG, CFG(gpu.idle_w), 0, 0, 1},
    {"--gpu-joules-per-token", 1, SIM_NONNEG, CFG(gpu.decode_seq_j), 0, 0, 1},
    {"--gpu-joules-per-prefill-token", 1, SIM_NONNEG, CFG(gpu.prefill_token_j), 0, 0, 1},
};
/* clang-format on */

/* clang-format off */
static void sim_usage(FILE *f)
{
    struct sim_profile p;
    sim_profile_get("default", &p);
    const struct engine_config *e = &p.engine;
    char b1[32], b2[32], b3[32];
    fprintf(f,
            "usage: llmload sim [options]\n"
            "\n"
            "An OpenAI-compatible simulated inference server (continuous batching,\n"
            "KV-cache, prefix cache, preemption, faults on command). Prints its base\n"
            "address (http://HOST:PORT) as the first line of stdout; clients use\n"
            "--url http://HOST:PORT/v1. Runs until SIGINT/SIGTERM or --duration.\n"
            "Durations take a unit (ns, us, ms, s, m, h); a bare number is seconds.\n"
            "\n"
            "server:\n"
            "  --host ADDR                 numeric address to listen on (default 127.0.0.1; ::1 for IPv6)\n"
            "  --port P                    TCP port, 0 = pick a free one (default %d)\n"
            "  --profile NAME              engine profile: default or instant (default default)\n"
            "  --model-name NAME           model id served by /v1/models (default llmload-sim)\n"
            "  --duration D                exit by itself after D (default: run until a signal)\n"
            "  --seed N                    seeds output lengths, output text and faults (default %llu)\n"
            "  --log FILE                  one JSON line per completion request (default: none)\n"
            "  --default-max-tokens N      max_tokens when a request gives none (default %d)\n"
            "  --max-body BYTES            request body limit, 413 beyond (default %u)\n"
            "  --conn-buffer BYTES         unwritten output per connection before it is dropped (default %u)\n"
            "  --tokenizer NAME            words (ceil(bytes/4) per word) or bytes2 (ceil(bytes/2) per\n"
            "                              word, a BOS and a chat template) (default words; docs/sim-engine.md)\n"
            "  --no-usage                  completion responses carry no \"usage\" (as some servers)\n"
            "  --context-tokens N          a request's context: prompt + output at most N tokens; a\n"
            "                              prompt of N or more gets a 400, an output that would pass\n"
            "                              it ends there with finish_reason length (default: none)\n"
            "  --vocab N                   vocabulary size, in /v1/models as meta.n_vocab; a prompt of\n"
            "                              token IDs with one of N or above gets a 400 (default %u)\n"
            "  --embeddings-dim N          floats in each /v1/embeddings vector (default %u)\n"
            "  --prompt-counter-excludes-cached\n"
            "                              /metrics as llama.cpp's server: its names, and a prompt\n"
            "                              counter without the tokens the prefix cache served\n"
            "  --gpu-metrics               /metrics also serves DCGM exporter series per GPU (power,\n"
            "                              energy counter, utilisation, memory, SM clock) from the\n"
            "                              power model of docs/sim.md\n"
            "  --gpus N                    GPUs the engine runs on, sharing its power (default 1)\n"
            "  --gpu-idle-watts W          power of each GPU between steps (default %g)\n"
            "  --gpu-joules-per-token J    energy of one decoded token, all GPUs (default %g)\n"
            "  --gpu-joules-per-prefill-token J\n"
            "                              energy of one prefilled token, all GPUs (default %g)\n"
            "  --explain                   describe the profile (after overrides) and exit\n"
            "  --help                      this text\n"
            "\n"
            "engine (each overrides the profile; defaults shown are the default profile's):\n"
            "  --max-num-seqs N            running batch bound, sequences (default %u)\n"
            "  --kv-tokens N               KV-cache capacity, tokens (default %llu)\n"
            "  --block-tokens N            KV block size, tokens (default %u)\n"
            "  --prefill-chunk N           prefill tokens per step (default %u)\n"
            "  --step-base DUR             fixed cost of a step (default %s)\n"
            "  --step-per-prefill-token DUR  cost per prefill token (default %s)\n"
            "  --step-per-seq DUR          cost per decoding sequence (default %s)\n"
            "  --queue-limit N             waiting requests before 429, 0 = unbounded (default %u)\n"
            "  --output-len-median N       median natural output length, tokens (default %g)\n"
            "  --output-len-sigma X        lognormal sigma of the natural length (default %g)\n"
            "  --no-prefix-cache           disable the prefix cache (default: enabled)\n"
            "  --cold-first D              the cold state: the first engine step after start, and\n"
            "                              after POST /reset_prefix_cache (which also empties the\n"
            "                              prefix cache), takes D longer (default 0)\n"
            "\n"
            "faults (one per request at most, drawn from --seed in arrival order):\n"
            "  --fault KIND:FRACTION       repeatable; KIND is 500, 503, 429, cut, malformed,\n"
            "                              slow-headers, role-only or reasoning (default: none)\n"
            "  --stall-at S --stall-for D  freeze the engine for D starting S after start (default: none)\n"
            "  --stall-from WHEN           start (default) or first-request: what --stall-at counts from\n"
            "  --slow-headers-delay D      delay of the slow-headers fault (default 2s)\n"
            "  --role-chunk                every chat stream starts with a role-only chunk (default off)\n"
            "  --tokens-per-event N        tokens coalesced into one SSE event (default 1)\n",
            SIM_DEFAULT_PORT, (unsigned long long)e->seed, SIM_DEFAULT_MAX_TOKENS,
            SIM_DEFAULT_MAX_BODY_BYTES, SIM_DEFAULT_CONN_BUFFER_BYTES, TOKENIZER_ID_MAX + 1,
            SERVER_DEFAULT_EMBEDDINGS_DIM, GPU_DEFAULT_IDLE_W, GPU_DEFAULT_DECODE_SEQ_J,
            GPU_DEFAULT_PREFILL_TOKEN_J, e->max_num_seqs,
            (unsigned long long)e->kv_tokens, e->block_tokens, e->prefill_chunk_tokens,
            ll_fmt_duration(e->step_base_ns, b1, sizeof(b1)),
            ll_fmt_duration(e->step_prefill_token_ns, b2, sizeof(b2)),
            ll_fmt_duration(e->step_seq_ns, b3, sizeof(b3)), e->queue_limit,
            e->natural_len_median_tokens, e->natural_len_sigma);
}
/* clang-format on */

static const struct sim_opt *find_opt(const char *arg, const char **inline_val)
{
    *inline_val = NULL;
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    for (size_t i = 0; i < LL_ARRAY_LEN(sim_opts); i++) {
        if (strlen(sim_opts[i].name) == n && strncmp(arg, sim_opts[i].name, n) == 0) {
            if (eq)
                *inline_val = eq + 1;
            return &sim_opts[i];
        }
    }
    return NULL;
}

/* Refuse a flag: keep the first reason (the walk stops there) for
 * sim_main to print. Parsing never exits. */
static void sim_bad(struct sim_args *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sim_bad(struct sim_args *a, const char *fmt, ...)
{
    if (a->bad)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->err, sizeof a->err, fmt, ap);
    va_end(ap);
    a->bad = 1;
}



/* A whole number in [lo, hi], with an optional k/M/G suffix. */
static uint64_t parse_whole(struct sim_args *a, const char *flag, const char *v, uint64_t lo,
                            uint64_t hi)
{
    double d;
    if (ll_parse_count(v, &d) < 0 || d < (double)lo || d > (double)hi || d != (double)(uint64_t)d)
        sim_bad(a, "%s: expected a whole number from %llu to %llu, got \"%s\"", flag,
                (unsigned long long)lo, (unsigned long long)hi, v);
    return a->bad ? 0 : (uint64_t)d;
}

static uint64_t parse_dur(struct sim_args *a, const char *flag, const char *v)
{
    uint64_t ns = 0;
    if (ll_parse_duration_ns(v, LL_NS_PER_SEC, &ns) < 0)
        sim_bad(a, "%s: expected a duration (e.g. 250ms, 1.5s), got \"%s\"", flag, v);
    return ns;
}

static double parse_nonneg(struct sim_args *a, const char *flag, const char *v)
{
    double d = 0;
    if (ll_parse_double(v, &d) < 0 || d < 0)
        sim_bad(a, "%s: expected a non-negative number, got \"%s\"", flag, v);
    return d;
}

/* Refuse an option for a reason badarg.h words, as sim_bad. */
static void sim_refuse(struct sim_args *a, enum badarg_kind k, const char *opt)
{
    if (!a->bad)
        badarg_say(a->err, sizeof a->err, "sim", k, opt);
    a->bad = 1;
}

/* Walk argv, calling on(a, opt, value) for each option (value NULL for
 * flags), up to the first refusal. Returns 0, or LL_E_INVAL with the
 * reason in a->err (an unknown option, a missing value, or what on
 * refused). */
static int walk_args(int argc, char **argv,
                     void (*on)(struct sim_args *a, const struct sim_opt *o, const char *val),
                     struct sim_args *a)
{
    for (int i = 1; i < argc && !a->bad; i++) {
        const char *val;
        const struct sim_opt *o = find_opt(argv[i], &val);
        if (!o) {
            sim_refuse(a, BADARG_UNKNOWN, argv[i]);
        } else if (o->has_arg && !val && i + 1 >= argc) {
            sim_refuse(a, BADARG_NEEDS_VALUE, o->name);
        } else if (!o->has_arg && val) {
            sim_refuse(a, BADARG_NO_VALUE, o->name);
        } else {
            if (o->has_arg && !val)
                val = argv[++i];
            on(a, o, val);
        }
    }
    return a->bad ? LL_E_INVAL : 0;
}

/* Pass 1: the profile and the seed, which the other options build on. */
static void on_first(struct sim_args *a, const struct sim_opt *o, const char *val)
{
    const char *name = o->name;
    if (strcmp(name, "--profile") == 0)
        a->profile_name = val;
    else if (strcmp(name, "--seed") == 0) {
        uint64_t s;
        if (ll_parse_u64(val, &s) < 0)
            sim_bad(a, "--seed: expected a whole number, got \"%s\"", val);
        else
            a->seed = s;
        a->have_seed = 1;
    } else if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        a->help = 1;
}

/* Store a flag the table says how to keep (o->store not SIM_CODE). */
static void sim_store(struct sim_args *a, const struct sim_opt *o, const char *val)
{
    char *at = (char *)a + o->off;
    if (o->gpu)
        a->gpu_flag = o->name;
    switch (o->store) {
    case SIM_STR: *(const char **)at = val; break;
    case SIM_SET: *(int *)at = (int)o->lo; break;
    case SIM_NS: *(uint64_t *)at = parse_dur(a, o->name, val); break;
    case SIM_NONNEG: *(double *)at = parse_nonneg(a, o->name, val); break;
    case SIM_WHOLE: {
        uint64_t v = parse_whole(a, o->name, val, o->lo, o->hi);
        if (o->size == sizeof(uint16_t))
            *(uint16_t *)at = (uint16_t)v;
        else if (o->size == sizeof(uint32_t))
            *(uint32_t *)at = (uint32_t)v;
        else
            *(uint64_t *)at = v;
        break;
    }
    case SIM_CODE: break;
    }
}

/* Pass 2: every flag but the first pass's, the table's through sim_store,
 * the others here. */
static void on_second(struct sim_args *a, const struct sim_opt *o, const char *val)
{
    const char *name = o->name;
    struct server_config *c = &a->cfg;
    struct engine_config *e = &c->engine;
    if (o->store != SIM_CODE) {
        sim_store(a, o, val);
        return;
    }
    if (strcmp(name, "--model-name") == 0) {
        if (!*val || strlen(val) > 256)
            sim_bad(a, "--model-name: expected 1 to 256 bytes, got \"%s\"", val);
        c->model_name = val;
    } else if (strcmp(name, "--duration") == 0) {
        c->duration_ns = parse_dur(a, name, val);
        if (c->duration_ns == 0)
            sim_bad(a, "--duration: expected a positive duration, got \"%s\"", val);
    } else if (strcmp(name, "--output-len-median") == 0) {
        e->natural_len_median_tokens = parse_nonneg(a, name, val);
        if (e->natural_len_median_tokens < 1)
            sim_bad(a, "--output-len-median: expected a number >= 1, got \"%s\"", val);
    } else if (strcmp(name, "--stall-at") == 0) {
        c->stall_at_ns = parse_dur(a, name, val);
        a->stall_at_set = 1;
    } else if (strcmp(name, "--stall-for") == 0) {
        c->stall_for_ns = parse_dur(a, name, val);
        a->stall_for_set = 1;
    } else if (strcmp(name, "--stall-from") == 0) {
        if (strcmp(val, "start") == 0)
            c->stall_from_first = 0;
        else if (strcmp(val, "first-request") == 0)
            c->stall_from_first = 1;
        else
            sim_bad(a, "--stall-from: expected start or first-request, got \"%s\"", val);
    } else if (strcmp(name, "--fault") == 0) {
        char err[200];
        if (faults_add_spec(&c->faults, val, err, sizeof(err)) < 0)
            sim_bad(a, "--fault: %s", err);
    } else if (strcmp(name, "--tokenizer") == 0) {
        if (tokenizer_kind_parse(val, &c->tokenizer) < 0)
            sim_bad(a, "--tokenizer: expected words or bytes2, got \"%s\"", val);
    }
    /* --profile, --seed and --help were taken in the first pass. */
}

/* The server's settings before the engine flags: the profile's engine
 * (with --seed), and the defaults --help names. */
static void sim_defaults(struct sim_args *a)
{
    struct engine_config e = a->profile.engine;
    if (a->have_seed)
        e.seed = a->seed;
    a->cfg = (struct server_config){
        .host = "127.0.0.1",
        .port = SIM_DEFAULT_PORT,
        .engine = e,
        .model_name = "llmload-sim",
        .slow_headers_delay_ns = SIM_DEFAULT_SLOW_HEADERS_NS,
        .tokens_per_event = 1,
        .default_max_tokens = SIM_DEFAULT_MAX_TOKENS,
        .embeddings_dim = SERVER_DEFAULT_EMBEDDINGS_DIM,
        .max_head_bytes = SIM_DEFAULT_MAX_HEAD_BYTES,
        .max_body_bytes = SIM_DEFAULT_MAX_BODY_BYTES,
        .conn_buffer_bytes = SIM_DEFAULT_CONN_BUFFER_BYTES,
        .seed = e.seed,
        .gpu = {.gpus = 1,
                .idle_w = GPU_DEFAULT_IDLE_W,
                .decode_seq_j = GPU_DEFAULT_DECODE_SEQ_J,
                .prefill_token_j = GPU_DEFAULT_PREFILL_TOKEN_J},
    };
    faults_init(&a->cfg.faults, a->cfg.seed);
}

/* engine_config_check's reason, said with the flag that set the field it
 * names (the profiles' own values all pass): "natural_len_sigma must be in
 * [0, 10]" is "--output-len-sigma: must be in [0, 10]". */
static void sim_engine_fail(const char *why)
{
    static const struct {
        const char *field, *flag;
    } names[] = {
        {"max_num_seqs", "--max-num-seqs"},
        {"block_tokens", "--block-tokens"},
        {"kv_tokens / block_tokens", "--kv-tokens / --block-tokens"},
        {"kv_tokens", "--kv-tokens"},
        {"prefill_chunk_tokens", "--prefill-chunk"},
        {"natural_len_median_tokens", "--output-len-median"},
        {"natural_len_sigma", "--output-len-sigma"},
        {"step_base_ns", "--step-base"},
        {"step_prefill_token_ns", "--step-per-prefill-token"},
        {"step_seq_ns", "--step-per-seq"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(names); i++) {
        size_t n = strlen(names[i].field);
        if (strncmp(why, names[i].field, n) == 0 && why[n] == ' ') {
            const char *rest = why + n + 1;
            if (strncmp(rest, "must ", 5) == 0)
                rest += 5;
            ll_errorf("%s: must %s%s", names[i].flag, rest, i == 3 ? " of --block-tokens" : "");
            return;
        }
    }
    ll_errorf("sim: %s", why);
}

int sim_main(int argc, char **argv)
{
    struct sim_args a;
    memset(&a, 0, sizeof(a));
    a.profile_name = "default";
    if (walk_args(argc, argv, on_first, &a) != 0) {
        ll_errorf("%s", a.err);
        return LL_EXIT_USAGE;
    }
    if (a.help) {
        sim_usage(stdout);
        return LL_EXIT_OK;
    }
    if (sim_profile_get(a.profile_name, &a.profile) < 0) {
        ll_errorf("--profile: expected default or instant, got \"%s\"", a.profile_name);
        return LL_EXIT_USAGE;
    }
    sim_defaults(&a);
    struct server_config *c = &a.cfg;
    if (walk_args(argc, argv, on_second, &a) != 0) {
        ll_errorf("%s", a.err);
        return LL_EXIT_USAGE;
    }
    if (a.gpu_flag && !c->gpu_metrics) {
        ll_errorf("%s: goes with --gpu-metrics", a.gpu_flag);
        return LL_EXIT_USAGE;
    }
    if (a.stall_at_set != a.stall_for_set) {
        ll_errorf("%s: needs %s too", a.stall_at_set ? "--stall-at" : "--stall-for",
                  a.stall_at_set ? "--stall-for" : "--stall-at");
        return LL_EXIT_USAGE;
    }
    char err[256];
    if (engine_config_check(&c->engine, err, sizeof(err)) < 0) {
        sim_engine_fail(err);
        return LL_EXIT_USAGE;
    }
    a.profile.engine = c->engine;
    if (a.explain) {
        sim_profile_explain(&a.profile, stdout);
        return LL_EXIT_OK;
    }

    struct server *srv = NULL;
    int rc = server_new(c, &srv, err, sizeof(err));
    if (rc < 0) {
        ll_errorf("sim: %s", err);
        return rc == LL_E_INVAL ? LL_EXIT_USAGE : LL_EXIT_RUNTIME;
    }
    int v6 = strchr(c->host, ':') != NULL;
    printf("http://%s%s%s:%u\n", v6 ? "[" : "", c->host, v6 ? "]" : "",
           (unsigned)server_port(srv));
    fflush(stdout);
    fprintf(stderr, "llmload sim: profile %s, model %s, tokenizer %s%s, listening on %s%s%s:%u\n",
            a.profile.name, c->model_name, tokenizer_kind_name(c->tokenizer),
            c->no_usage ? " (no usage)" : "", v6 ? "[" : "", c->host, v6 ? "]" : "",
            (unsigned)server_port(srv));
    rc = server_run(srv);
    int frc = server_free(srv);
    return rc < 0 || frc < 0 ? LL_EXIT_RUNTIME : LL_EXIT_OK;
}
