/* The compile driver: the pass pipeline then the engine, with the options of
 * `symc compile` as a struct. It is the public entry point
 * (include/symc/symc.h) and the one place that turns symc_compile_options
 * into the pipeline's pass_options and codegen's cg_options; the command-line
 * tool fills the same struct and calls it, so the two cannot drift apart. Its
 * steps: the pipeline up to the precision pass, the range calibration (below;
 * the pass gets its statistics as data; kept in the build cache under a
 * SHA-256 of the module's structure and an XXH64 of each constant, since
 * SHA-256 over BERT's 440 MB of weights would cost more than the calibration
 * it saves), the rest of the pipeline, the engine. It
 * lives in codegen because it is the last stage; passes and ir do not depend
 * on it. symc_compile_regions runs the same pipeline (compile_pipeline) on
 * each region's module, each calibrated inside its own ranges, after the
 * quick refusals (arguments, the I/O interface, the condition texts), then
 * hands the modules to cg_build_regions (codegen/build_regions.c); one
 * region without a condition is symc_module_compile itself. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h" /* cg_progress */
#include "codegen/cache.h"
#include "codegen/codegen.h"
#include "passes/pipeline.h"
#include "symc/symc.h"
#include "symc/symrt.h"

/* ---- range calibration (fp16, and bf16 with a softmax) --------------------------------------
 * The precision pass keeps fp32 every tensor whose values would not fit fp16
 * with headroom, and stores attention's Q and K in half when the logits are
 * small enough. Their max |value| is measured here, where the runtime may be
 * used (passes may not): a copy of the module (ir_module_copy: the weights
 * are lent, not copied) marks every f32 intermediate as a graph output, is built as a
 * reference-only engine and runs once on the CPU reference backend at the
 * symbols' min values (the smallest tensors: the double-precision reference
 * would take minutes on a real model at opt; a min the guards reject falls
 * back to opt) with seeded random inputs (symc_dtype_fill_random:
 * floats in [-1, 1); integers moved to [1, 4], so no integer divides by 0). Each output's max |value| maps back
 * to the tensor of the same name; inputs are measured from their buffers. A
 * NaN max means not measured (constants: the pass checks their data).
 *
 * The result is kept in the build cache (codegen/cache.h), entry kind "calib":
 * it is a pure function of the module as it stands here, and a BERT-base
 * rebuild otherwise spends 1.3 to 1.8 s of its 3.4 to 4 s on it (most of that
 * building and loading a reference engine that holds the 440 MB of weights). The key
 * is the SHA-256 of: CALIB_VERSION (bump it whenever what calibrate_run
 * computes changes: the point rule, the inputs' fill, the measuring, the
 * reference backend's kernels), the symc version, the precision; the module's
 * structure, ir_serialize's bytes with every constant's data left out (what
 * ir_module_copy writes, so exactly what the run's copy is made from: the
 * symbols with min/opt/max and divisibility, guards, expressions, tensors
 * with names, dtypes and shapes, nodes with ops, names, inputs, outputs and
 * attributes, the graph's inputs and outputs); then each constant's size and
 * the XXH64 of its bytes (cg_hash64). XXH64 and not SHA-256 for the weights:
 * this SHA-256 reads 0.28 GB/s here, so BERT's 440 MB would cost 1.6 s, more
 * than the calibration it saves; XXH64 reads them in 0.03 s (the whole key,
 * serialization included, takes 0.03 s). 64 bits per constant make an
 * accidental collision negligible (the structure, sizes included, must match
 * too). XXH64 is no defence against weights crafted to collide with another
 * model's: built into the same cache folder after its twin, such a model
 * would take the twin's calibration. Acceptable here because the folder is
 * the user's own (who can write it can plant any entry anyway) and a wrong
 * calibration moves fp32 islands (numerics), never code or memory bounds.
 * The entry: u32 the tensor count, then
 * each max_abs as its IEEE-754 bits (u64, little endian), so a hit gives the
 * run's array bit for bit; one of another count or size, or a value that no
 * run writes (negative or infinite), is a miss. SYMC_CACHE_DIR=off skips the
 * key as well. The cache never fails a build: a key that cannot be made is no
 * cache, a put that cannot write says why in one progress line. */
