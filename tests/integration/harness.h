/* harness.h: helpers for integration tests: start and stop `llmload sim`
 * on an ephemeral port, run the llmload binary with a timeout and capture
 * its output, raw HTTP exchanges, temporary directories and files.
 *
 * The binary is getenv("LLMLOAD_BIN") (set by `make integration`). Every
 * function reports failures with a message on stderr. Network traffic goes
 * to 127.0.0.1 only. */
#ifndef LL_TEST_HARNESS_H
#define LL_TEST_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

struct harness_sim {
    pid_t pid;
    int port;
    char url[128]; /* "http://127.0.0.1:PORT" (no trailing slash, no /v1) */
};

/* Run LLMLOAD_BIN sim --port 0 <extra_args...> (extra_args NULL-terminated,
 * may be NULL), wait up to 10 s for the first stdout line and parse the
 * address from it. The sim's stderr is inherited. Returns 0, or -1 with a
 * message on stderr (the child, if any, is killed and reaped). */
int harness_sim_start(struct harness_sim *s, const char *const *extra_args);

/* SIGTERM the sim, wait up to 5 s for it to exit, then SIGKILL and reap.
 * Safe on a sim that already exited or was never started (pid 0). */
void harness_sim_stop(struct harness_sim *s);

/* Like harness_sim_stop but returns the exit status (WEXITSTATUS, or 128 +
 * the signal number when it was killed), -1 on error. */
int harness_sim_stop_status(struct harness_sim *s);

/* Run LLMLOAD_BIN args... (args NULL-terminated, not including the binary),
 * capture stdout and stderr into NUL-terminated strings (caller frees
 * *out and *err; either pointer may be NULL to discard), and SIGKILL it past
 * timeout_s. *exit_status gets the exit code, or 128 + signal when it was
 * killed. Returns 0, or -1 when it could not run. */
int harness_run(const char *const *args, int timeout_s, int *exit_status, char **out,
                char **err);

/* mkdtemp under $TMPDIR or /tmp. Returns the path (caller frees), or NULL. */
char *harness_tmpdir(void);

/* Remove dir and everything under it (no symlinks followed). */
void harness_rm_rf(const char *dir);

/* Connect to 127.0.0.1:port, send raw_request[0, len), read until the peer
 * closes or timeout_ms passes with nothing new (then the read so far is
 * returned). *response gets the NUL-terminated bytes (caller frees),
 * *response_len their count. Returns 0, or -1 when it could not connect or
 * send. */
int harness_http(int port, const char *raw_request, size_t len, char **response,
                 size_t *response_len, int timeout_ms);

/* Read a whole file into a NUL-terminated buffer (caller frees); *len gets
 * the byte count (len may be NULL). NULL with a message when it cannot. */
char *harness_read_file(const char *path, size_t *len);

#endif
