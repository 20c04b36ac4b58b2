/* spawn.c: a child that announces itself on its first line. See spawn.h. */
#include "util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

/* Read one line from fd into line until deadline_ns (monotonic). Returns 1
 * when a whole line came, else 0; line holds what came, NUL-terminated. */
static int read_first_line(int fd, uint64_t deadline_ns, char *line, size_t len)
{
    size_t n = 0;
    int ok = 0;
    while (n + 1 < len) {
        uint64_t now = ll_now_ns();
        if (now >= deadline_ns)
            break;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, (int)((deadline_ns - now + LL_NS_PER_MS - 1) / LL_NS_PER_MS));
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            break;
        ssize_t r = read(fd, line + n, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (line[n] == '\n') {
            ok = 1;
            break;
        }
        n++;
    }
    line[n] = '\0';
    return ok;
}

pid_t ll_spawn_first_line(const char *exe, char *const argv[], const sigset_t *mask, int timeout_ms,
                          char *line, size_t len, char *err, size_t errlen)
{
    int fds[2];
    line[0] = '\0';
    if (pipe2(fds, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        if (mask != NULL)
            pthread_sigmask(SIG_SETMASK, mask, NULL);
        if (dup2(fds[1], STDOUT_FILENO) < 0)
            _exit(127);
        execv(exe, argv);
        /* No stdio after fork: another thread may have held its lock. */
        dprintf(STDERR_FILENO, "exec %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    int ok = read_first_line(fds[0], ll_now_ns() + (uint64_t)timeout_ms * LL_NS_PER_MS, line, len);
    close(fds[0]);
    if (!ok) {
        snprintf(err, errlen, "no first line (got \"%s\")", line);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

/* A wait status as a shell says it: the exit status, 128 + the signal
 * that ended it, or other when it did neither. */
static int exit_code(int st, int other)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return other;
}

/* Whether one of the signals of stop (NULL: none) is pending. */
static int stop_pending(const sigset_t *stop)
{
    sigset_t pend;
    if (!stop || sigpending(&pend) != 0)
        return 0;
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(stop, sig) == 1 && sigismember(&pend, sig) == 1)
            return 1;
    return 0;
}

/* Wait up to timeout_ms for the child pid to end, looking every poll_ms,
 * its wait status into *st. Returns 0 when it ended, 1 when the time ran
 * out, 2 when one of the signals of stop (NULL: none) came first (the
 * child still running in both), -1 when waitpid failed. */
static int wait_for(pid_t pid, int *st, int timeout_ms, long poll_ms, const sigset_t *stop)
{
    uint64_t deadline = ll_now_ns() + (uint64_t)timeout_ms * LL_NS_PER_MS;
    for (;;) {
        pid_t r = waitpid(pid, st, WNOHANG);
        if (r == pid)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
        if (stop_pending(stop))
            return 2;
        if (ll_now_ns() >= deadline)
            return 1;
        struct timespec ts = {0, poll_ms * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int ll_reap(pid_t pid, int sig, int timeout_ms)
{
    if (sig > 0)
        kill(pid, sig);
    int st = 0;
    int w = wait_for(pid, &st, timeout_ms, 5, NULL);
    if (w < 0)
        return -1;
    if (w > 0) {
        kill(pid, SIGKILL);
        if (waitpid(pid, &st, 0) < 0)
            return -1;
    }
    return exit_code(st, -1);
}

int ll_shell_run(const char *cmd, const sigset_t *mask, const sigset_t *stop, int timeout_ms)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return LL_E_IO;
    if (pid == 0) {
        setpgid(0, 0);
        if (mask)
            sigprocmask(SIG_SETMASK, mask, NULL);
        dup2(STDERR_FILENO, STDOUT_FILENO);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid); /* as the child does: whichever runs first */
    int st = 0;
    int w = wait_for(pid, &st, timeout_ms, 10, stop);
    if (w < 0)
        return LL_E_IO;
    if (w > 0) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return w == 2 ? LL_E_INTR : LL_E_AGAIN;
    }
    return exit_code(st, LL_E_IO);
}

int ll_path_find(const char *name, char *buf, size_t len)
{
    if (strchr(name, '/')) {
        if (strlen(name) >= len)
            return LL_E_RANGE;
        strcpy(buf, name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path || !*name)
        return LL_E_NOTFOUND;
    int too_long = 0;
    for (const char *p = path;;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        /* An empty entry is the current directory, as for execvp. */
        int k = n ? snprintf(buf, len, "%.*s/%s", (int)n, p, name) : snprintf(buf, len, "%s", name);
        struct stat st;
        if (k < 0 || (size_t)k >= len)
            too_long = 1;
        else if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return 0;
        if (!e)
            break;
        p = e + 1;
    }
    buf[0] = '\0';
    return too_long ? LL_E_RANGE : LL_E_NOTFOUND;
}

pid_t ll_spawn_reader(const char *path, char *const argv[], int *fd, char *err, size_t errlen)
{
    int fds[2];
    *fd = -1;
    if (pipe2(fds, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    sigaddset(&dfl, SIGTERM);
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGHUP);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dfl);
    pid_t pid;
    extern char **environ;
    int rc = posix_spawn(&pid, path, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(fds[1]);
    if (rc != 0) {
        snprintf(err, errlen, "spawn %s: %s", path, strerror(rc));
        close(fds[0]);
        return -1;
    }
    *fd = fds[0];
    return pid;
}
