/* readcost.c: what one read of a small streamed event costs on a loopback
 * TCP connection, with the kernel's usual immediate ACK and without it.
 *
 * A 64-token stream is 64 small pushed segments, and the client reads each
 * as it arrives. Linux acknowledges a small pushed segment as soon as the
 * reader drains it (unless the socket is in "pingpong" mode), and on
 * loopback that ACK's whole journey, including the server socket's side
 * of it, runs inside the reader's read(). This measures the two: the
 * segment written by the other end of the pair, then one timed read();
 * the second mode sets TCP_QUICKACK to 0 (pingpong: the ACK is delayed)
 * before each read, outside the timed part.
 *
 *   readcost MODE N    MODE 0: usual ACK, 1: delayed ACK; prints ns/read */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: readcost MODE N\n");
        return 2;
    }
    int delayed = atoi(argv[1]);
    long n = atol(argv[2]);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int one = 1, zero = 0;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &alen) != 0) {
        perror("readcost: listen");
        return 1;
    }
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("readcost: connect");
        return 1;
    }
    int s = accept(l, NULL, NULL);
    if (s < 0 || setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
        perror("readcost: accept");
        return 1;
    }
    /* One SSE event of a typical chunk's size. */
    char msg[200], buf[65536];
    memset(msg, 'x', sizeof msg);
    uint64_t total = 0;
    for (long i = 0; i < n; i++) {
        if (write(s, msg, sizeof msg) != (ssize_t)sizeof msg) {
            perror("readcost: write");
            return 1;
        }
        if (delayed)
            setsockopt(c, IPPROTO_TCP, TCP_QUICKACK, &zero, sizeof zero);
        uint64_t t0 = now_ns();
        ssize_t got = read(c, buf, sizeof buf);
        total += now_ns() - t0;
        if (got != (ssize_t)sizeof msg) {
            fprintf(stderr, "readcost: read %zd bytes\n", got);
            return 1;
        }
    }
    printf("%.0f\n", (double)total / (double)n);
    return 0;
}
