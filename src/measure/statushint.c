/* statushint.c: what a 4xx status says to try (statushint.h). */
#include "measure/statushint.h"

#include <stddef.h>

enum status_cause status_cause_of(int status)
{
    switch (status) {
    case 400:
    case 413:
    case 422: return STATUS_CAUSE_LENGTH;
    case 401:
    case 403: return STATUS_CAUSE_AUTH;
    case 404:
    case 405: return STATUS_CAUSE_PATH;
    default: return STATUS_CAUSE_OTHER;
    }
}

const char *status_cause_hint(enum status_cause c)
{
    switch (c) {
    case STATUS_CAUSE_AUTH: return STATUS_HINT_AUTH;
    case STATUS_CAUSE_PATH: return STATUS_HINT_PATH;
    default: return NULL;
    }
}
