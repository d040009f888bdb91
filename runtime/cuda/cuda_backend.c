/* The CUDA backend: module, memory, kernel launches and copies; library
 * steps are delegated to cuda_gemm.c (cuBLASLt) and cuda_conv.c (cuDNN).
 *
 * Creation does everything that does not depend on input shapes: it loads
 * each of the engine's modules, the cubin when the GPU's SM is the engine's,
 * else the PTX for a newer GPU (JIT-compiled by the driver, its log kept for
 * the error), resolves every entry point in the module that holds it, points
 * every module's error word at one, raises the dynamic shared memory limit of kernels that need
 * more than 48 KiB, uploads every constant once, and creates the library
 * handles only when the engine has such steps. An engine with sizes known
 * only at run time (rt_produced, format 7) is refused at creation, before
 * the driver is asked anything: no GPU code produces them yet.
 *
 * Each enqueue resolves one device pointer per tensor: constants use their
 * device copy, inputs and outputs the caller's pointers, other tensors an
 * offset in one grow-only workspace laid out per input shape (256-byte
 * aligned, sizes from the slots), and an alias takes its root's pointer.
 * Steps then go on the caller's stream in order. Growing the workspace
 * synchronizes the context first, because queued work may still use the old
 * one. Outputs whose storage is elsewhere (a constant, or an alias of
 * another tensor) are copied into the caller's buffer at the end, which the
 * reference backend does too for constants.
 *
 * An engine with sizes known only after a node runs (rt_engine.produced:
 * nonzero, unique, nms) is bound at the capacity slots; after each
 * producer's last step its count cell is copied to pinned memory and the
 * stream synchronized (a sync point per producer: correct first, plan
 * stage 6), the core's run hook checks the count and returns the real
 * slots, and every later step, launch grid and output copy uses them.
 * Such an engine runs without CUDA graphs (counted as plain runs).
 *
 * Every entry point makes the device's primary context current first:
 * contexts may be used from any thread (one stream each). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "runtime/backend.h"
#include "runtime/cuda/cuda_internal.h"

#define RT_CUDA_ALIGN 256
#define RT_STATIC_SHARED_LIMIT (48 * 1024)

/* ---- memory ---------------------------------------------------------------- */

symc_status rt_cuda_alloc(rt_cuda *c, size_t bytes, CUdeviceptr *p, const char *what, symc_error *err) {
    *p = 0;
    /* a zero-byte request still gets a real (and distinct) address */
    if (bytes == 0) bytes = RT_CUDA_ALIGN;
    if (c->alloc.alloc) {
        void *q = c->alloc.alloc(c->alloc.ctx, bytes, RT_CUDA_ALIGN);
        if (!q)
            return symc_error_setf(err, SYMC_ERR_NOMEM,
                                   "the context's device allocator returned NULL for %zu bytes (%s)", bytes, what);
        if ((uintptr_t)q % RT_CUDA_ALIGN) {
            c->alloc.free(c->alloc.ctx, q);
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                   "the context's device allocator returned %p for %s, not %d-byte aligned", q, what,
                                   RT_CUDA_ALIGN);
        }
        *p = (CUdeviceptr)(uintptr_t)q;
        return SYMC_OK;
    }
    symc_status st = RT_CU(err, MemAlloc, (p, bytes));
    if (st) symc_error_prefix(err, "allocating %zu bytes of device memory for %s", bytes, what);
    return st;
}

void rt_cuda_free(rt_cuda *c, CUdeviceptr p) {
    if (!p) return;
    if (c->alloc.alloc) c->alloc.free(c->alloc.ctx, (void *)(uintptr_t)p);
    else rt_cuda_cu.MemFree(p); /* nothing useful to do with a failure while freeing */
}

size_t rt_cuda_tensor_bytes(const rt_engine *e, const int64_t *slots, uint32_t t) {
    int64_t n;
    return rt_tensor_bytes(e, slots, t, &n) ? (size_t)n : SIZE_MAX;
}

const char *rt_cuda_node_name(const rt_engine *e, const rt_step *s) {
    const char *n = s->node < e->n_nodes ? e->nodes[s->node].name : NULL;
    return n ? n : "?";
}

static const char *engine_name(const rt_engine *e) { return e->name && *e->name ? e->name : "?"; }

/* ---- create / destroy -------------------------------------------------------- */

void rt_cuda_destroy(rt_cuda *c) {
    if (!c) return;
    int owner = c->owner == c || !c->owner; /* frees what the engine's states share */
    if (c->dev && rt_cuda_cu_use(c->dev, NULL) == SYMC_OK) {
        /* queued work may still read constants or the workspace */
        rt_cuda_quiesce(c, NULL); /* the owner's table: every state's runs */
        for (uint32_t i = 0; owner && i < c->n_run_streams; i++) rt_cuda_cu.EventDestroy(c->run_event[i]);
        rt_cuda_gemm_destroy(c);
        rt_cuda_conv_destroy(c);
        if (owner && c->consts)
            for (uint32_t i = 0; i < c->e->n_constants; i++) rt_cuda_free(c, c->consts[i]);
        if (owner) rt_cuda_free(c, c->workspace);
        for (uint32_t i = 0; i < c->n_graphs; i++)
            if (c->graph_cache[i].exec) rt_cuda_cu.GraphExecDestroy(c->graph_cache[i].exec);
        if (owner && c->capture) rt_cuda_cu.StreamDestroy(c->capture);
        if (owner && c->io_stream) rt_cuda_cu.StreamDestroy(c->io_stream);
        for (uint32_t i = 0; owner && c->io_dev && i < c->e->n_inputs + c->e->n_outputs; i++)
            if (c->io_dev[i]) rt_cuda_free(c, c->io_dev[i]);
        if (c->count_host) rt_cuda_cu.MemFreeHost(c->count_host);
        if (c->errs == c || !c->errs) { /* the pinned copy and event of a word this state holds */
            if (c->error_host) rt_cuda_cu.MemFreeHost(c->error_host);
            if (c->error_event) rt_cuda_cu.EventDestroy(c->error_event);
        }
        for (uint32_t i = 0; c->modules && i < c->e->n_modules; i++)
            if (c->modules[i]) rt_cuda_cu.ModuleUnload(c->modules[i]);
    }
    if (!owner && c->index && c->index < c->owner->n_family) c->owner->family[c->index] = NULL;
    free(c->modules);
    if (owner) free(c->io_dev);
    if (owner) free(c->io_cap);
    free(c->host_addr);
    rt_lifetimes_free(&c->lifetimes);
    for (uint32_t i = 0; i < c->n_graphs; i++) free(c->graph_cache[i].key);
    free(c->graph_cache);
    free(c->graph_key);
    free(c->produced_step);
    for (uint32_t i = 0; c->tmaps && i < c->e->n_steps; i++) free(c->tmaps[i]);
    free(c->tmaps);
    free(c->fns);
    free(c->grid_cap);
    if (owner) free(c->consts);
    if (owner) free(c->family);
    free(c->ptr);
    free(c->offset);
    free(c->argv);
    free(c->params);
    free(c);
}

/* Module i of the engine: its cubin when the GPU's SM is the engine's, else
 * its PTX JIT-compiled by the driver for a newer GPU; a module compiled for
 * sm_90a (the wgmma attention kernel) has no PTX another GPU can run, and is
 * refused as such. */
static symc_status load_module(rt_cuda *c, uint32_t i, symc_error *err) {
    const rt_engine *e = c->e;
    const rt_module *m = &e->modules[i];
    const rt_cu_device *d = c->dev;
    symc_status st;
    char which[32] = "";
    if (e->n_modules > 1) snprintf(which, sizeof which, " (module %u of %u)", i, e->n_modules);
    if (d->sm == e->sm && m->cubin && m->cubin_size) {
        st = RT_CU(err, ModuleLoadData, (&c->modules[i], m->cubin));
        if (st) symc_error_prefix(err, "engine '%s': loading its sm_%u cubin%s", engine_name(e), e->sm, which);
        return st;
    }
    if (d->sm != e->sm && m->ptx && strstr(m->ptx, ".target sm_90a"))
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "engine '%s'%s holds Hopper-only kernels (wgmma, sm_90a), which run on sm_90 GPUs only; "
                               "this GPU (%s) is sm_%u: compile it again with --arch sm_%u",
                               engine_name(e), which, d->name, d->sm, d->sm);
    if (d->sm >= e->sm && m->ptx && *m->ptx) {
        /* keep the JIT log: it is the only clue when the driver is older
         * than the PTX or the JIT fails */
        char log[1024] = "";
        CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void *vals[] = {log, (void *)(uintptr_t)sizeof log};
        st = RT_CU(err, ModuleLoadDataEx, (&c->modules[i], m->ptx, 2, opts, vals));
        if (st) {
            log[sizeof log - 1] = '\0';
            for (char *p = log; *p; p++)
                if (*p == '\n' || *p == '\r') *p = ' ';
            if (*log) {
                char msg[SYMC_ERROR_MSG_CAP];
                snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
                symc_error_setf(err, st, "%s; JIT log: %s", msg, log);
            }
            symc_error_prefix(err, "engine '%s': JIT-compiling its sm_%u PTX%s for this sm_%u GPU (%s)", engine_name(e),
                              e->sm, which, d->sm, d->name);
        }
        return st;
    }
    return symc_error_setf(
        err, SYMC_ERR_UNSUPPORTED,
        "engine '%s' was built for sm_%u; this GPU (%s) is sm_%u: compile it again with --arch sm_%u", engine_name(e),
        e->sm, d->name, d->sm, d->sm);
}

