/* Engine building: from a module with inferred shapes to rt_engine, then
 * bytes through the runtime's codec (runtime/engine.h), encoded once.
 *
 * Every expression the runtime needs (tensor dims, dim attributes, both sides
 * of each guard that must be checked at run time) gets a slot; a handle->slot
 * table dedupes them, and sym_program_compile shares common subexpressions, so
 * the runtime evaluates each distinct size once per input shape. Each symbol
 * must be the whole of some input dim, which is how set_input_shape binds it;
 * a symbol that only appears inside expressions is refused here, at build
 * time, rather than becoming unbindable at run time.
 *
 * The one exception is a size a node produces (an unbacked symbol,
 * docs/PLAN-data-dependent.md §3, format 7): it is found in the graph
 * (ir_producer_of) and written as an rt_produced, sorted by producer, with
 * its bound as a slot. Memory is planned at capacity, every produced symbol
 * at its bound: check_monotone proves per tensor that its size there is no
 * smaller than at any real count (else the build is refused, naming the
 * tensor, its node and the symbol), and the capacity program computes the
 * bounds with every produced symbol in them replaced by its own bound
 * (sym_substitute until none is left), a second small program over the
 * input-dim symbols. A guard that mentions produced sizes is checked after
 * the last of them is produced (rt_guard.after). The CUDA backend runs no
 * such model yet: a GPU build is refused at once, naming the producer.
 *
 * cg_assemble builds the engine in memory, in parts, in the order their
 * slots are handed out (assemble): symbols and their sources (and the
 * produced sizes' bounds), the batch-row verdict (ir_batch_rows on the module
 * as built: may a server join requests along dim 0), the monotonicity check, the capacity program, the target's
 * GPU code, guards, tensors, nodes with their dim attributes, constants, the
 * shape program, the GPU part, and with a GPU present the tuned entries
 * (codegen/tuner.c) on the engine still in memory; cg_build_engine encodes
 * it (an engine of regions encodes several: codegen/build_regions.c), and
 * cg_write_engine streams it to the file (cg_write_encoded: the weights go
 * from the engine to the file, never copied to an engine-sized block). Every
 * array of the engine lives in the build's arena (codegen/build.h) and goes
 * with it (cg_build_release) after the encode; the builder's growing tables
 * (slots, source, kernels, steps, aliases) are freed by free_builder. */
#include "codegen/codegen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "codegen/target.h"
#include "codegen/tuner.h"
#include "runtime/engine.h"

cg_options cg_default_options(void) {
    return (cg_options){.gpu = 1, .arch = NULL, .precision = RT_PREC_FP32, .tune = 1};
}

uint32_t cg_slot(cg_builder *b, sym_expr e) {
    if (e == SYM_NONE) return RT_NONE;
    if (e >= b->slot_of_cap) {
        uint32_t cap = b->slot_of_cap ? b->slot_of_cap : 64;
        while (cap <= e) cap *= 2;
        uint32_t *n = realloc(b->slot_of, cap * sizeof *n);
        if (!n) goto oom;
        for (uint32_t i = b->slot_of_cap; i < cap; i++) n[i] = RT_NONE;
        b->slot_of = n;
        b->slot_of_cap = cap;
    }
    if (b->slot_of[e] == RT_NONE) {
        if (b->n_slots == b->exprs_cap) {
            uint32_t cap = b->exprs_cap ? b->exprs_cap * 2 : 64;
            sym_expr *n = realloc(b->exprs, cap * sizeof *n);
            if (!n) goto oom;
            b->exprs = n;
            b->exprs_cap = cap;
        }
        b->exprs[b->n_slots] = e;
        b->slot_of[e] = b->n_slots++;
    }
    return b->slot_of[e];
oom:
    b->failed = 1;
    symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory building the engine");
    return RT_NONE;
}

symc_status cg_source_appendf(cg_builder *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->source_cap - b->source_len;
        int n = vsnprintf(b->source ? b->source + b->source_len : NULL, b->source ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return symc_error_setf(b->err, SYMC_ERR_INTERNAL, "formatting CUDA source failed");
        if (b->source && (size_t)n < room) {
            b->source_len += (size_t)n;
            return SYMC_OK;
        }
        size_t cap = b->source_cap ? b->source_cap : 4096;
        while (cap < b->source_len + (size_t)n + 1) cap *= 2;
        char *ns = realloc(b->source, cap);
        if (!ns) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating CUDA source");
        if (!b->source) ns[0] = '\0';
        b->source = ns;
        b->source_cap = cap;
    }
}