#define CALIB_VERSION "symc calib 1"
#define CALIB_SEED 0x5eed0f16ull
#define CALIB_KIND "calib"

typedef struct calib_run {
    symrt_engine *e;
    symrt_context *c;
    void **bufs;
    uint32_t n;
} calib_run;

static void calib_free(calib_run *r) {
    for (uint32_t i = 0; r->bufs && i < r->n; i++) free(r->bufs[i]);
    free(r->bufs);
    symrt_context_destroy(r->c);
    symrt_engine_destroy(r->e);
}

static symc_status calib_bind(calib_run *r, ir_module *copy, const int64_t *values, uint32_t nsym, symc_error *err) {
    uint32_t ni = symrt_engine_num_inputs(r->e), no = symrt_engine_num_outputs(r->e);
    r->n = ni + no;
    r->bufs = calloc(r->n ? r->n : 1, sizeof *r->bufs);
    if (!r->bufs) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for the fp16 calibration");
    for (uint32_t i = 0; i < ni; i++) {
        symrt_io_info info;
        symc_status st = symrt_engine_input(r->e, i, &info, err);
        uint32_t t;
        if (st) return st;
        if (!ir_find_tensor(copy, info.name, &t))
            return symc_error_setf(err, SYMC_ERR_INTERNAL, "fp16 calibration: no tensor '%s'", info.name);
        int64_t dims[IR_MAX_RANK];
        for (int32_t d = 0; d < copy->tensors[t].rank; d++)
            if ((st = sym_eval(copy->syms, copy->tensors[t].dims[d], values, nsym, &dims[d], err))) return st;
        if ((st = symrt_set_input_shape(r->c, info.name, dims, copy->tensors[t].rank, err))) return st;
    }
    uint64_t seed = CALIB_SEED;
    for (uint32_t i = 0; i < r->n; i++) {
        symrt_io_info info;
        symc_status st = i < ni ? symrt_engine_input(r->e, i, &info, err)
                                : symrt_engine_output(r->e, i - ni, &info, err);
        if (st) return st;
        int64_t dims[IR_MAX_RANK];
        int32_t rank = 0;
        if ((st = symrt_get_tensor_shape(r->c, info.name, dims, &rank, err))) return st;
        size_t n = 1;
        for (int32_t d = 0; d < rank; d++) n *= (size_t)dims[d];
        size_t bytes = n * symc_dtype_size(info.dtype);
        r->bufs[i] = malloc(bytes ? bytes : 1);
        if (!r->bufs[i])
            return symc_error_setf(err, SYMC_ERR_NOMEM, "fp16 calibration: out of memory for '%s' (%zu bytes)",
                                   info.name, bytes);
        if (i < ni) symc_dtype_fill_random(r->bufs[i], info.dtype, n, &seed);
        if (i < ni && !ir_dtype_is_float(info.dtype) && info.dtype != SYMC_BOOL) /* 1..4: no zero divisors */
            for (size_t k = 0; k < n; k++)
                symc_dtype_store(r->bufs[i], info.dtype, k, symc_dtype_load(r->bufs[i], info.dtype, k) + 1.0);
        if ((st = symrt_set_tensor_address(r->c, info.name, r->bufs[i], bytes, err))) return st;
    }
    return SYMC_OK;
}

