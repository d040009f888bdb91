/* symc inspect ENGINE.symx: what an engine holds and what it will do.
 *
 * An engine stores sizes as slots of a shape program, not as expressions, so
 * shapes and memory are shown evaluated with every symbol at its min, opt and
 * max (the three levels a user declared). Then the GPU part: versions and
 * target, the kernels, and every step in execution order; a library step
 * with every tuned entry (the sizes it was timed at, the algorithm in words,
 * its time), the buckets (which shapes each entry serves: intervals of the
 * one size that varies, else the nearest entry) and the entry the runtime
 * would pick at min, opt and max, or "heuristic per shape" when the build
 * had no GPU. --source prints the
 * generated CUDA C.
 * An engine with regions (format 6) shows a regions section first (each
 * region's condition and symbol ranges, then the declared hull), then every
 * section above once per region graph, at that graph's own min, opt and max.
 * Reads the file through the runtime's decoder, so every check of a load
 * applies. The memory section (tools/memory.c) also shows the activation
 * workspace as a formula in the symbols.
 * An engine with sizes known only after a node runs (format 7) is shown at
 * capacity, as the runtime plans it: each produced symbol at its capacity
 * (the capacity program at min, opt and max) wherever shapes and storage are
 * evaluated; a "produced sizes" section names each symbol, what it counts,
 * its producer, its bound and capacity as formulas (decoded from the
 * programs), and each guard that waits for one says after which node.
 * Last, the batch-row verdict the build stored (the root's, over every
 * region), in the line `symc inspect` ends a module with (tool_batch_rows_line). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine.h"
#include "runtime/plan.h"
#include "runtime/cuda/tuned_pick.h"
#include "tools/cli.h" /* tool_batch_rows_line */
#include "tools/inspect_engine.h"
#include "tools/memory.h"

static const char *level_name[3] = {"min", "opt", "max"};

static void print_shape(const rt_engine *e, const rt_tensor *t, int64_t *const slots[3]) {
    printf("%s[", symc_dtype_name(t->dtype));
    for (int d = 0; d < t->rank; d++) {
        int64_t a = slots[0][t->dims[d]], b = slots[1][t->dims[d]], c = slots[2][t->dims[d]];
        if (a == c) printf("%s%" PRId64, d ? ", " : "", a);
        else printf("%s%" PRId64 "|%" PRId64 "|%" PRId64, d ? ", " : "", a, b, c);
    }
    printf("]");
    (void)e;
}

static const char *tname(const rt_engine *e, uint32_t t) { return t == RT_NONE ? "-" : e->tensors[t].name; }

static void print_sizes(const rt_step *s, const int64_t at[4]) {
    if (s->kind == RT_STEP_GEMM) {
        printf("m=%" PRId64 " n=%" PRId64 " k=%" PRId64, at[0], at[1], at[2]);
        if (at[3] != 1) printf(" batch=%" PRId64, at[3]);
    } else {
        printf("n=%" PRId64 " h=%" PRId64 " w=%" PRId64, at[0], at[1], at[2]);
    }
}

static const char *size_name(const rt_step *s, int d) {
    static const char *const gemm[4] = {"m", "n", "k", "batch"}, *const conv[4] = {"n", "h", "w", "-"};
    return s->kind == RT_STEP_GEMM ? gemm[d] : conv[d];
}

static int same_choice(const rt_tuned *a, const rt_tuned *b) {
    return a->algo_size == b->algo_size && a->algo && b->algo && !memcmp(a->algo, b->algo, a->algo_size);
}

/* The largest x with x * x <= a * b (a, b > 0): the last size nearer a than b
 * in log distance (a tie goes to a, the earlier entry). */
static int64_t geo_floor(int64_t a, int64_t b) {
    int64_t ab;
    if (__builtin_mul_overflow(a, b, &ab)) return (int64_t)(sqrt((double)a) * sqrt((double)b));
    int64_t x = (int64_t)sqrt((double)ab);
    while (x > 0 && x > ab / x) x--;   /* x * x > ab */
    while (x + 1 <= ab / (x + 1)) x++; /* (x + 1)^2 <= ab */
    return x;
}