static uint64_t key_hash(const char *s) { /* FNV-1a: a filter; keys are compared in full */
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static char *dup_str(const char *s) {
    char *d = malloc(strlen(s) + 1);
    if (d) strcpy(d, s);
    return d;
}

symc_status cg_add_kernel(cg_builder *b, const char *name, const char *key, uint32_t *index) {
    if (b->n_kernels == b->kernels_cap) {
        uint32_t cap = b->kernels_cap ? b->kernels_cap * 2 : 16;
        char **n = realloc(b->kernel_names, cap * sizeof *n);
        if (n) b->kernel_names = n;
        size_t *e = n ? realloc(b->kernel_end, cap * sizeof *e) : NULL;
        if (e) b->kernel_end = e;
        char **k = e ? realloc(b->kernel_keys, cap * sizeof *k) : NULL;
        if (k) b->kernel_keys = k;
        uint64_t *h = k ? realloc(b->kernel_hash, cap * sizeof *h) : NULL;
        if (!h) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating kernels");
        b->kernel_hash = h;
        b->kernels_cap = cap;
    }
    char *copy = dup_str(name), *key_copy = key ? dup_str(key) : NULL;
    if (!copy || (key && !key_copy)) {
        free(copy);
        free(key_copy);
        return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating kernels");
    }
    b->kernel_names[b->n_kernels] = copy;
    b->kernel_end[b->n_kernels] = b->source_len;
    b->kernel_keys[b->n_kernels] = key_copy;
    b->kernel_hash[b->n_kernels] = key ? key_hash(key) : 0;
    *index = b->n_kernels++;
    return SYMC_OK;
}

uint32_t cg_find_kernel(const cg_builder *b, const char *key) {
    uint64_t h = key_hash(key);
    for (uint32_t k = 0; k < b->n_kernels; k++)
        if (b->kernel_keys[k] && b->kernel_hash[k] == h && !strcmp(b->kernel_keys[k], key)) return k;
    return RT_NONE;
}

symc_status cg_add_kernel_step(cg_builder *b, const rt_step *s, const uint8_t *out) {
    if (b->n_steps == b->steps_cap) {
        uint32_t cap = b->steps_cap ? b->steps_cap * 2 : 16;
        rt_step *n = realloc(b->steps, cap * sizeof *n);
        if (!n) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating steps");
        b->steps = n;
        uint8_t **o = realloc(b->arg_out, cap * sizeof *o);
        if (!o) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating steps");
        b->arg_out = o;
        b->steps_cap = cap;
    }
    rt_step copy = *s;
    copy.args = NULL;
    copy.tmaps = NULL;
    if (s->n_tmaps) {
        rt_tmap *m = malloc(s->n_tmaps * sizeof *m);
        if (!m) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating steps");
        memcpy(m, s->tmaps, s->n_tmaps * sizeof *m);
        copy.tmaps = m;
    }
    uint8_t *dir = NULL;
    if (s->n_args) {
        rt_arg *a = malloc(s->n_args * sizeof *a);
        dir = out ? malloc(s->n_args) : NULL;
        if (!a || (out && !dir)) {
            free(a);
            free(dir);
            free((void *)copy.tmaps);
            return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating steps");
        }
        memcpy(a, s->args, s->n_args * sizeof *a);
        if (out) memcpy(dir, out, s->n_args);
        copy.args = a;
    }
    b->arg_out[b->n_steps] = dir;
    copy.arg_writes = dir; /* written into the engine: the loader checks the steps' order with it */
    b->steps[b->n_steps++] = copy;
    return SYMC_OK;
}

symc_status cg_add_step(cg_builder *b, const rt_step *s) { return cg_add_kernel_step(b, s, NULL); }

/* the tensor of a library step's slot k is what the step writes (runtime/engine.h's layouts) */
symc_status cg_check_dataflow(const cg_builder *b) {
    const ir_module *m = b->m;
    uint8_t *ready = calloc(m->n_tensors ? m->n_tensors : 1, 1); /* by storage root */
    if (!ready) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory checking the steps");
#define ROOT(t) (b->aliases && (t) < b->n_aliases && b->aliases[t] != RT_NONE ? b->aliases[t] : (t))
    for (uint32_t i = 0; i < m->n_tensors; i++) {
        uint32_t p = m->tensors[i].producer;
        if (m->tensors[i].constant != IR_NONE || (p != IR_NONE && m->nodes[p].op == IR_OP_CONSTANT)) ready[ROOT(i)] = 1;
    }
    for (uint32_t k = 0; k < m->n_inputs; k++) ready[ROOT(m->inputs[k])] = 1;
    symc_status st = SYMC_OK;
    for (uint32_t i = 0; i < b->n_steps && !st; i++) {
        const rt_step *s = &b->steps[i];
        int kernel = s->kind == RT_STEP_KERNEL;
        uint32_t n = kernel ? s->n_args : RT_STEP_MAX_TENSORS;
        for (int pass = 0; pass < 2 && !st; pass++) /* reads first, then the writes become ready */
            for (uint32_t k = 0; k < n && !st; k++) {
                uint32_t t = kernel ? (s->args[k].kind == RT_ARG_TENSOR ? s->args[k].value : RT_NONE) : s->tensors[k];
                if (t == RT_NONE || t >= m->n_tensors) continue;
                int writes = kernel ? b->arg_out && b->arg_out[i] && b->arg_out[i][k] : rt_step_lib_writes(s->kind, k);
                if (pass == 1 && writes) ready[ROOT(t)] = 1;
                if (pass == 0 && !writes && !ready[ROOT(t)]) {
                    uint32_t p = m->tensors[t].producer;
                    st = symc_error_setf(b->err, SYMC_ERR_INTERNAL,
                                         "internal error: step %u (%s of node '%s') reads tensor '%s', which no "
                                         "earlier step writes (its node '%s' runs inside another step's kernel and "
                                         "does not store it); the engine would compute with uninitialized memory",
                                         i, kernel ? b->kernel_names[s->kernel] : "a library call",
                                         m->nodes[s->node].name, m->tensors[t].name,
                                         p != IR_NONE ? m->nodes[p].name : "?");
                }
            }
    }
#undef ROOT
    free(ready);
    return st;
}

/* grows the alias table to the module's current tensor count */
static symc_status grow_aliases(cg_builder *b) {
    uint32_t n = b->m->n_tensors;
    if (b->aliases && b->n_aliases == n) return SYMC_OK;
    uint32_t *a = realloc(b->aliases, (n ? n : 1) * sizeof *a);
    if (!a) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory planning aliases");
    for (uint32_t i = b->aliases ? b->n_aliases : 0; i < n; i++) a[i] = RT_NONE;
    b->aliases = a;
    b->n_aliases = n;
    return SYMC_OK;
}

symc_status cg_alias(cg_builder *b, uint32_t t, uint32_t of) {
    symc_status st = grow_aliases(b);
    if (st) return st;
    if (t >= b->n_aliases || of >= b->n_aliases)
        return symc_error_setf(b->err, SYMC_ERR_INTERNAL, "alias of a tensor out of range");
    while (b->aliases[of] != RT_NONE) of = b->aliases[of];
    if (of == t)
        return symc_error_setf(b->err, SYMC_ERR_INTERNAL, "tensor '%s' would alias itself", b->m->tensors[t].name);
    b->aliases[t] = of;
    /* tensors that aliased t now alias its root */
    for (uint32_t i = 0; i < b->n_aliases; i++)
        if (b->aliases[i] == t) b->aliases[i] = of;
    return SYMC_OK;
}

static void free_builder(cg_builder *b) {
    free(b->slot_of);
    free(b->exprs);
    free(b->source);
    for (uint32_t i = 0; i < b->n_kernels; i++) free(b->kernel_names[i]), free(b->kernel_keys[i]);
    free(b->kernel_names);
    free(b->kernel_end);
    free(b->kernel_keys);
    free(b->kernel_hash);
    for (uint32_t i = 0; i < b->n_steps; i++)
        free((void *)b->steps[i].args), free((void *)b->steps[i].tmaps), free(b->arg_out[i]);
    free(b->steps);
    free(b->arg_out);
    free(b->aliases);
    for (uint32_t i = 0; i < b->n_modules; i++) free((void *)b->modules[i].cubin), free((void *)b->modules[i].ptx);
    free(b->modules);
    free(b->kernel_module);
}

static void *build_calloc(cg_build *x, size_t n, size_t size) {
    void *p = cm_arena_calloc(&x->arena, n, size);
    if (!p) symc_error_setf(x->err, SYMC_ERR_NOMEM, "out of memory building the engine");
    return p;
}

static symc_status check_shapes(const ir_module *m, symc_error *err) {
    for (uint32_t i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].rank < 0)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "tensor '%s' has no inferred shape: run shape inference first",
                                   m->tensors[i].name);
    return SYMC_OK;
}

