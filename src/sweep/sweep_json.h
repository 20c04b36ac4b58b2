/* sweep_json.h: a sweep's JSON. The facts of one step as a line of
 * steps.jsonl and back, the analysis settings as run.json's
 * "config"."sweep" and back, and summary.json of a sweep (schema
 * SWEEP_SUMMARY_SCHEMA, docs/formats.md). The sweep writes these as it
 * runs and `llmload report` reads them back, through the same functions,
 * so a rebuilt report equals the live one. */
#ifndef LL_SWEEP_JSON_H
#define LL_SWEEP_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "sweep/sweep.h"

/* The server figures of step s beside the client's (summary.json's
 * per-step "server"): NULL when the step was not scraped. Caller owns it. */
json_t *sweep_server_json(const struct sweep_step *s);

/* The GPU energy of step s (summary.json's per-step "energy"): the facts,
 * the client's tokens and ok requests over the energy's span and the
 * figures from them (J per output token and per request, tokens per J,
 * mean power). NULL when the sweep did not scrape GPU telemetry. Caller
 * owns it. */
json_t *sweep_energy_json(const struct sweep_step *s);

/* A step's lateness diagnosis as steps.jsonl and summary.json write it
 * ("lateness_diagnosis": summary_late_json's object, as a run's, with the
 * cause derived from the counts); NULL when not known. Caller owns it. */
json_t *sweep_late_json(const struct sweep_late *l);

/* The steps.jsonl line of f (an object; caller owns it). */
json_t *sweep_facts_json(const struct sweep_facts *f);

/* The steps.jsonl line of a finished step (sweep_step_finish): its facts,
 * then for whoever reads steps.jsonl alone the hold rule's verdict
 * ("hold_factor", "short") and the cold start's figures ("cold"), which
 * `llmload report` derives again from the records. Caller owns it. */
json_t *sweep_step_line_json(const struct sweep_step *s);

/* Read a steps.jsonl object into s->f (s initialised). Returns 0, or
 * LL_E_INVAL with a reason in err. */
int sweep_facts_from_json(json_t *o, struct sweep_step *s, char *err, size_t errlen);

/* An "inflight_series" array, [[t_ns, inflight], ...] (a step's, or the
 * probe line's), into a new array *out (caller frees; never NULL, one
 * spare slot); pairs that are not two integers are skipped, anything but
 * an array reads as none. Returns how many samples *out holds. */
size_t sweep_inflight_series_from_json(json_t *series, struct inflight_sample **out);

/* Settings as the "sweep" object of run.json's config, and back (absent
 * keys keep their defaults). Caller owns the returned object. */
json_t *sweep_settings_json(const struct sweep_settings *set);
void sweep_settings_from_json(json_t *o, struct sweep_settings *set);

#define SWEEP_SUMMARY_SCHEMA "llmload.sweep/1"

/* summary.json of a sweep (schema SWEEP_SUMMARY_SCHEMA, docs/formats.md).
 * Caller owns the object. */
json_t *sweep_summary_json(const struct sweep_step *steps, size_t n,
                           const struct sweep_point *points, size_t n_points,
                           const struct sweep_findings *fd, const struct sweep_settings *set,
                           const char *stop_reason, json_t *run_json);

#endif