/* Every module, and every kernel from the module that holds it. The kernels
 * report bad data into one word (sc_error): module 0's, whose address every
 * module's sc_error_at is set to (the prelude, codegen/cuda_kernel.c); in a
 * region's state (rt_cuda_create_more), the owner's word when it has one,
 * so a context has one word whichever region ran. */
static symc_status load_modules(rt_cuda *c, symc_error *err) {
    const rt_engine *e = c->e;
    symc_status st;
    if (!(c->modules = calloc(e->n_modules + 1, sizeof *c->modules)))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a CUDA context");
    for (uint32_t i = 0; i < e->n_modules; i++)
        if ((st = load_module(c, i, err))) return st;
    for (uint32_t k = 0; k < e->n_kernels; k++) {
        st = RT_CU(err, ModuleGetFunction, (&c->fns[k], c->modules[e->kernel_module[k]], e->kernel_names[k]));
        if (st) {
            symc_error_prefix(err, "engine '%s': kernel '%s' (module %u)", engine_name(e), e->kernel_names[k],
                              e->kernel_module[k]);
            return st;
        }
    }
    size_t bytes = 0;
    int borrowed = c->owner != c && c->owner->error_word;
    if (borrowed) c->error_word = c->owner->error_word;
    else if (rt_cuda_cu.ModuleGetGlobal(&c->error_word, &bytes, c->modules[0], "sc_error") != CUDA_SUCCESS || bytes < 8)
        c->error_word = 0;
    for (uint32_t i = 0; c->error_word && i < e->n_modules; i++) {
        CUdeviceptr at = 0;
        if (rt_cuda_cu.ModuleGetGlobal(&at, &bytes, c->modules[i], "sc_error_at") != CUDA_SUCCESS || bytes != 8) {
            if (e->n_modules == 1 && !borrowed) break; /* its own sc_error is the word */
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                   "engine '%s': module %u of %u has no sc_error_at to report bad data through",
                                   engine_name(e), i, e->n_modules);
        }
        uint64_t word = (uint64_t)c->error_word;
        if ((st = RT_CU(err, MemcpyHtoD, (at, &word, 8)))) return st;
    }
    return SYMC_OK;
}

/* Each kernel step's grid cap (rt_step.resident): resident x the SMs x the blocks of the kernel an
 * SM holds at its block size and shared memory (asked once, after its shared-memory attribute is
 * set). An occupancy of 0 leaves the step uncapped: its launch then reports why it cannot run. */
static symc_status resident_caps(rt_cuda *c, symc_error *err) {
    const rt_engine *e = c->e;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        const rt_step *s = &e->steps[i];
        if (s->kind != RT_STEP_KERNEL || !s->resident) continue;
        int per_sm = 0;
        symc_status st = RT_CU(err, OccupancyMaxActiveBlocksPerMultiprocessor,
                               (&per_sm, c->fns[s->kernel], (int)s->block, (size_t)s->shared));
        if (st) {
            symc_error_prefix(err, "node '%s': kernel '%s' (%u threads, %u bytes of shared memory): its occupancy",
                              rt_cuda_node_name(e, s), e->kernel_names[s->kernel], s->block, s->shared);
            return st;
        }
        c->grid_cap[i] = (int64_t)s->resident * (int64_t)c->dev->sms * (int64_t)per_sm;
    }
    return SYMC_OK;
}

/* Sizes known only after a node runs: the last step of each producer (its
 * count is read after it: a sync point) and the pinned cells the counts are
 * copied into. The count cell (rt_produced.count_tensor) is an i64 tensor
 * one of the producer's kernels writes; producers run in the order they are
 * listed. */
static symc_status init_produced(rt_cuda *c, symc_error *err) {
    const rt_engine *e = c->e;
    if (!e->n_produced) return SYMC_OK;
    if (!(c->produced_step = calloc(e->n_produced, sizeof *c->produced_step)))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a CUDA context");
    for (uint32_t k = 0; k < e->n_produced; k++) {
        const rt_produced *p = &e->produced[k];
        const char *node = p->node < e->n_nodes && e->nodes[p->node].name ? e->nodes[p->node].name : "?";
        uint32_t t = p->count_tensor, last = RT_NONE;
        if (t >= e->n_tensors || e->tensors[t].dtype != SYMC_I64 || e->tensors[t].constant != RT_NONE)
            return symc_error_setf(err, SYMC_ERR_FORMAT,
                                   "engine '%s': node '%s' produces a size at run time but its GPU code has no count "
                                   "cell to read it from: build the engine again with GPU code",
                                   engine_name(e), node);
        for (uint32_t i = 0; i < e->n_steps; i++)
            if (e->steps[i].node == p->node) last = i;
        if (last == RT_NONE || (k && last < c->produced_step[k - 1]))
            return symc_error_setf(err, SYMC_ERR_FORMAT,
                                   "engine '%s': node '%s' produces a size at run time but has %s", engine_name(e),
                                   node, last == RT_NONE ? "no step" : "its steps before an earlier producer's");
        c->produced_step[k] = last;
    }
    void *host = NULL;
    symc_status st = RT_CU(err, MemAllocHost, (&host, (size_t)e->n_produced * sizeof *c->count_host));
    if (st) return st;
    c->count_host = host;
    return SYMC_OK;
}

/* What a state of graph e needs whatever it shares: its arrays, modules
 * and functions, shared-memory limits, the pinned copy of an error word it
 * holds, library states, lifetimes. c->e, dev, alloc, owner and (for a
 * region's state) consts are set. */
static symc_status init_tmaps(rt_cuda *c, symc_error *err);
static symc_status init_graph(rt_cuda *c, symc_error *err) {
    const rt_engine *e = c->e;
    symc_status st;
    c->graphs = 1;
    c->errs = c;
    for (uint32_t i = 0; i < e->n_steps; i++)
        if (e->steps[i].kind == RT_STEP_KERNEL && e->steps[i].n_args > c->max_args) c->max_args = e->steps[i].n_args;
    c->fns = calloc(e->n_kernels + 1, sizeof *c->fns);
    c->grid_cap = calloc(e->n_steps + 1, sizeof *c->grid_cap);
    if (!c->consts) c->consts = calloc(e->n_constants + 1, sizeof *c->consts);
    c->ptr = calloc(e->n_tensors + 1, sizeof *c->ptr);
    c->offset = calloc(e->n_tensors + 1, sizeof *c->offset);
    c->argv = calloc(c->max_args + 1, sizeof *c->argv);
    c->params = calloc(c->max_args + 1, sizeof *c->params);
    c->tmaps = calloc(e->n_steps + 1, sizeof *c->tmaps);
    if (!c->fns || !c->grid_cap || !c->consts || !c->ptr || !c->offset || !c->argv || !c->params || !c->tmaps)
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a CUDA context");
    for (uint32_t i = 0; i < c->max_args; i++) c->params[i] = &c->argv[i];
    if ((st = init_tmaps(c, err))) return st;

    if (e->n_kernels) {
        if ((st = load_modules(c, err))) return st;
        /* dynamic shared memory beyond 48 KiB must be opted into per function */
        for (uint32_t k = 0; k < e->n_kernels; k++) {
            uint32_t need = 0;
            for (uint32_t i = 0; i < e->n_steps; i++)
                if (e->steps[i].kind == RT_STEP_KERNEL && e->steps[i].kernel == k && e->steps[i].shared > need)
                    need = e->steps[i].shared;
            if (need <= RT_STATIC_SHARED_LIMIT) continue;
            st = RT_CU(err, FuncSetAttribute, (c->fns[k], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)need));
            if (st) {
                symc_error_prefix(err, "engine '%s': kernel '%s' asks for %u bytes of shared memory", engine_name(e),
                                  e->kernel_names[k], need);
                return st;
            }
            /* and the L1/shared split it runs with: the most shared memory, so several blocks fit an SM
             * whatever split the kernels before it left (a hint: the driver may differ, no error) */
            (void)rt_cuda_cu.FuncSetAttribute(c->fns[k], CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100);
        }
        if ((st = resident_caps(c, err))) return st;
    }
    if (c->error_word && c->owner != c && c->error_word == c->owner->error_word)
        c->errs = c->owner; /* reported through the owner's copy, event and bookkeeping */
    else if (c->error_word) { /* the error word of the generated kernels (sc_error, load_modules) */ void *host = NULL;
        if ((st = RT_CU(err, MemAllocHost, (&host, 8)))) return st;
        c->error_host = host;
        c->error_host[0] = c->error_host[1] = 0;
        if ((st = RT_CU(err, EventCreate, (&c->error_event, CU_EVENT_DISABLE_TIMING)))) return st;
        if ((st = RT_CU(err, MemsetD8, (c->error_word, 0, 8)))) return st;
    }
    int has_gemm = 0, has_conv = 0;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        has_gemm |= e->steps[i].kind == RT_STEP_GEMM;
        has_conv |= e->steps[i].kind == RT_STEP_CONV;
    }
    if (has_gemm && (st = rt_cuda_gemm_create(c, err))) return st;
    if (has_conv && (st = rt_cuda_conv_create(c, err))) return st;
    if ((st = init_produced(c, err))) return st;
    return rt_lifetimes_compute(e, RT_SCHEDULE_STEPS, &c->lifetimes, err);
}