static symc_status calibrate_run(const symc_compile_options *o, ir_module *m, double *max_abs, symc_error *err) {
    for (uint32_t t = 0; t < m->n_tensors; t++) max_abs[t] = NAN;
    if (o->progress) o->progress(o->ctx, "precision: range calibration at min on the reference backend");
    uint8_t *bytes = NULL;
    size_t size = 0;
    ir_module *copy = NULL;
    calib_run r = {0};
    symc_status st = ir_module_copy(m, &copy, err); /* the weights are lent, not copied */
    for (uint32_t t = 0; !st && t < copy->n_tensors; t++) {
        const ir_tensor *x = &copy->tensors[t];
        int io = 0;
        for (uint32_t k = 0; k < copy->n_inputs; k++) io |= copy->inputs[k] == t;
        for (uint32_t k = 0; k < copy->n_outputs; k++) io |= copy->outputs[k] == t;
        if (!io && x->dtype == SYMC_F32 && x->constant == IR_NONE && x->producer != IR_NONE)
            st = ir_mark_output(copy, t, err);
    }
    if (!st) st = pass_infer_shapes(copy, err);
    cg_options cg = cg_default_options();
    cg.gpu = 0;
    cg.tune = 0;
    if (!st) st = cg_build_engine(copy, &cg, &bytes, &size, err);
    if (!st) st = symrt_engine_load(bytes, size, &r.e, err);
    free(bytes);
    if (!st) st = symrt_context_create(r.e, SYMRT_BACKEND_REF, NULL, &r.c, err);
    uint32_t nsym = st ? 0 : sym_symbol_count(copy->syms);
    int64_t *values = calloc(nsym ? nsym : 1, sizeof *values);
    if (!st && !values) st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for the fp16 calibration");
    for (int at_opt = 0; at_opt < 2; at_opt++) {
        for (uint32_t i = 0; !st && i < nsym; i++) {
            sym_symbol_info info;
            sym_symbol_get(copy->syms, (sym_id)i, &info);
            values[i] = at_opt ? info.opt : info.min;
        }
        if (!st) st = calib_bind(&r, copy, values, nsym, err);
        if (!st) st = symrt_enqueue(r.c, NULL, err);
        if (!st || at_opt || !r.c) break;
        /* the min point breaks a guard (symbols tied together): again at opt, which satisfies them */
        for (uint32_t i = 0; r.bufs && i < r.n; i++) free(r.bufs[i]);
        free(r.bufs);
        r.bufs = NULL;
        symrt_context_destroy(r.c);
        r.c = NULL;
        st = symrt_context_create(r.e, SYMRT_BACKEND_REF, NULL, &r.c, err);
    }
    uint32_t ni = st ? 0 : symrt_engine_num_inputs(r.e);
    for (uint32_t i = 0; !st && i < r.n; i++) {
        symrt_io_info info;
        st = i < ni ? symrt_engine_input(r.e, i, &info, err) : symrt_engine_output(r.e, i - ni, &info, err);
        int64_t dims[IR_MAX_RANK];
        int32_t rank = 0;
        if (!st) st = symrt_get_tensor_shape(r.c, info.name, dims, &rank, err);
        uint32_t t;
        if (st || !ir_find_tensor(m, info.name, &t) || m->tensors[t].dtype != SYMC_F32) continue;
        size_t n = 1;
        for (int32_t d = 0; d < rank; d++) n *= (size_t)dims[d];
        double mx = 0.0;              /* inf and NaN are stored as they are in half too */
        if (info.dtype == SYMC_F32) { /* nearly every tensor measured: without a load per element */
            const float *f = r.bufs[i];
            float fm = 0.0f;
            for (size_t k = 0; k < n; k++) {
                float v = fabsf(f[k]);
                if (v > fm && v <= FLT_MAX) fm = v;
            }
            mx = fm;
        } else
            for (size_t k = 0; k < n; k++) {
                double v = fabs(symc_dtype_load(r.bufs[i], info.dtype, k));
                if (isfinite(v) && v > mx) mx = v;
            }
        max_abs[t] = mx;
    }
    free(values);
    calib_free(&r);
    ir_module_free(copy);
    if (st)
        symc_error_prefix(err,
                          "range calibration (run at min, else opt, on the reference backend; "
                          "--no-calibrate skips it)");
    return st;
}

/* pass_fold_constants' evaluator. The tensors ts[] and what they are computed from (constants and
 * the nodes between, all of static dims) are copied into a module of their own: no inputs, no
 * symbols (every dim and dims attribute a constant), so nothing of the model's interface, guards
 * or sizes known only at run time comes along. It is built for the reference backend and run
 * once; its outputs are the values. */