/* The step's buckets: which shapes each tuned entry serves at run time (the
 * nearest entry in log size, rt_cuda_tune_order). When the entries differ in one
 * size only, the buckets are intervals of it, bounded at the geometric
 * midpoints of neighbours, and neighbours with the same choice are shown
 * as one bucket; otherwise each entry serves the shapes nearest it. */
static void print_buckets(const rt_step *s) {
    int vary = -1, n_vary = 0, differs[4] = {0};
    for (int d = 0; d < 4; d++) {
        for (uint32_t k = 1; k < s->n_tuned; k++) differs[d] |= s->tuned[k].at[d] != s->tuned[0].at[d];
        if (differs[d]) vary = d, n_vary++;
    }
    if (n_vary == 0) {
        printf("        buckets: one, every shape: #1\n");
        return;
    }
    if (n_vary > 1) {
        printf("        buckets: each entry serves the shapes nearest it in log size (");
        for (int d = 0, first = 1; d < 4; d++)
            if (differs[d]) printf("%s%s", first ? "" : ", ", size_name(s, d)), first = 0;
        printf(")\n");
        return;
    }
    uint32_t idx[64], n = s->n_tuned < 64 ? s->n_tuned : 64;
    for (uint32_t k = 0; k < n; k++) idx[k] = k;
    for (uint32_t a = 1; a < n; a++) /* by the varying size; equal sizes keep their order */
        for (uint32_t b = a; b > 0 && s->tuned[idx[b - 1]].at[vary] > s->tuned[idx[b]].at[vary]; b--) {
            uint32_t x = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = x;
        }
    printf("        buckets by %s:", size_name(s, vary));
    for (uint32_t k = 0; k < n;) {
        uint32_t end = k; /* a run of neighbours with the same choice */
        while (end + 1 < n && same_choice(&s->tuned[idx[end + 1]], &s->tuned[idx[k]])) end++;
        int64_t lo = s->tuned[idx[k]].at[vary], hi = s->tuned[idx[end]].at[vary];
        printf("%s [", k ? "," : "");
        if (k > 0) printf("%" PRId64, geo_floor(s->tuned[idx[k - 1]].at[vary], lo) + 1);
        printf("..");
        if (end + 1 < n) printf("%" PRId64, geo_floor(hi, s->tuned[idx[end + 1]].at[vary]));
        printf("]");
        for (uint32_t j = k; j <= end; j++) printf(" #%u", idx[j] + 1);
        k = end + 1;
    }
    printf("\n");
}

/* A library step's tuned entries (runtime/cuda/tuned_pick.h): which one the runtime's
 * pick would use at min, opt and max, then every entry with its sizes and
 * its choice in words. The pick shown is rt_cuda_tune_pick's; at run time the
 * library may still refuse an entry for a pointer alignment (then the
 * heuristic serves). */
static void print_tuned(const rt_engine *e, uint32_t i, int64_t *const slots[3]) {
    const rt_step *s = &e->steps[i];
    if (!s->n_tuned) {
        printf("; not tuned (heuristic once per shape at run time)\n");
        return;
    }
    uint32_t size = s->kind == RT_STEP_GEMM ? RT_GEMM_ALGO_SIZE : RT_CONV_ALGO_SIZE;
    printf("; %u tuned entr%s, picked at min | opt | max:", s->n_tuned, s->n_tuned == 1 ? "y" : "ies");
    for (int l = 0; l < 3; l++) {
        int64_t sizes[4];
        symc_error err;
        printf("%s", l ? " |" : "");
        if (rt_cuda_tune_sizes(e, i, slots[l], sizes, &err)) {
            printf(" ?");
            continue;
        }
        int pick = rt_cuda_tune_pick(s->tuned, s->n_tuned, sizes, size);
        if (pick < 0) printf(" heuristic");
        else printf(" #%d", pick + 1);
    }
    printf("\n");
    for (uint32_t k = 0; k < s->n_tuned; k++) {
        const rt_tuned *t = &s->tuned[k];
        char what[192];
        if (s->kind == RT_STEP_GEMM) rt_cuda_gemm_algo_describe(t->algo, t->algo_size, what, sizeof what);
        else rt_cuda_conv_algo_describe(t->algo, t->algo_size, what, sizeof what);
        printf("        #%u at ", k + 1);
        print_sizes(s, t->at);
        printf(": %s", what);
        if (t->ms > 0) printf(" (%.3f ms)", (double)t->ms);
        printf("\n");
    }
    print_buckets(s);
}