/* The owner's list of its states' graphs, for naming nodes (grown by one). */
static symc_status add_to_family(rt_cuda *owner, rt_cuda *c, symc_error *err) {
    const rt_engine **f = realloc(owner->family, (owner->n_family + 1) * sizeof *f);
    if (!f) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a CUDA context");
    owner->family = f;
    c->index = owner->n_family;
    f[owner->n_family++] = c->e;
    return SYMC_OK;
}

/* An engine with sizes known only after a node runs (rt_produced): its GPU code would have to write
 * the counts and run later kernels at them, which it does not yet (a build refuses to make one;
 * this is the defence for an engine made by hand). */
__attribute__((unused)) static symc_status produced_refusal(const rt_engine *e, symc_error *err) {
    const rt_produced *p = &e->produced[0];
    const char *node = p->node < e->n_nodes ? e->nodes[p->node].name : "?";
    const char *sym = p->symbol < e->n_symbols ? e->symbols[p->symbol].name : "?";
    return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                           "engine '%s' has %u size%s known only at run time (%s, produced by node '%s'); the CUDA "
                           "backend does not run such engines yet: use the reference backend",
                           engine_name(e), e->n_produced, e->n_produced == 1 ? "" : "s", sym, node);
}

symc_status rt_cuda_create(const rt_engine *e, int device, const symrt_allocator *dev_alloc, rt_cuda **out,
                           symc_error *err) {
    if (!e || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_cuda_create: NULL argument");
    *out = NULL;
    if (dev_alloc && (!dev_alloc->alloc || !dev_alloc->free))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "the device allocator needs both alloc and free");
    const rt_cu_device *dev;
    symc_status st = rt_cuda_cu_enter(device, &dev, err);
    if (st) return st;
    if (e->sm == 0 || e->n_steps == 0)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "engine '%s' has no GPU code: compile it with GPU code on",
                               engine_name(e));

    rt_cuda *c = calloc(1, sizeof *c);
    if (!c) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a CUDA context");
    c->e = e;
    c->dev = dev;
    c->owner = c;
    if (dev_alloc) c->alloc = *dev_alloc;
    if ((st = add_to_family(c, c, err)) || (st = init_graph(c, err))) goto fail;
    /* every constant once: a region's state (rt_cuda_create_more) uses these */
    for (uint32_t i = 0; i < e->n_constants; i++) {
        const rt_constant *k = &e->constants[i];
        if ((st = rt_cuda_alloc(c, k->size, &c->consts[i], "an engine constant", err))) goto fail;
        if (k->size && (st = RT_CU(err, MemcpyHtoD, (c->consts[i], k->data, k->size)))) {
            symc_error_prefix(err, "uploading engine constant %u (%zu bytes)", i, k->size);
            goto fail;
        }
    }
    *out = c;
    return SYMC_OK;
fail:
    rt_cuda_destroy(c);
    return st;
}

symc_status rt_cuda_create_more(rt_cuda *first, const rt_engine *graph, rt_cuda **out, symc_error *err) {
    if (!first || !graph || !out)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_cuda_create_more: NULL argument");
    *out = NULL;
    rt_cuda *owner = first->owner;
    const rt_engine *e0 = owner->e;
    /* the constants uploaded by the owner are the ones this graph's tensors index */
    if (graph->constants != e0->constants || graph->n_constants != e0->n_constants)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "engine '%s': a region's graph must share the first graph's constants (%u at %p, not %u "
                               "at %p)",
                               engine_name(e0), e0->n_constants, (const void *)e0->constants, graph->n_constants,
                               (const void *)graph->constants);
    symc_status st = rt_cuda_cu_use(owner->dev, err);
    if (st) return st;
    if (graph->sm == 0 || graph->n_steps == 0)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "engine '%s' has no GPU code: compile it with GPU code on",
                               engine_name(e0));
    rt_cuda *c = calloc(1, sizeof *c);
    if (!c) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a CUDA context");
    c->e = graph;
    c->dev = owner->dev;
    c->owner = owner;
    c->alloc = owner->alloc;
    c->consts = owner->consts; /* borrowed: the weights are on the device once */
    if ((st = add_to_family(owner, c, err)) || (st = init_graph(c, err))) {
        rt_cuda_destroy(c);
        return st;
    }
    c->graphs = owner->graphs;
    *out = c;
    return SYMC_OK;
}

/* ---- enqueue ------------------------------------------------------------------- */

symc_status rt_cuda_layout(rt_cuda *c, const int64_t *slots, symc_error *err) {
    /* c->offset now holds this layout: the next bind (a new shape) uses it */
    c->planned = 0;
    c->laid_out = 0;
    symc_status st = rt_plan_layout(c->e, &c->lifetimes, slots, RT_CUDA_ALIGN, c->offset, &c->layout_total, err);
    c->laid_out = st == SYMC_OK;
    return st;
}

/* The workspace is the owner's, shared by the regions' states (a context
 * runs one at a time): it grows to the largest need of any, and memory_gen
 * (the owner's too) changes with it, so no region replays a graph captured
 * on the old one. */
static symc_status plan_workspace(rt_cuda *c, const int64_t *slots, symc_error *err) {
    rt_cuda *o = c->owner;
    size_t total = c->layout_total;
    if (!c->laid_out) { /* no rt_cuda_layout for these slots (the tuner binds directly) */
        symc_status st0 = rt_plan_layout(c->e, &c->lifetimes, slots, RT_CUDA_ALIGN, c->offset, &total, err);
        if (st0) return st0;
    }
    c->laid_out = 0;
    if (total > o->workspace_size) {
        symc_status st;
        if (o->workspace) {
            /* work queued earlier (on any stream, by any region) may still use the old one */
            if ((st = rt_cuda_quiesce(o, err))) return st;
            rt_cuda_free(o, o->workspace);
            o->workspace = 0;
            o->workspace_size = 0;
        }
        if ((st = rt_cuda_alloc(o, total, &o->workspace, "the activation workspace", err))) return st;
        o->workspace_size = total;
        o->memory_gen++;
    }
    return SYMC_OK;
}

symc_status rt_cuda_bind(rt_cuda *c, const int64_t *slots, int shape_changed, void *const *addr, CUstream stream,
                         symc_error *err) {
    (void)stream;
    const rt_engine *e = c->e;
    symc_status st;
    if (shape_changed || !c->planned) {
        c->planned = 0;
        if ((st = plan_workspace(c, slots, err))) return st;
        c->planned = 1;
    }
    for (uint32_t t = 0; t < e->n_tensors; t++) {
        const rt_tensor *x = &e->tensors[t];
        if (x->constant != RT_NONE) c->ptr[t] = c->consts[x->constant];
        else if (c->offset[t] != SIZE_MAX) c->ptr[t] = c->owner->workspace + c->offset[t];
        else c->ptr[t] = addr ? (CUdeviceptr)(uintptr_t)addr[t] : 0;
    }
    /* aliases never chain (the decoder checks), so one pass suffices */
    for (uint32_t t = 0; t < e->n_tensors; t++)
        if (rt_storage_of(e, t) != t) c->ptr[t] = c->ptr[rt_storage_of(e, t)];
    return SYMC_OK;
}

