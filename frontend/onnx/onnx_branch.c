/* ONNX If nodes that branch on the input sizes (Shape -> Gather -> Greater -> If), as regions.
 *
 * The condition is followed back through Not, Cast and Identity to a comparison (Equal, Less,
 * LessOrEqual, Greater, GreaterOrEqual) of two one-element integer tensors whose build-time
 * values are expressions over the symbols (what the importer already computes for shape
 * sub-graphs). The relation is first proven over the symbol ranges: when it holds, or fails, for
 * every size declared, the If is that branch, as a constant condition is.
 *
 * When the ranges leave it open, one graph cannot serve: the import is repeated once per side
 * (fe_onnx_import_file_regions, the driver at the end of this file). A relation over one symbol
 * whose true and false sets are intervals of its range (S > 64) narrows the symbol's range in
 * each import, so that the relation is proven there, and shape inference inside the branch knows
 * it (a Slice of the first 64 rows needs S >= 64). Any other relation (S1 <= S2) is a decision
 * recorded by the order in which open Ifs are met (the import is deterministic), and its text
 * (or the negation's) becomes the region's condition. The driver explores the combinations
 * depth first, at most FE_ONNX_MAX_REGIONS imports that succeed; a side whose narrowed ranges
 * are empty has no sizes and no region. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- the relation behind a condition ------------------------------------------------------------ */

typedef struct shape_rel {
    sym_rel rel; /* EQ, NE, LE or LT */
    sym_expr lhs, rhs;
} shape_rel;

/* One-element integer value of tensor t. */
static int scalar_value(fe_ctx *c, uint32_t t, sym_expr *v) {
    const ir_tensor *x = T(c, t);
    if (!x->value || x->n_value != 1 || x->dtype == SYMC_BOOL || x->dtype == SYMC_F32 || x->dtype == SYMC_F16 ||
        x->dtype == SYMC_BF16 || x->dtype == SYMC_F64)
        return 0;
    *v = x->value[0];
    return 1;
}

/* The relation of condition tensor t; 0 when it is not a comparison of shape values. */
static int condition_relation(fe_ctx *c, uint32_t t, shape_rel *r) {
    int negate = 0;
    for (int hops = 0; hops < 16; hops++) {
        uint32_t p = T(c, t)->producer;
        if (p == IR_NONE) return 0;
        const ir_node *n = &c->m->nodes[p];
        if (n->op == IR_OP_NOT || n->op == IR_OP_CAST || n->op == IR_OP_IDENTITY) {
            negate ^= n->op == IR_OP_NOT;
            t = n->in[0];
            continue;
        }
        sym_expr a, b;
        if (n->n_in != 2 || !scalar_value(c, n->in[0], &a) || !scalar_value(c, n->in[1], &b)) return 0;
        switch (n->op) {
        case IR_OP_EQUAL: *r = (shape_rel){negate ? SYM_REL_NE : SYM_REL_EQ, a, b}; return 1;
        case IR_OP_LESS: *r = negate ? (shape_rel){SYM_REL_LE, b, a} : (shape_rel){SYM_REL_LT, a, b}; return 1;
        case IR_OP_LESS_EQUAL: *r = negate ? (shape_rel){SYM_REL_LT, b, a} : (shape_rel){SYM_REL_LE, a, b}; return 1;
        case IR_OP_GREATER: *r = negate ? (shape_rel){SYM_REL_LE, a, b} : (shape_rel){SYM_REL_LT, b, a}; return 1;
        case IR_OP_GREATER_EQUAL: *r = negate ? (shape_rel){SYM_REL_LT, a, b} : (shape_rel){SYM_REL_LE, b, a}; return 1;
        default: return 0;
        }
    }
    return 0;
}

static shape_rel negated(shape_rel r) {
    switch (r.rel) {
    case SYM_REL_EQ: return (shape_rel){SYM_REL_NE, r.lhs, r.rhs};
    case SYM_REL_NE: return (shape_rel){SYM_REL_EQ, r.lhs, r.rhs};
    case SYM_REL_LE: return (shape_rel){SYM_REL_LT, r.rhs, r.lhs};
    default: return (shape_rel){SYM_REL_LE, r.rhs, r.lhs};
    }
}