/* Tensors by storage type (the precision pass's result): count and bytes at opt of the
 * activations and of the weights per dtype; with `list`, every tensor with its type and shape. */
static void print_storage(const rt_engine *e, int64_t *const slots[3], int list) {
    uint32_t count[2][SYMC_DTYPE_COUNT] = {{0}};
    int64_t bytes[2][SYMC_DTYPE_COUNT] = {{0}}; /* -1: past RT_MAX_BYTES (checked, never wrapped) */
    for (uint32_t t = 0; t < e->n_tensors; t++) {
        const rt_tensor *x = &e->tensors[t];
        if ((unsigned)x->dtype >= SYMC_DTYPE_COUNT) continue;
        int w = x->constant != RT_NONE;
        int64_t n, *sum = &bytes[w][x->dtype];
        count[w][x->dtype]++;
        if (*sum < 0) continue;
        if (!rt_tensor_bytes(e, slots[1], t, &n) || n > RT_MAX_BYTES - *sum) *sum = -1;
        else *sum += n;
    }
    printf("storage (tensors by type, bytes at opt):");
    for (int w = 0; w < 2; w++)
        for (int dt = 0; dt < SYMC_DTYPE_COUNT; dt++)
            if (count[w][dt]) {
                char b[40];
                if (bytes[w][dt] < 0) snprintf(b, sizeof b, "over %" PRId64, (int64_t)RT_MAX_BYTES);
                else snprintf(b, sizeof b, "%" PRId64, bytes[w][dt]);
                printf(" %s %s %u (%s)", w ? "weights" : "activations", symc_dtype_name((symc_dtype)dt), count[w][dt],
                       b);
            }
    printf("\n");
    for (uint32_t t = 0; list && t < e->n_tensors; t++) {
        printf("  %s%s: ", e->tensors[t].name, e->tensors[t].constant != RT_NONE ? " (weight)" : "");
        print_shape(e, &e->tensors[t], slots);
        printf("\n");
    }
}

static void print_steps(const rt_engine *e, int64_t *const slots[3]) {
    static const char *prec[] = {"fp32", "tf32", "fp16", "bf16"};
    if (e->n_steps) printf("steps (%u, in order):\n", e->n_steps);
    for (uint32_t i = 0; i < e->n_steps; i++) {
        const rt_step *s = &e->steps[i];
        const rt_node *nd = &e->nodes[s->node];
        switch (s->kind) {
        case RT_STEP_KERNEL:
            printf("  %3u kernel %-28s node %s, %u threads/block, %u items/block, %u args, module %u", i,
                   e->kernel_names[s->kernel], nd->name, s->block, s->per_block, s->n_args,
                   e->kernel_module[s->kernel]);
            if (s->resident) printf(", grid at most %u x the blocks the GPU holds at once", s->resident);
            printf("\n");
            for (uint32_t m = 0; m < s->n_tmaps; m++) { /* TMA tensor maps (format 8) */
                const rt_tmap *t = &s->tmaps[m];
                printf("        TMA tensor map %u: %s, rank %u, box", m, e->tensors[t->tensor].name, t->rank);
                for (uint32_t j = 0; j < t->rank; j++) printf("%s%u", j ? "x" : " ", t->box[j]);
                static const char *sw[4] = {"no swizzle", "32-byte swizzle", "64-byte swizzle", "128-byte swizzle"};
                printf(", %s\n", sw[t->swizzle & 3]);
            }
            break;
        case RT_STEP_GEMM:
        case RT_STEP_CONV: {
            static const char *epi[] = {"", " +relu", " +gelu(tanh)"};
            if (s->kind == RT_STEP_GEMM && nd->op == IR_OP_CONV2D) /* a 1x1 convolution (runtime/engine.h) */
                printf("  %3u gemm   %-28s cuBLASLt 1x1 conv %s y=%s w=%s x=%s%s%s bias per channel=%s%s, %s", i,
                       nd->name, symc_dtype_name(e->tensors[s->tensors[4]].dtype), tname(e, s->tensors[4]),
                       tname(e, s->tensors[0]), tname(e, s->tensors[1]), s->tensors[2] != RT_NONE ? " +residual=" : "",
                       s->tensors[2] != RT_NONE ? tname(e, s->tensors[2]) : "", tname(e, s->tensors[3]),
                       epi[s->epilogue % 3], prec[s->precision & 3]);
            else if (s->kind == RT_STEP_GEMM)
                printf("  %3u gemm   %-28s cuBLASLt d=%s a=%s%s b=%s%s c=%s bias=%s alpha=%g beta=%g%s, %s", i,
                       nd->name, tname(e, s->tensors[4]), tname(e, s->tensors[0]), s->trans_a ? "^T" : "",
                       tname(e, s->tensors[1]), s->trans_b ? "^T" : "", tname(e, s->tensors[2]),
                       tname(e, s->tensors[3]), (double)s->alpha, (double)s->beta, epi[s->epilogue % 3],
                       prec[s->precision & 3]);
            else
                printf("  %3u conv   %-28s cuDNN y=%s x=%s w=%s bias=%s%s%s%s, %s", i, nd->name,
                       tname(e, s->tensors[3]), tname(e, s->tensors[0]), tname(e, s->tensors[1]),
                       tname(e, s->tensors[2]), s->n_tensors > 4 && s->tensors[4] != RT_NONE ? " +residual=" : "",
                       s->n_tensors > 4 && s->tensors[4] != RT_NONE ? tname(e, s->tensors[4]) : "",
                       epi[s->epilogue % 3], prec[s->precision & 3]);
            print_tuned(e, i, slots);
            break;
        }
        case RT_STEP_COPY:
            printf("  %3u copy   %-28s %s -> %s\n", i, nd->name, tname(e, s->tensors[0]), tname(e, s->tensors[1]));
            break;
        }
    }
}