/* TMA's element type for a tensor's dtype; 0 with *ok 0 where TMA has none */
static CUtensorMapDataType tmap_dtype(symc_dtype dt, int *ok) {
    *ok = 1;
    switch (dt) {
    case SYMC_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case SYMC_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case SYMC_F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case SYMC_I32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case SYMC_I64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case SYMC_U8: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    default: *ok = 0; return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    }
}

/* Each kernel step's tensor maps (rt_step.tmaps): 64-byte aligned storage (cuLaunchKernel reads
 * a map from there as the kernel's parameter), nothing encoded yet; a tensor TMA cannot read is
 * refused here, naming the step's node and the tensor. */
static symc_status init_tmaps(rt_cuda *c, symc_error *err) {
    const rt_engine *e = c->e;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        const rt_step *s = &e->steps[i];
        if (s->kind != RT_STEP_KERNEL || !s->n_tmaps) continue;
        for (uint32_t m = 0; m < s->n_tmaps; m++) {
            int ok;
            (void)tmap_dtype(e->tensors[s->tmaps[m].tensor].dtype, &ok);
            if (!ok)
                return symc_error_setf(err, SYMC_ERR_FORMAT,
                                       "node '%s': kernel '%s' reads tensor '%s' (%s) by TMA, which has no such "
                                       "element type",
                                       rt_cuda_node_name(e, s), e->kernel_names[s->kernel],
                                       e->tensors[s->tmaps[m].tensor].name,
                                       symc_dtype_name(e->tensors[s->tmaps[m].tensor].dtype));
        }
        c->tmaps[i] = aligned_alloc(64, s->n_tmaps * sizeof(rt_cuda_tmap));
        if (!c->tmaps[i]) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a CUDA context");
        memset(c->tmaps[i], 0, s->n_tmaps * sizeof(rt_cuda_tmap));
    }
    return SYMC_OK;
}

/* Step i's tensor map m at these slots (encoded again only when the tensor's pointer or a slot it
 * reads changed since the last launch): the tensor's pointer plus the offset, extents and strides
 * from the slots, in bytes for the driver. A stride TMA cannot take (a multiple of 16 bytes
 * below 2^40) or a misaligned start is refused with the node, tensor, dim and value. */
static symc_status encode_tmap(rt_cuda *c, uint32_t i, uint32_t m, const int64_t *slots, symc_error *err) {
    const rt_step *s = &c->e->steps[i];
    const rt_tmap *t = &s->tmaps[m];
    rt_cuda_tmap *x = &c->tmaps[i][m];
    const rt_tensor *ten = &c->e->tensors[t->tensor];
    const int64_t es = (int64_t)symc_dtype_size(ten->dtype);
    int64_t vals[3 * RT_TMAP_MAX_RANK] = {0};
    vals[0] = slots[t->offset];
    for (uint32_t j = 0; j < t->rank; j++) {
        vals[1 + j] = slots[t->dims[j]];
        vals[1 + RT_TMAP_MAX_RANK + j] = j ? slots[t->strides[j]] : 1;
    }
    const CUdeviceptr base = c->ptr[t->tensor] + (CUdeviceptr)(vals[0] * es);
    if (x->encoded && x->base == base && !memcmp(x->vals, vals, sizeof vals)) return SYMC_OK;
    x->encoded = 0;
    cuuint64_t gdim[RT_TMAP_MAX_RANK], gstr[RT_TMAP_MAX_RANK];
    cuuint32_t box[RT_TMAP_MAX_RANK], estr[RT_TMAP_MAX_RANK];
    const char *why = vals[0] < 0 || base % 16 ? "its start is not 16-byte aligned" : NULL;
    for (uint32_t j = 0; j < t->rank && !why; j++) {
        const int64_t d = vals[1 + j], st = vals[1 + RT_TMAP_MAX_RANK + j] * es;
        if (d < 1 || d > ((int64_t)1 << 32)) why = "an extent is outside 1..2^32";
        else if (j && (st < 0 || st % 16 || st >= ((int64_t)1 << 40)))
            why = "a stride is not a multiple of 16 bytes below 2^40";
        gdim[j] = (cuuint64_t)d;
        if (j) gstr[j - 1] = (cuuint64_t)st;
        box[j] = t->box[j];
        estr[j] = 1;
    }
    if (why)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "node '%s': kernel '%s' reads tensor '%s' by TMA, and at these sizes %s (offset %" PRId64
                               " elements, extents %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 ")",
                               rt_cuda_node_name(c->e, s), c->e->kernel_names[s->kernel], ten->name, why, vals[0],
                               vals[1], vals[2], vals[3], vals[4], vals[5]);
    int ok;
    static const CUtensorMapSwizzle swz[4] = {CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B,
                                              CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B};
    symc_status st = RT_CU(err, TensorMapEncodeTiled,
                           (&x->map, tmap_dtype(ten->dtype, &ok), t->rank, (void *)(uintptr_t)base, gdim, gstr, box,
                            estr, CU_TENSOR_MAP_INTERLEAVE_NONE, swz[t->swizzle & 3],
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    if (st) {
        symc_error_prefix(err, "node '%s': kernel '%s': tensor map %u of tensor '%s'", rt_cuda_node_name(c->e, s),
                          c->e->kernel_names[s->kernel], m, ten->name);
        return st;
    }
    x->base = base;
    memcpy(x->vals, vals, sizeof vals);
    x->encoded = 1;
    return SYMC_OK;
}

/* The blocks a kernel step launches for `work` items: one per per_block items, at most its
 * resident cap (the kernels loop grid-stride over `work`, so any grid runs them all) and 2^31 - 1. */
static int64_t step_blocks(const rt_cuda *c, uint32_t i, int64_t work) {
    const rt_step *s = &c->e->steps[i];
    int64_t blocks = work > 0 ? (work - 1) / (int64_t)s->per_block + 1 : 0;
    if (c->grid_cap[i] && blocks > c->grid_cap[i]) blocks = c->grid_cap[i];
    return blocks > 2147483647 ? 2147483647 : blocks;
}

static symc_status run_kernel(rt_cuda *c, const rt_step *s, const int64_t *slots, CUstream stream, symc_error *err) {
    int64_t work = slots[s->work];
    if (work <= 0) return SYMC_OK;
    const uint32_t step = (uint32_t)(s - c->e->steps);
    const int64_t blocks = step_blocks(c, step, work);
    for (uint32_t i = 0; i < s->n_args; i++) {
        const rt_arg *a = &s->args[i];
        if (a->kind == RT_ARG_TMAP) { /* the map itself is the parameter, by value */
            symc_status st = encode_tmap(c, step, a->value, slots, err);
            if (st) return st;
            c->params[i] = &c->tmaps[step][a->value].map;
            continue;
        }
        c->argv[i] = a->kind == RT_ARG_TENSOR ? (uint64_t)c->ptr[a->value] : (uint64_t)slots[a->value];
        c->params[i] = &c->argv[i];
    }
    symc_status st = RT_CU(err, LaunchKernel,
                           (c->fns[s->kernel], (unsigned)blocks, 1, 1, s->block, 1, 1, s->shared, stream,
                            s->n_args ? c->params : NULL, NULL));
    if (st)
        symc_error_prefix(err, "node '%s': kernel '%s' (%" PRId64 " blocks of %u)", rt_cuda_node_name(c->e, s),
                          c->e->kernel_names[s->kernel], blocks, s->block);
    return st;
}

static symc_status run_copy(rt_cuda *c, const rt_step *s, const int64_t *slots, CUstream stream, symc_error *err) {
    uint32_t src = s->tensors[0], dst = s->tensors[1];
    if (src == RT_NONE || dst == RT_NONE)
        return symc_error_setf(err, SYMC_ERR_FORMAT, "node '%s': a copy step without its source or destination",
                               rt_cuda_node_name(c->e, s));
    size_t bytes = rt_cuda_tensor_bytes(c->e, slots, dst);
    if (bytes == SIZE_MAX)
        return symc_error_setf(err, SYMC_ERR_OVERFLOW, "node '%s': tensor '%s' is too large",
                               rt_cuda_node_name(c->e, s), c->e->tensors[dst].name);
    if (bytes == 0 || c->ptr[src] == c->ptr[dst]) return SYMC_OK;
    symc_status st = RT_CU(err, MemcpyDtoDAsync, (c->ptr[dst], c->ptr[src], bytes, stream));
    if (st) symc_error_prefix(err, "node '%s': copying %zu bytes", rt_cuda_node_name(c->e, s), bytes);
    return st;
}

static symc_status run_steps(rt_cuda *c, const int64_t *slots, void *const *addr, CUstream stream,
                             const rt_run_hook *hook, symc_error *err);
static symc_status run_graph(rt_cuda *c, const int64_t *slots, void *const *addr, CUstream stream, symc_error *err);
static symc_status host_run(rt_cuda *c, const int64_t *slots, int shape_changed, void *const *addr,
                            const rt_run_hook *hook, symc_error *err);

/* A run of an engine with produced sizes needs the core's hook to report them to */
static symc_status need_hook(const rt_cuda *c, const rt_run_hook *hook, const char *what, symc_error *err) {
    if (!c->e->n_produced || (hook && hook->produced)) return SYMC_OK;
    const rt_produced *p = &c->e->produced[0];
    return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                           "%s: engine '%s' has sizes known only after a node runs (node '%s'), and this call has no "
                           "run hook to report them to",
                           what, engine_name(c->e), p->node < c->e->n_nodes ? c->e->nodes[p->node].name : "?");
}