static sym_tri prove(fe_ctx *c, shape_rel r) {
    switch (r.rel) {
    case SYM_REL_EQ: return sym_prove_eq(c->t, r.lhs, r.rhs);
    case SYM_REL_NE: return sym_prove_ne(c->t, r.lhs, r.rhs);
    case SYM_REL_LE: return sym_prove_le(c->t, r.lhs, r.rhs);
    default: return sym_prove_lt(c->t, r.lhs, r.rhs);
    }
}

/* "S > 64" style text (the grammar symc_compile_regions reads: <, <=, ==, != with sides swapped
 * to read naturally are all accepted there). */
static void rel_text(fe_ctx *c, shape_rel r, char *buf, size_t cap) {
    static const char *ops[] = {[SYM_REL_EQ] = "==", [SYM_REL_NE] = "!=", [SYM_REL_LE] = "<=", [SYM_REL_LT] = "<"};
    char a[110], b[110];
    sym_print(c->t, r.lhs, a, sizeof a);
    sym_print(c->t, r.rhs, b, sizeof b);
    snprintf(buf, cap, "%s %s %s", a, ops[r.rel], b);
}

/* The symbols expression e reads, up to 2 (*n = 3 for more). */
static void symbols_of(fe_ctx *c, sym_expr e, sym_id *ids, uint32_t *n) {
    sym_view v;
    if (*n > 2 || !sym_expr_view(c->t, e, &v)) return;
    if (v.kind == SYM_SYMBOL) {
        for (uint32_t i = 0; i < *n; i++)
            if (ids[i] == (sym_id)v.value) return;
        if (*n < 2) ids[*n] = (sym_id)v.value;
        (*n)++;
        return;
    }
    uint32_t k = v.n;
    sym_expr ops[8];
    if (k > 8) k = 8, *n = 3;
    for (uint32_t i = 0; i < k; i++) ops[i] = v.ops[i]; /* the view ends at the next constructor call */
    for (uint32_t i = 0; i < k; i++) symbols_of(c, ops[i], ids, n);
}

#define MAX_SCAN ((int64_t)1 << 20) /* sizes of one symbol tried, at most */

/* For a relation over one symbol: the interval of its range where it holds (side 0) and where it
 * fails (side 1), with how many runs each side has (fork_runs: 0, 1, or 2 for more). 0 when the
 * relation reads no or several symbols, or the range is too large to scan. */
static int intervals(fe_ctx *c, shape_rel r, fe_branching *br) {
    sym_id ids[2];
    uint32_t n = 0;
    symbols_of(c, r.lhs, ids, &n);
    symbols_of(c, r.rhs, ids, &n);
    sym_symbol_info info;
    if (n != 1 || !sym_symbol_get(c->t, ids[0], &info)) return 0;
    int64_t step = info.multiple_of > 1 ? info.multiple_of : 1;
    if ((info.max - info.min) / step > MAX_SCAN) return 0;
    uint32_t nsym = sym_symbol_count(c->t);
    int64_t *vals = calloc(nsym, sizeof *vals);
    if (!vals) return 0;
    for (uint32_t i = 0; i < nsym; i++) {
        sym_symbol_info o;
        sym_symbol_get(c->t, (sym_id)i, &o);
        vals[i] = o.opt;
    }
    int64_t lo[2] = {1, 1}, hi[2] = {0, 0};
    int runs[2] = {0, 0}, prev = -1, ok = 1;
    for (int64_t s = info.min; s <= info.max && ok; s += step) {
        int64_t a, b;
        vals[ids[0]] = s;
        if (sym_eval(c->t, r.lhs, vals, nsym, &a, NULL) || sym_eval(c->t, r.rhs, vals, nsym, &b, NULL)) ok = 0;
        int side = ok && !sym_rel_holds(r.rel, a, b);
        if (side != prev && runs[side]++ == 0) lo[side] = s;
        if (runs[side] == 1) hi[side] = s;
        prev = side;
    }
    free(vals);
    if (!ok) return 0;
    snprintf(br->fork_sym, sizeof br->fork_sym, "%s", info.name);
    for (int k = 0; k < 2; k++)
        br->fork_lo[k] = lo[k], br->fork_hi[k] = hi[k], br->fork_runs[k] = runs[k] > 2 ? 2 : runs[k];
    return 1;
}

