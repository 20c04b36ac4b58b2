/* expose.h: llmload's own /metrics, served while a run is in progress
 * (`--expose ADDR:PORT`), so one Grafana can show the client beside the
 * server it loads: requests scheduled / sent / completed by kind, in
 * flight, offered and achieved rate, schedule lateness, and rolling TTFT
 * and E2E quantiles.
 *
 * One small thread with its own listening socket answers GET /metrics in
 * the Prometheus text format 0.0.4, up to EXPOSE_MAX_CONNS connections at
 * once from one poll loop, and closes each connection after its answer or
 * after EXPOSE_CONN_DEADLINE_NS, whichever comes first. The numbers come from the driver's
 * live view (struct driver_live), handed over with expose_update; the page
 * is rendered there, so a scrape costs a copy. Every counter and summary
 * counts the whole run, warm-up and cold start included, as
 * requests.jsonl does (summary.json counts the window alone). The names
 * are listed in docs/server-metrics.md. */
#ifndef LL_EXPOSE_H
#define LL_EXPOSE_H

#include <stddef.h>
#include <stdint.h>

#include "driver/driver.h"

/* How many live updates the rolling quantiles and the achieved rate span
 * (with the default 1 s live interval: the last 10 s). */
#define EXPOSE_WINDOW_UPDATES 10
/* A request head longer than this gets a 431 and a close. */
#define EXPOSE_MAX_REQUEST_BYTES 8192
/* Connections served at once; more wait in the listen queue. */
#define EXPOSE_MAX_CONNS 8
/* A connection's whole life, request and answer, in nanoseconds: a client
 * that trickles its request or reads slowly is cut off then, so eight idle
 * clients delay a scrape by this much at most. */
#define EXPOSE_CONN_DEADLINE_NS 2000000000ull

struct exposer;

/* Parse addr_port ("127.0.0.1:9400", "0.0.0.0:0", "[::1]:9400"; numeric
 * address, port 0..65535, 0 picks a free one), bind and listen, and start
 * the serving thread (which blocks every signal). offered_rate_per_s is
 * the open-loop schedule's mean rate over the window (0 for a closed loop: the gauge is then
 * left out). Returns the exposer (caller frees with expose_free), or NULL
 * with a reason in err ("bind 127.0.0.1:9400: Address already in use"). */
struct exposer *expose_new(const char *addr_port, double offered_rate_per_s, char *err,
                           size_t errlen);

/* Check addr_port as expose_new parses it, without binding: 0, or
 * LL_E_INVAL with the reason in err (the same words as expose_new's). For
 * a flag's check before anything runs. */
int expose_check(const char *addr_port, char *err, size_t errlen);

/* The port it listens on (useful after port 0). */
int expose_port(const struct exposer *e);

/* The address it listens on, with the port it bound ("127.0.0.1:43817",
 * "[::1]:43817", "0.0.0.0:9400"): what to scrape after port 0. Borrowed,
 * valid until expose_free. */
const char *expose_addr(const struct exposer *e);

/* Take a live view and render the page from it. Safe to call from any one
 * thread while the server runs; live->ttft, ->e2e and ->lateness are read
 * during the call only. */
void expose_update(struct exposer *e, const struct driver_live *live);

/* Render the current page into a new NUL-terminated string (caller frees
 * with free()); *len gets its length (len may be NULL). For tests and for
 * a final copy. */
char *expose_render(struct exposer *e, size_t *len);

/* Stop the thread, close the socket and every connection, free
 * everything. Returns promptly whatever the clients are doing. NULL does
 * nothing. */
void expose_free(struct exposer *e);

#endif