/* A size a node produces: its producer (ir_producer_of; engine node i is
 * module node i) into *out, the bound's slot handed out here (so its slot
 * comes right after the symbols'). */
static symc_status produced_of(cg_build *x, sym_id i, const sym_symbol_info *info, rt_produced *out) {
    const ir_module *m = x->m;
    uint32_t p = ir_producer_of(m, i);
    unsigned o;
    int d;
    if (p == IR_NONE || !ir_produced_dim(m->nodes[p].op, &o, &d))
        return symc_error_setf(x->err, SYMC_ERR_UNSUPPORTED,
                               "symbol '%s' (%s) is a size known only at run time, but no node of the model produces "
                               "it (a producer whose result nothing uses is removed, its symbol stays); an engine "
                               "cannot bind such a symbol yet",
                               info->name, info->provenance && *info->provenance ? info->provenance : "no provenance");
    *out = (rt_produced){i,
                         p,
                         o,
                         (uint32_t)d,
                         cg_slot(&x->b, sym_symbol_bound(m->syms, i)),
                         info->provenance && *info->provenance ? info->provenance : info->name,
                         RT_NONE};
    return SYMC_OK;
}

/* The symbols and where each is bound from: the first input dim that is
 * exactly the symbol, or for an unbacked one (a size a node produces) its
 * producer, the produced sizes sorted by producer (the order they run in). */
