/* json.h: jansson's parsers with a message fit for an error line. */
#ifndef LL_JSON_H
#define LL_JSON_H

#include <stddef.h>

#include <jansson.h>

/* json_loadb and json_load_file, but on failure je->text is one printable
 * line: jansson's message quotes the input up to the bad byte, line breaks
 * and all (ll_printable). je must not be NULL. */
json_t *ll_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *je);
json_t *ll_json_load_file(const char *path, size_t flags, json_error_t *je);

#endif
