/* results.h: the results directory of a run, and the small JSON helpers
 * every file in it needs (atomic writes, host facts, redacted headers).
 *
 * docs/formats.md describes the files; this module only makes the
 * directory and writes JSON objects into it safely. */
#ifndef LL_RESULTS_H
#define LL_RESULTS_H

#include <stddef.h>

#include <jansson.h>

/* run.json's "schema": the format this llmload writes and reads. */
#define RESULTS_RUN_SCHEMA_PREFIX "llmload.run/"
#define RESULTS_RUN_SCHEMA_VERSION 1
#define RESULTS_RUN_SCHEMA "llmload.run/1"

/* Whether the run.json object run is one this llmload reads: 0 when its
 * "schema" is RESULTS_RUN_SCHEMA or absent (a directory from before the
 * field), else LL_E_INVAL with the reason in err ("run.json: schema
 * llmload.run/2 is newer than ..."; the caller adds the directory). A
 * newer format read as this one would be misread field by field, with no
 * word said. */
int results_run_schema_check(const json_t *run, char *err, size_t errlen);

/* Where results go when the user names no directory:
 * RESULTS_DEFAULT_PARENT/<YYYYmmdd-HHMMSS>, relative to the working dir. */
#define RESULTS_DEFAULT_PARENT "results"

/* Make the results directory ready and write its path into path_out
 * (path_len bytes). dir_or_null NULL means the default
 * results/<YYYYmmdd-HHMMSS> in local time (a "-2", "-3"... suffix is added
 * if that name is taken). Missing parents are created (mode 0755).
 * An existing directory is accepted when empty, or when force is non-zero;
 * an existing non-empty one without force is refused with a message that
 * names it and suggests --force. Returns 0, LL_E_INVAL (exists and is not
 * empty, or exists and is not a directory), LL_E_RANGE (path too long for
 * path_out) or LL_E_IO (a mkdir or opendir failed); the reason, with the
 * path, is written to err (errlen bytes). */
int results_dir_prepare(const char *dir_or_null, int force, char *path_out,
                        size_t path_len, char *err, size_t errlen);

/* Write obj as pretty-printed JSON (two-space indent, keys in insertion
 * order, trailing newline) to dir/name, atomically: the text goes to
 * dir/name.tmp, is flushed and fsynced, then renamed over dir/name, so a
 * reader sees the old file or the whole new one, never half. On failure
 * the .tmp file is removed. obj is borrowed. Returns 0, LL_E_RANGE (path
 * too long) or LL_E_IO, with the reason in err. */
int results_write_json_atomic(const char *dir, const char *name, json_t *obj,
                              char *err, size_t errlen);

/* The same, for a full path: path.tmp then rename to path. */
int results_write_json_path_atomic(const char *path, json_t *obj, char *err,
                                   size_t errlen);

/* Set obj["host"] to an object describing this machine: "hostname",
 * "kernel" (uname: sysname release version machine), "cpu_model" (the first
 * "model name" of /proc/cpuinfo, null when unknown), "cores" (online CPUs),
 * "memory_bytes" (physical memory, null when unknown). Never fails: a fact
 * that cannot be read is null. obj is borrowed. */
void results_add_host_info(json_t *obj);

/* A new JSON array holding, for each of the n header lines "Name: value",
 * the string "Name: <redacted>" (the name trimmed of surrounding blanks).
 * A line without a colon becomes "<redacted>" whole, since it may be a
 * secret. Values never reach the array, so the caller may put it into
 * run.json as is. headers may be NULL when n is 0. Caller owns the
 * reference (json_decref). Aborts on out of memory. */
json_t *results_redact_headers(const char *const *headers, size_t n);

#endif
