/* runsummary.c: what a run says at its end: the summary printed (the
 * whole run's, then by class and by endpoint, the server's and the GPUs'
 * figures) and summary.json built from the same figures (runsetup.h). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/runsetup.h"
#include "measure/summary.h"
#include "metrics/energy.h"
#include "metrics/promsource.h"
#include "util/util.h"

json_t *run_setup_classes(const struct run_config *cfg, const struct driver_result *res)
{
    if (!res->n_classes)
        return NULL;
    struct summary_class *classes = ll_calloc(res->n_classes, sizeof *classes);
    char(*class_slo)[96] = ll_calloc(res->n_classes, sizeof *class_slo);
    for (size_t k = 0; k < res->n_classes; k++) {
        const struct slo *own = cfg->trace ? NULL : &cfg->workload.classes->classes[k].slo;
        struct slo cs = own ? *slo_or(own, &cfg->slo) : cfg->slo;
        classes[k].name = driver_class_name(cfg, k);
        classes[k].s = &res->class_stats[k];
        if (slo_is_set(&cs)) {
            slo_format(&cs, class_slo[k], sizeof class_slo[k]);
            classes[k].slo = class_slo[k];
        }
    }
    summary_print_classes(stdout, classes, res->n_classes, res->window_ns);
    json_t *j = summary_classes_json(classes, res->n_classes, res->window_ns);
    free(classes);
    free(class_slo);
    return j;
}

json_t *run_setup_endpoints(const struct run_config *cfg, const struct driver_result *res)
{
    if (!res->n_endpoints)
        return NULL;
    const struct endpoints *e = &cfg->transport.endpoints;
    struct summary_endpoint *eps = ll_calloc(res->n_endpoints, sizeof *eps);
    for (size_t k = 0; k < res->n_endpoints; k++)
        eps[k] = (struct summary_endpoint){
            .url = e->url[k], .weight = e->weight[k], .s = &res->endpoint_stats[k]};
    summary_print_endpoints(stdout, eps, res->n_endpoints, res->window_ns);
    json_t *j = summary_endpoints_json(eps, res->n_endpoints, res->window_ns);
    free(eps);
    return j;
}

json_t *run_setup_report(const struct run_setup *rs, const struct run_config *cfg,
                         const struct summary_info *info, const struct run_server_view *server,
                         const struct energy_figures *energy)
{
    const struct driver_result *res = &rs->res;

    summary_print(stdout, &res->stats, info);
    json_t *classes = run_setup_classes(cfg, res);
    json_t *endpoints = run_setup_endpoints(cfg, res);
    if (res->stop_reason[0])
        printf("offering stopped early: %s\n", res->stop_reason);
    /* --prometheus: each replica's own figures over the run's span. */
    struct promsource_replica *reps = ll_calloc(PROMSOURCE_MAX_REPLICAS, sizeof *reps);
    struct promsource_staleness st;
    size_t n_reps = promsource_replicas_join(rs->scraper, res->run_start_abs_ns,
                                             res->run_start_abs_ns + res->elapsed_ns,
                                             SCRAPE_SPAN_OUTER, reps, PROMSOURCE_MAX_REPLICAS, &st);
    if (server)
        scrape_join_print(stdout, server->join, server->join_rc, server->client, rs->scraper);
    promsource_replicas_print(stdout, reps, n_reps, &st);
    if (rs->n_gpu)
        energy_print(stdout, energy, rs->gpu_scrapers, rs->n_gpu);
    printf("results: %s\n", rs->dir);
    fflush(stdout);

    json_t *sj = summary_json(&res->stats, info);
    if (classes)
        json_object_set_new(sj, "classes", classes);
    if (endpoints)
        json_object_set_new(sj, "endpoints", endpoints);
    if (server)
        json_object_set_new(
            sj, "server",
            scrape_join_json(server->join, server->join_rc, server->client, rs->scraper));
    if (n_reps)
        json_object_set_new(json_object_get(sj, "server"), "replicas",
                            promsource_replicas_json(reps, n_reps, &st));
    free(reps);
    if (rs->n_gpu)
        json_object_set_new(sj, "energy", energy_json(energy, rs->gpu_scrapers, rs->n_gpu));
    return sj;
}
