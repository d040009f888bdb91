/* Folding the decomposed exact GELU into one gelu node (passes/fold_gelu.c,
 * pass_fold_gelu), on builder modules x [B, 3, 5] -> y:
 *   A    y = mul(mul(x, add(erf(div(x, sqrt2)), 1)), 0.5)          (torch's nn.GELU)
 *   B    y = mul(mul(x, 0.5), add(erf(div(x, sqrt2)), 1))          (transformers')
 * with the commutative operands swapped, mul(x, 1/sqrt2) for the div, constants
 * of shape [1,1,1] and read through identities, x read by another output too,
 * in f32, f16 (sqrt 2 stored as f16 rounds it, 1.4140625), bf16 and f64.
 * After the pipeline (through dce, before precision) a fold leaves the one
 * node gelu(x) {approximate: none} making y, in the printed module too, and
 * --dump-after's name for the row works. The refusals leave the module as
 * shape inference alone leaves it (same node ops, inputs and names): 0.6 for
 * 0.5, 2 for 1, 1.5 for sqrt 2, an intermediate that is also a graph output
 * or read by a second node, a chain whose erf arm is f32 between casts of an
 * f16 x, and a [1,1,1,1] 0.5 that broadcasts y up to rank 4.
 * Every case runs on the reference backend at B = 1, 3 and 8 as built by the
 * pipeline and unfolded (shape inference only), on random x in [-4, 4) with
 * large values of both signs mixed in. Against gelu evaluated here in double
 * (0.5 x erfc(-x / sqrt 2)) the folded result is within 1e-6 relative in f32
 * (one rounding of the dtype in the others); the unfolded one adds the
 * rounding of its intermediates, whose absolute error in 1 + erf(d) (a few
 * units of the dtype's roundoff u) the multiplication by x / 2 scales, so
 * the two agree within tol * |y| + 2u |x|: on the negative tail, where
 * 1 + erf(d) cancels, that is the unfolded form's error, not the fold's. In
 * f16, form A's x * 2 overflows above 32752 where gelu(x) = x fits: there
 * only the folded result is checked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "passes/passes.h"
#include "passes/pipeline.h"
#include "symc/symrt.h"
#include "tests/check.h"
#include "tests/passes/run_module.h"

#define C 3
#define W 5
#define BMAX 8

typedef enum variant {
    FOLD_A,         /* div(x, c1), add(e, c2), mul(x, a), mul(m, c3) */
    FOLD_A_SWAPPED, /* add(c2, e), mul(a, x), mul(c3, m); constants [1,1,1], c3 through an identity,
                       x also read by a second output */
    FOLD_A_RSQRT,   /* mul(x, 1/sqrt2) for the div */
    FOLD_B,         /* mul(x, c3), div(x, c1), add(e, c2), mul(h, a) */
    FOLD_B_SWAPPED, /* mul(c3, x), mul(1/sqrt2, x), add(c2, e), mul(a, h) */
    KEEP_C3,        /* A with 0.6 for 0.5 */
    KEEP_C2,        /* A with 2 for 1 */
    KEEP_C1,        /* A with 1.5 for sqrt 2 */
    KEEP_OUTPUT,    /* A with a also a graph output */
    KEEP_SHARED,    /* B with e also read by neg(e), a second output */
    KEEP_MIXED,     /* B with x f16, the erf arm f32 between cast(x) and cast(a) */
    KEEP_BCAST,     /* A with c3 [1,1,1,1]: y [1, B, 3, 5] */
    VARIANTS
} variant;

static const char *variant_name[VARIANTS] = {"fold_a",         "fold_a_swapped", "fold_a_rsqrt", "fold_b",
                                             "fold_b_swapped", "keep_c3",        "keep_c2",      "keep_c1",
                                             "keep_output",    "keep_shared",    "keep_mixed",   "keep_bcast"};

static int folds(variant v) { return v < KEEP_C3; }
static int form_a(variant v) { return v <= FOLD_A_RSQRT || (v >= KEEP_C3 && v <= KEEP_OUTPUT) || v == KEEP_BCAST; }