static symc_status add_symbols(cg_build *x) {
    const ir_module *m = x->m;
    sym_table *t = m->syms;
    uint32_t nsym = sym_symbol_count(t), ns = 0, np = 0;
    rt_symbol *syms = build_calloc(x, nsym, sizeof *syms);
    rt_source *src = build_calloc(x, nsym, sizeof *src);
    rt_produced *prod = build_calloc(x, nsym, sizeof *prod);
    if (!syms || !src || !prod) return SYMC_ERR_NOMEM;
    for (sym_id i = 0; i < nsym; i++) {
        sym_symbol_info info;
        sym_symbol_get(t, i, &info);
        syms[i] = (rt_symbol){info.name, info.min, info.opt, info.max, info.multiple_of};
        if (sym_symbol_bound(t, i) != SYM_NONE) {
            symc_status st = produced_of(x, i, &info, &prod[np]);
            if (st) return st;
            for (uint32_t k = np++; k > 0 && prod[k - 1].node > prod[k].node; k--) { /* by producer */
                rt_produced tmp = prod[k];
                prod[k] = prod[k - 1];
                prod[k - 1] = tmp;
            }
            continue;
        }
        sym_expr v = sym_var(t, i);
        int found = 0;
        for (uint32_t k = 0; k < m->n_inputs && !found; k++) {
            const ir_tensor *in = &m->tensors[m->inputs[k]];
            for (int d = 0; d < in->rank && !found; d++)
                if (in->dims[d] == v) {
                    src[ns++] = (rt_source){i, k, (uint32_t)d};
                    found = 1;
                }
        }
        if (!found)
            return symc_error_setf(x->err, SYMC_ERR_UNSUPPORTED,
                                   "symbol '%s' is not the size of any input dim, so it cannot be bound from the "
                                   "input shapes at run time; declare an input dim as exactly '%s'",
                                   info.name, info.name);
    }
    x->e.symbols = syms;
    x->e.n_symbols = nsym;
    x->e.n_sources = ns;
    x->e.sources = src;
    x->e.produced = np ? prod : NULL;
    x->e.n_produced = np;
    return SYMC_OK;
}

/* The CUDA backend runs no model with produced sizes yet (docs/PLAN-data-dependent.md §5): the
 * build says so, naming the first producer, before any GPU code is made. */
__attribute__((unused)) static symc_status refuse_gpu_produced(const cg_build *x) {
    const rt_produced *p = &x->e.produced[0];
    const ir_node *n = &x->m->nodes[p->node];
    return symc_error_setf(x->err, SYMC_ERR_UNSUPPORTED,
                           "node '%s' (%s) produces %s (%s), a size known only at run time; the CUDA backend does not "
                           "run such models yet: build without GPU code (symc compile --no-gpu, "
                           "symc_compile_options.gpu = 0, builder gpu=False)",
                           n->name, ir_op_name(n->op), x->e.symbols[p->symbol].name, p->what);
}

/* e with every produced symbol in it replaced by its bound, until none is left (bounds are over
 * earlier symbols, so each round removes the latest mentioned: at most n_produced rounds). */
static sym_expr at_capacity(cg_build *x, sym_expr e) {
    sym_table *t = x->m->syms;
    for (uint32_t round = 0; e != SYM_NONE && round <= x->e.n_produced; round++) {
        int any = 0;
        for (uint32_t k = x->e.n_produced; k-- > 0;) {
            sym_id s = x->e.produced[k].symbol;
            if (!sym_mentions(t, e, s)) continue;
            e = sym_substitute(t, e, s, sym_symbol_bound(t, s));
            any = 1;
        }
        if (!any) return e;
    }
    return SYM_NONE;
}

/* The capacity program: output k is produced[k]'s bound at capacity (at_capacity), over the
 * table's symbols like the shape program, so it reads input-dim symbols only. */
static symc_status add_capacity_program(cg_build *x) {
    uint32_t np = x->e.n_produced;
    if (!np) return SYMC_OK;
    sym_table *t = x->m->syms;
    sym_expr *caps = build_calloc(x, np, sizeof *caps);
    if (!caps) return SYMC_ERR_NOMEM;
    for (uint32_t k = 0; k < np; k++) {
        sym_id s = x->e.produced[k].symbol;
        caps[k] = at_capacity(x, sym_symbol_bound(t, s));
        if (caps[k] == SYM_NONE)
            return symc_error_setf(x->err, SYMC_ERR_INTERNAL,
                                   "internal error: the capacity of %s (%s) could not be written over the input "
                                   "dims",
                                   x->e.symbols[s].name, x->e.produced[k].what);
    }
    size_t size = 0;
    symc_status st = sym_program_compile(t, caps, np, &x->capacity, &size, x->err);
    if (st) {
        symc_error_prefix(x->err, "the capacity program of the sizes known only at run time");
        return st;
    }
    x->e.capacity_program = x->capacity;
    x->e.capacity_program_size = size;
    return SYMC_OK;
}

