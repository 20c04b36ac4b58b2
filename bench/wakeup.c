/* wakeup.c: how late this machine wakes a thread for a scheduled send,
 * with nothing else to do: the floor under llmload's schedule lateness.
 *
 *   wakeup RATE SECONDS [SEED]
 *
 * Poisson arrivals at RATE per second, each an absolute CLOCK_MONOTONIC
 * deadline on a timerfd that one epoll_wait sleeps on: the client's idle
 * path (src/http/transport.c) without the sockets. Prints the lateness (wake-up
 * time less deadline) at p50 / p90 / p99 / p99.9 / max, in microseconds,
 * and the share over 1 ms: how late this machine wakes a thread that has
 * nothing else to do. Not a strict floor for a client: on a VM an idle
 * vCPU can take longer to wake than one kept busy by traffic (here a
 * client at 5,000 req/s kept its lateness p99 below this loop's), but a
 * schedule lateness of this order is the machine's, not the client's. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: wakeup RATE SECONDS [SEED]\n");
        return 2;
    }
    double rate = atof(argv[1]), secs = atof(argv[2]);
    uint64_t x = argc > 3 ? strtoull(argv[3], NULL, 10) : 1; /* xorshift64* */
    size_t cap = (size_t)(rate * secs * 1.2) + 16, n = 0;
    uint64_t *late = malloc(cap * sizeof *late);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    if (!late || tfd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) < 0) {
        perror("wakeup");
        return 3;
    }
    uint64_t start = now_ns() + 10000000u, t = start, end = start + (uint64_t)(secs * 1e9);
    while (n < cap) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        double u = (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
        t += (uint64_t)(-log(1.0 - u) / rate * 1e9);
        if (t >= end)
            break;
        struct itimerspec its = {.it_value = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)}};
        timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
        struct epoll_event out;
        while (now_ns() < t)
            epoll_wait(ep, &out, 1, -1);
        uint64_t now = now_ns(), buf;
        late[n++] = now - t;
        if (read(tfd, &buf, sizeof buf) < 0) { /* clear it (nothing to do when it was not due) */
        }
    }
    qsort(late, n, sizeof *late, cmp_u64);
    size_t over = 0;
    for (size_t i = 0; i < n; i++)
        over += late[i] > 1000000u;
    printf("%.0f/s %zu wake-ups: p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f us; over 1 ms %.3f%%\n",
           rate, n, late[n / 2] / 1e3, late[n * 9 / 10] / 1e3, late[n * 99 / 100] / 1e3,
           late[n * 999 / 1000] / 1e3, late[n - 1] / 1e3, n ? 100.0 * (double)over / (double)n : 0);
    return 0;
}