/* ---- the streams a context ran on (rt_cuda_quiesce) ---------------------------- */

static void run_begin(rt_cuda *c, CUstream stream) {
    c->owner->in_run = 1;
    c->owner->cur_stream = stream;
}

/* an event after this run on its stream */
static symc_status run_end(rt_cuda *c, CUstream stream, symc_error *err) {
    rt_cuda *o = c->owner;
    o->in_run = 0;
    uint32_t i = 0;
    while (i < o->n_run_streams && o->run_stream[i] != stream) i++;
    if (i == o->n_run_streams) {
        if (i == RT_CUDA_RUN_STREAMS) {
            o->run_streams_full = 1;
            return SYMC_OK;
        }
        symc_status st = RT_CU(err, EventCreate, (&o->run_event[i], CU_EVENT_DISABLE_TIMING));
        if (st) return st;
        o->run_stream[i] = stream;
        o->n_run_streams++;
    }
    return RT_CU(err, EventRecord, (o->run_event[i], stream));
}

symc_status rt_cuda_quiesce(rt_cuda *c, symc_error *err) {
    rt_cuda *o = c->owner;
    if (o->run_streams_full) return RT_CU(err, CtxSynchronize, ());
    symc_status st = SYMC_OK;
    for (uint32_t i = 0; !st && i < o->n_run_streams; i++) st = RT_CU(err, EventSynchronize, (o->run_event[i]));
    if (!st && o->in_run) st = RT_CU(err, StreamSynchronize, (o->cur_stream));
    return st;
}

static symc_status device_run_steps(rt_cuda *c, const int64_t *slots, int shape_changed, void *const *addr,
                                    CUstream stream, const rt_run_hook *hook, symc_error *err) {
    symc_status st = need_hook(c, hook, "rt_cuda_enqueue", err);
    if (st || (st = rt_cuda_check_run(c, 0, err))) return st;
    if ((st = rt_cuda_bind(c, slots, shape_changed, addr, stream, err))) return st;
    /* produced sizes: a sync point after each producer, so no graph (yet: stage 7 of the plan) */
    if (c->graphs && !c->e->n_produced) st = run_graph(c, slots, addr, stream, err);
    else {
        c->graph_stats.plain++;
        st = run_steps(c, slots, addr, stream, hook, err);
    }
    if (st) return st;
    /* what the kernels flagged comes back with the run; read at the next call */
    rt_cuda *h = c->errs;
    if (!c->error_word) return SYMC_OK;
    uint64_t bit = (uint64_t)1 << (c->index < 63 ? c->index : 63);
    h->error_ran |= bit;
    if (h->error_pending) {
        h->error_ran_after |= bit;
        return SYMC_OK;
    }
    if ((st = RT_CU(err, MemcpyDtoHAsync, (h->error_host, h->error_word, 8, stream))) ||
        (st = RT_CU(err, EventRecord, (h->error_event, stream))))
        return st;
    h->error_pending = 1;
    h->error_ran_after = 0;
    return SYMC_OK;
}

/* A run on the caller's stream (its GPU's context current), between the
 * marks rt_cuda_quiesce waits for. */
static symc_status device_run(rt_cuda *c, const int64_t *slots, int shape_changed, void *const *addr, CUstream stream,
                              const rt_run_hook *hook, symc_error *err) {
    run_begin(c, stream);
    symc_status st = device_run_steps(c, slots, shape_changed, addr, stream, hook, err);
    symc_status end = run_end(c, stream, st ? NULL : err);
    return st ? st : end;
}

symc_status rt_cuda_enqueue(rt_cuda *c, const int64_t *slots, int shape_changed, void *const *addr, const size_t *size,
                            void *stream, const rt_run_hook *hook, symc_error *err) {
    (void)size; /* checked by the caller against the shapes and the allocations */
    if (!c || !slots) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_cuda_enqueue: NULL argument");
    symc_status st = rt_cuda_cu_use(c->dev, err);
    if (st) return st;
    return c->owner->host_io ? host_run(c, slots, shape_changed, addr, hook, err)
                             : device_run(c, slots, shape_changed, addr, (CUstream)stream, hook, err);
}

/* Every step in order, then outputs that live elsewhere copied into the
 * caller's buffers: what a graph captures. */
static symc_status run_step(rt_cuda *c, uint32_t i, const int64_t *slots, CUstream stream, symc_error *err) {
    const rt_step *s = &c->e->steps[i];
    switch ((rt_step_kind)s->kind) {
    case RT_STEP_KERNEL: return run_kernel(c, s, slots, stream, err);
    case RT_STEP_GEMM: return rt_cuda_gemm_run(c, i, slots, stream, err);
    case RT_STEP_CONV: return rt_cuda_conv_run(c, i, slots, stream, err);
    case RT_STEP_COPY: return run_copy(c, s, slots, stream, err);
    }
    return symc_error_setf(err, SYMC_ERR_FORMAT, "step %u has unknown kind %u", i, (unsigned)s->kind);
}

/* outputs stored elsewhere (constants, aliases of other tensors) copied into
 * the caller's buffers */
static symc_status copy_outputs(rt_cuda *c, const int64_t *slots, void *const *addr, CUstream stream, symc_error *err) {
    const rt_engine *e = c->e;
    symc_status st;
    for (uint32_t i = 0; i < e->n_outputs; i++) {
        uint32_t t = e->outputs[i];
        CUdeviceptr user = addr ? (CUdeviceptr)(uintptr_t)addr[t] : 0;
        if (!user || c->ptr[t] == user) continue;
        size_t bytes = rt_cuda_tensor_bytes(e, slots, t);
        if (bytes == 0 || bytes == SIZE_MAX) continue;
        if ((st = RT_CU(err, MemcpyDtoDAsync, (user, c->ptr[t], bytes, stream)))) {
            symc_error_prefix(err, "output '%s': copying %zu bytes into the caller's buffer", e->tensors[t].name,
                              bytes);
            return st;
        }
    }
    return SYMC_OK;
}

/* After step i: for each size produced by the node that step ends, the
 * count copied from its cell to pinned memory, the stream synchronized (a
 * sync point), the core's hook told; *slots becomes the real slots the hook
 * returns. */
static symc_status after_step(rt_cuda *c, uint32_t i, CUstream stream, const rt_run_hook *hook, const int64_t **slots,
                              uint32_t *next, symc_error *err) {
    const rt_engine *e = c->e;
    for (; *next < e->n_produced && c->produced_step[*next] == i; (*next)++) {
        uint32_t k = *next;
        const rt_produced *p = &e->produced[k];
        symc_status st = RT_CU(err, MemcpyDtoHAsync, (&c->count_host[k], c->ptr[p->count_tensor], 8, stream));
        if (!st) st = RT_CU(err, StreamSynchronize, (stream));
        if (st) {
            symc_error_prefix(err, "node '%s': reading the size it produced (%s)", rt_cuda_node_name(e, &e->steps[i]),
                              p->what ? p->what : "its count");
            return st;
        }
        if ((st = hook->produced(hook->ctx, k, c->count_host[k], slots, err))) return st;
    }
    return SYMC_OK;
}