/* Whether e never decreases as symbol u grows, every other symbol fixed: a structural, sufficient
 * answer (1) for sums with non-negative coefficients, products of non-negative factors, min, max
 * and floor division by a positive divisor free of u, over parts that never decrease; 0 when it
 * cannot tell. A view's arrays are copied before any call that may grow the table. */
static int nondecreasing(sym_table *t, sym_expr e, sym_id u, int depth) {
    if (!sym_mentions(t, e, u)) return 1;
    sym_view v;
    if (depth > 64 || !sym_expr_view(t, e, &v)) return 0;
    if (v.kind == SYM_SYMBOL) return 1; /* u itself */
    enum { MAXN = 64 };
    sym_expr ops[MAXN];
    int64_t coefs[MAXN];
    sym_kind kind = v.kind;
    int64_t value = v.value;
    uint32_t n = v.n;
    if (n > MAXN) return 0;
    memcpy(ops, v.ops, n * sizeof *ops);
    if (v.coefs) memcpy(coefs, v.coefs, n * sizeof *coefs);
    switch (kind) {
    case SYM_ADD:
        for (uint32_t i = 0; i < n; i++)
            if (sym_mentions(t, ops[i], u) && (coefs[i] < 0 || !nondecreasing(t, ops[i], u, depth + 1))) return 0;
        return 1;
    case SYM_MUL:
        if (value < 0) return 0;
        for (uint32_t i = 0; i < n; i++)
            if (sym_range_of(t, ops[i]).lo < 0 || !nondecreasing(t, ops[i], u, depth + 1)) return 0;
        return 1;
    case SYM_MIN:
    case SYM_MAX: return nondecreasing(t, ops[0], u, depth + 1) && nondecreasing(t, ops[1], u, depth + 1);
    case SYM_FLOORDIV:
        return !sym_mentions(t, ops[1], u) && sym_range_of(t, ops[1]).lo >= 1 && nondecreasing(t, ops[0], u, depth + 1);
    default: return 0;
    }
}

/* How n fails to be largest at u's bound, in words: "shrinks as u0 grows (at opt: 40 elements
 * with u0 = 0, 28 with u0 = 12)" when the symbols' opt values (0 and the bound's value for u) show
 * it, else "may shrink as u0 grows (symc cannot prove otherwise)". */
static void shrink_witness(sym_table *t, sym_expr n, sym_id u, sym_expr bound, const char *name, char *buf,
                           size_t cap) {
    uint32_t nsym = sym_symbol_count(t);
    int64_t *vals = calloc(nsym ? nsym : 1, sizeof *vals), lo = 0, hi = 0, b = 0;
    for (sym_id i = 0; vals && i < nsym; i++) {
        sym_symbol_info si = {0};
        sym_symbol_get(t, i, &si);
        vals[i] = si.opt;
    }
    int shown = 0;
    if (vals && !sym_eval(t, bound, vals, nsym, &b, NULL)) {
        vals[u] = 0;
        int ok = !sym_eval(t, n, vals, nsym, &lo, NULL);
        vals[u] = b;
        if (ok && !sym_eval(t, n, vals, nsym, &hi, NULL) && lo > hi) {
            snprintf(buf, cap,
                     "shrinks as %s grows (with every symbol at opt: %" PRId64 " elements with %s = 0, %" PRId64
                     " with %s = %" PRId64 ")",
                     name, lo, name, hi, name, b);
            shown = 1;
        }
    }
    if (!shown) snprintf(buf, cap, "may shrink as %s grows (symc cannot prove otherwise)", name);
    free(vals);
}

/* Memory is planned at capacity (every produced symbol at its bound), which is sound only where
 * no tensor is larger at the real counts than there. Per tensor whose dims mention produced
 * symbols, its element count n: for each of them, latest symbol first (bounds are over earlier
 * symbols, so each substitution leaves only earlier ones), n with it at its bound must be no
 * smaller (sym_prove_le with the prover's bound step, or n never decreases in it), then n is
 * taken there; what is left is n at capacity. Else the build is refused, naming the tensor, its
 * node and the symbol. */
