/* decodeframe.h: the frame every API's decoder of SSE events and bodies
 * (anthropic.c, responses.c) runs in: the memo asked first, out cleared,
 * the payload decoded by the API's own function, the memo told what it may
 * keep. Static inline, so the API's function is a direct call; private to
 * decode/. (openai.c has its own frame: its [DONE] and the role it notes
 * for the memo.) */
#ifndef LL_DECODEFRAME_H
#define LL_DECODEFRAME_H

#include <stddef.h>

#include "decode/jcur.h"
#include "decode/openai.h"
#include "util/util.h"

/* Decode one payload data[0..len) (an event's, whose SSE name is event[0..
 * event_len), or a whole body's) with c into out, already cleared.
 * Returns -1 on invalid text, 0 when decoded, 1 when decoded and out is
 * the payload's one counted string's content and nothing else
 * (c->text..c->text_end), so the memo may keep it. */
typedef int cur_decode_fn(struct cur *c, const char *event, size_t event_len, const char *data,
                          size_t len, struct oai_chunk *out);

/* An API's decoder through the memo m (NULL: none), the same result for
 * every input either way: a payload the memo recognises is answered from
 * it; any other is decoded by decode and kept when it says it may be.
 * Returns 0, or LL_E_PROTO (out cleared) on invalid text. */
CUR_INLINE int cur_decode(enum oai_api api, cur_decode_fn *decode, const char *event,
                          size_t event_len, const char *data, size_t len, struct oai_chunk *out,
                          struct oai_memo *m)
{
    struct cur c;
    int rc;

    if (m && oai_memo_hit(m, api, data, len, out))
        return 0;
    oai_chunk_clear(out);
    c.text = c.text_end = NULL;
    rc = decode(&c, event, event_len, data, len, out);
    if (rc < 0)
        oai_chunk_clear(out);
    if (m)
        oai_memo_keep(m, api, data, len, rc > 0 ? c.text : NULL, c.text_end, 0, out);
    return rc < 0 ? LL_E_PROTO : 0;
}

/* An API's two public functions, PREFIX_decode_event (through the
 * stream's memo) and PREFIX_decode_response (a whole body, no memo), as
 * its header declares them: cur_decode with the file's own EVENT_INTO and
 * BODY_INTO (cur_decode_fn each). */
#define CUR_DEFINE_DECODERS(PREFIX, API, EVENT_INTO, BODY_INTO)                                    \
    int PREFIX##_decode_event(const char *event, size_t event_len, const char *data, size_t len,   \
                              struct oai_chunk *out, struct oai_memo *m)                           \
    {                                                                                              \
        return cur_decode(API, EVENT_INTO, event, event_len, data, len, out, m);                   \
    }                                                                                              \
    int PREFIX##_decode_response(const char *body, size_t len, struct oai_chunk *out)              \
    {                                                                                              \
        return cur_decode(API, BODY_INTO, "", 0, body, len, out, NULL);                            \
    }

#endif
