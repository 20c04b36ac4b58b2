/* gpu.h: the sim's GPU power model and its DCGM-exporter series
 * (llmload sim --gpu-metrics). docs/sim.md states the model.
 *
 * The engine's GPUs (gpus of them, tensor parallel: every step runs on
 * all, so each draws an equal share) draw
 *
 *     P(t) = gpus * idle_w + (decode_seq_j * decode sequences of the step
 *                             + prefill_token_j * prefill tokens of the step)
 *                            / the step's duration
 *
 * while a step runs, and gpus * idle_w between steps: the work of a step
 * costs a fixed energy per decoded token and per prefilled token, spread
 * evenly over the step. The energy counter is the exact integral of P
 * from the server's start, so the energy over any window is known. Pure
 * computation: the server passes the engine's stats and the time. */
#ifndef LL_SIM_GPU_H
#define LL_SIM_GPU_H

#include <stdint.h>

#include "sim/engine.h"
#include "sim/http.h"

#define GPU_DEFAULT_IDLE_W 70.0           /* per GPU, watts */
#define GPU_DEFAULT_DECODE_SEQ_J 0.25     /* all GPUs together, joules per decoded token */
#define GPU_DEFAULT_PREFILL_TOKEN_J 0.005 /* all GPUs together, joules per prefill token */
#define GPU_MAX_GPUS 64

struct gpu_model {
    uint32_t gpus;          /* 1 .. GPU_MAX_GPUS */
    double idle_w;          /* per GPU, watts, >= 0 */
    double decode_seq_j;    /* all GPUs, joules per decoding sequence-step, >= 0 */
    double prefill_token_j; /* all GPUs, joules per prefill token, >= 0 */
    uint64_t start_ns;      /* CLOCK_MONOTONIC origin of the energy counter */
};

/* Energy of all GPUs together from m->start_ns to now_ns, joules: idle
 * power over the whole time, every completed step's work, and the share
 * of the step in progress that has elapsed by now_ns. Non-decreasing in
 * now_ns for a given engine history. */
double gpu_energy_j(const struct gpu_model *m, const struct engine_stats *st, uint64_t now_ns);

/* Power of all GPUs together at now_ns, watts: the running step's, or
 * idle. A step of zero duration draws nothing extra (its work is
 * counted in the energy the instant it ends). */
double gpu_power_w(const struct gpu_model *m, const struct engine_stats *st, uint64_t now_ns);

/* Append the DCGM exporter's series for each GPU (labels gpu, UUID,
 * device, modelName, Hostname), with HELP and TYPE lines:
 * DCGM_FI_DEV_POWER_USAGE (W), DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ
 * since start, a counter), DCGM_FI_DEV_GPU_UTIL (%: 100 during a step,
 * 0 between), DCGM_FI_DEV_FB_USED (MiB: weights plus the KV cache's used
 * share), DCGM_FI_DEV_SM_CLOCK (MHz) and DCGM_FI_PROF_GR_ENGINE_ACTIVE
 * (0..1, as the utilisation). Each GPU's power and energy is the total's
 * 1/gpus share. */
void gpu_render(const struct gpu_model *m, const struct engine_stats *st, uint64_t now_ns,
                struct http_buf *out);

#endif
