/* statushint.h: what a 4xx status says to try, in one home. The /models
 * probe before a run and a run whose requests all failed with a 4xx both
 * word it from here, so a user reads the same advice for the same status.
 *
 * Only a 400, 413 or 422 can be a prompt's length (a context passed, a
 * body too large, a request the server could not process): those alone
 * may point at the tokenizer and calibrate. A 401 or 403 is a key, a 404
 * or 405 the URL's path or the API. */
#ifndef LL_STATUSHINT_H
#define LL_STATUSHINT_H

/* The causes a 4xx status can have, for the advice. */
enum status_cause {
    STATUS_CAUSE_LENGTH, /* 400, 413, 422: a prompt's length can cause it */
    STATUS_CAUSE_AUTH,   /* 401, 403: a key the server wants */
    STATUS_CAUSE_PATH,   /* 404, 405: --url's path, or the API */
    STATUS_CAUSE_OTHER,  /* any other status, 0 (none read) included */
    STATUS_CAUSES
};

/* The cause of HTTP status (any int; 0 = no status read). */
enum status_cause status_cause_of(int status);

/* The advice, as questions a user can act on. HINT_BASE is the start of
 * a 404's: the probe adds its own "pass --model", a run the --api. */
#define STATUS_HINT_AUTH "does it need a key? --api-key-env VAR sends $VAR, -H adds a header"
#define STATUS_HINT_BASE "is --url the API's base, such as http://HOST:PORT/v1?"
#define STATUS_HINT_PATH STATUS_HINT_BASE " is --api the server's API (docs/apis.md)?"

/* The advice for a run's requests that all failed with cause c:
 * STATUS_HINT_AUTH or STATUS_HINT_PATH, NULL for the other causes (a
 * length's advice depends on the prompts, measure/summary.h). Static. */
const char *status_cause_hint(enum status_cause c);

#endif