static symc_status check_monotone(cg_build *x) {
    const ir_module *m = x->m;
    sym_table *t = m->syms;
    uint32_t nsym = sym_symbol_count(t);
    for (uint32_t i = 0; i < m->n_tensors && x->e.n_produced; i++) {
        const ir_tensor *tn = &m->tensors[i];
        sym_expr n = sym_const(t, 1);
        for (int d = 0; d < tn->rank; d++) n = sym_mul(t, n, tn->dims[d]);
        for (sym_id s = nsym; s-- > 0 && n != SYM_NONE;) {
            sym_expr bound = sym_symbol_bound(t, s);
            if (bound == SYM_NONE || !sym_mentions(t, n, s)) continue;
            sym_expr at = sym_substitute(t, n, s, bound);
            sym_tri proof = at != SYM_NONE ? sym_prove_le(t, n, at) : SYM_UNKNOWN;
            if (proof == SYM_TRUE || (at != SYM_NONE && proof != SYM_FALSE && nondecreasing(t, n, s, 0))) {
                n = at;
                continue;
            }
            uint32_t p = tn->producer;
            sym_symbol_info si = {0};
            sym_symbol_get(t, s, &si);
            char size[256], btxt[256], how[256];
            sym_print(t, n, size, sizeof size);
            sym_print(t, bound, btxt, sizeof btxt);
            shrink_witness(t, n, s, bound, si.name, how, sizeof how);
            return symc_error_setf(x->err, SYMC_ERR_UNSUPPORTED,
                                   "tensor '%s' of node '%s' (%s) has %s elements: its size %s, so its memory cannot "
                                   "be planned at %s's bound (%s <= %s; %s is %s)",
                                   tn->name, p != IR_NONE ? m->nodes[p].name : "(an input)",
                                   p != IR_NONE ? ir_op_name(m->nodes[p].op) : "input", size, how, si.name, si.name,
                                   btxt, si.name, si.provenance ? si.provenance : "");
        }
    }
    return SYMC_OK;
}

/* GPU code first: a target may add tensors (temporaries) to the module, and
 * its slots come before the ones below. */
static symc_status add_gpu_code(cg_build *x) {
    const cg_target *target = &cg_target_cuda;
    const char *name = x->m->name ? x->m->name : "model";
    cg_progress(&x->opt, "%s: generating %s code for %u nodes", name, target->name, x->m->n_nodes);
    symc_status st = target->emit(&x->b);
    if (!st) st = cg_check_dataflow(&x->b);
    if (st || !x->b.n_kernels) return st;
    return target->compile(&x->b); /* says its own progress */
}

/* The guards the runtime must check (implied ones cost nothing): the first
 * `ng` of the table, as many as there were before the target ran. */
static symc_status add_guards(cg_build *x, uint32_t ng) {
    sym_table *t = x->m->syms;
    rt_guard *guards = build_calloc(x, ng, sizeof *guards);
    if (!guards) return SYMC_ERR_NOMEM;
    uint32_t n = 0;
    for (uint32_t g = 0; g < ng; g++) {
        if (sym_guard_classify(t, g) == SYM_GUARD_IMPLIED) continue;
        sym_guard gd;
        sym_guard_get(t, g, &gd);
        /* one that mentions produced sizes waits for the last of them to be produced */
        uint32_t after = 0;
        for (uint32_t k = 0; k < x->e.n_produced; k++)
            if (sym_mentions(t, gd.lhs, x->e.produced[k].symbol) || sym_mentions(t, gd.rhs, x->e.produced[k].symbol))
                after = k + 1;
        guards[n++] = (rt_guard){gd.rel, cg_slot(&x->b, gd.lhs), cg_slot(&x->b, gd.rhs), gd.provenance, after};
    }
    x->e.guards = guards;
    x->e.n_guards = n;
    return SYMC_OK;
}

static symc_status add_tensors(cg_build *x) {
    const ir_module *m = x->m;
    rt_tensor *ts = build_calloc(x, m->n_tensors, sizeof *ts);
    if (!ts) return SYMC_ERR_NOMEM;
    for (uint32_t i = 0; i < m->n_tensors; i++) {
        const ir_tensor *t = &m->tensors[i];
        ts[i].name = t->name;
        ts[i].dtype = t->dtype;
        ts[i].rank = t->rank;
        for (int d = 0; d < t->rank; d++) ts[i].dims[d] = cg_slot(&x->b, t->dims[d]);
        ts[i].constant = t->constant;
    }
    x->e.tensors = ts;
    x->e.n_tensors = m->n_tensors;
    return SYMC_OK;
}

/* A node's attributes with every dim handle turned into a slot, in a copy
 * (the module's stay handles). */
static symc_status dim_attrs(cg_build *x, const ir_node *n, uint32_t ndims, const symc_attr **out) {
    symc_attr *attrs = build_calloc(x, n->n_attrs, sizeof *attrs);
    uint32_t *dims = build_calloc(x, ndims, sizeof *dims);
    if (!attrs || !dims) return SYMC_ERR_NOMEM;
    uint32_t used = 0;
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        attrs[a] = n->attrs[a];
        if (n->attrs[a].kind != SYMC_ATTR_DIMS) continue;
        for (uint32_t k = 0; k < n->attrs[a].n; k++) dims[used + k] = cg_slot(&x->b, n->attrs[a].dims[k]);
        attrs[a].dims = dims + used;
        used += n->attrs[a].n;
    }
    *out = attrs;
    return SYMC_OK;
}

