/* shard.h: one global schedule across several processes
 * (docs/distributed.md). Pure functions for the flags of a sharded run:
 * --shard K/N, --shard auto from a launcher's environment (read through a
 * getenv-like callback, so tests need no setenv), --start-at's wall-clock
 * instant, --out's {shard} and {host}, and the hash of the configuration
 * that determines the schedule. Each returns 0, or LL_E_INVAL with a
 * one-line reason naming the flag (or the variable) in err. */
#ifndef LL_SHARD_H
#define LL_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The most shards one schedule may be split into. */
#define SHARD_MAX 100000

/* Where a process's shard index and count came from. */
enum shard_launcher {
    SHARD_NONE,       /* not sharded */
    SHARD_FLAG,       /* --shard K/N */
    SHARD_OPENMPI,    /* OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE */
    SHARD_MPICH,      /* PMI_RANK / PMI_SIZE (MPICH's Hydra, Intel MPI) */
    SHARD_SLURM,      /* SLURM_PROCID / SLURM_NTASKS (srun) */
    SHARD_KUBERNETES, /* JOB_COMPLETION_INDEX with --shards N (Indexed Job) */
};

/* run.json's name for l: "flag", "openmpi", "mpich", "slurm",
 * "kubernetes"; NULL for SHARD_NONE. */
const char *shard_launcher_name(enum shard_launcher l);

/* A getenv-like lookup: the value of name, or NULL when it is unset. */
typedef const char *shard_getenv_fn(void *ud, const char *name);

/* --shard's value: "K/N" with 0 <= K < N <= SHARD_MAX. */
int shard_parse(const char *v, uint32_t *k, uint32_t *n, char *err, size_t errlen);

/* --shard auto: the index and count from the launcher's variables, read
 * through get(ud, NAME): Open MPI, MPICH/Hydra, Slurm, and a Kubernetes
 * Indexed Job's JOB_COMPLETION_INDEX (which has no count: shards_flag,
 * --shards N, gives it; NULL when not given). Fails when no launcher's
 * variables are set, when one of a pair is set without the other, when a
 * value is not a whole number or the index is not below the count, and
 * when two launchers (or --shards) disagree. When several agree, the
 * first in the order above is named. */
int shard_from_env(shard_getenv_fn *get, void *ud, const char *shards_flag, uint32_t *k,
                   uint32_t *n, enum shard_launcher *launcher, char *err, size_t errlen);

/* --start-at's value: RFC 3339 in UTC ("2026-12-02T11:00:00.5Z", up to 9
 * digits of fraction, 'T' or 't' or ' ', 'Z' or 'z') or unix seconds with
 * an optional fraction ("1796202000.25"), into nanoseconds since the
 * epoch. From 1970 to 2262-04-11 (nanoseconds in 64 bits). */
int shard_parse_start_at(const char *v, int64_t *unix_ns, char *err, size_t errlen);

/* --out's template with "{shard}" replaced by shard and "{host}" by host
 * (other braces stay as they are) into out (outlen bytes). */
int shard_expand_out(const char *tmpl, uint32_t shard, const char *host, char *out, size_t outlen,
                     char *err, size_t errlen);

/* The keys of run.json's config that the configuration hash leaves out:
 * what differs between the shards of one schedule, or between machines,
 * without changing the schedule (url: shards may reach one server by
 * other names). NULL-terminated. */
extern const char *const shard_hash_excluded[];

/* The hash of config (run.json's config object) without the keys of
 * shard_hash_excluded: FNV-1a, 64 bits, over its compact JSON with sorted
 * keys, as 16 hex digits into out (at least 17 bytes). Each key that names
 * a file counts by the file's content, not its path: workload_file (with
 * every empirical:FILE in it, found from its directory), lengths,
 * prompt_tokens and output_tokens when empirical:FILE (their #column
 * kept), trace, dataset.file and calibration.file; a file that cannot be
 * read (or is over 256 MiB) counts by its path. urls counts by how many.
 * Reads those files (relative paths from the working directory); config
 * is left as it was. */
void shard_config_hash(const json_t *config, char out[17]);

#endif
