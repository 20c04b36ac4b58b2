/* openai.h: decoding the OpenAI-compatible response formats, one SSE `data`
 * payload (or one whole non-streamed body) at a time.
 *
 * Both the chat (/v1/chat/completions) and the legacy completions
 * (/v1/completions) formats, as sent by OpenAI, vLLM, llama.cpp, SGLang and
 * TGI's OpenAI layer. The decoder validates the JSON (jscan) and reads only
 * the fields a load tester needs; it allocates nothing and keeps no pointer
 * into the payload. docs/decoding.md states what counts as output and how
 * output tokens are counted. */
#ifndef LL_OPENAI_H
#define LL_OPENAI_H

#include <stddef.h>
#include <stdint.h>

/* The APIs llmload speaks. OpenAI's chat and completions are decoded
 * here, Anthropic's Messages API by anthropic.c, OpenAI's Responses API
 * by responses.c and its embeddings by embeddings.c, into the same struct
 * oai_chunk. */
enum oai_api {
    OAI_API_CHAT,
    OAI_API_COMPLETIONS,
    OAI_API_ANTHROPIC,
    OAI_API_RESPONSES,
    OAI_API_EMBEDDINGS,
    OAI_API_COUNT
};

/* The public name of an API: "openai-chat", "openai-completions",
 * "anthropic-messages", "openai-responses", "openai-embeddings" (--api,
 * run.json). Static string. */
const char *oai_api_name(enum oai_api api);

/* The API a name means: the public names above and the short forms
 * "chat", "completions", "messages", "responses", "embeddings"; -1 for
 * anything else. */
int oai_api_from_name(const char *name);

/* Every name oai_api_from_name takes, for an error message, into buf:
 * "openai-chat (chat), ... or openai-embeddings (embeddings)". */
void oai_api_list(char *buf, size_t len);

/* The path of an API's endpoint under the base URL: "/chat/completions",
 * "/completions", "/messages", "/responses", "/embeddings". Static
 * string. */
const char *oai_api_path(enum oai_api api);

/* What one payload said. Byte counts are of the decoded (unescaped) UTF-8
 * text, summed over every entry of `choices`, saturating at UINT32_MAX. */
struct oai_chunk {
    int done;                    /* data was exactly [DONE] */
    int role_only;               /* some delta had a role and the chunk carries no output */
    uint32_t content_bytes;      /* delta.content (chat), text (completions); message.content when not streamed */
    uint32_t reasoning_bytes;    /* delta.reasoning_content or delta.reasoning (the longer, if both) */
    uint32_t tool_call_deltas;   /* entries in delta.tool_calls */
    int has_finish;              /* some choice had a non-null finish_reason */
    char finish_reason[32];      /* the first one, truncated, NUL-terminated; "" if not a string.
                                  * 32: Anthropic's "model_context_window_exceeded" whole */
    int has_usage;               /* a non-null "usage" object */
    int64_t prompt_tokens;       /* usage.prompt_tokens, -1 when absent */
    int64_t completion_tokens;   /* usage.completion_tokens (cumulative when sent per chunk), -1 when absent */
    int64_t cached_tokens;       /* usage.prompt_tokens_details.cached_tokens, -1 when absent */
    int has_error;               /* an "error" member (object or string), or "object":"error" */
    int overloaded;              /* that error says the server is overloaded (Anthropic's
                                  * "overloaded_error") */
    char error_message[128];     /* its message, truncated at a character boundary, NUL-terminated */
    uint32_t embeddings;         /* entries of an embeddings answer's "data" (embeddings.c) */
};

/* Clear *c to "nothing decoded": zeros, the token counts -1 (absent). */
void oai_chunk_clear(struct oai_chunk *c);

/* 1 when the chunk carries output: content_bytes + reasoning_bytes +
 * tool_call_deltas > 0. Only such chunks are tokens for TTFT and ITL. */
int oai_chunk_carries_output(const struct oai_chunk *c);

/* Decode one SSE data payload data[0..len) of a streamed response into
 * *out (always fully written). Returns 0, or LL_E_PROTO when the payload is
 * neither exactly "[DONE]" nor a valid JSON object (the caller records a
 * malformed_event). Fields of unexpected types are ignored, not errors.
 * Allocates nothing; linear in len. */
int oai_decode_chunk(enum oai_api api, const char *data, size_t len,
                     struct oai_chunk *out);

/* What oai_decode_chunk_memo keeps between the chunks of one stream
 * (about 640 bytes; no allocation). Reset it at the start of each
 * response. */
#define OAI_MEMO_MAX 384
struct oai_memo {
    uint16_t len;                /* bytes in prev; 0: nothing to compare with */
    uint16_t text_at, text_end;  /* prev's counted string, between its quotes */
    int saw_role;                /* prev had a role */
    enum oai_api api;
    uint32_t hits;               /* chunks decoded by the shortcut since the reset */
    struct oai_chunk result;     /* what prev decoded to */
    char prev[OAI_MEMO_MAX];     /* the last chunk decoded in full */
};

void oai_memo_reset(struct oai_memo *m);

/* oai_decode_chunk with the same result for every input, faster when data
 * differs from the stream's previous chunk only in its text (see
 * openai.c). */
int oai_decode_chunk_memo(enum oai_api api, const char *data, size_t len,
                          struct oai_chunk *out, struct oai_memo *m);