static uint64_t rng = 0x243f6a8885a308d3ull;
static double urand(void) { /* [-1, 1) */
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static symc_tensor node(symc_module *m, const char *op, const char *name, symc_tensor a, symc_tensor b,
                        const symc_attr *attrs, uint32_t n_attrs) {
    symc_error err;
    symc_tensor out = SYMC_TENSOR_NONE, in[2] = {a, b};
    CHECK_MSG(symc_add_node(m, op, name, in, b == SYMC_TENSOR_NONE ? 1 : 2, attrs, n_attrs, &out, 1, &err) == SYMC_OK,
              "%s: %s", name, err.msg);
    return out;
}

/* a one-element constant of dtype dt: a scalar, or of shape [1]*rank */
static symc_tensor scalar(symc_module *m, const char *name, symc_dtype dt, double v, int rank) {
    uint8_t data[8];
    int64_t dims[4] = {1, 1, 1, 1};
    symc_dtype_store(data, dt, 0, v);
    symc_tensor t = SYMC_TENSOR_NONE;
    symc_error err;
    CHECK_MSG(symc_add_constant(m, name, dt, rank, dims, data, symc_dtype_size(dt), &t, &err) == SYMC_OK, "%s",
              err.msg);
    return t;
}

static symc_module *build(symc_dtype dt, variant v) {
    symc_error err;
    symc_module *m = symc_module_create(variant_name[v], &err);
    symc_dim B;
    symc_tensor x;
    symc_declare_symbol(m, "B", 1, 3, BMAX, 1, &B, &err);
    symc_add_input(m, "x", dt, 3, (symc_dim[]){B, symc_dim_const(m, C), symc_dim_const(m, W)}, &x, &err);
    symc_dtype at = v == KEEP_MIXED ? SYMC_F32 : dt; /* the erf arm's dtype */
    int crank = v == FOLD_A_SWAPPED ? 3 : 0, swapped = v == FOLD_A_SWAPPED || v == FOLD_B_SWAPPED;
    int rsqrt = v == FOLD_A_RSQRT || v == FOLD_B_SWAPPED;
    symc_tensor c1 = scalar(m, "c1", at, v == KEEP_C1 ? 1.5 : rsqrt ? sqrt(0.5) : sqrt(2.0), crank);
    symc_tensor c2 = scalar(m, "c2", at, v == KEEP_C2 ? 2.0 : 1.0, crank);
    symc_tensor c3 = scalar(m, "c3", dt, v == KEEP_C3 ? 0.6 : 0.5, v == KEEP_BCAST ? 4 : crank);
    if (v == FOLD_A_SWAPPED) c3 = node(m, "identity", "c3_alias", c3, SYMC_TENSOR_NONE, NULL, 0);
    symc_tensor xa = x; /* what the erf arm divides */
    if (v == KEEP_MIXED) {
        symc_attr to = symc_attr_dtype("to", SYMC_F32);
        xa = node(m, "cast", "xf", x, SYMC_TENSOR_NONE, &to, 1);
    }
    symc_tensor d = rsqrt ? node(m, "mul", "d", swapped ? c1 : xa, swapped ? xa : c1, NULL, 0)
                          : node(m, "div", "d", xa, c1, NULL, 0);
    symc_tensor e = node(m, "erf", "e", d, SYMC_TENSOR_NONE, NULL, 0);
    symc_tensor a = node(m, "add", "a", swapped ? c2 : e, swapped ? e : c2, NULL, 0), y;
    if (v == KEEP_MIXED) {
        symc_attr to = symc_attr_dtype("to", dt);
        a = node(m, "cast", "a16", a, SYMC_TENSOR_NONE, &to, 1);
    }
    if (form_a(v)) {
        symc_tensor mm = node(m, "mul", "m", swapped ? a : x, swapped ? x : a, NULL, 0);
        y = node(m, "mul", "y", swapped ? c3 : mm, swapped ? mm : c3, NULL, 0);
    } else {
        symc_tensor h = node(m, "mul", "h", swapped ? c3 : x, swapped ? x : c3, NULL, 0);
        y = node(m, "mul", "y", swapped ? a : h, swapped ? h : a, NULL, 0);
    }
    symc_mark_output(m, y, &err);
    if (v == KEEP_OUTPUT) symc_mark_output(m, a, &err);
    if (v == KEEP_SHARED) symc_mark_output(m, node(m, "neg", "eneg", e, SYMC_TENSOR_NONE, NULL, 0), &err);
    if (v == FOLD_A_SWAPPED) symc_mark_output(m, node(m, "neg", "xneg", x, SYMC_TENSOR_NONE, NULL, 0), &err);
    return m;
}

/* the fold: gelu(x) {approximate: none} makes y, and besides the extra outputs' nodes nothing
 * else is left; a refusal: the module as shape inference left it (plain) */
static void check_structure(symc_module *m, symc_module *plain, symc_dtype dt, variant v) {
    const char *dn = symc_dtype_name(dt);
    if (!folds(v)) {
        CHECK_MSG(m->n_nodes == plain->n_nodes, "%s %s: %u nodes, %u before", variant_name[v], dn, m->n_nodes,
                  plain->n_nodes);
        for (uint32_t i = 0; i < m->n_nodes && i < plain->n_nodes; i++) {
            const ir_node *a = &m->nodes[i], *b = &plain->nodes[i];
            int same = a->op == b->op && a->n_in == b->n_in && !strcmp(a->name, b->name);
            for (uint32_t k = 0; same && k < a->n_in; k++)
                same = !strcmp(m->tensors[a->in[k]].name, plain->tensors[b->in[k]].name);
            CHECK_MSG(same, "%s %s: node %u is %s '%s', was %s '%s'", variant_name[v], dn, i, ir_op_get(a->op)->name,
                      a->name, ir_op_get(b->op)->name, b->name);
        }
        return;
    }
    uint32_t yi = 0, x = 0, gelus = 0, others = 0;
    CHECK(ir_find_node(m, "y", &yi) && ir_find_tensor(m, "x", &x));
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        if (n->op == IR_OP_GELU) gelus++;
        else if (strcmp(n->name, "xneg")) others++;
    }
    const ir_node *y = &m->nodes[yi];
    const ir_attr *ap = ir_node_attr(y, "approximate");
    CHECK_MSG(gelus == 1 && others == 0, "%s %s: %u gelu nodes and %u others", variant_name[v], dn, gelus, others);
    CHECK_MSG(y->op == IR_OP_GELU && y->n_in == 1 && y->in[0] == x && ap && ap->kind == IR_ATTR_STR &&
                  !strcmp(ap->s, "none"),
              "%s %s: y is made by %s", variant_name[v], dn, ir_op_get(y->op)->name);
    char *text = ir_print_to_string(m);
    CHECK_CONTAINS(text, " = gelu(x) {approximate=\"none\"}");
    if (text) CHECK_MSG(!strstr(text, "erf("), "%s %s: an erf is left:\n%s", variant_name[v], dn, text);
    free(text);
}

