/* add_tuned IN.symx OUT.symx: IN with tuned entries on every library step at
 * the sizes of each tuning point (cg_tune_points, codegen/tuner.h), as a
 * build on a GPU records them, so `symc inspect` of a multi-entry engine is
 * tested on machines without one. The choices are placeholders (two cuBLASLt algo byte patterns,
 * cuDNN algos 1 and 0, alternating over the points) with made-up times; only their sizes, pick
 * and buckets matter here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/tuner.h"
#include "runtime/engine.h"
#include "runtime/cuda/tuned_pick.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: add_tuned IN.symx OUT.symx\n");
        return 2;
    }
    symc_error err;
    uint8_t *bytes = NULL;
    size_t size = 0;
    rt_engine *e = NULL;
    if (rt_read_file(argv[1], &bytes, &size, &err) || rt_engine_decode(bytes, size, &e, &err)) {
        fprintf(stderr, "add_tuned: %s: %s\n", argv[1], err.msg);
        return 1;
    }
    free(bytes);
    int64_t points[CG_TUNE_MAX_POINTS * 16];
    if (e->n_symbols > 16) {
        fprintf(stderr, "add_tuned: more than 16 symbols\n");
        return 1;
    }
    uint32_t np = cg_tune_points(e->symbols, e->n_symbols, CG_TUNE_MAX_POINTS, points, NULL);
    int64_t *slots = calloc(e->num_slots + 1, sizeof *slots);
    rt_step *steps = calloc(e->n_steps + 1, sizeof *steps);
    rt_tuned *entries = calloc((size_t)e->n_steps * CG_TUNE_MAX_POINTS + 1, sizeof *entries);
    /* two placeholder choices, alternating over the points, so buckets show */
    static uint8_t gemm_algo[2][RT_GEMM_ALGO_SIZE];
    static const int32_t conv_algo[2] = {1, 0};
    gemm_algo[1][0] = 1;
    if (!slots || !steps || !entries) return 1;
    memcpy(steps, e->steps, e->n_steps * sizeof *steps);
    for (uint32_t p = 0; p < np; p++) {
        if (sym_program_eval(e->program, e->program_size, points + (size_t)p * e->n_symbols, e->n_symbols, slots,
                             e->num_slots, &err)) {
            fprintf(stderr, "add_tuned: %s\n", err.msg);
            return 1;
        }
        for (uint32_t i = 0; i < e->n_steps; i++) {
            rt_step *s = &steps[i];
            if (s->kind != RT_STEP_GEMM && s->kind != RT_STEP_CONV) continue;
            rt_tuned *t = &entries[(size_t)i * CG_TUNE_MAX_POINTS + s->n_tuned];
            if (rt_cuda_tune_sizes(e, i, slots, t->at, &err)) {
                fprintf(stderr, "add_tuned: %s\n", err.msg);
                return 1;
            }
            t->ms = 0.001f * (float)(p + 1);
            t->algo = s->kind == RT_STEP_GEMM ? gemm_algo[p % 2] : (const uint8_t *)&conv_algo[p % 2];
            t->algo_size = s->kind == RT_STEP_GEMM ? RT_GEMM_ALGO_SIZE : RT_CONV_ALGO_SIZE;
            s->tuned = &entries[(size_t)i * CG_TUNE_MAX_POINTS];
            s->n_tuned++;
        }
    }
    /* sorted by size (the first), as the tuner stores them */
    for (uint32_t i = 0; i < e->n_steps; i++) {
        rt_tuned *v = &entries[(size_t)i * CG_TUNE_MAX_POINTS];
        for (uint32_t a = 1; a < steps[i].n_tuned; a++)
            for (uint32_t b = a; b > 0 && v[b - 1].at[0] > v[b].at[0]; b--) {
                rt_tuned x = v[b];
                v[b] = v[b - 1];
                v[b - 1] = x;
            }
    }
    rt_engine copy = *e;
    copy.steps = steps;
    copy.owned = NULL;
    uint8_t *out = NULL;
    size_t out_size = 0;
    FILE *f = NULL;
    if (rt_engine_encode(&copy, &out, &out_size, &err)) {
        fprintf(stderr, "add_tuned: %s\n", err.msg);
        return 1;
    }
    f = fopen(argv[2], "wb");
    if (!f || fwrite(out, 1, out_size, f) != out_size || fclose(f)) {
        fprintf(stderr, "add_tuned: cannot write %s\n", argv[2]);
        return 1;
    }
    free(out);
    free(entries);
    free(steps);
    free(slots);
    rt_engine_free(e);
    return 0;
}