static symc_status run_steps(rt_cuda *c, const int64_t *slots, void *const *addr, CUstream stream,
                             const rt_run_hook *hook, symc_error *err) {
    symc_status st;
    uint32_t next = 0;
    for (uint32_t i = 0; i < c->e->n_steps; i++)
        if ((st = run_step(c, i, slots, stream, err)) ||
            (c->e->n_produced && (st = after_step(c, i, stream, hook, &slots, &next, err))))
            return st;
    return copy_outputs(c, slots, addr, stream, err);
}

/* What a step runs, for symrt_context_profile. */
static void describe_step(rt_cuda *c, uint32_t i, const int64_t *slots, symrt_step_profile *o) {
    const rt_engine *e = c->e;
    const rt_step *s = &e->steps[i];
    o->node = rt_cuda_node_name(e, s);
    o->op = s->node < e->n_nodes ? ir_op_name(e->nodes[s->node].op) : "?";
    o->detail[0] = '\0';
    switch ((rt_step_kind)s->kind) {
    case RT_STEP_KERNEL: {
        const int64_t blocks = step_blocks(c, i, slots[s->work]);
        o->kind = "kernel";
        snprintf(o->detail, sizeof o->detail, "%s: %" PRId64 " blocks of %u, %u B shared", e->kernel_names[s->kernel],
                 blocks, s->block, s->shared);
        break;
    }
    case RT_STEP_GEMM:
        o->kind = "gemm";
        rt_cuda_gemm_describe(c, i, slots, o->detail, sizeof o->detail);
        break;
    case RT_STEP_CONV:
        o->kind = "conv";
        rt_cuda_conv_describe(c, i, slots, o->detail, sizeof o->detail);
        break;
    case RT_STEP_COPY: {
        size_t bytes = s->tensors[1] != RT_NONE ? rt_cuda_tensor_bytes(e, slots, s->tensors[1]) : 0;
        o->kind = "copy";
        snprintf(o->detail, sizeof o->detail, "cuMemcpyDtoDAsync, %zu bytes", bytes);
        break;
    }
    default: o->kind = "?";
    }
}

symc_status rt_cuda_profile(rt_cuda *c, const int64_t *slots, int shape_changed, void *const *addr, void *stream_,
                            const rt_run_hook *hook, symrt_step_profile *out, uint32_t cap, uint32_t *n_steps,
                            symc_error *err) {
    CUstream stream = (CUstream)stream_;
    const rt_engine *e = c->e;
    *n_steps = e->n_steps;
    if (!cap) return SYMC_OK; /* sizing the caller's array: nothing runs */
    symc_status st = need_hook(c, hook, "symrt_context_profile", err);
    if (st) return st;
    st = rt_cuda_cu_use(c->dev, err);
    if (st) return st;
    CUevent *ev = NULL;
    uint32_t made = 0, next = 0;
    run_begin(c, stream);
    if ((st = rt_cuda_check_run(c, 0, err)) || (st = rt_cuda_bind(c, slots, shape_changed, addr, stream, err)))
        goto done;
    if (!(ev = calloc((size_t)e->n_steps + 1, sizeof *ev))) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of host memory for %u events", e->n_steps + 1);
        goto done;
    }
    for (; made <= e->n_steps; made++)
        if ((st = RT_CU(err, EventCreate, (&ev[made], CU_EVENT_DEFAULT)))) goto done;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        if ((st = RT_CU(err, EventRecord, (ev[i], stream)))) goto done;
        double h0 = 1e6 * symc_now_s();
        if ((st = run_step(c, i, slots, stream, err))) goto done;
        if (i < cap) out[i].host_us = (float)(1e6 * symc_now_s() - h0);
        /* a producer's sync point: its time counts in the next step's gap, not in any step */
        if (e->n_produced && (st = after_step(c, i, stream, hook, &slots, &next, err))) goto done;
    }
    if ((st = RT_CU(err, EventRecord, (ev[e->n_steps], stream)))) goto done;
    if ((st = copy_outputs(c, slots, addr, stream, err))) goto done;
    if ((st = RT_CU(err, EventSynchronize, (ev[e->n_steps])))) goto done;
    for (uint32_t i = 0; i < e->n_steps && i < cap; i++) {
        float host_us = out[i].host_us;
        describe_step(c, i, slots, &out[i]);
        out[i].host_us = host_us;
        float t0 = 0, dt = 0;
        if ((st = RT_CU(err, EventElapsedTime, (&t0, ev[0], ev[i])))) goto done;
        if ((st = RT_CU(err, EventElapsedTime, (&dt, ev[i], ev[i + 1])))) goto done;
        out[i].start_ms = t0;
        out[i].ms = dt;
    }
done:;
    symc_status end = run_end(c, stream, st ? NULL : err);
    if (!st) st = end;
    for (uint32_t k = 0; k < made; k++) rt_cuda_cu.EventDestroy(ev[k]);
    free(ev);
    return st;
}

static uint64_t hash_words(const uint64_t *w, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ w[i]) * 1099511628211ull;
    return h;
}