/* Output 0 of module m (shapes inferred) on the reference backend at batch `batch`, as
 * doubles (non-finite values too). */
static int run_ref(symc_module *m, int64_t batch, symc_dtype dt, const double *xv, double *out) {
    int64_t xd[3] = {batch, C, W}, nx = batch * C * W, n0 = 0;
    symc_dtype ot = dt;
    int ok = run_module_ref(m, xd, 3, dt, xv, out, nx, &n0, &ot);
    CHECK(!ok || (n0 == nx && ot == dt));
    return ok;
}

static double unit_roundoff(symc_dtype dt) {
    return dt == SYMC_F16 ? 0x1p-11 : dt == SYMC_BF16 ? 0x1p-8 : dt == SYMC_F64 ? 0x1p-53 : 0x1p-24;
}

/* folded and unfolded against gelu in double, and against each other */
static void check_numbers(symc_module *folded, symc_module *plain, symc_dtype dt, variant v) {
    static const double big[] = {-1e6, -1e3, -30.0, -10.0, -6.0, -5.0, -4.5, 0.0, 4.5, 6.0, 10.0, 1e3, 1e6};
    static const double big16[] = {-30000.0, -1000.0, -20.0, -8.0, -6.0,  -5.0,  -4.5, 0.0,
                                   4.5,      8.0,     20.0,  1000, 30000, 40000, 60000};
    const double *sp = dt == SYMC_F16 ? big16 : big;
    int nsp = dt == SYMC_F16 ? (int)(sizeof big16 / sizeof *big16) : (int)(sizeof big / sizeof *big);
    double u = unit_roundoff(dt);
    /* the folded node rounds once; f32: the brief's 1e-6 */
    double tol = dt == SYMC_F32 ? 1e-6 : dt == SYMC_F64 ? 1e-13 : 2 * u;
    /* below the dtype's smallest subnormal's order nothing is resolvable */
    double floor_abs = dt == SYMC_F16 ? 0x1p-24 : dt == SYMC_BF16 ? 0x1p-133 : dt == SYMC_F32 ? 0x1p-149 : 0x1p-1074;
    static const int64_t batches[] = {1, 3, BMAX};
    int overflowed = 0;
    for (int bi = 0; bi < 3; bi++) {
        int64_t batch = batches[bi], n = batch * C * W;
        double xv[BMAX * C * W], yf[BMAX * C * W], yp[BMAX * C * W];
        uint8_t tmp[8];
        for (int64_t i = 0; i < n; i++) { /* x as the dtype stores it */
            double r = urand();
            double val = i % 3 == 0 ? sp[(int)((r + 1.0) * 0.5 * nsp) % nsp] : 4.0 * r;
            symc_dtype_store(tmp, dt, 0, val);
            xv[i] = symc_dtype_load(tmp, dt, 0);
        }
        if (!run_ref(folded, batch, dt, xv, yf) || !run_ref(plain, batch, dt, xv, yp)) return;
        for (int64_t i = 0; i < n; i++) {
            double x = xv[i], want = 0.5 * x * erfc(-x / sqrt(2.0));
            /* the reference kernel's own 1 + erf in double cancels too: 2^-53 |x| */
            double lf = tol * fabs(want) + 0x1p-52 * fabs(x) + floor_abs;
            double lp = tol * fabs(want) + 2.0 * u * fabs(x) + floor_abs;
            if (!folds(v)) { /* a refusal: "folded" is the unfolded module */
                lf = lp;
                if (!isfinite(yf[i]) && !isfinite(yp[i])) yf[i] = want;
            }
            CHECK_MSG(fabs(yf[i] - want) <= lf, "%s %s B=%lld x=%.9g: folded %.9g want %.9g", variant_name[v],
                      symc_dtype_name(dt), (long long)batch, x, yf[i], want);
            if (!isfinite(yp[i])) { /* form A's x * 2 in f16 */
                CHECK_MSG(dt == SYMC_F16 && form_a(v) && x > 32752.0, "%s %s x=%.9g: unfolded %g", variant_name[v],
                          symc_dtype_name(dt), x, yp[i]);
                overflowed++;
                continue;
            }
            CHECK_MSG(fabs(yp[i] - want) <= lp && fabs(yp[i] - yf[i]) <= lp,
                      "%s %s B=%lld x=%.9g: unfolded %.9g folded %.9g want %.9g", variant_name[v], symc_dtype_name(dt),
                      (long long)batch, x, yp[i], yf[i], want);
        }
    }
    if (dt == SYMC_F16 && form_a(v) && v != KEEP_C3 && v != KEEP_C2)
        CHECK_MSG(overflowed > 0, "%s f16: no x over 32752 was drawn", variant_name[v]);
}