/* Sizes known only after a node runs (format 7): per produced symbol its name, what it counts, its
 * producer, its bound as a formula (decoded from the shape program, rt_engine_sym_table) and its
 * capacity (the capacity program's formula, over the input dims) at min, opt and max. */
static void print_produced(const rt_engine *e, int64_t *const caps[3]) {
    if (!e->n_produced) return;
    sym_table *t = NULL;
    sym_expr *slots = NULL, *capx = calloc(e->n_produced, sizeof *capx);
    symc_error err;
    int formulas = capx && !rt_engine_sym_table(e, &t, &slots, &err) &&
        !sym_program_decode(t, e->capacity_program, e->capacity_program_size, capx, e->n_produced, &err);
    printf("produced sizes (known only after their node runs; memory is planned at their capacity, each count is "
           "checked against its bound at run time):\n");
    for (uint32_t k = 0; k < e->n_produced; k++) {
        const rt_produced *p = &e->produced[k];
        const rt_node *n = &e->nodes[p->node];
        char bound[512] = "?", cap[512] = "?";
        if (formulas) {
            sym_print(t, slots[p->bound], bound, sizeof bound);
            sym_print(t, capx[k], cap, sizeof cap);
        }
        printf("  %s: %s\n", e->symbols[p->symbol].name, p->what);
        printf("    produced by node %s (%s), output %u dim %u; %s <= %s; capacity %s = %" PRId64 "|%" PRId64
               "|%" PRId64 " at min|opt|max\n",
               n->name, ir_op_name(n->op), p->output, p->dim, e->symbols[p->symbol].name, bound, cap, caps[0][k],
               caps[1][k], caps[2][k]);
    }
    sym_table_free(t);
    free(slots);
    free(capx);
}

/* A half engine's fp32 islands (the precision pass's): their count by reason, and with `list`
 * each node with its reason. */
static void print_islands(const rt_engine *e, int list) {
    if (!e->n_islands) return;
    printf("fp32 islands (nodes kept fp32 in this half engine): %u:", e->n_islands);
    for (uint32_t i = 0; i < e->n_islands; i++) { /* by kind, in the order kinds first occur */
        uint32_t first = 0, n = 0;
        while (strcmp(e->islands[first].kind, e->islands[i].kind)) first++;
        if (first != i) continue;
        for (uint32_t k = i; k < e->n_islands; k++) n += !strcmp(e->islands[k].kind, e->islands[i].kind);
        printf("%s %s %u", i ? "," : "", e->islands[i].kind, n);
    }
    printf("%s\n", list ? "" : " (--islands lists each)");
    for (uint32_t i = 0; list && i < e->n_islands; i++)
        printf("  %s (%s): %s: %s\n", e->islands[i].node, e->islands[i].op, e->islands[i].kind, e->islands[i].why);
}