/* e (a constant of m's table, or SYM_NONE) as the same constant of sub's */
static sym_expr fold_dim(const ir_module *m, ir_module *sub, sym_expr e) {
    int64_t v = 0;
    if (e == SYM_NONE) return SYM_NONE;
    sym_is_const(m->syms, e, &v);
    return sym_const(sub->syms, v);
}

/* m's tensor t into sub (*out its index there), its dims as constants of sub and, for a constant,
 * a copy of its data (sub owns its constants) */
static symc_status fold_copy_tensor(const ir_module *m, uint32_t t, ir_module *sub, uint32_t *out, symc_error *err) {
    const ir_tensor *x = &m->tensors[t];
    sym_expr d[IR_MAX_RANK];
    for (int32_t k = 0; k < x->rank; k++) d[k] = fold_dim(m, sub, x->dims[k]);
    symc_status st = ir_add_tensor(sub, x->name, x->dtype, x->rank, d, out, err);
    if (st || x->constant == IR_NONE) return st;
    const ir_constant *c = &m->constants[x->constant];
    uint8_t *data = malloc(c->size ? c->size : 1);
    uint32_t pool;
    if (!data) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory copying '%s'", x->name);
    memcpy(data, c->data, c->size);
    if ((st = ir_add_constant(sub, data, c->size, &pool, err))) return st; /* data taken either way */
    sub->tensors[*out].constant = pool;
    return SYMC_OK;
}

static symc_status fold_extract(const ir_module *m, const uint32_t *ts, uint32_t n, ir_module *sub, uint32_t *map,
                                symc_error *err) {
    uint8_t *need = calloc(m->n_nodes + 1, 1);
    uint32_t *stack = malloc((m->n_tensors + 1) * sizeof *stack), sp = 0;
    uint8_t *seen = calloc(m->n_tensors + 1, 1);
    symc_status st = need && stack && seen ? SYMC_OK : symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; !st && i < n; i++)
        if (!seen[ts[i]]) seen[ts[i]] = 1, stack[sp++] = ts[i];
    while (!st && sp) { /* the producers ts[] need, back to the constants */
        const uint32_t ti = stack[--sp];
        const ir_tensor *t = &m->tensors[ti];
        if (t->producer == IR_NONE && t->constant != IR_NONE) { /* a constant no node makes: made here */
            st = fold_copy_tensor(m, ti, sub, &map[ti], err);
            continue;
        }
        if (t->producer == IR_NONE) {
            st = symc_error_setf(err, SYMC_ERR_INTERNAL, "'%s' is not computed from constants", t->name);
            break;
        }
        need[t->producer] = 1;
        const ir_node *p = &m->nodes[t->producer];
        for (uint32_t k = 0; k < p->n_in; k++)
            if (p->in[k] != IR_NONE && !seen[p->in[k]]) seen[p->in[k]] = 1, stack[sp++] = p->in[k];
    }
    for (uint32_t i = 0; !st && i < m->n_nodes; i++) { /* in node order: producers first */
        if (!need[i]) continue;
        const ir_node *p = &m->nodes[i];
        uint32_t in[256], out[16];
        ir_attr attrs[32];
        sym_expr dims_buf[32][64];
        if (p->n_in > 256 || p->n_out > 16 || p->n_attrs > 32) {
            st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "node '%s' has too many operands to fold", p->name);
            break;
        }
        for (uint32_t o = 0; !st && o < p->n_out; o++) { /* its results (a constant node's with its data) */
            st = fold_copy_tensor(m, p->out[o], sub, &map[p->out[o]], err);
            out[o] = map[p->out[o]];
        }
        for (uint32_t k = 0; k < p->n_in; k++) in[k] = p->in[k] == IR_NONE ? IR_NONE : map[p->in[k]];
        for (uint32_t a = 0; a < p->n_attrs; a++) {
            attrs[a] = p->attrs[a];
            if (p->attrs[a].kind != IR_ATTR_DIMS) continue;
            if (p->attrs[a].n > 64) {
                st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "node '%s': attribute '%s' too long to fold", p->name,
                                     p->attrs[a].name);
                break;
            }
            for (uint32_t k = 0; k < p->attrs[a].n; k++)
                dims_buf[a][k] = fold_dim(m, sub, (sym_expr)p->attrs[a].dims[k]);
            attrs[a].dims = (const symc_dim *)dims_buf[a];
        }
        if (!st)
            st = ir_add_node(sub, p->op, p->name, p->source, in, p->n_in, out, p->n_out, attrs, p->n_attrs, NULL, err);
    }
    for (uint32_t i = 0; !st && i < n; i++) st = ir_mark_output(sub, map[ts[i]], err);
    free(need);
    free(stack);
    free(seen);
    return st;
}

