/* smisampler.c: --gpu-sampler nvidia-smi. See smi.h.
 *
 * nvidia-smi runs as a child in a process group of its own, its stdout on
 * a pipe read by a thread of ours (never a load worker): each line is
 * stamped on CLOCK_MONOTONIC when read, parsed (smi_line_parse), and the
 * lines of one sample period become one point of a GPU scraper
 * (scrape_int.h), so the join, the energy, the printing and the file are
 * the DCGM exporter's. Anything that goes wrong (no nvidia-smi, a
 * malformed line, a GPU without power.draw, an early exit) is a warning,
 * once, and gaps: never a failed run. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "metrics/scrape_int.h"
#include "metrics/smi.h"
#include "util/spawn.h"
#include "util/util.h"

struct smi_sampler {
    struct scraper *s; /* borrowed: the scraper owns the sampler */
    pid_t pid;         /* -1: none (never started) */
    int fd;            /* nvidia-smi's stdout, -1: none */
    int wake[2];       /* stop's byte to the thread */
    pthread_t th;
    int thread_started;
    int stopped;

    pthread_mutex_t lock; /* guards the five below */
    pthread_cond_t cond;
    uint64_t last_start_abs_ns; /* the last kept point's start; 0: none */
    int ended;                  /* the thread saw nvidia-smi's stdout end */
    int reaped;                 /* ... and reaped it */
    uint64_t out_bytes;         /* what nvidia-smi printed, bytes */
    char out_head[64];          /* its first bytes, NUL-terminated */

    /* The thread's own. */
    struct smi_group g;
    char buf[SMI_MAX_LINE + 2];
    size_t blen;
    int skipping; /* inside a line too long for buf */
    uint64_t lines;
    int warned_bad, warned_power;
};

/* The period in g as one point of the scraper, its lines per GPU in the
 * file's line. stopping: a period cut short by the stop is dropped, not
 * counted as a gap (the sampler did not fail). */
static void period_keep(struct smi_sampler *m, int stopping)
{
    struct smi_group *g = &m->g;
    if (g->n == 0 && g->bad == 0)
        return;
    if (stopping && g->bad == 0 && g->n < g->want) {
        memset(g->line, 0, sizeof g->line);
        g->n = 0;
        return;
    }
    char error[120] = "";
    if (g->bad)
        snprintf(error, sizeof error, "%zu malformed nvidia-smi line%s", g->bad,
                 g->bad == 1 ? "" : "s");
    else if (g->n < g->want)
        snprintf(error, sizeof error, "a sample period with %zu of %u GPUs", g->n, g->want);
    static const char *const key[SMI_VALUE_COUNT] = {
        [SMI_POWER_W] = "power_w",           [SMI_UTIL_PCT] = "gpu_util_pct",
        [SMI_MEM_USED_MIB] = "fb_used_mib",  [SMI_MEM_TOTAL_MIB] = "fb_total_mib",
        [SMI_SM_CLOCK_MHZ] = "sm_clock_mhz",
    };
    json_t *extra = json_object(), *per = json_array();
    json_object_set_new(extra, "engine", json_string("nvidia-smi"));
    json_object_set_new(extra, "sampler", json_string("nvidia-smi"));
    for (size_t i = 0; i < g->n; i++) {
        const struct smi_line *l = &g->line[i];
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer(l->index));
        json_object_set_new(o, "timestamp", json_string(l->timestamp));
        for (int f = 0; f < SMI_VALUE_COUNT; f++)
            json_object_set_new(o, key[f], l->present[f] ? json_real(l->value[f]) : json_null());
        json_array_append_new(per, o);
    }
    json_object_set_new(extra, "per_gpu", per);
    struct scrape_point p;
    smi_group_take(g, &p);
    uint64_t start = p.start_abs_ns;
    scraper_keep(m->s, &p, extra, error);
    pthread_mutex_lock(&m->lock);
    m->last_start_abs_ns = start;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
}

static void line_take(struct smi_sampler *m, const char *line, size_t len, uint64_t now)
{
    struct smi_line l;
    char err[160];
    m->lines++;
    if (smi_line_parse(line, len, &l, err, sizeof err) != 0) {
        if (!m->warned_bad)
            ll_errorf("warning: nvidia-smi: line %llu: %s (\"%.60s\"); malformed lines are "
                      "counted gaps",
                      (unsigned long long)m->lines, err, len > 0 && line[0] ? line : "");
        m->warned_bad = 1;
        smi_group_bad(&m->g, now);
        return;
    }
    if (!l.present[SMI_POWER_W] && !m->warned_power) {
        ll_errorf("warning: nvidia-smi: GPU %u reports no power.draw ([N/A] or not "
                  "supported); no energy figure without every GPU's power",
                  l.index);
        m->warned_power = 1;
    }
    if (smi_group_repeats(&m->g, &l))
        period_keep(m, 0);
    if (smi_group_add(&m->g, &l, now))
        period_keep(m, 0);
}