static void append(char *dst, size_t cap, const char *sep, const char *text) {
    size_t n = strlen(dst);
    snprintf(dst + n, cap - n, "%s%s", n ? sep : "", text);
}

symc_status fe_shape_condition(fe_ctx *c, uint32_t cond, int *take) {
    shape_rel r;
    *take = -1;
    if (!condition_relation(c, cond, &r)) return SYMC_OK;
    char text[240];
    rel_text(c, r, text, sizeof text);
    sym_tri p = prove(c, r);
    if (p != SYM_UNKNOWN) {
        *take = p == SYM_TRUE;
        return SYMC_OK;
    }
    fe_branching *br = c->br, scan = {0};
    /* a relation over one symbol is decided by trying every size when the prover cannot tell */
    if (intervals(c, r, &scan) && (!scan.fork_runs[0] || !scan.fork_runs[1])) {
        *take = scan.fork_runs[0] != 0;
        return SYMC_OK;
    }
    if (!br)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "the condition %s holds for some declared sizes and not others: `symc compile` imports "
                       "both branches as regions of one engine (fe_onnx_import_file_regions)",
                       text);
    if (br->met < br->n_decide) {
        *take = br->decide[br->met++];
        char said[300];
        if (*take) snprintf(said, sizeof said, "%s", text);
        else rel_text(c, negated(r), said, sizeof said);
        append(br->cond, sizeof br->cond, " and ", said);
        return SYMC_OK;
    }
    br->fork = 1;
    snprintf(br->fork_text[0], sizeof br->fork_text[0], "%s", text);
    rel_text(c, negated(r), br->fork_text[1], sizeof br->fork_text[1]);
    snprintf(br->fork_sym, sizeof br->fork_sym, "%s", scan.fork_sym);
    for (int k = 0; k < 2; k++)
        br->fork_lo[k] = scan.fork_lo[k], br->fork_hi[k] = scan.fork_hi[k], br->fork_runs[k] = scan.fork_runs[k];
    return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the condition %s is open: imported once per side", text);
}

int fe_branch_range(const fe_ctx *c, const char *name, int64_t *min, int64_t *opt, int64_t *max, int64_t mult) {
    const fe_branching *br = c->br;
    if (!br) return 1;
    int64_t m = mult > 1 ? mult : 1;
    int narrowed = 0;
    for (uint32_t i = 0; i < br->n_narrow; i++) {
        if (strcmp(br->narrow[i].name, name)) continue;
        if (br->narrow[i].lo > *min) *min = br->narrow[i].lo;
        if (br->narrow[i].hi < *max) *max = br->narrow[i].hi;
        narrowed = 1;
    }
    if (!narrowed) return 1; /* the declaration's own checks speak for it */
    /* on the declared multiple's grid (the scan kept to it, so this changes nothing there) */
    if (*min % m) *min += m - *min % m;
    if (*max % m) *max -= *max % m;
    if (*min > *max) return 0;
    if (*opt < *min) *opt = *min;
    if (*opt > *max) *opt = *max;
    return 1;
}

/* ---- the driver ----------------------------------------------------------------------------------- */