/* One graph's sections: the engine's own, or region `region`'s (named `name`) after the regions
 * section, with min/opt/max from that graph's symbol ranges. */
static int inspect_graph(const rt_engine *e, const char *path, int show_source, int region, const char *name) {
    int64_t *slots[3] = {0}, *caps[3] = {0};
    int64_t *vals = calloc(e->n_symbols + 1, sizeof *vals);
    int rc = 0;
    symc_error err;
    for (int l = 0; l < 3; l++) {
        slots[l] = calloc(e->num_slots + 1, sizeof(int64_t));
        caps[l] = calloc(e->n_produced + 1, sizeof(int64_t));
        for (uint32_t s = 0; s < e->n_symbols; s++)
            vals[s] = l == 0 ? e->symbols[s].min : l == 1 ? e->symbols[s].opt : e->symbols[s].max;
        /* a produced size at its capacity there, as the runtime plans memory */
        if (e->n_produced && caps[l] &&
            sym_program_eval(e->capacity_program, e->capacity_program_size, vals, e->n_symbols, caps[l], e->n_produced,
                             &err)) {
            fprintf(stderr, "symc: %s: evaluating its capacity program at %s: %s\n", path, level_name[l], err.msg);
            rc = 1;
            goto done;
        }
        for (uint32_t k = 0; caps[l] && k < e->n_produced; k++) vals[e->produced[k].symbol] = caps[l][k];
        if (!slots[l] || !caps[l] ||
            sym_program_eval(e->program, e->program_size, vals, e->n_symbols, slots[l], e->num_slots, &err)) {
            fprintf(stderr, "symc: %s: evaluating its shape program at %s: %s\n", path, level_name[l], err.msg);
            rc = 1;
            goto done;
        }
    }
    static const char *prec[] = {"fp32", "tf32", "fp16", "bf16"};
    if (region < 0) printf("engine %s (format %u, symc %s)\n", e->name, e->format_version, e->symc_version);
    else printf("\nregion %d '%s':\n", region, name);
    if (e->sm) {
        size_t cubin = 0, ptx = 0;
        uint32_t launches = 0;
        for (uint32_t i = 0; i < e->n_modules; i++) cubin += e->modules[i].cubin_size, ptx += strlen(e->modules[i].ptx);
        for (uint32_t i = 0; i < e->n_steps; i++) launches += e->steps[i].kind == RT_STEP_KERNEL;
        printf("gpu: sm_%u, %s; built with CUDA %s, cuBLAS %s, cuDNN %s; cubin %zu bytes, PTX %zu bytes in %u "
               "module%s, %u kernels for %u kernel steps\n",
               e->sm, prec[e->precision & 3], e->cuda_version, e->cublas_version, e->cudnn_version, cubin, ptx,
               e->n_modules, e->n_modules == 1 ? "" : "s", e->n_kernels, launches);
    } else printf("gpu: none (reference backend only)\n");
    printf("symbols:\n");
    for (uint32_t s = 0; s < e->n_symbols; s++) {
        const rt_symbol *y = &e->symbols[s];
        printf("  %s in [%" PRId64 ", %" PRId64 "] opt %" PRId64, y->name, y->min, y->max, y->opt);
        if (y->multiple_of > 1) printf(" multiple of %" PRId64, y->multiple_of);
        printf("\n");
    }
    printf("shapes as min|opt|max:\n");
    for (int io = 0; io < 2; io++) {
        const uint32_t *list = io ? e->outputs : e->inputs;
        uint32_t cnt = io ? e->n_outputs : e->n_inputs;
        for (uint32_t i = 0; i < cnt; i++) {
            printf("  %s %s: ", io ? "output" : "input ", e->tensors[list[i]].name);
            print_shape(e, &e->tensors[list[i]], slots);
            printf("\n");
        }
    }
    print_storage(e, slots, show_source & SYMC_INSPECT_TENSORS);
    print_islands(e, show_source & SYMC_INSPECT_ISLANDS);
    print_produced(e, caps);
    printf("run-time guards: %u\n", e->n_guards);
    for (uint32_t g = 0; g < e->n_guards; g++) {
        const uint32_t a = e->guards[g].after;
        if (a && a <= e->n_produced)
            printf("  %s (checked after node %s produces %s)\n", e->guards[g].message,
                   e->nodes[e->produced[a - 1].node].name, e->symbols[e->produced[a - 1].symbol].name);
        else printf("  %s\n", e->guards[g].message);
    }
    /* activation memory: the runtime's own plans and their formulas (tools/memory.c) */
    if (tool_memory_report(e, path)) {
        rc = 1;
        goto done;
    }
    print_steps(e, slots);
    uint32_t n_alias = 0;
    for (uint32_t i = 0; i < e->n_aliases; i++) n_alias += e->aliases[i] != RT_NONE;
    if (n_alias) printf("views (no data moved): %u tensors share another's storage\n", n_alias);
    if ((show_source & SYMC_INSPECT_SOURCE) && e->cuda_source[0])
        printf("\n// ---- generated CUDA C ----\n%s\n", e->cuda_source);
done:
    for (int l = 0; l < 3; l++) free(slots[l]), free(caps[l]);
    free(vals);
    return rc;
}