/* Split what buf holds into lines; keep a partial one. A line longer
 * than buf is malformed: counted once, skipped to its newline. */
static void lines_take(struct smi_sampler *m, uint64_t now)
{
    size_t off = 0;
    for (;;) {
        char *nl = memchr(m->buf + off, '\n', m->blen - off);
        if (!nl)
            break;
        size_t len = (size_t)(nl - (m->buf + off));
        if (m->skipping)
            m->skipping = 0;
        else
            line_take(m, m->buf + off, len, now);
        off += len + 1;
    }
    memmove(m->buf, m->buf + off, m->blen - off);
    m->blen -= off;
    if (m->blen == sizeof m->buf) {
        if (!m->skipping)
            line_take(m, m->buf, m->blen, now); /* over SMI_MAX_LINE: malformed */
        m->skipping = 1;
        m->blen = 0;
    }
}

static void *sampler_main(void *arg)
{
    struct smi_sampler *m = arg;
    for (;;) {
        struct pollfd pfd[2] = {{.fd = m->fd, .events = POLLIN},
                                {.fd = m->wake[0], .events = POLLIN}};
        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pfd[1].revents)
            return NULL; /* stop: it ends the child */
        ssize_t r = read(m->fd, m->buf + m->blen, sizeof m->buf - m->blen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        pthread_mutex_lock(&m->lock);
        if (m->out_bytes == 0)
            snprintf(m->out_head, sizeof m->out_head, "%.*s", (int)r, m->buf + m->blen);
        m->out_bytes += (uint64_t)r;
        pthread_mutex_unlock(&m->lock);
        m->blen += (size_t)r;
        lines_take(m, ll_now_ns());
    }
    /* nvidia-smi's stdout ended before the run did: it exited (or closed
     * it). What it printed stands; the rest of the run has no samples. */
    if (m->blen && !m->skipping)
        line_take(m, m->buf, m->blen, ll_now_ns());
    period_keep(m, 0);
    int st = ll_reap(m->pid, 0, 1000);
    kill(-m->pid, SIGKILL); /* anything it left in its group */
    ll_errorf("warning: nvidia-smi exited (%s %d) after %llu line%s; no GPU telemetry from "
              "then on",
              st > 128 ? "signal" : "status", st > 128 ? st - 128 : st,
              (unsigned long long)m->lines, m->lines == 1 ? "" : "s");
    pthread_mutex_lock(&m->lock);
    m->ended = m->reaped = 1;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* Wait until a point starting at or after after_abs_ns is kept, the
 * thread ended, or timeout_ns passed. */
static void wait_point(struct smi_sampler *m, uint64_t after_abs_ns, uint64_t timeout_ns)
{
    uint64_t deadline = ll_now_ns() + timeout_ns;
    struct timespec ts = {.tv_sec = (time_t)(deadline / LL_NS_PER_SEC),
                          .tv_nsec = (long)(deadline % LL_NS_PER_SEC)};
    pthread_mutex_lock(&m->lock);
    while (!m->ended && (m->last_start_abs_ns == 0 || m->last_start_abs_ns < after_abs_ns) &&
           ll_now_ns() < deadline)
        pthread_cond_timedwait(&m->cond, &m->lock, &ts);
    pthread_mutex_unlock(&m->lock);
}

/* End the thread and nvidia-smi; first, when wait is 1, wait for one more
 * period after now, so the span covers the run's last response (as the
 * scraper's last scrape does): at most SMI_STOP_WAIT_NS. An nvidia-smi
 * that never gave a period has nothing to lose: it gets SMI_MUTE_GRACE_MS
 * after SIGTERM, not 1 s. */
static void sampler_end(struct smi_sampler *m, int wait)
{
    if (m->stopped)
        return;
    m->stopped = 1;
    if (!m->thread_started)
        return;
    pthread_mutex_lock(&m->lock);
    int mute = m->last_start_abs_ns == 0;
    pthread_mutex_unlock(&m->lock);
    if (wait && !mute)
        wait_point(m, ll_now_ns(), SMI_STOP_WAIT_NS);
    ssize_t w;
    do
        w = write(m->wake[1], "x", 1);
    while (w < 0 && errno == EINTR);
    pthread_join(m->th, NULL);
    m->thread_started = 0;
    if (!m->reaped) {
        period_keep(m, 1);
        kill(-m->pid, SIGTERM);
        ll_reap(m->pid, 0, mute ? SMI_MUTE_GRACE_MS : 1000);
        kill(-m->pid, SIGKILL);
        m->reaped = 1;
    }
}

/* The wait is one nvidia-smi period (200 ms) after now, as a direct
 * scrape's last one is taken after now; none when the user interrupted
 * the run (it is to end now), nor when nvidia-smi never gave a period
 * (sampler_end): a silent one that ignored SIGTERM made a 1.89 s run take
 * 7.3 s. */
static void sampler_stop(void *ud, uint64_t end_abs_ns, int interrupted)
{
    sampler_end(ud, !interrupted);
}

/* After the start wait: warn when no period came and nvidia-smi is still
 * there (an exit warned already), naming what it printed, if anything. */
static void warn_mute(struct smi_sampler *m)
{
    pthread_mutex_lock(&m->lock);
    int mute = m->last_start_abs_ns == 0 && !m->ended;
    uint64_t bytes = m->out_bytes;
    char head[sizeof m->out_head];
    memcpy(head, m->out_head, sizeof head);
    pthread_mutex_unlock(&m->lock);
    if (!mute)
        return;
    for (char *c = head; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    char what[160];
    if (bytes == 0)
        snprintf(what, sizeof what, "it printed nothing");
    else
        snprintf(what, sizeof what, "it printed %llu byte%s: \"%s%s\"", (unsigned long long)bytes,
                 bytes == 1 ? "" : "s", head, bytes >= sizeof head ? "..." : "");
    ll_errorf("warning: --gpu-sampler nvidia-smi: no sample period in the first %.0f s (%s); "
              "GPU telemetry only once one comes",
              (double)SMI_START_WAIT_NS / 1e9, what);
}

/* Without stop (a run that ended before it began): no wait. */
static void sampler_free(void *ud)
{
    struct smi_sampler *m = ud;
    sampler_end(m, 0);
    if (m->fd >= 0)
        close(m->fd);
    for (int i = 0; i < 2; i++)
        if (m->wake[i] >= 0)
            close(m->wake[i]);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static const struct scraper_source sampler_ops = {.stop = sampler_stop, .free = sampler_free};

struct scraper *scraper_for_smi(const char *dir, int truncate)
{
    struct scraper *s = scraper_gpu_open("nvidia-smi", SMI_INTERVAL_NS, dir, truncate);
    if (!s)
        return NULL;
    struct smi_sampler *m = ll_calloc(1, sizeof *m);
    m->s = s;
    m->pid = -1;
    m->fd = -1;
    int wake_rc = pipe2(m->wake, O_CLOEXEC);
    if (wake_rc < 0)
        m->wake[0] = m->wake[1] = -1;
    scrape_lock_init(&m->lock, &m->cond);
    scraper_set_source(s, &sampler_ops, m);

    char path[4096], err[300];
    char *argv[] = {
        "nvidia-smi", "--query-gpu=" SMI_QUERY, "--format=csv,noheader,nounits", "-lms", "200",
        NULL};
    if (wake_rc < 0) {
        ll_errorf("warning: --gpu-sampler nvidia-smi: pipe: %s; no GPU telemetry nor energy "
                  "figure",
                  strerror(errno));
        return s;
    }
    int rc = ll_path_find("nvidia-smi", path, sizeof path);
    if (rc != 0) {
        ll_errorf("warning: --gpu-sampler nvidia-smi: nvidia-smi %s; no GPU telemetry nor "
                  "energy figure",
                  rc == LL_E_NOTFOUND ? "not found on PATH" : "path too long");
        return s;
    }
    m->pid = ll_spawn_reader(path, argv, &m->fd, err, sizeof err);
    if (m->pid < 0) {
        ll_errorf("warning: --gpu-sampler nvidia-smi: %s; no GPU telemetry nor energy figure", err);
        return s;
    }
    if (ll_thread_start_nosig(&m->th, sampler_main, m, err, sizeof err) != 0) {
        ll_errorf("warning: --gpu-sampler nvidia-smi: %s; no GPU telemetry nor energy figure", err);
        kill(-m->pid, SIGKILL);
        ll_reap(m->pid, 0, 1000);
        m->reaped = 1;
        return s;
    }
    m->thread_started = 1;
    /* A first period before the first request, as the scrapers' probe. */
    wait_point(m, 0, SMI_START_WAIT_NS);
    warn_mute(m);
    return s;
}
