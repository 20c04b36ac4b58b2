/* runscrape.c: the scrapers of the sequence runsetup.c runs (runsetup.h):
 * the server's metrics, the GPU telemetry, and the run's energy joined from
 * it. Apart from runsetup.c so that each file holds one job: the sequence
 * there, what is scraped beside the load here. */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "cli/runsetup.h"
#include "metrics/energy.h"
#include "metrics/promsource.h"
#include "metrics/smi.h"
#include "util/util.h"

/* The length of url's scheme and authority ("https://h:8443"). */
static size_t origin_len(const char *url)
{
    const char *a = strstr(url, "://");
    if (!a)
        return 0;
    a += 3;
    return (size_t)(a - url) + strcspn(a, "/?#");
}

/* How the scrapers reach url (NULL: the target's default /metrics): the
 * run's --cacert and --insecure always; its credentials (the key's line,
 * the -H lines) only where url has the scheme, host and port of the
 * (first) --url, as the default /metrics has: the target's own server,
 * which the user sends them to already. Another host never gets them. */
static struct scrape_access run_access(const struct run_setup *rs, const char *url)
{
    struct scrape_access a = {.cacert = rs->cacert, .insecure = rs->insecure};
    size_t n = rs->base_url ? origin_len(rs->base_url) : 0;
    if (!url || (n && origin_len(url) == n && strncasecmp(url, rs->base_url, n) == 0))
        a.headers = rs->target.own_headers;
    return a;
}

void run_setup_scraper(struct run_setup *rs, const char *url, int off, uint64_t interval_ns,
                       const struct run_config *cfg, int quiet)
{
    /* Several --url: one server's /metrics is not the load's, and its
     * counters set beside every endpoint's requests would read as a
     * mismatch. Only a --metrics-url given scrapes (docs/run.md).
     * --prometheus asks for every replica behind its selector instead. */
    if (!off && rs->prom && rs->prom->url) {
        struct promsource_config pc = rs->prom->cfg;
        pc.interval_ns = interval_ns;
        pc.quiet = 0; /* a URL named that fails always warns, as --metrics-url's */
        pc.quiet_notes = quiet;
        pc.cacert = rs->cacert;
        pc.insecure = rs->insecure;
        rs->scraper = promsource_open(&pc, rs->dir, 1, rs->sig_fd);
    } else if (!off && !url && cfg->transport.endpoints.n > 1) {
        if (!quiet)
            ll_errorf("note: several --url: no server metrics scraped unless --metrics-url "
                      "names one (docs/run.md)");
    } else if (!off) {
        struct scrape_access acc = run_access(rs, url);
        rs->scraper = scraper_for_run(url, cfg->transport.base_url, interval_ns, rs->dir, quiet,
                                      rs->sig_fd, &acc);
    }
    /* Counters of a server that serves several models: the run's own. */
    scraper_set_model(rs->scraper, cfg->transport.model);
    run_setup_stopped(rs, "probe");
}

void run_setup_gpu_scrapers(struct run_setup *rs, const char *const *urls, size_t n, int smi,
                            uint64_t interval_ns, int quiet)
{
    if (smi && !run_setup_stopped(rs, "probe")) {
        struct scraper *g = scraper_for_smi(rs->dir, rs->scraper == NULL);
        if (g)
            rs->gpu_scrapers[rs->n_gpu++] = g;
    }
    /* The DCGM_FI_* series behind --prometheus's selector, when there are;
     * not on a shard, whose output tokens are a share of the energy's. */
    if (rs->prom && rs->prom->url && !rs->prom_gpu && !quiet)
        ll_errorf("note: --prometheus: no GPU telemetry on a shard (its tokens are a share of "
                  "the energy's)");
    if (rs->prom && rs->prom->url && rs->prom_gpu && !run_setup_stopped(rs, "probe")) {
        struct promsource_config pc = rs->prom->cfg;
        pc.interval_ns = interval_ns;
        pc.quiet = quiet;
        pc.quiet_notes = quiet;
        pc.gpu = 1;
        pc.cacert = rs->cacert;
        pc.insecure = rs->insecure;
        struct scraper *g = promsource_open(&pc, rs->dir, rs->scraper == NULL, rs->sig_fd);
        if (g)
            rs->gpu_scrapers[rs->n_gpu++] = g;
    }
    for (size_t i = 0; i < n && rs->n_gpu < RUN_SETUP_MAX_GPU; i++) {
        if (run_setup_stopped(rs, "probe"))
            break;
        struct scrape_access acc = run_access(rs, urls[i]);
        struct scraper *g =
            scraper_for_gpu(urls[i], interval_ns, rs->dir, rs->scraper == NULL && rs->n_gpu == 0,
                            quiet, rs->sig_fd, &acc);
        if (g)
            rs->gpu_scrapers[rs->n_gpu++] = g;
    }
}

void run_setup_gpu_start(struct scraper *const *gs, size_t n, uint64_t run_start_abs_ns)
{
    for (size_t i = 0; i < n; i++) {
        char err[200];
        if (scraper_start(gs[i], run_start_abs_ns, err, sizeof err) != 0)
            ll_errorf("warning: GPU metrics: %s", err);
    }
}

void run_setup_energy(struct scraper *const *gs, size_t n, const struct driver_result *res,
                      double cost_per_hour, int sharded, struct energy_figures *out)
{
    /* The energy is the whole run's, warm-up and cold start included, and
     * so are the tokens and requests it is divided by. */
    struct stats_served sv;
    stats_served(&res->stats, &res->cold, &sv);
    double tokens = sv.output_tokens, ok = sv.completed_ok;
    double window_s = (double)res->elapsed_ns / 1e9;
    struct energy_figures parts[RUN_SETUP_MAX_GPU];
    for (size_t i = 0; i < n; i++) {
        struct scrape_join j;
        scraper_stop_at(gs[i], res->run_start_abs_ns + res->elapsed_ns, res->interrupted);
        int rc = scrape_join(gs[i], res->run_start_abs_ns, res->run_start_abs_ns + res->elapsed_ns,
                             SCRAPE_SPAN_OUTER, &j);
        if (rc == 0) /* --prometheus: the replicas' own energy counters, summed */
            promsource_join_sum(gs[i], res->run_start_abs_ns,
                                res->run_start_abs_ns + res->elapsed_ns, SCRAPE_SPAN_OUTER, &j);
        energy_figures_compute(&j, rc, tokens, ok, window_s, cost_per_hour, &parts[i]);
    }
    if (n)
        energy_figures_combine(parts, n, out);
    else
        energy_figures_compute(NULL, LL_E_NOTFOUND, tokens, ok, window_s, cost_per_hour, out);
    if (sharded)
        out->j_per_output_token = out->j_per_request = out->output_tokens_per_j =
            out->cost_per_m_output_tokens = NAN;
}