/* The memo's two halves, for the other APIs' decoders (anthropic.c,
 * responses.c):
 * oai_memo_hit answers 1 with *out written when data is the kept payload
 * with another string in the kept text's place (content_bytes from it), 0
 * otherwise (out untouched); oai_memo_keep makes data, fully decoded to
 * *out, the payload to compare with, text..text_end being the bytes
 * between the quotes of its one counted string (content only: a payload
 * with reasoning or tool-call output, or none, is not kept; text NULL
 * keeps nothing and forgets what was kept). */
int oai_memo_hit(struct oai_memo *m, enum oai_api api, const char *data, size_t len,
                 struct oai_chunk *out);
void oai_memo_keep(struct oai_memo *m, enum oai_api api, const char *data, size_t len,
                   const char *text, const char *text_end, int saw_role,
                   const struct oai_chunk *out);

/* The contract of the named-event APIs' decoders (anthropic.h,
 * responses.h), stated once here; each header lists only what its event
 * types give.
 *
 * PREFIX_decode_event decodes one SSE event, its `event:` name
 * event[0..event_len) (may be empty) and its data[0..len), into *out
 * (always fully written), through the stream's memo m (NULL: none; reset m
 * per response), which gives the same result for every input, faster when
 * the event is the stream's previous text delta with another text. The
 * data's own "type" says what the event is; the event name is used only
 * when the data has none. Returns 0, or LL_E_PROTO when data is not a
 * valid JSON object (the caller records a malformed_event). Linear in len.
 *
 * PREFIX_decode_response decodes a whole non-streamed body, its usage as
 * in a stream. Returns 0, or LL_E_PROTO when body is not a valid JSON
 * object.
 *
 * Like this file's decoder, they validate the JSON, read only what a load
 * tester needs, allocate nothing and keep no pointer into the payload.
 * A header declares the pair with OAI_DECLARE_NAMED_DECODERS(PREFIX);
 * decodeframe.h's CUR_DEFINE_DECODERS defines it. */
#define OAI_DECLARE_NAMED_DECODERS(PREFIX)                                                         \
    int PREFIX##_decode_event(const char *event, size_t event_len, const char *data, size_t len,   \
                              struct oai_chunk *out, struct oai_memo *m);                          \
    int PREFIX##_decode_response(const char *body, size_t len, struct oai_chunk *out)

/* Decode a whole non-streamed response body (or an error body such as a
 * 400's {"error":{...}}) into *out: content_bytes from choices[].message
 * .content (chat) or choices[].text (completions), reasoning, tool calls,
 * finish_reason, usage, error. done and role_only stay 0. Returns 0, or
 * LL_E_PROTO when body is not a valid JSON object. */
int oai_decode_response(enum oai_api api, const char *body, size_t len,
                        struct oai_chunk *out);

/* Decode the data of an SSE event named "error" (sse.c gives llama.cpp's
 * `error:` field that name) into *out (always fully written): has_error
 * set whatever the data holds, and error_message from the object's own
 * "message" ({"code":400,"message":"...","type":...}), else from an error
 * body's ({"error":{"message":...}}), else the data's text made printable.
 * data may be NULL when len is 0. Returns 0. Allocates nothing. */
int oai_decode_error_event(const char *data, size_t len, struct oai_chunk *out);

/* Where a request's output token count came from, best first. */
enum oai_tokens_source {
    OAI_TOKENS_CHUNK_USAGE,      /* usage sent on output-bearing chunks (vLLM continuous_usage_stats) */
    OAI_TOKENS_USAGE,            /* a final usage object */
    OAI_TOKENS_EVENTS,           /* no usage: output-bearing events counted */
};

/* A request's decoded chunks, accumulated. Embedded, caller-owned, nothing
 * to free; oai_stream_init() before each request. */
struct oai_stream {
    uint64_t events;             /* payloads added, [DONE] included */
    uint64_t output_events;      /* payloads that carried output */
    uint64_t content_events;     /* payloads with content_bytes > 0 */
    uint64_t role_only_events;
    uint64_t content_bytes;      /* summed */
    uint64_t reasoning_bytes;    /* summed */
    uint64_t tool_call_deltas;   /* summed */
    int done;                    /* [DONE] seen */
    int has_finish;
    char finish_reason[32];      /* the first finish_reason seen */
    int usage_on_output;         /* a usage object arrived on an output-bearing chunk */
    int has_usage;
    int64_t prompt_tokens;       /* from the last usage seen, -1 if none */
    int64_t completion_tokens;   /* from the last usage seen, -1 if none */
    int64_t cached_tokens;       /* from the last usage seen, -1 if none */
    int has_error;
    char error_message[128];     /* the first error's message */
};

void oai_stream_init(struct oai_stream *s);

/* Add one decoded payload. Returns the output tokens this payload carries
 * by the best measure known now: with per-chunk usage, the growth of
 * completion_tokens since the previous usage (0 if it did not grow); else 1
 * for an output-bearing payload; else 0. The per-payload figure lets the
 * caller say when one event carried several tokens. */
uint64_t oai_stream_add(struct oai_stream *s, const struct oai_chunk *c);

/* The request's output tokens, by precedence: per-chunk usage, then the
 * final usage, then counted output-bearing events. *src (may be NULL) says
 * which was used. */
uint64_t oai_stream_output_tokens(const struct oai_stream *s,
                                  enum oai_tokens_source *src);

/* "chunk_usage", "usage" or "events". Static string. */
const char *oai_tokens_source_name(enum oai_tokens_source src);

#endif
