/* json.c: jansson's parsers with a one-line message (json.h). */
#include "util/json.h"

#include "util/util.h"

/* j, or on failure NULL with je's message made one printable line. */
static json_t *checked(json_t *j, json_error_t *je)
{
    if (!j)
        ll_printable(je->text, sizeof je->text, je->text, sizeof je->text);
    return j;
}

json_t *ll_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *je)
{
    return checked(json_loadb(buf, len, flags, je), je);
}

json_t *ll_json_load_file(const char *path, size_t flags, json_error_t *je)
{
    return checked(json_load_file(path, flags, je), je);
}
