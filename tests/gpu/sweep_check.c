/* sweep_check: one engine, one CUDA context and one reference context serve a
 * whole sweep of input shapes; every output of the CUDA backend is compared
 * with the reference backend (the oracle, itself checked against onnxruntime
 * and numpy by the e2e tests).
 *
 * usage: sweep_check ENGINE.symx TOL POINT_DIR...
 * Each POINT_DIR holds NAME.npy for every engine input (fresh random data
 * written by the driver script). Per point: the shapes come from the .npy
 * files; the CUDA outputs are poisoned (0xff bytes: NaN for floats) before the
 * run, so an element no kernel wrote shows; floats must match with
 * ||cuda - ref||_2 / ||ref||_2 < TOL and the same NaN/Inf pattern, integers
 * and booleans exactly. The engine is loaded and its module compiled once:
 * nothing is rebuilt between points. The CUDA context uses CUDA graphs (the
 * default; SYMC_GPU_GRAPHS=0 turns them off) and each point runs three times
 * more: captured on our stream, replayed on the legacy default stream, and
 * with the outputs moved to new buffers (captured at once), poisoned each
 * time; each must give bit-identical outputs, and the context's graph
 * counters must show the replays and no failed capture. Every point also
 * runs once through symrt_context_profile (a CUDA event between steps),
 * which must give bit-identical outputs and a GPU and host time for every
 * step (sizing the array first with cap 0 runs nothing). Prints one line
 * per output and point; exit 1 on any mismatch or error. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_backend.h"
#include "runtime/ref/ref_kernels.h"
#include "symc/symrt.h"
#include "tools/npy.h"

#define MAX_IO 256

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: sweep_check ENGINE.symx TOL POINT_DIR...\n");
        return 2;
    }
    double tol = atof(argv[2]);
    symc_error err;
    symrt_engine *e = NULL;
    symrt_context *ref = NULL, *gpu = NULL;
    const rt_cuda_driver_api *drv;
    if (symrt_engine_load_file(argv[1], &e, &err) || symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &ref, &err) ||
        symrt_context_create(e, SYMRT_BACKEND_CUDA, NULL, &gpu, &err) || !(drv = rt_cuda_driver(&err))) {
        fprintf(stderr, "sweep_check: %s\n", err.msg);
        return 1;
    }
    /* graphs are on by default, as for any context; SYMC_GPU_GRAPHS=0 turns them off */
    int graphs = !getenv("SYMC_GPU_GRAPHS") || atoi(getenv("SYMC_GPU_GRAPHS"));
    if (symrt_context_set_cuda_graphs(gpu, graphs, &err)) {
        fprintf(stderr, "sweep_check: %s\n", err.msg);
        return 1;
    }
    void *stream = NULL;
    if (drv->stream_create(&stream, 1)) {
        fprintf(stderr, "sweep_check: cannot create a stream\n");
        return 1;
    }
    uint32_t ni = symrt_engine_num_inputs(e), no = symrt_engine_num_outputs(e);
    int produced = symrt_engine_num_produced(e) > 0;
    if (ni > MAX_IO || no > MAX_IO) {
        fprintf(stderr, "sweep_check: too many inputs or outputs\n");
        return 1;
    }
    int failures = 0;
    for (int p = 3; p < argc; p++) {
        const char *dir = argv[p];
        static npy_array in[MAX_IO];
        static void *host_out[MAX_IO], *dev_out_host[MAX_IO];
        static uint64_t dev[2 * MAX_IO];
        static size_t out_bytes[MAX_IO];
        memset(in, 0, sizeof in);
        memset(host_out, 0, sizeof host_out);
        memset(dev_out_host, 0, sizeof dev_out_host);
        memset(dev, 0, sizeof dev);
        memset(out_bytes, 0, sizeof out_bytes);
        int ok = 1;
        for (uint32_t i = 0; i < ni && ok; i++) {
            symrt_io_info info;
            symrt_engine_input(e, i, &info, NULL);
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.npy", dir, info.name);
            size_t bytes;
            if (npy_read(path, &in[i], &err) || symrt_set_input_shape(ref, info.name, in[i].dims, in[i].rank, &err) ||
                symrt_set_input_shape(gpu, info.name, in[i].dims, in[i].rank, &err) ||
                symrt_set_tensor_address(ref, info.name, in[i].data, in[i].size, &err)) {
                ok = 0;
                break;
            }
            bytes = in[i].size;
            if (drv->mem_alloc(&dev[i], bytes ? bytes : 1) || drv->memcpy_htod(dev[i], in[i].data, bytes)) {
                snprintf(err.msg, sizeof err.msg, "device allocation or copy failed for '%s'", info.name);
                ok = 0;
                break;
            }
            if (symrt_set_tensor_address(gpu, info.name, (void *)(uintptr_t)dev[i], bytes, &err)) ok = 0;
        }
        for (uint32_t o = 0; o < no && ok; o++) {
            symrt_io_info info;
            symrt_engine_output(e, o, &info, NULL);
            int64_t dims[8];
            int32_t rank;
            /* the most it can hold: an output's size may depend on the data (compared below at its real one) */
            if (symrt_get_tensor_max_shape(ref, info.name, dims, &rank, &err)) {
                ok = 0;
                break;
            }
            size_t n = symc_dtype_size(info.dtype);
            for (int d = 0; d < rank; d++) n *= (size_t)dims[d];
            out_bytes[o] = n;
            host_out[o] = malloc(n ? n : 1);
            dev_out_host[o] = malloc(n ? n : 1);
            if (!host_out[o] || !dev_out_host[o] || drv->mem_alloc(&dev[MAX_IO + o], n ? n : 1) ||
                drv->memset_d8(dev[MAX_IO + o], 0xff, n ? n : 1)) {
                snprintf(err.msg, sizeof err.msg, "allocation failed for output '%s'", info.name);
                ok = 0;
                break;
            }
            memset(host_out[o], 0xff, n);
            if (symrt_set_tensor_address(ref, info.name, host_out[o], n, &err) ||
                symrt_set_tensor_address(gpu, info.name, (void *)(uintptr_t)dev[MAX_IO + o], n, &err))
                ok = 0;
        }
        /* the copies in and the poison ran on the legacy default stream, which a
         * non-blocking stream does not wait for: without this the poison could land
         * after the kernels (under load it did: an output read back all NaN) */
        if (ok && drv->ctx_synchronize()) {
            snprintf(err.msg, sizeof err.msg, "preparing the buffers failed (cuCtxSynchronize)");
            ok = 0;
        }
        if (ok && (symrt_enqueue(ref, NULL, &err) || symrt_enqueue(gpu, stream, &err))) ok = 0;
        if (ok && drv->stream_synchronize(stream)) {
            snprintf(err.msg, sizeof err.msg, "the GPU run failed (stream synchronize)");
            ok = 0;
        }
        for (uint32_t o = 0; o < no && ok; o++)
            if (drv->memcpy_dtoh(dev_out_host[o], dev[MAX_IO + o], out_bytes[o])) {
                snprintf(err.msg, sizeof err.msg, "copying an output back failed");
                ok = 0;
            }
        /* sizes known only after the run: both backends' real shapes must agree, and only the elements inside
         * them are compared (the rest of each buffer is poison, unwritten) */
        static size_t real_elems[MAX_IO];
        for (uint32_t o = 0; o < no; o++) real_elems[o] = out_bytes[o];
        if (ok && produced) {
            if (symrt_context_sync_shapes(ref, &err) || symrt_context_sync_shapes(gpu, &err)) ok = 0;
            for (uint32_t o = 0; o < no && ok; o++) {
                symrt_io_info info;
                symrt_engine_output(e, o, &info, NULL);
                int64_t dr[8], dg[8];
                int32_t rr, rg;
                if (symrt_get_output_shape(ref, info.name, dr, &rr, &err) ||
                    symrt_get_output_shape(gpu, info.name, dg, &rg, &err)) {
                    ok = 0;
                    break;
                }
                int same = rr == rg;
                size_t n = 1;
                for (int d = 0; same && d < rr; d++) same = dr[d] == dg[d], n *= (size_t)dr[d];
                printf("%s %s %s output %s: real shape%s %s\n", same ? "PASS" : "FAIL", argv[1], dir, info.name,
                       same ? "" : "s differ:", same ? "agrees" : "reference and CUDA");
                if (!same) failures++;
                real_elems[o] = same ? n * symc_dtype_size(info.dtype) : 0;
            }
        }
        if (!ok) {
            printf("FAIL %s %s: %s\n", argv[1], dir, err.msg);
            failures++;
        }
        for (uint32_t o = 0; o < no && ok; o++) {
            symrt_io_info info;
            symrt_engine_output(e, o, &info, NULL);
            size_t n = real_elems[o] / symc_dtype_size(info.dtype);
            double num = 0, den = 0, maxabs = 0;
            size_t pattern = 0, mism = 0;
            int is_float = info.dtype == SYMC_F32 || info.dtype == SYMC_F64 || info.dtype == SYMC_F16 ||
                info.dtype == SYMC_BF16;
            for (size_t k = 0; k < n; k++) {
                double a = symc_dtype_load(dev_out_host[o], info.dtype, k),
                       b = symc_dtype_load(host_out[o], info.dtype, k);
                if (!is_float) {
                    if (a != b) mism++;
                    continue;
                }
                if (isnan(a) != isnan(b) || (isinf(a) && a != b) || (isinf(b) && a != b)) {
                    pattern++;
                    continue;
                }
                if (!isfinite(a) || !isfinite(b)) continue;
                num += (a - b) * (a - b);
                den += b * b;
                if (fabs(a - b) > maxabs) maxabs = fabs(a - b);
            }
            double rel = den > 0 ? sqrt(num / den) : sqrt(num);
            int pass = is_float ? (pattern == 0 && rel < tol) : mism == 0;
            printf("%s %s %s output %s: %zu elements, rel err %.3g, max abs err %.3g, NaN/Inf mismatches %zu, "
                   "integer mismatches %zu\n",
                   pass ? "PASS" : "FAIL", argv[1], dir, info.name, n, rel, maxabs, pattern, mism);
            if (!pass) failures++;
        }
        /* graphs: the capture (second sight, our stream), a replay on the
         * legacy default stream, and a capture at once when only the output
         * buffers moved (same shapes, on the default stream) must each
         * reproduce the plain run bit for bit; the context's counters must
         * show the captures and replays and no failed capture */
        symrt_graph_stats g0 = {0}, g1 = {0};
        if (graphs && ok && symrt_context_graph_stats(gpu, &g0, &err)) ok = 0;
        static uint64_t moved[MAX_IO];
        memset(moved, 0, sizeof moved);
        for (int rep = 0; graphs && ok && rep < 3; rep++) {
            void *on = rep == 0 ? stream : NULL;
            for (uint32_t o = 0; o < no && ok && rep == 2; o++) {
                symrt_io_info info;
                symrt_engine_output(e, o, &info, NULL);
                if (drv->mem_alloc(&moved[o], out_bytes[o] ? out_bytes[o] : 1) ||
                    symrt_set_tensor_address(gpu, info.name, (void *)(uintptr_t)moved[o], out_bytes[o], &err))
                    ok = 0;
            }
            uint64_t *outs = rep == 2 ? moved : &dev[MAX_IO];
            for (uint32_t o = 0; o < no && ok; o++)
                if (drv->memset_d8(outs[o], 0xff, out_bytes[o] ? out_bytes[o] : 1)) ok = 0;
            if (ok && drv->ctx_synchronize()) ok = 0;
            if (ok && (symrt_enqueue(gpu, on, &err) || drv->stream_synchronize(on) || drv->stream_synchronize(stream)))
                ok = 0;
            size_t diff = 0;
            for (uint32_t o = 0; o < no && ok; o++) {
                void *again = malloc(out_bytes[o] ? out_bytes[o] : 1);
                if (!again || drv->memcpy_dtoh(again, outs[o], out_bytes[o])) ok = 0;
                else if (memcmp(again, dev_out_host[o], out_bytes[o])) diff++;
                free(again);
            }
            static const char *what[] = {"capture", "replay on the default stream", "moved outputs"};
            printf("%s %s %s graph %s: %zu outputs differ from the plain run\n", ok && !diff ? "PASS" : "FAIL", argv[1],
                   dir, what[rep], diff);
            if (!ok || diff) failures++;
        }
        if (graphs && ok) {
            if (symrt_context_graph_stats(gpu, &g1, &err)) ok = 0;
            uint64_t caps = g1.captures + g1.updates - g0.captures - g0.updates, reps = g1.replays - g0.replays,
                     failed = g1.failed - g0.failed;
            /* three replays (the capture, the default stream, the moved outputs: captured at
             * once); captures may be fewer when an earlier point left graphs of these shapes
             * and buffers (a point whose sizes equal the last one's, buffers at the same addresses) */
            /* an engine with sizes known only after a node runs plainly (a sync per producer): no graphs */
            int good = ok && failed == 0 &&
                (produced ? reps == 0 && g1.plain - g0.plain == 3 : reps == 3 && g1.plain == g0.plain);
            printf("%s %s %s graph counters: %" PRIu64 " captured, %" PRIu64 " replayed, %" PRIu64 " plain, %" PRIu64
                   " failed\n",
                   good ? "PASS" : "FAIL", argv[1], dir, caps, reps, g1.plain - g0.plain, failed);
            if (!good) failures++;
        }
        /* back to the first output buffers for the profiled run */
        for (uint32_t o = 0; o < no && graphs && moved[o]; o++) {
            symrt_io_info info;
            symrt_engine_output(e, o, &info, NULL);
            if (symrt_set_tensor_address(gpu, info.name, (void *)(uintptr_t)dev[MAX_IO + o], out_bytes[o], &err))
                ok = 0;
            drv->mem_free(moved[o]);
        }
        /* a profiled run (symrt_context_profile: events between the steps)
         * must reproduce the plain run and time every step */
        if (ok) {
            uint32_t n_steps = 0, got = 0;
            symrt_step_profile *prof = NULL;
            size_t diff = 0, bad_steps = 0;
            double sum = 0, host_sum = 0;
            for (uint32_t o = 0; o < no && ok; o++)
                if (drv->memset_d8(dev[MAX_IO + o], 0xff, out_bytes[o] ? out_bytes[o] : 1)) ok = 0;
            if (ok && drv->ctx_synchronize()) ok = 0; /* the poison first (legacy stream; see above) */
            if (ok && symrt_context_profile(gpu, stream, NULL, 0, &n_steps, &err)) ok = 0;
            if (ok && !(prof = calloc(n_steps ? n_steps : 1, sizeof *prof))) ok = 0;
            if (ok &&
                (symrt_context_profile(gpu, stream, prof, n_steps, &got, &err) || got != n_steps ||
                 drv->stream_synchronize(stream)))
                ok = 0;
            for (uint32_t k = 0; ok && k < n_steps; k++) {
                if (!(prof[k].ms >= 0) || !isfinite(prof[k].ms) || !(prof[k].host_us >= 0) ||
                    !isfinite(prof[k].host_us) || !prof[k].node || !prof[k].kind || !prof[k].detail[0])
                    bad_steps++;
                sum += prof[k].ms;
                host_sum += prof[k].host_us;
            }
            for (uint32_t o = 0; o < no && ok; o++) {
                void *again = malloc(out_bytes[o] ? out_bytes[o] : 1);
                if (!again || drv->memcpy_dtoh(again, dev[MAX_IO + o], out_bytes[o])) ok = 0;
                else if (memcmp(again, dev_out_host[o], out_bytes[o])) diff++;
                free(again);
            }
            int pass = ok && !diff && !bad_steps && (n_steps == 0 || (sum > 0 && host_sum > 0));
            printf("%s %s %s profile: %u steps, %.4f ms summed (host %.1f us), %zu steps without a time or name, %zu "
                   "outputs differ from the plain run%s%s\n",
                   pass ? "PASS" : "FAIL", argv[1], dir, n_steps, sum, host_sum, bad_steps, diff, ok ? "" : ": ",
                   ok ? "" : err.msg);
            if (!pass) failures++;
            free(prof);
        }
        for (uint32_t i = 0; i < ni; i++) free(in[i].data);
        for (uint32_t o = 0; o < no; o++) free(host_out[o]), free(dev_out_host[o]);
        for (uint32_t i = 0; i < 2 * MAX_IO; i++)
            if (dev[i]) drv->mem_free(dev[i]);
    }
    drv->stream_destroy(stream);
    symrt_context_destroy(gpu);
    symrt_context_destroy(ref);
    symrt_engine_destroy(e);
    printf("sweep_check %s: %d points, %d failures\n", argv[1], argc - 3, failures);
    return failures ? 1 : 0;
}
