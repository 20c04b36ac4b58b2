/* smi.h: GPU telemetry from `nvidia-smi --query-gpu=... --format=csv,
 * noheader,nounits -lms 200` (--gpu-sampler nvidia-smi): one CSV line per
 * GPU per sample, read as text. The parser is pure (bytes in, fields out,
 * no I/O) and fuzzed (tests/fuzz/fuzz_smi.c).
 *
 * The query's fields, in this order (SMI_QUERY names them):
 *   timestamp, index, power.draw (W), utilization.gpu (%),
 *   memory.used (MiB), memory.total (MiB), clocks.sm (MHz)
 * A field nvidia-smi cannot give reads "[N/A]", "[Not Supported]" (or any
 * other bracketed word): a missing value, not an error. */
#ifndef LL_SMI_H
#define LL_SMI_H

#include <stddef.h>
#include <stdint.h>

#include "metrics/scrape.h"

#define SMI_QUERY "timestamp,index,power.draw,utilization.gpu,memory.used,memory.total,clocks.sm"
#define SMI_FIELDS 7
/* A line longer than this is malformed (nvidia-smi's are under 100). */
#define SMI_MAX_LINE 512
#define SMI_MAX_INDEX 1023

/* nvidia-smi's -lms period, and how long a run waits for its first
 * period at the start and for one more after its last response. */
#define SMI_INTERVAL_NS (200ULL * 1000 * 1000)
#define SMI_START_WAIT_NS (2000ULL * 1000 * 1000)
#define SMI_STOP_WAIT_NS (2000ULL * 1000 * 1000)
#define SMI_MUTE_GRACE_MS 200 /* SIGTERM to SIGKILL when no period ever came */

/* The numeric fields of one line, in query order after the index. */
enum smi_field {
    SMI_POWER_W,
    SMI_UTIL_PCT,
    SMI_MEM_USED_MIB,
    SMI_MEM_TOTAL_MIB,
    SMI_SM_CLOCK_MHZ,
    SMI_VALUE_COUNT,
};

struct smi_line {
    char timestamp[40];                     /* as nvidia-smi wrote it, cut to fit */
    unsigned index;                         /* the GPU, 0..SMI_MAX_INDEX */
    double value[SMI_VALUE_COUNT];          /* finite, >= 0, where present */
    unsigned char present[SMI_VALUE_COUNT]; /* 0: "[N/A]" and the like */
};

/* Parse one line of len bytes (need not be NUL-terminated; a trailing
 * "\r" or "\n" is ignored). Fields are separated by commas, each trimmed of
 * blanks. Returns 0 and *out; or LL_E_PROTO, *out zeroed, with the reason
 * in err (errlen >= 1): not SMI_FIELDS fields, an index that is not a
 * whole number up to SMI_MAX_INDEX, a value that is neither a
 * non-negative finite number nor bracketed, an empty field, or a line
 * over SMI_MAX_LINE bytes. */
int smi_line_parse(const char *line, size_t len, struct smi_line *out, char *err, size_t errlen);

/* One sample period: the lines of every GPU that nvidia-smi prints for
 * one tick of -lms, gathered into one scrape_point (ENGINE_DCGM meanings:
 * power and memory used summed over GPUs, utilisation and SM clock their
 * mean), so the join and the energy treat it as a DCGM scrape. */
#define SMI_MAX_GPUS 64
struct smi_group {
    size_t n; /* lines in the group */
    struct smi_line line[SMI_MAX_GPUS];
    uint64_t first_abs_ns, last_abs_ns; /* when its first and last lines were read */
    size_t bad;                         /* malformed lines read inside it */
    unsigned want;                      /* GPUs of the last full group (0: none yet) */
};

/* Whether line l (read at now_abs_ns) starts a new period: its GPU is
 * already in g. The caller then takes g's point (smi_group_take) first. */
int smi_group_repeats(const struct smi_group *g, const struct smi_line *l);

/* Add l, read at now_abs_ns, to g. Returns 1 when g now holds as many GPUs
 * as the last full group did (the period is complete: take it now), else
 * 0. A group past SMI_MAX_GPUS lines counts the extra ones as bad. */
int smi_group_add(struct smi_group *g, const struct smi_line *l, uint64_t now_abs_ns);

/* Count a malformed line read at now_abs_ns into g's period. */
void smi_group_bad(struct smi_group *g, uint64_t now_abs_ns);

/* The point of g's period into *p (zeroed first; start and end the read
 * times of its first and last lines), and g emptied for the next. p->ok
 * is 0 when the period had a malformed line or fewer GPUs than the last
 * full one (a power sum of part of the GPUs would be too small): a
 * counted gap. A meaning is present only when every GPU had it. Returns
 * the number of lines it held, malformed ones included (0: nothing to
 * take, *p untouched). */
size_t smi_group_take(struct smi_group *g, struct scrape_point *p);

/* The GPU scraper of --gpu-sampler nvidia-smi: starts `nvidia-smi
 * --query-gpu=SMI_QUERY --format=csv,noheader,nounits -lms 200` (found on
 * PATH) with a thread that reads it, its periods kept as points whose
 * lines go to dir/server_metrics.jsonl ("source": "gpu", "sampler":
 * "nvidia-smi"; truncated first when truncate is 1), and waits up to
 * SMI_START_WAIT_NS for a first period (a warning, naming what it
 * printed, when none came). Its url is "nvidia-smi". scraper_start sets
 * the origin; scraper_stop waits up to SMI_STOP_WAIT_NS for one more
 * period (not when the run was interrupted, nor when no period ever
 * came), then ends nvidia-smi (SIGTERM to its process group, SIGKILL
 * after 1 s, or SMI_MUTE_GRACE_MS when no period came) and reaps it;
 * scraper_free does so, without the wait, if stop was not called. nvidia-smi missing or failing to start is a
 * warning and a scraper with no points (no energy figure); NULL only when
 * the file cannot be opened (warned). */
struct scraper *scraper_for_smi(const char *dir, int truncate);

#endif