static symc_status fold_eval(const ir_module *m, const uint32_t *ts, uint32_t n, uint8_t **data, symc_error *err) {
    symc_status st = SYMC_OK;
    ir_module *sub = ir_module_new("fold-constants", err);
    uint32_t *map = malloc((m->n_tensors + 1) * sizeof *map);
    symrt_engine *e = NULL;
    symrt_context *c = NULL;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (!sub || !map) st = sub ? symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory") : SYMC_ERR_NOMEM;
    if (!st) st = fold_extract(m, ts, n, sub, map, err);
    if (!st) st = pass_infer_shapes(sub, err);
    cg_options cg = cg_default_options();
    cg.gpu = 0;
    cg.tune = 0;
    if (!st) st = cg_build_engine(sub, &cg, &bytes, &size, err);
    if (!st) st = symrt_engine_load(bytes, size, &e, err);
    free(bytes);
    if (!st) st = symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, err);
    for (uint32_t k = 0; !st && k < n; k++) { /* the outputs are ts[] in order */
        symrt_io_info info;
        int64_t dims[IR_MAX_RANK];
        int32_t rank = 0;
        if ((st = symrt_engine_output(e, k, &info, err)) ||
            (st = symrt_get_tensor_shape(c, info.name, dims, &rank, err)))
            break;
        size_t cnt = 1;
        for (int32_t d = 0; d < rank; d++) cnt *= (size_t)dims[d];
        const size_t nb = cnt * symc_dtype_size(info.dtype);
        if (!(data[k] = malloc(nb ? nb : 1)))
            st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for '%s' (%zu bytes)", info.name, nb);
        if (!st) st = symrt_set_tensor_address(c, info.name, data[k], nb, err);
    }
    if (!st) st = symrt_enqueue(c, NULL, err);
    symrt_context_destroy(c);
    symrt_engine_destroy(e);
    free(map);
    ir_module_free(sub);
    if (st) symc_error_prefix(err, "evaluating %u tensors computed from constants (on the reference backend)", n);
    return st;
}

static void put_le(uint8_t *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void hash_u64(cg_hash *h, uint64_t v) {
    uint8_t b[8];
    put_le(b, v, 8);
    cg_hash_update(h, b, 8);
}

/* The entry's key (see above); 0 when it cannot be made (out of memory, a module the writer
 * refuses): then the calibration runs without the cache. */
static int calib_key(ir_module *m, symc_precision precision, uint8_t key[CG_HASH_BYTES]) {
    ir_constant *data = m->constants, *blank = calloc(m->n_constants ? m->n_constants : 1, sizeof *blank);
    if (!blank) return 0;
    uint8_t *bytes = NULL;
    size_t size = 0;
    symc_error ignored;
    m->constants = blank; /* the structure only: each constant's data goes in below, by digest */
    symc_status st = ir_serialize(m, &bytes, &size, &ignored);
    m->constants = data;
    free(blank);
    if (st) return 0;
    cg_hash h;
    cg_hash_init(&h);
    cg_hash_str(&h, CALIB_VERSION);
    cg_hash_str(&h, symc_version());
    hash_u64(&h, (uint64_t)precision);
    hash_u64(&h, CALIB_SEED);
    hash_u64(&h, size);
    cg_hash_update(&h, bytes, size);
    free(bytes);
    hash_u64(&h, m->n_constants);
    for (uint32_t i = 0; i < m->n_constants; i++) {
        hash_u64(&h, m->constants[i].size);
        hash_u64(&h, m->constants[i].size ? cg_hash64(m->constants[i].data, m->constants[i].size, 0) : 0);
    }
    cg_hash_final(&h, key);
    return 1;
}

/* 1 and max_abs filled on a hit */
static int calib_get(const uint8_t key[CG_HASH_BYTES], uint32_t n, double *max_abs) {
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (!cg_cache_get(CALIB_KIND, key, &bytes, &size)) return 0;
    uint64_t count = 0;
    for (int i = 0; i < 4 && size >= 4; i++) count |= (uint64_t)bytes[i] << (8 * i);
    int hit = size == 4 + 8 * (size_t)n && count == n;
    for (uint32_t t = 0; hit && t < n; t++) {
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++) bits |= (uint64_t)bytes[4 + 8 * (size_t)t + i] << (8 * i);
        memcpy(&max_abs[t], &bits, 8);
        hit = isnan(max_abs[t]) || (max_abs[t] >= 0 && !isinf(max_abs[t])); /* what calibrate_run writes */
    }
    free(bytes);
    return hit;
}