/* Imports pending[0..n) depth first; each success is a region, each fork two more imports. */
static symc_status explore(const uint8_t *buf, size_t size, const char *dir, const fe_input_shape *shapes,
                           uint32_t n_shapes, fe_onnx_regions *out, symc_error *err) {
    fe_branching *stack = calloc(2 * FE_MAX_REGIONS + 2, sizeof *stack);
    if (!stack) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory importing the model's regions");
    uint32_t top = 1, imports = 0;
    symc_status st = SYMC_OK;
    while (top && !st) {
        fe_branching br = stack[--top];
        br.met = 0;
        br.fork = 0;
        br.cond[0] = '\0';
        ir_module *m = NULL;
        if (++imports > 4 * FE_MAX_REGIONS) {
            st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "the model's size branches need more than %d imports",
                                 4 * FE_MAX_REGIONS);
            break;
        }
        st = fe_import_buffer(buf, size, dir, shapes, n_shapes, &br, &m, err);
        if (st == SYMC_ERR_RANGE && br.n_narrow && !br.fork) { /* a narrowing left a symbol no size */
            st = SYMC_OK;
            continue;
        }
        if (st && !br.fork) break;
        if (!st) {
            if (out->n == FE_ONNX_MAX_REGIONS) {
                ir_module_free(m);
                st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                                     "the model's size branches make more than %d regions (If conditions: %s ...)",
                                     FE_ONNX_MAX_REGIONS, out->items[0].branches ? out->items[0].branches : "");
                break;
            }
            fe_onnx_region *r = &out->items[out->n++];
            r->module = m;
            r->condition = br.cond[0] ? strdup(br.cond) : NULL;
            char said[700] = "";
            for (uint32_t i = 0; i < br.n_narrow; i++) {
                char one[200];
                snprintf(one, sizeof one, "%" PRId64 " <= %s <= %" PRId64, br.narrow[i].lo, br.narrow[i].name,
                         br.narrow[i].hi);
                append(said, sizeof said, " and ", one);
            }
            if (br.cond[0]) append(said, sizeof said, " and ", br.cond);
            r->branches = strdup(said[0] ? said : "all sizes");
            if ((br.cond[0] && !r->condition) || !r->branches)
                st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory importing the model's regions");
            continue;
        }
        /* a fork: the else side is pushed first, so the then side is imported first */
        st = SYMC_OK;
        if (top + 2 > 2 * FE_MAX_REGIONS + 2) {
            st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "the model's size branches nest too deep (at %s)",
                                 br.fork_text[0]);
            break;
        }
        for (int side = 1; side >= 0; side--) {
            fe_branching next = br;
            int box = br.fork_sym[0] && br.fork_runs[side] == 1 && br.n_narrow < FE_MAX_REGIONS;
            if (box) {
                fe_narrow *nw = &next.narrow[next.n_narrow++];
                snprintf(nw->name, sizeof nw->name, "%s", br.fork_sym);
                nw->lo = br.fork_lo[side];
                nw->hi = br.fork_hi[side];
            } else if (br.n_decide < FE_MAX_REGIONS) {
                next.decide[next.n_decide++] = (uint8_t)(side == 0);
            } else {
                st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "the model's size branches nest too deep (at %s)",
                                     br.fork_text[side]);
                break;
            }
            stack[top++] = next;
        }
        symc_error_clear(err);
    }
    free(stack);
    return st;
}

symc_status fe_onnx_import_file_regions(const char *path, const fe_input_shape *shapes, uint32_t n_shapes,
                                        fe_onnx_regions *out, symc_error *err) {
    if (!path || !out || (n_shapes && !shapes))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "fe_onnx_import_file_regions: NULL argument");
    memset(out, 0, sizeof *out);
    uint8_t *buf = NULL;
    size_t size = 0;
    char *dir = NULL;
    symc_status st = fe_read_model(path, &buf, &size, &dir, err);
    if (!st) st = explore(buf, size, dir, shapes, n_shapes, out, err);
    if (!st && out->n == 0)
        st = symc_error_setf(err, SYMC_ERR_RANGE, "no declared size reaches any branch of the model's size conditions");
    free(buf);
    free(dir);
    if (st) {
        symc_error_prefix(err, "%s", path);
        fe_onnx_regions_free(out);
    }
    return st;
}

void fe_onnx_regions_free(fe_onnx_regions *r) {
    if (!r) return;
    for (uint32_t i = 0; i < r->n; i++) {
        ir_module_free(r->items[i].module);
        free(r->items[i].condition);
        free(r->items[i].branches);
    }
    memset(r, 0, sizeof *r);
}