static symc_status add_nodes(cg_build *x) {
    const ir_module *m = x->m;
    rt_node *ns = build_calloc(x, m->n_nodes, sizeof *ns);
    if (!ns) return SYMC_ERR_NOMEM;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        ns[i] = (rt_node){n->op, n->name, n->source, n->n_in, n->n_out, n->n_attrs, n->in, n->out, n->attrs};
        uint32_t ndims = 0;
        for (uint32_t a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].kind == SYMC_ATTR_DIMS) ndims += n->attrs[a].n;
        symc_status st = ndims ? dim_attrs(x, n, ndims, &ns[i].attrs) : SYMC_OK;
        if (st) return st;
    }
    x->e.nodes = ns;
    x->e.n_nodes = m->n_nodes;
    return SYMC_OK;
}

static symc_status add_constants(cg_build *x) {
    const ir_module *m = x->m;
    rt_constant *cs = build_calloc(x, m->n_constants, sizeof *cs);
    if (!cs) return SYMC_ERR_NOMEM;
    for (uint32_t i = 0; i < m->n_constants; i++) cs[i] = (rt_constant){m->constants[i].data, m->constants[i].size};
    x->e.constants = cs;
    x->e.n_constants = m->n_constants;
    return SYMC_OK;
}

/* Every slot handed out so far becomes one shape program. */
static symc_status add_program(cg_build *x) {
    if (x->b.failed) return SYMC_ERR_NOMEM; /* cg_slot set the message */
    size_t size = 0;
    symc_status st = sym_program_compile(x->m->syms, x->b.exprs, x->b.n_slots, &x->program, &size, x->err);
    if (st) return st;
    x->e.program = x->program;
    x->e.program_size = size;
    x->e.num_slots = x->b.n_slots;
    return SYMC_OK;
}

/* What the target made: kernels, steps, aliases and versions. */
static symc_status add_gpu_part(cg_build *x) {
    cg_builder *b = &x->b;
    rt_engine *e = &x->e;
    if (b->aliases) {
        symc_status st = grow_aliases(b); /* the target may have added tensors since the last alias */
        if (st) return st;
    }
    e->sm = b->sm;
    e->precision = (uint8_t)x->opt.precision;
    e->cuda_source = b->source ? b->source : "";
    e->modules = b->modules;
    e->n_modules = b->n_modules;
    e->kernel_names = (const char *const *)b->kernel_names;
    e->kernel_module = b->kernel_module;
    e->n_kernels = b->n_kernels;
    e->steps = b->steps;
    e->n_steps = b->n_steps;
    e->aliases = b->aliases;
    e->n_aliases = b->aliases ? x->m->n_tensors : 0;
    e->cuda_version = b->cuda_version;
    e->cublas_version = b->cublas_version;
    e->cudnn_version = b->cudnn_version;
    if (x->opt.stats) {
        x->opt.stats->kernels = b->n_kernels;
        x->opt.stats->kernel_steps = 0;
        for (uint32_t i = 0; i < b->n_steps; i++) x->opt.stats->kernel_steps += b->steps[i].kind == RT_STEP_KERNEL;
    }
    return SYMC_OK;
}

/* The batch-row proof (ir_batch_rows) of the module as it is built, after
 * the passes: the graph the engine runs, so the verdict needs no pass to be
 * right (on every test model it equals the proof of the module as imported,
 * at every precision). Engine symbol i is module symbol i. With regions the
 * root's verdict is made from each graph's (codegen/build_regions.c). */
static symc_status add_batch_rows(cg_build *x) {
    ir_batch_rows_result r;
    symc_status st = ir_batch_rows(x->m, &r, x->err);
    if (st) return st;
    char *why = build_calloc(x, strlen(r.why) + 1, 1);
    if (!why) return SYMC_ERR_NOMEM;
    memcpy(why, r.why, strlen(r.why));
    x->e.batch_rows = (rt_batch_rows){(uint8_t)(!r.batched          ? RT_BATCH_ROWS_NONE
                                                    : r.independent ? RT_BATCH_ROWS_INDEPENDENT
                                                                    : RT_BATCH_ROWS_BATCHED),
                                      r.batched ? (uint32_t)r.batch : RT_NONE, why};
    return SYMC_OK;
}