/* 0 when written (or the cache is off); -1 with why */
static int calib_put(const uint8_t key[CG_HASH_BYTES], uint32_t n, const double *max_abs, char *why, size_t cap) {
    size_t size = 4 + 8 * (size_t)n;
    uint8_t *bytes = malloc(size);
    if (!bytes) return 0; /* not worth failing over */
    put_le(bytes, n, 4);
    for (uint32_t t = 0; t < n; t++) {
        uint64_t bits;
        memcpy(&bits, &max_abs[t], 8);
        put_le(bytes + 4 + 8 * (size_t)t, bits, 8);
    }
    int r = cg_cache_put(CALIB_KIND, key, bytes, size, why, cap);
    free(bytes);
    return r;
}

/* The calibration: from the build cache when it holds this module's, else run (and kept). */
static symc_status calibrate(const symc_compile_options *o, ir_module *m, double *max_abs, symc_error *err) {
    char dir[4096], why[512];
    uint8_t key[CG_HASH_BYTES];
    int keyed = cg_cache_dir(dir, sizeof dir) && calib_key(m, o->precision, key); /* off: no key either */
    if (keyed && calib_get(key, m->n_tensors, max_abs)) {
        if (o->progress) o->progress(o->ctx, "precision: range calibration from the cache");
        return SYMC_OK;
    }
    symc_status st = calibrate_run(o, m, max_abs, err);
    if (!st && keyed && calib_put(key, m->n_tensors, max_abs, why, sizeof why) && o->progress) {
        char line[600];
        snprintf(line, sizeof line, "build cache: %s; the calibration is not kept", why);
        o->progress(o->ctx, line);
    }
    return st;
}

void symc_compile_options_init(symc_compile_options *o) {
    if (!o) return;
    *o = (symc_compile_options){.gpu = 1, .arch = NULL, .precision = SYMC_PRECISION_FP32, .tune = 1, .calibrate = 1};
}

/* The options as the pipeline and codegen take them; `who` names the caller in
 * the refusal of an unknown precision. */
static symc_status driver_options(const symc_compile_options *opt, const char *who, symc_compile_options *o,
                                  cg_options *cg, symc_error *err) {
    symc_compile_options_init(o);
    if (opt) *o = *opt;
    if ((int)o->precision < 0 || o->precision > SYMC_PRECISION_BF16)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: unknown precision %d", who, (int)o->precision);
    *cg = cg_default_options();
    cg->gpu = o->gpu != 0;
    cg->arch = o->arch;
    cg->precision = o->precision;
    cg->tune = o->tune != 0;
    cg->progress = o->progress;
    cg->progress_ctx = o->ctx;
    return SYMC_OK;
}

/* One module's pipeline: the passes up to precision, the calibration (a step
 * of the driver: it runs the module on the reference backend, which passes
 * may not use) inside the module's own ranges, then the rest with its data.
 * The module is then ready for codegen. */