symc_status rt_cuda_capture(CUstream stream, rt_cuda_enqueue_fn run, void *ctx, CUgraph *graph, symc_error *err) {
    *graph = NULL;
    symc_status st = RT_CU(err, StreamBeginCapture, (stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    if (st) return st;
    symc_status ran = run(ctx, stream, err);
    CUresult end = rt_cuda_cu.StreamEndCapture(stream, graph);
    if (ran || end != CUDA_SUCCESS || !*graph) {
        if (*graph) rt_cuda_cu.GraphDestroy(*graph);
        *graph = NULL;
        return ran ? ran : rt_cu_ck(end, "cuStreamEndCapture", __FILE__, __LINE__, err);
    }
    return SYMC_OK;
}

typedef struct steps_call {
    rt_cuda *c;
    const int64_t *slots;
    void *const *addr;
} steps_call;

static symc_status enqueue_steps(void *ctx, CUstream stream, symc_error *err) {
    const steps_call *k = ctx;
    return run_steps(k->c, k->slots, k->addr, stream, NULL, err);
}

/* Captures every step on the context's own stream into a graph and
 * instantiates it in entry g, a fresh one from new_entry (no graph yet:
 * never cuGraphExecUpdate, see new_entry). Nothing runs. */
static symc_status capture_into(rt_cuda *c, rt_graph_entry *g, const int64_t *slots, void *const *addr,
                                symc_error *err) {
    symc_status st = SYMC_OK;
    rt_cuda *o = c->owner; /* one capture stream per context */
    if (!o->capture && (st = RT_CU(err, StreamCreate, (&o->capture, CU_STREAM_NON_BLOCKING)))) return st;
    steps_call call = {c, slots, addr};
    CUgraph graph;
    if ((st = rt_cuda_capture(o->capture, enqueue_steps, &call, &graph, err))) return st;
    st = RT_CU(err, GraphInstantiate, (&g->exec, graph, 0));
    rt_cuda_cu.GraphDestroy(graph);
    if (!st) c->graph_stats.captures++;
    return st;
}

/* An entry for a new key: a free one, else the least recently used (its
 * graph destroyed). */
static rt_graph_entry *new_entry(rt_cuda *c, uint64_t h, uint64_t *key, size_t len, symc_error *err) {
    if (!c->graph_cache && !(c->graph_cache = calloc(RT_GRAPH_CACHE, sizeof *c->graph_cache))) {
        symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for the CUDA graph cache");
        return NULL;
    }
    rt_graph_entry *g;
    if (c->n_graphs < RT_GRAPH_CACHE) g = &c->graph_cache[c->n_graphs++];
    else {
        g = &c->graph_cache[0];
        for (uint32_t i = 1; i < c->n_graphs; i++)
            if (c->graph_cache[i].used < g->used) g = &c->graph_cache[i];
        /* the evicted graph is destroyed, not updated in place with the next capture: after
         * cuGraphExecUpdate installed a capture whose cuDNN kernels differed (another shape), cuDNN's
         * sm90 implicit-GEMM kernel met CUDA_ERROR_ILLEGAL_INSTRUCTION on replay (H200, ResNet-50 fp16
         * served by Triton, compute-sanitizer); a fresh instantiation costs more once and is always exact */
        if (g->exec) rt_cuda_cu.GraphExecDestroy(g->exec);
        free(g->key);
    }
    *g = (rt_graph_entry){h, key, len, NULL, RT_GRAPH_SEEN, c->graph_clock};
    c->graph_key = NULL; /* the entry owns it now */
    return g;
}

/* The graph for this key: replayed when captured. A key seen for the first
 * time runs plainly, unless a graph of the same shapes (slots and memory
 * generation) exists: then only pointers changed, every workspace is sized,
 * and it is captured at once. The second sight captures. A key whose
 * capture fails (a library call that cannot be captured) runs plainly from
 * then on; graphs stay on for the others. The graph runs on the caller's
 * stream, whatever it is. */
static symc_status run_graph(rt_cuda *c, const int64_t *slots, void *const *addr, CUstream stream, symc_error *err) {
    const rt_engine *e = c->e;
    size_t len = (size_t)e->num_slots + e->n_tensors + 1;
    if (!c->graph_key && !(c->graph_key = malloc(len * sizeof *c->graph_key)))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory keying a CUDA graph");
    uint64_t *key = c->graph_key;
    for (uint32_t i = 0; i < e->num_slots; i++) key[i] = (uint64_t)slots[i];
    for (uint32_t t = 0; t < e->n_tensors; t++) key[e->num_slots + t] = (uint64_t)c->ptr[t];
    key[len - 1] = c->owner->memory_gen; /* the owner's: a workspace any region grew changes it */
    uint64_t h = hash_words(key, len);
    rt_graph_entry *g = NULL;
    for (uint32_t i = 0; i < c->n_graphs && !g; i++) {
        rt_graph_entry *x = &c->graph_cache[i];
        if (x->hash == h && x->key_len == len && !memcmp(x->key, key, len * sizeof *key)) g = x;
    }
    c->graph_clock++;
    if (g) {
        g->used = c->graph_clock;
        if (g->state == RT_GRAPH_CAPTURED) {
            c->graph_stats.replays++;
            return RT_CU(err, GraphLaunch, (g->exec, stream));
        }
        if (g->state == RT_GRAPH_FAILED) {
            c->graph_stats.plain++;
            return run_steps(c, slots, addr, stream, NULL, err);
        }
    } else {
        /* a miss: is there a graph of these shapes (slots and memory generation)? */
        int same_shape = 0;
        for (uint32_t i = 0; i < c->n_graphs && !same_shape; i++) {
            const rt_graph_entry *x = &c->graph_cache[i];
            same_shape = x->state == RT_GRAPH_CAPTURED && x->key_len == len && x->key[len - 1] == key[len - 1] &&
                !memcmp(x->key, key, e->num_slots * sizeof *key);
        }
        if (!(g = new_entry(c, h, key, len, err))) return SYMC_ERR_NOMEM;
        if (!same_shape) { /* first sight of these shapes */
            c->graph_stats.plain++;
            symc_status st = run_steps(c, slots, addr, stream, NULL, err);
            /* the run may have grown a library workspace (allocated at first use): the
             * key to expect next time has the generation after it */
            if (g->key[len - 1] != c->owner->memory_gen) {
                g->key[len - 1] = c->owner->memory_gen;
                g->hash = hash_words(g->key, len);
            }
            return st;
        }
    }
    if (capture_into(c, g, slots, addr, err) == SYMC_OK) {
        g->state = RT_GRAPH_CAPTURED;
        c->graph_stats.replays++;
        return RT_CU(err, GraphLaunch, (g->exec, stream));
    }
    /* plain from now on for this key; the plain run reports a real error */
    g->state = RT_GRAPH_FAILED;
    if (g->exec) rt_cuda_cu.GraphExecDestroy(g->exec);
    g->exec = NULL;
    c->graph_stats.failed++;
    c->graph_stats.plain++;
    return run_steps(c, slots, addr, stream, NULL, err);
}

void rt_cuda_set_graphs(rt_cuda *c, int on) {
    if (c) c->graphs = on != 0;
}

symrt_graph_stats rt_cuda_graph_stats(const rt_cuda *c) {
    symrt_graph_stats z = {0};
    if (!c) return z;
    symrt_graph_stats s = c->graph_stats;
    rt_cuda_gemm_setup_stats(c, &s.setups_made, &s.setups_shared);
    return s;
}

/* "node 'x'", or "node 'x' (region 0) or 'y' (region 1)" when states of
 * several regions ran since the word was last seen clear */
static void flagged_node(const rt_cuda *h, uint32_t node, char *buf, size_t cap) {
    const rt_cuda *o = h->owner;
    int n = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < o->n_family && used < cap; i++) {
        if (!(h->error_ran & ((uint64_t)1 << (i < 63 ? i : 63))) || !o->family[i]) continue;
        const rt_engine *e = o->family[i];
        const char *name = node < e->n_nodes ? e->nodes[node].name : "?";
        int k = o->n_family > 1 ? snprintf(buf + used, cap - used, "%s'%s' (region %u)", n ? " or " : "node ", name, i)
                                : snprintf(buf + used, cap - used, "node '%s'", name);
        used += k > 0 ? (size_t)k : 0;
        n++;
    }
    if (!n) snprintf(buf, cap, "node '%s'", node < h->e->n_nodes ? h->e->nodes[node].name : "?");
}

symc_status rt_cuda_check_run(rt_cuda *c, int wait, symc_error *err) {
    if (c) c = c->errs; /* a region's state reports through the word it shares */
    if (!c || !c->error_word || !c->error_pending) return SYMC_OK;
    symc_status st = rt_cuda_cu_use(c->dev, err);
    if (st) return st;
    if (wait) {
        if ((st = RT_CU(err, EventSynchronize, (c->error_event)))) return st;
    } else {
        CUresult r = rt_cuda_cu.EventQuery(c->error_event);
        if (r == CUDA_ERROR_NOT_READY) return SYMC_OK; /* still running: a later call reports it */
        if (r != CUDA_SUCCESS) return RT_CU(err, EventQuery, (c->error_event));
    }
    c->error_pending = 0;
    uint32_t code = c->error_host[0], node = c->error_host[1];
    if (!code) { /* clear up to the copy: only the runs queued after it may still set it */
        c->error_ran = c->error_ran_after;
        c->error_ran_after = 0;
        return SYMC_OK;
    }
    c->error_host[0] = c->error_host[1] = 0;
    char where[256];
    flagged_node(c, node, where, sizeof where);
    c->error_ran = c->error_ran_after = 0;
    if ((st = RT_CU(err, MemsetD8, (c->error_word, 0, 8)))) return st;
    const char *what = code == 1 ? "an index was outside the range of its axis"
        : code == 2              ? "an integer was divided by zero"
                                 : "a kernel reported bad data";
    return symc_error_setf(err, SYMC_ERR_RANGE,
                           "a run on this context read bad data at %s: %s; that run's outputs are invalid (the "
                           "reference backend names the element)",
                           where, what);
}

symc_status rt_cuda_check_buffer(rt_cuda *c, const char *what, const char *name, const void *ptr, size_t need,
                                 symc_error *err) {
    if (!ptr || !need || c->owner->host_io) return SYMC_OK; /* host I/O: the caller's memory is host memory */
    symc_status st = rt_cuda_cu_use(c->dev, err);
    if (st) return st;
    /* another GPU's device memory is named as such, whether or not this GPU's context finds an
     * address range for it (under unified addressing its ordinal is known to any context) */
    unsigned int type = 0;
    int ordinal = -1;
    if (rt_cuda_cu.PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)ptr) ==
            CUDA_SUCCESS &&
        type == CU_MEMORYTYPE_DEVICE &&
        rt_cuda_cu.PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)ptr) ==
            CUDA_SUCCESS &&
        ordinal != c->dev->ordinal)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "%s '%s' address %p is memory of GPU %d; this context runs on GPU %d", what, name, ptr,
                               ordinal, c->dev->ordinal);
    CUdeviceptr base = 0;
    size_t bytes = 0;
    if (rt_cuda_cu.MemGetAddressRange(&base, &bytes, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS)
        return symc_error_setf(
            err, SYMC_ERR_INVALID_ARG,
            "%s '%s' address %p is not device memory on this GPU (CUDA backend needs device pointers; "
            "symrt_context_set_host_io takes host memory)",
            what, name, ptr);
    size_t have = (size_t)(base + bytes - (CUdeviceptr)(uintptr_t)ptr);
    if (have < need)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "%s '%s': the allocation at %p has %zu bytes from this address, the tensor needs %zu at "
                               "this shape",
                               what, name, ptr, have, need);
    return SYMC_OK;
}