/* The precision pass's fp32 islands (ir_island), for symc inspect; the strings stay the module's. */
static symc_status add_islands(cg_build *x) {
    const ir_module *m = x->m;
    if (!m->n_islands) return SYMC_OK;
    rt_island *is = build_calloc(x, m->n_islands, sizeof *is);
    if (!is) return SYMC_ERR_NOMEM;
    for (uint32_t i = 0; i < m->n_islands; i++) {
        const ir_island *s = &m->islands[i];
        is[i] = (rt_island){s->node, s->op, s->kind, s->why};
    }
    x->e.islands = is;
    x->e.n_islands = m->n_islands;
    return SYMC_OK;
}

/* The parts in order; the order of the cg_slot calls (GPU code, guards,
 * tensors, dim attributes) is the order of the program's slots. */
static symc_status assemble(cg_build *x) {
    uint32_t ng = sym_guard_count(x->m->syms);
    symc_status st = check_shapes(x->m, x->err);
    if (!st) st = add_symbols(x);
    if (!st) st = add_batch_rows(x);
    if (!st) st = add_islands(x);
    if (!st) st = check_monotone(x);
    if (!st) st = add_capacity_program(x);
    if (!st && x->opt.gpu) st = add_gpu_code(x);
    for (uint32_t k = 0; !st && x->opt.gpu && k < x->e.n_produced; k++) { /* TRIAL wiring */
        rt_produced *p = (rt_produced *)&x->e.produced[k];
        p->count_tensor = cg_count_cell(x->m, x->b.steps, x->b.n_steps, p->node);
        if (p->count_tensor == RT_NONE)
            st = symc_error_setf(x->err, SYMC_ERR_INTERNAL,
                                 "node '%s' produces a size but its GPU code has no count cell",
                                 x->m->nodes[p->node].name);
    }
    if (!st) st = add_guards(x, ng);
    if (!st) st = add_tensors(x);
    if (!st) st = add_nodes(x);
    if (!st) st = add_constants(x);
    if (!st) st = add_program(x);
    if (!st && x->opt.gpu) st = add_gpu_part(x);
    /* with a GPU present, the library steps' tuned entries (codegen/tuner.c) */
    if (!st && x->opt.gpu && x->opt.tune) st = cg_tune_engine(&x->e, &x->arena, &x->opt, x->err);
    return st;
}

symc_status cg_assemble(cg_build *x, ir_module *m, const cg_options *opt, symc_error *err) {
    *x = (cg_build){.m = m, .opt = opt ? *opt : cg_default_options(), .err = err};
    x->b = (cg_builder){.m = m, .opt = &x->opt, .err = err};
    x->e = (rt_engine){.format_version = RT_ENGINE_FORMAT_VERSION,
                       .symc_version = SYMC_VERSION_STRING,
                       .cuda_version = "",
                       .cublas_version = "",
                       .cudnn_version = "",
                       .name = m->name,
                       .inputs = m->inputs,
                       .n_inputs = m->n_inputs,
                       .outputs = m->outputs,
                       .n_outputs = m->n_outputs};
    return assemble(x);
}

void cg_build_release(cg_build *x) {
    free(x->program);
    x->program = NULL;
    free(x->capacity);
    x->capacity = NULL;
    free_builder(&x->b);
    x->b = (cg_builder){0};
    cm_arena_free(&x->arena);
}

symc_status cg_build_engine(ir_module *m, const cg_options *opt, uint8_t **bytes, size_t *size, symc_error *err) {
    *bytes = NULL;
    *size = 0;
    cg_build x;
    symc_status st = cg_assemble(&x, m, opt, err);
    if (!st) st = rt_engine_encode(&x.e, bytes, size, err);
    cg_build_release(&x);
    return st;
}

/* The output of cg_write_encoded: opened at the first piece, so an engine that cannot be
 * encoded leaves no file, as when the whole engine was encoded first. */
typedef struct engine_file {
    const char *path;
    ir_out out;
    int open;
} engine_file;

static symc_status to_file(void *ctx, const uint8_t *bytes, size_t size, symc_error *err) {
    engine_file *f = ctx;
    if (!f->open) {
        symc_status st = ir_out_open(&f->out, f->path, err);
        if (st) return st;
        f->open = 1;
    }
    if (fwrite(bytes, 1, size, f->out.f) != size)
        return symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s': %s", f->path, strerror(errno));
    return SYMC_OK;
}

symc_status cg_write_encoded(const rt_engine *e, const char *path, symc_error *err) {
    engine_file f = {.path = path};
    symc_status st = rt_engine_encode_to(e, to_file, &f, err);
    if (!f.open) return st;
    if (st) {
        ir_out_abort(&f.out); /* the temporary goes: nothing is left under the path */
        return st;
    }
    return ir_out_close(&f.out, err);
}

symc_status cg_write_engine(ir_module *m, const cg_options *opt, const char *path, symc_error *err) {
    cg_build x;
    symc_status st = cg_assemble(&x, m, opt, err);
    if (!st) st = cg_write_encoded(&x.e, path, err);
    cg_build_release(&x);
    return st;
}
