/* Unit tests for expose.c's server: a scrape answers, a client that
 * trickles its request or sends nothing neither blocks a scrape nor keeps
 * expose_free waiting, and running out of descriptors does not spin.
 * Every server listens on 127.0.0.1, port 0. The bounds are seconds, not
 * milliseconds, so that a loaded machine does not fail them. */
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "metrics/expose.h"
#include "util/util.h"

static struct exposer *start(void)
{
    char err[256] = "";
    struct exposer *e = expose_new("127.0.0.1:0", 0, err, sizeof err);
    if (!e)
        fail_msg("expose_new: %s", err);
    assert_true(expose_port(e) > 0);
    char want[32];
    snprintf(want, sizeof want, "127.0.0.1:%d", expose_port(e));
    assert_string_equal(expose_addr(e), want);
    return e;
}

/* A blocking socket connected to the exposer, with 5 s timeouts. */
static int connect_to(const struct exposer *e)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)expose_port(e))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        fail_msg("connect: %s", strerror(errno));
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    return fd;
}

/* Send req and read the answer to its end: a new string (caller frees). */
static char *ask(const struct exposer *e, const char *req)
{
    int fd = connect_to(e);
    assert_int_equal(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
        assert_true(len < cap - 1);
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

static double seconds_since(uint64_t t0_ns)
{
    return (double)(ll_now_ns() - t0_ns) / 1e9;
}

static void test_scrape_and_refusals(void **state)
{
    (void)state;
    struct exposer *e = start();
    char *ok = ask(e, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_non_null(strstr(ok, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(ok, "\nllmload_requests_scheduled_total 0\n"));
    free(ok);
    char *head = ask(e, "HEAD /metrics HTTP/1.1\n\n");
    assert_non_null(strstr(head, "HTTP/1.1 200 OK\r\n"));
    assert_null(strstr(head, "llmload_requests_scheduled_total"));
    free(head);
    char *nf = ask(e, "GET /other HTTP/1.1\r\n\r\n");
    assert_non_null(strstr(nf, "HTTP/1.1 404 Not Found\r\n"));
    free(nf);
    char *post = ask(e, "POST /metrics HTTP/1.1\r\n\r\n");
    assert_non_null(strstr(post, "HTTP/1.1 405 Method Not Allowed\r\n"));
    free(post);
    expose_free(e);
}

/* A client that sends "G" every 0.1 s, for 20 s or until told to stop or
 * the server closes the connection. */
struct trickler {
    int fd;
    volatile int stop;
};

static void *trickle(void *arg)
{
    struct trickler *t = arg;
    for (int i = 0; i < 200 && !t->stop; i++) {
        if (send(t->fd, "G", 1, MSG_NOSIGNAL) != 1)
            break;
        usleep(100000);
    }
    return NULL;
}

/* Stopping the server breaks its wait on a client that trickles its
 * request: expose_free returns within 2 s, though the client goes on. */
static void test_free_beside_trickler(void **state)
{
    (void)state;
    struct exposer *e = start();
    struct trickler t = {.fd = connect_to(e)};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, trickle, &t), 0);
    usleep(500000);
    uint64_t t0 = ll_now_ns();
    expose_free(e);
    double took_s = seconds_since(t0);
    t.stop = 1;
    pthread_join(th, NULL);
    close(t.fd);
    ASSERT_IN_RANGE(took_s, 0, 2.0);
}

/* A trickling client is cut off at its deadline, not served forever. */
static void test_trickler_cut_off(void **state)
{
    (void)state;
    struct exposer *e = start();
    struct trickler t = {.fd = connect_to(e)};
    pthread_t th;
    uint64_t t0 = ll_now_ns();
    assert_int_equal(pthread_create(&th, NULL, trickle, &t), 0);
    struct pollfd p = {.fd = t.fd, .events = POLLIN};
    int n = poll(&p, 1, 8000); /* the close reads as end of file */
    double took_s = seconds_since(t0);
    t.stop = 1;
    pthread_join(th, NULL);
    close(t.fd);
    expose_free(e);
    assert_int_equal(n, 1);
    ASSERT_IN_RANGE(took_s, 0.5 * EXPOSE_CONN_DEADLINE_NS / 1e9, 6.0);
}

/* Five clients that connect and send nothing delay a scrape by less than
 * 1.5 s (served one at a time, each held the server for 1 s). */
static void test_scrape_beside_idle(void **state)
{
    (void)state;
    struct exposer *e = start();
    int idle[5];
    for (size_t i = 0; i < LL_ARRAY_LEN(idle); i++)
        idle[i] = connect_to(e);
    usleep(100000);
    uint64_t t0 = ll_now_ns();
    char *ok = ask(e, "GET /metrics HTTP/1.1\r\n\r\n");
    double took_s = seconds_since(t0);
    assert_non_null(strstr(ok, "HTTP/1.1 200 OK\r\n"));
    free(ok);
    for (size_t i = 0; i < LL_ARRAY_LEN(idle); i++)
        close(idle[i]);
    expose_free(e);
    ASSERT_IN_RANGE(took_s, 0, 1.5);
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* With no descriptor free, a queued connection makes accept fail with
 * EMFILE: the server pauses instead of polling again at once (which burnt
 * a whole core), and serves the connection once descriptors are back. */
static void test_emfile_backs_off(void **state)
{
    (void)state;
    struct exposer *e = start();
    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    /* Use every descriptor below a small limit but one, lower the limit
     * there, and let the client take the last one. */
    int fds[256], nfd = 0;
    for (;;) {
        int fd = dup(STDERR_FILENO);
        assert_true(fd >= 0 && nfd < (int)LL_ARRAY_LEN(fds));
        fds[nfd++] = fd;
        if (fd >= 200)
            break;
    }
    close(fds[--nfd]);
    struct rlimit low = {.rlim_cur = (rlim_t)fds[nfd - 1] + 2, .rlim_max = old.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    int client = connect_to(e);
    const char *req = "GET /metrics HTTP/1.1\r\n\r\n";
    assert_int_equal(send(client, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    double cpu0 = cpu_seconds();
    usleep(1000000);
    double cpu_s = cpu_seconds() - cpu0;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    for (int i = 0; i < nfd; i++)
        close(fds[i]);
    char buf[64] = "";
    ssize_t n = recv(client, buf, sizeof buf - 1, 0);
    close(client);
    expose_free(e);
    ASSERT_IN_RANGE(cpu_s, 0, 0.1);
    assert_true(n > 0);
    assert_non_null(strstr(buf, "200 OK"));
}

UNIT_TESTS(test_scrape_and_refusals, test_free_beside_trickler, test_trickler_cut_off,
           test_scrape_beside_idle, test_emfile_backs_off)
