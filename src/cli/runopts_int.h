/* runopts_int.h: what runopts.c (the flag tables, the walk, the checks of
 * single values, the run's own flags), workloadopts.c (the workload's
 * flags) and transportopts.c (the target and its transport's flags) share;
 * private to src/cli. runopts.h declares the rest. */
#ifndef LL_RUNOPTS_INT_H
#define LL_RUNOPTS_INT_H

#include <stddef.h>
#include <stdint.h>

/* From runopts.h (not included: runopts.c includes this file). */
struct run_opts;
struct run_config;

/* The length and realism flags of the workload, and --max-inflight, into
 * cfg->workload (workloadopts.c). 0 or LL_E_INVAL with err set. */
int runopts_workload(const struct run_opts *o, uint64_t seed, struct run_config *cfg, char *err,
                     size_t errlen);

/* The transport: URL, API, --prompt-ids, stream, client, TLS, timeouts,
 * the SSE line bound, images and the extra body, into cfg->transport
 * (transportopts.c). 0 or LL_E_INVAL with err set. */
int runopts_transport(const struct run_opts *o, uint64_t seed, struct run_config *cfg, char *err,
                      size_t errlen);

/* Is url's host a loopback address (127.x.y.z, ::1, localhost)?
 * (transportopts.c) */
int runopts_url_is_loopback(const char *url);

#endif