/* ---- host I/O ---------------------------------------------------------------------
 * The caller's buffers are host memory (symrt_context_set_host_io): per input
 * and output position, the owner keeps a device buffer grown to the largest
 * size seen; a run copies the inputs in on the owner's stream, runs there
 * with those buffers in place of the caller's (so CUDA graphs still replay:
 * the buffers move only when they grow), copies the outputs back and waits,
 * and reports bad data a kernel flagged in that run at once. Nothing is
 * pending between runs, so a buffer can be freed and grown safely. */

symc_status rt_cuda_set_host_io(rt_cuda *c, int on, symc_error *err) {
    rt_cuda *o = c->owner;
    symc_status st = rt_cuda_cu_use(o->dev, err);
    if (st) return st;
    if (on && !o->io_stream && (st = RT_CU(err, StreamCreate, (&o->io_stream, CU_STREAM_NON_BLOCKING)))) return st;
    uint32_t n = o->e->n_inputs + o->e->n_outputs;
    if (on && !o->io_dev) {
        o->io_dev = calloc(n + 1, sizeof *o->io_dev);
        o->io_cap = calloc(n + 1, sizeof *o->io_cap);
        if (!o->io_dev || !o->io_cap) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for host I/O");
    }
    o->host_io = on;
    return SYMC_OK;
}

static symc_status io_buffer(rt_cuda *o, uint32_t k, size_t bytes, const char *what, CUdeviceptr *out,
                             symc_error *err) {
    if (bytes < 256) bytes = 256; /* a real address even for an empty tensor */
    if (o->io_cap[k] < bytes) {
        if (o->io_dev[k]) rt_cuda_free(o, o->io_dev[k]);
        o->io_dev[k] = 0;
        o->io_cap[k] = 0;
        symc_status st = rt_cuda_alloc(o, bytes, &o->io_dev[k], what, err);
        if (st) return st;
        o->io_cap[k] = bytes;
    }
    *out = o->io_dev[k];
    return SYMC_OK;
}

static symc_status host_run(rt_cuda *c, const int64_t *slots, int shape_changed, void *const *addr,
                            const rt_run_hook *hook, symc_error *err) {
    rt_cuda *o = c->owner;
    const rt_engine *e = c->e;
    CUstream stream = o->io_stream;
    if (e->n_inputs + e->n_outputs > o->e->n_inputs + o->e->n_outputs)
        return symc_error_setf(err, SYMC_ERR_FORMAT,
                               "engine '%s': a region graph has more inputs and outputs than the engine",
                               engine_name(e));
    if (!c->host_addr && !(c->host_addr = calloc(e->n_tensors + 1, sizeof *c->host_addr)))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for host I/O");
    memcpy(c->host_addr, addr, e->n_tensors * sizeof *addr);
    symc_status st = SYMC_OK;
    for (uint32_t i = 0; !st && i < e->n_inputs; i++) {
        uint32_t t = e->inputs[i];
        size_t bytes = rt_cuda_tensor_bytes(e, slots, t);
        CUdeviceptr d = 0;
        if (!(st = io_buffer(o, i, bytes, "a host input's device copy", &d, err)) && bytes && addr[t])
            st = RT_CU(err, MemcpyHtoDAsync, (d, addr[t], bytes, stream));
        c->host_addr[t] = (void *)(uintptr_t)d;
    }
    for (uint32_t i = 0; !st && i < e->n_outputs; i++) {
        uint32_t t = e->outputs[i];
        int is_input = 0;
        for (uint32_t k = 0; k < e->n_inputs; k++) is_input |= e->inputs[k] == t;
        if (is_input) continue; /* an input passed through: its device copy is the output */
        CUdeviceptr d = 0;
        st = io_buffer(o, e->n_inputs + i, rt_cuda_tensor_bytes(e, slots, t), "a host output's device buffer", &d, err);
        c->host_addr[t] = (void *)(uintptr_t)d;
    }
    if (!st) st = device_run(c, slots, shape_changed, c->host_addr, stream, hook, err);
    for (uint32_t i = 0; !st && i < e->n_outputs; i++) {
        uint32_t t = e->outputs[i];
        size_t bytes = rt_cuda_tensor_bytes(e, slots, t);
        if (bytes && addr[t])
            st = RT_CU(err, MemcpyDtoHAsync, (addr[t], (CUdeviceptr)(uintptr_t)c->host_addr[t], bytes, stream));
    }
    /* wait even after a failure: nothing may stay queued on the buffers */
    symc_status sync = RT_CU(st ? NULL : err, StreamSynchronize, (stream));
    if (!st) st = sync;
    if (!st) st = rt_cuda_check_run(c, 1, err);
    return st;
}

/* ---- the backend table (runtime/backend.h) --------------------------------------- */

static symc_status b_create(const rt_engine *e, int32_t device, const symrt_allocator *alloc, void **state,
                            symc_error *err) {
    rt_cuda *c = NULL;
    symc_status st = rt_cuda_create(e, device, alloc, &c, err);
    *state = c;
    return st;
}
static symc_status b_create_more(void *first, const rt_engine *graph, void **state, symc_error *err) {
    rt_cuda *c = NULL;
    symc_status st = rt_cuda_create_more(first, graph, &c, err);
    *state = c;
    return st;
}
static void b_destroy(void *state) { rt_cuda_destroy(state); }
static symc_status b_layout(void *state, const int64_t *slots, symc_error *err) {
    return rt_cuda_layout(state, slots, err);
}
static symc_status b_check_buffer(void *state, const char *what, const char *name, const void *ptr, size_t need,
                                  symc_error *err) {
    return rt_cuda_check_buffer(state, what, name, ptr, need, err);
}
static symc_status b_enqueue(void *state, const int64_t *slots, int shape_changed, void *const *addr,
                             const size_t *size, void *stream, const rt_run_hook *hook, symc_error *err) {
    return rt_cuda_enqueue(state, slots, shape_changed, addr, size, stream, hook, err);
}
static symc_status b_check_run(void *state, symc_error *err) { return rt_cuda_check_run(state, 1, err); }
static void b_set_graphs(void *state, int on) { rt_cuda_set_graphs(state, on); }
static symrt_graph_stats b_graph_stats(void *state) { return rt_cuda_graph_stats(state); }
static symc_status b_set_host_io(void *state, int on, symc_error *err) { return rt_cuda_set_host_io(state, on, err); }
static symc_status b_host_alloc(void *state, size_t bytes, void **ptr, symc_error *err) {
    rt_cuda *o = ((rt_cuda *)state)->owner;
    symc_status st = rt_cuda_cu_use(o->dev, err);
    if (st) return st;
    CUresult r = rt_cuda_cu.MemAllocHost(ptr, bytes);
    if (r == CUDA_SUCCESS) return SYMC_OK;
    *ptr = NULL;
    const char *name = NULL;
    rt_cuda_cu.GetErrorName(r, &name);
    return symc_error_setf(err, r == CUDA_ERROR_OUT_OF_MEMORY ? SYMC_ERR_NOMEM : SYMC_ERR_DEVICE,
                           "symrt_context_host_alloc: page-locked host memory of %zu bytes for GPU %d: %s", bytes,
                           o->dev->ordinal, name ? name : "CUDA error");
}
static void b_host_free(void *state, void *ptr) {
    rt_cuda *o = ((rt_cuda *)state)->owner;
    if (rt_cuda_cu_use(o->dev, NULL) == SYMC_OK) rt_cuda_cu.MemFreeHost(ptr);
}
static symc_status b_device_count(int32_t *count, symc_error *err) {
    int n = 0;
    symc_status st = rt_cuda_device_count(&n, err);
    *count = n;
    return st;
}
static symc_status b_profile(void *state, const int64_t *slots, int shape_changed, void *const *addr, void *stream,
                             const rt_run_hook *hook, symrt_step_profile *out, uint32_t cap, uint32_t *n_steps,
                             symc_error *err) {
    return rt_cuda_profile(state, slots, shape_changed, addr, stream, hook, out, cap, n_steps, err);
}

const rt_backend rt_cuda_backend = {
    .name = "CUDA",
    .align = RT_CUDA_ALIGN,
    .create = b_create,
    .create_more = b_create_more,
    .destroy = b_destroy,
    .layout = b_layout,
    .check_buffer = b_check_buffer,
    .enqueue = b_enqueue,
    .check_run = b_check_run,
    .set_graphs = b_set_graphs,
    .graph_stats = b_graph_stats,
    .profile = b_profile,
    .set_host_io = b_set_host_io,
    .host_alloc = b_host_alloc,
    .host_free = b_host_free,
    .device_count = b_device_count,
};