/* The regions of an engine with several graphs: each one's condition and symbol ranges, then the
 * root's symbols (the declared hull every region lies in). */
static void print_regions(const rt_engine *e) {
    printf("engine %s (format %u, symc %s)\n", e->name, e->format_version, e->symc_version);
    printf("regions: %u (the first whose condition holds runs)\n", e->n_regions);
    for (uint32_t k = 0; k < e->n_regions; k++) {
        const rt_region *r = &e->regions[k];
        printf("  region %u '%s': condition ", k, r->name);
        for (uint32_t i = 0; i < r->n_cond; i++) printf("%s%s", i ? " and " : "", r->cond[i].message);
        if (!r->n_cond) printf("(none: always)");
        printf("; symbols");
        for (uint32_t i = 0; i < r->graph.n_symbols; i++) {
            const rt_symbol *y = &r->graph.symbols[i];
            printf("%s %s in [%" PRId64 ", %" PRId64 "] opt %" PRId64, i ? "," : "", y->name, y->min, y->max, y->opt);
        }
        if (!r->graph.n_symbols) printf(" none");
        printf("\n");
    }
    printf("symbols (the declared hull):\n");
    for (uint32_t s = 0; s < e->n_symbols; s++) {
        const rt_symbol *y = &e->symbols[s];
        printf("  %s in [%" PRId64 ", %" PRId64 "] opt %" PRId64 "\n", y->name, y->min, y->max, y->opt);
    }
}

int symc_inspect_engine(const char *path, int show_source) {
    symc_error err;
    uint8_t *buf;
    size_t n;
    if (rt_read_file(path, &buf, &n, &err)) {
        fprintf(stderr, "symc: %s\n", err.msg);
        return 1;
    }
    rt_engine *e;
    if (rt_engine_decode(buf, n, &e, &err)) {
        free(buf);
        fprintf(stderr, "symc: %s: %s\n", path, err.msg);
        return 1;
    }
    free(buf);
    int rc = 0;
    if (!e->n_regions) rc = inspect_graph(e, path, show_source, -1, NULL);
    else print_regions(e);
    for (uint32_t k = 0; k < e->n_regions && !rc; k++)
        rc = inspect_graph(&e->regions[k].graph, path, show_source, (int)k, e->regions[k].name);
    /* last, as for a module: the build's batch-row verdict (the root's, over every region) */
    const rt_batch_rows *br = &e->batch_rows;
    char line[512];
    tool_batch_rows_line((symrt_batch_rows)br->state, br->symbol < e->n_symbols ? e->symbols[br->symbol].name : NULL,
                         br->why, line, sizeof line);
    if (!rc) printf("%s\n", line);
    rt_engine_free(e);
    if (fflush(stdout)) rc = 1;
    return rc;
}