static void test_variant(symc_dtype dt, variant v) {
    symc_module *folded = build(dt, v), *plain = build(dt, v);
    symc_error err;
    /* through dce, which removes the chain the fold leaves unread */
    CHECK_MSG(pass_run_passes(folded, NULL, NULL, "precision", &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symc_module_infer_shapes(plain, &err) == SYMC_OK, "%s", err.msg);
    check_structure(folded, plain, dt, v);
    /* the numbers only where the math is gelu's (the refused constants compute something else) */
    if (v != KEEP_C3 && v != KEEP_C2 && v != KEEP_C1 && v != KEEP_BCAST) check_numbers(folded, plain, dt, v);
    symc_module_destroy(folded);
    symc_module_destroy(plain);
}

/* --dump-after=fold-gelu: the row's name, and the printed module right after it */
static char dumped[8192];
static void dump(void *ctx, const char *pass, const char *text) {
    (void)ctx;
    snprintf(dumped, sizeof dumped, "%s\n%s", pass, text);
}

static void test_dump(void) {
    symc_module *m = build(SYMC_F32, FOLD_B);
    symc_error err;
    pass_options o = {0};
    o.dump_after = "fold-gelu";
    o.dump = dump;
    CHECK_MSG(pass_run_passes(m, &o, NULL, "precision", &err) == SYMC_OK, "%s", err.msg);
    const char *dp = dumped;
    CHECK_CONTAINS(dp, "fold-gelu\n");
    CHECK_CONTAINS(dp, "y: f32[B, 3, 5] = gelu(x) {approximate=\"none\"}");
    CHECK_CONTAINS(dp, "= erf(d)"); /* still there: dce comes next */
    char names[256];
    pass_names(names, sizeof names);
    const char *np = names;
    CHECK_CONTAINS(np, "fold-scale, fold-gelu, fold-rms-norm, dce, precision, merge-projections");
    symc_module_destroy(m);
}

int main(void) {
    for (int v = 0; v < VARIANTS; v++) {
        if (v != KEEP_MIXED) test_variant(SYMC_F32, (variant)v);
        test_variant(SYMC_F16, (variant)v);
    }
    test_variant(SYMC_BF16, FOLD_A);
    test_variant(SYMC_BF16, FOLD_B_SWAPPED);
    test_variant(SYMC_F64, FOLD_A);
    test_variant(SYMC_F64, FOLD_B);
    test_dump();
    return check_report("test_fold_gelu");
}