static symc_status compile_pipeline(ir_module *m, const symc_compile_options *o, const cg_options *cg,
                                    symc_error *err) {
    /* the target's rules plan fusion (NULL without GPU code: no plan) */
    pass_options po = {.dump_after = o->dump_after,
                       .dump = o->dump,
                       .progress = o->progress,
                       .ctx = o->ctx,
                       .fuse = cg_fuse_rules(cg),
                       .precision = o->precision,
                       .precision_rules = cg_precision_rules(cg),
                       .fp32_layers = o->fp32_layers,
                       .evaluate = fold_eval};
    symc_status st = pass_run_passes(m, &po, NULL, "precision", err);
    if (st) return st;
    double *max_abs = NULL;
    if (o->calibrate && pass_calibration_wanted(m, o->precision)) {
        max_abs = malloc((m->n_tensors ? m->n_tensors : 1) * sizeof *max_abs);
        if (!max_abs) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for the fp16 calibration");
        if ((st = calibrate(o, m, max_abs, err))) {
            free(max_abs);
            symc_error_prefix(err, "pass precision"); /* the message it had inside the pass */
            return st;
        }
        po.max_abs = max_abs;
        po.n_max_abs = m->n_tensors;
    }
    st = pass_run_passes(m, &po, "precision", NULL, err);
    free(max_abs);
    return st;
}

symc_status symc_module_compile(symc_module *m, const symc_compile_options *opt, const char *path, symc_error *err) {
    if (!m || !path) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_module_compile: NULL argument");
    symc_compile_options o;
    cg_options cg;
    symc_status st = driver_options(opt, "symc_module_compile", &o, &cg, err);
    if (!st) st = compile_pipeline(m, &o, &cg, err);
    if (st) return st;
    return cg_write_engine(m, &cg, path, err);
}

/* Several modules, one engine: the arguments checked (every module given,
 * once; the same inputs and outputs), each module's pipeline as
 * symc_module_compile runs it (calibrated inside its own ranges), then
 * codegen's build of the regions (codegen/build_regions.c). One region
 * without a condition is symc_module_compile itself. */
symc_status symc_compile_regions(const symc_region *regions, uint32_t n, const symc_compile_options *opt,
                                 const char *path, symc_error *err) {
    if (!regions || !path)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_compile_regions: NULL %s",
                               regions ? "path" : "regions");
    if (n == 0) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_compile_regions: no region (n == 0)");
    if (n == 1 && (!regions[0].condition || !regions[0].condition[0]))
        return symc_module_compile(regions[0].module, opt, path, err);
    for (uint32_t r = 0; r < n; r++) {
        if (!regions[r].module)
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_compile_regions: region %u has no module", r);
        for (uint32_t k = 0; k < r; k++)
            if (regions[k].module == regions[r].module)
                return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                       "symc_compile_regions: region %u uses the module of region %u ('%s'); each "
                                       "region needs a module of its own (its passes change it)",
                                       r, k, regions[r].module->name ? regions[r].module->name : "");
    }
    symc_compile_options o;
    cg_options cg;
    symc_status st = driver_options(opt, "symc_compile_regions", &o, &cg, err);
    ir_module **ms = st ? NULL : malloc(n * sizeof *ms);
    const char **conds = ms ? malloc(n * sizeof *conds) : NULL;
    if (!st && !conds) st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory compiling %u regions", n);
    for (uint32_t r = 0; !st && r < n; r++) {
        ms[r] = regions[r].module;
        conds[r] = regions[r].condition;
    }
    if (!st) st = cg_check_interface(ms, n, err); /* before the passes: quick refusals */
    if (!st) st = cg_check_conditions(ms, conds, n, err);
    for (uint32_t r = 0; !st && r < n; r++) {
        const char *name = ms[r]->name ? ms[r]->name : "";
        cg_progress(&cg, "region %u of %u (module '%s')%s%s", r, n, name, conds[r] && conds[r][0] ? ": " : "",
                    conds[r] ? conds[r] : "");
        if ((st = compile_pipeline(ms[r], &o, &cg, err))) symc_error_prefix(err, "region %u (module '%s')", r, name);
    }
    if (!st) st = cg_write_regions(ms, conds, n, &cg, path, err);
    free(ms);
    free(conds);
    return st;
}
