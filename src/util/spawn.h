/* spawn.h: a child process that announces itself on its first line of
 * stdout (`llmload sim --port 0` prints its address), and its end.
 * `llmload demo` starts its sim this way, and so do the integration tests. */
#ifndef LL_SPAWN_H
#define LL_SPAWN_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* Start exe with argv (argv[0] included, NULL-terminated) and its stdout on
 * a pipe; the child gets the signal mask *mask when mask is not NULL (its
 * parent's otherwise). Wait at most timeout_ms for its first line, which
 * goes into line (len >= 1; without its newline, cut to fit). Returns the
 * child's pid, or -1 with the reason in err ("pipe: ...", "fork: ...", or
 * "no first line (got \"...\")"), the child killed and reaped. */
pid_t ll_spawn_first_line(const char *exe, char *const argv[], const sigset_t *mask, int timeout_ms,
                          char *line, size_t len, char *err, size_t errlen);

/* Wait for pid to end, at most timeout_ms, then SIGKILL it and wait again.
 * Send sig first when sig > 0. Returns its exit status, 128 + the signal
 * that ended it, or -1 when it could not be waited for. */
int ll_reap(pid_t pid, int sig, int timeout_ms);

/* Run cmd with /bin/sh -c in a process group of its own, its stdout on
 * this process's stderr (stdout stays clean), with the signal mask *mask
 * (NULL: the parent's), and wait at most timeout_ms for sh to end. On
 * the timeout, or when one of the signals in *stop (NULL: none) becomes
 * pending here (it is left pending), the group is killed (SIGKILL) and
 * reaped. Returns sh's exit status, 128 + the signal that ended it,
 * LL_E_AGAIN on the timeout, LL_E_INTR when stopped, or LL_E_IO when it
 * could not be started. */
int ll_shell_run(const char *cmd, const sigset_t *mask, const sigset_t *stop, int timeout_ms);

/* The path of the executable name: name itself when it holds a '/', else
 * the first directory of $PATH (unset or empty: none) where name is an
 * executable regular file. Returns 0 with it in buf, or LL_E_NOTFOUND
 * (none), or LL_E_RANGE (it does not fit in len bytes). */
int ll_path_find(const char *name, char *buf, size_t len);

/* Start the executable at path with argv (argv[0] included,
 * NULL-terminated) in a process group of its own (so it and its children
 * can be ended together: kill(-pid, sig)), every signal unblocked and
 * SIGPIPE, SIGTERM, SIGINT, SIGHUP at their defaults, stdin and stderr on
 * /dev/null, stdout on a pipe whose read end (close-on-exec) goes into
 * *fd. Uses posix_spawn: safe from a threaded process. Returns the pid,
 * or -1 with the reason in err ("pipe: ...", "spawn PATH: ..."). */
pid_t ll_spawn_reader(const char *path, char *const argv[], int *fd, char *err, size_t errlen);

#endif
