/* ONNX recurrent layers (RNN, GRU, LSTM), unrolled over a sequence length that is a constant:
 * each direction's input projection one matmul, then each step a matmul and the gates'
 * elementwise math of the ONNX equations. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- recurrent layers ------------------------------------------------------------------------------------ */

/* RNN, GRU and LSTM (opsets 14-22) unrolled over a sequence length that is
 * a constant: for each direction, the input projection of every step is one
 * matmul X W^T; then each step is a matmul by R^T and the gates' elementwise
 * math in the ONNX equations (gate order: GRU z, r, h; LSTM i, o, f, c).
 * Y stacks the steps' hidden states (in time order for the reverse
 * direction too), Y_h / Y_c are the last ones. layout 1 transposes in and
 * out. Refused by name: a symbolic sequence length, sequence_lens shorter
 * than the sequence, activations other than Sigmoid/Tanh/Relu/Softsign/
 * Softplus, input_forget = 1. */
enum { REC_RNN, REC_GRU, REC_LSTM };

typedef struct rec {
    int kind, gates, dirs, lbr;
    int64_t hs, seq;
    double clip;
    ir_op act[6]; /* f, g, h of each direction (RNN: f; GRU: f, g) */
    symc_dtype dt;
    sym_expr batch;
} rec;

static symc_status rec_perm(fe_ctx *c, uint32_t x, const int64_t *perm, uint32_t n, int out_k, uint32_t *out) {
    ir_attr a = symc_attr_ints("perm", perm, n);
    return fe_emit1(c, IR_OP_TRANSPOSE, &x, 1, &a, 1, out_k, out);
}

/* x[i] along axis 0 (the axis dropped) */
static symc_status rec_pick(fe_ctx *c, uint32_t x, int64_t i, uint32_t *out) {
    uint32_t idx, in[2];
    ir_attr a = symc_attr_int("axis", 0);
    symc_status st = fe_const(c, SYMC_I64, 0, NULL, &i, -1, &idx);
    in[0] = x, in[1] = idx;
    return st ? st : fe_emit1(c, IR_OP_GATHER, in, 2, &a, 1, -1, out);
}

/* n equal parts of the last dim (of size n * hs) */
static symc_status rec_split(fe_ctx *c, const rec *r, uint32_t x, uint32_t n, uint32_t *parts) {
    sym_expr sizes[4];
    int out_k[4] = {-1, -1, -1, -1};
    for (uint32_t k = 0; k < n; k++) sizes[k] = sym_const(c->t, r->hs);
    ir_attr a[2] = {symc_attr_int("axis", T(c, x)->rank - 1), symc_attr_dims("sizes", sizes, n)};
    return fe_emit(c, IR_OP_SPLIT, &x, 1, a, 2, out_k, n, parts);
}

static symc_status rec_act(fe_ctx *c, const rec *r, ir_op op, uint32_t x, uint32_t *out) {
    symc_status st;
    if (r->clip > 0) {
        ir_attr a[2] = {symc_attr_float("min", -r->clip), symc_attr_float("max", r->clip)};
        if ((st = fe_emit1(c, IR_OP_CLIP, &x, 1, a, 2, -1, &x))) return st;
    }
    return fe_emit_un(c, op, x, -1, out);
}

static symc_status rec_add3(fe_ctx *c, uint32_t a, uint32_t b, uint32_t d, uint32_t *out) {
    symc_status st = fe_emit_bin(c, IR_OP_ADD, a, b, -1, out);
    return st ? st : fe_emit_bin(c, IR_OP_ADD, *out, d, -1, out);
}

/* One direction (d: its activations; reverse: walks backwards): xw [seq, batch, G*H] (input projection plus Wb), rt
 * [H, G*H] (R^T), rb [G*H] (Rb), h, cc the initial states, p the peepholes
 * [3H] or 0. Writes the step outputs hs_out[t] (time order) and the last c. */
static symc_status rec_dir(fe_ctx *c, const rec *r, int d, int reverse, uint32_t xw, uint32_t rt, uint32_t rb,
                           uint32_t h, uint32_t cc, uint32_t p, uint32_t *hs_out, uint32_t *c_last) {
    symc_status st = SYMC_OK;
    const ir_op *act = r->act + d * (r->kind == REC_LSTM ? 3 : r->kind == REC_GRU ? 2 : 1);
    uint32_t pp[3] = {0, 0, 0}, one = 0, rts[3], rbs[3];
    if (p && (st = rec_split(c, r, p, 3, pp))) return st;
    if (r->kind == REC_GRU) {
        /* R^T's columns and Rb by gate, for the h gate's own product */
        int out_k[3] = {-1, -1, -1};
        sym_expr sizes[3] = {sym_const(c->t, r->hs), sym_const(c->t, r->hs), sym_const(c->t, r->hs)};
        ir_attr a[2] = {symc_attr_int("axis", 1), symc_attr_dims("sizes", sizes, 3)};
        if ((st = fe_emit(c, IR_OP_SPLIT, &rt, 1, a, 2, out_k, 3, rts)) || (st = rec_split(c, r, rb, 3, rbs)) ||
            (st = fe_emit_scalar(c, r->dt, 1.0, &one)))
            return st;
    }
    for (int64_t s = 0; s < r->seq && !st; s++) {
        int64_t t = reverse ? r->seq - 1 - s : s;
        uint32_t xt, hr, g[4], v, u, w;
        if ((st = rec_pick(c, xw, t, &xt)) || (st = fe_emit_bin(c, IR_OP_MATMUL, h, rt, -1, &hr))) return st;
        if (r->kind == REC_RNN) {
            if ((st = rec_add3(c, xt, hr, rb, &v)) || (st = rec_act(c, r, act[0], v, &h))) return st;
        } else if (r->kind == REC_LSTM) {
            if ((st = rec_add3(c, xt, hr, rb, &v)) || (st = rec_split(c, r, v, 4, g))) return st;
            /* i, o, f, c */
            if (p &&
                ((st = fe_emit_bin(c, IR_OP_MUL, pp[0], cc, -1, &u)) ||
                 (st = fe_emit_bin(c, IR_OP_ADD, g[0], u, -1, &g[0])) ||
                 (st = fe_emit_bin(c, IR_OP_MUL, pp[2], cc, -1, &u)) ||
                 (st = fe_emit_bin(c, IR_OP_ADD, g[2], u, -1, &g[2]))))
                return st;
            uint32_t i, f, ct, o;
            if ((st = rec_act(c, r, act[0], g[0], &i)) || (st = rec_act(c, r, act[0], g[2], &f)) ||
                (st = rec_act(c, r, act[1], g[3], &ct)) || (st = fe_emit_bin(c, IR_OP_MUL, f, cc, -1, &u)) ||
                (st = fe_emit_bin(c, IR_OP_MUL, i, ct, -1, &w)) || (st = fe_emit_bin(c, IR_OP_ADD, u, w, -1, &cc)))
                return st;
            if (p &&
                ((st = fe_emit_bin(c, IR_OP_MUL, pp[1], cc, -1, &u)) ||
                 (st = fe_emit_bin(c, IR_OP_ADD, g[1], u, -1, &g[1]))))
                return st;
            if ((st = rec_act(c, r, act[0], g[1], &o)) || (st = rec_act(c, r, act[2], cc, &u)) ||
                (st = fe_emit_bin(c, IR_OP_MUL, o, u, -1, &h)))
                return st;
        } else {
            uint32_t xg[3], hg[3], z, rr, hh;
            if ((st = rec_split(c, r, xt, 3, xg)) || (st = fe_emit_bin(c, IR_OP_ADD, hr, rb, -1, &v)) ||
                (st = rec_split(c, r, v, 3, hg)) || (st = fe_emit_bin(c, IR_OP_ADD, xg[0], hg[0], -1, &u)) ||
                (st = rec_act(c, r, act[0], u, &z)) || (st = fe_emit_bin(c, IR_OP_ADD, xg[1], hg[1], -1, &u)) ||
                (st = rec_act(c, r, act[0], u, &rr)))
                return st;
            if (r->lbr) { /* r * (h Rh^T + Rbh) */
                if ((st = fe_emit_bin(c, IR_OP_MUL, rr, hg[2], -1, &u))) return st;
            } else { /* (r * h) Rh^T + Rbh */
                if ((st = fe_emit_bin(c, IR_OP_MUL, rr, h, -1, &u)) ||
                    (st = fe_emit_bin(c, IR_OP_MATMUL, u, rts[2], -1, &u)) ||
                    (st = fe_emit_bin(c, IR_OP_ADD, u, rbs[2], -1, &u)))
                    return st;
            }
            /* h' = (1 - z) * hh + z * h */
            if ((st = fe_emit_bin(c, IR_OP_ADD, xg[2], u, -1, &u)) || (st = rec_act(c, r, act[1], u, &hh)) ||
                (st = fe_emit_bin(c, IR_OP_SUB, one, z, -1, &u)) || (st = fe_emit_bin(c, IR_OP_MUL, u, hh, -1, &u)) ||
                (st = fe_emit_bin(c, IR_OP_MUL, z, h, -1, &w)) || (st = fe_emit_bin(c, IR_OP_ADD, u, w, -1, &h)))
                return st;
        }
        hs_out[t] = h;
    }
    *c_last = cc;
    return st;
}

/* Unsqueezes each of xs at axis and concatenates them there (out_k as fe_emit1). */
static symc_status rec_stack(fe_ctx *c, const uint32_t *xs, uint32_t n, int64_t axis, int out_k, uint32_t *out) {
    uint32_t *u = malloc(n * sizeof *u);
    if (!u) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    ir_attr a = symc_attr_ints("axes", &axis, 1);
    symc_status st = SYMC_OK;
    for (uint32_t k = 0; k < n && !st; k++)
        st = fe_emit1(c, IR_OP_UNSQUEEZE, &xs[k], 1, &a, 1, n == 1 ? out_k : -1, &u[k]);
    if (!st && n == 1) *out = u[0];
    if (!st && n > 1) {
        ir_attr ca = symc_attr_int("axis", axis);
        st = fe_emit1(c, IR_OP_CONCAT, u, n, &ca, 1, out_k, out);
    }
    free(u);
    return st;
}

/* The activations attribute (or the op's defaults), one op per gate function and direction. */
static symc_status rec_activations(fe_ctx *c, rec *r) {
    static const char *const defaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    static const int nact[3] = {1, 2, 3};
    const Onnx__AttributeProto *aa = fe_attr_of(c, "activations", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
    int na = nact[r->kind];
    if (aa && aa->n_strings != (size_t)(na * r->dirs))
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'activations' has %zu entries, needs %d", aa->n_strings,
                       na * r->dirs);
    for (int k = 0; k < na * r->dirs; k++) {
        char name[32] = {0};
        if (aa) {
            size_t len = aa->strings[k].len < sizeof name - 1 ? aa->strings[k].len : sizeof name - 1;
            memcpy(name, aa->strings[k].data, len);
        } else {
            memcpy(name, defaults[r->kind][k % na], strlen(defaults[r->kind][k % na]));
        }
        static const struct {
            const char *n;
            ir_op op;
        } acts[] = {{"Sigmoid", IR_OP_SIGMOID},
                    {"Tanh", IR_OP_TANH},
                    {"Relu", IR_OP_RELU},
                    {"Softsign", IR_OP_SOFTSIGN},
                    {"Softplus", IR_OP_SOFTPLUS}};
        int found = 0;
        for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
            if (!strcmp(acts[i].n, name)) r->act[k] = acts[i].op, found = 1;
        if (!found)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "activation '%s' is not supported (Sigmoid, Tanh, Relu, Softsign and Softplus are)", name);
    }
    return SYMC_OK;
}

/* The node's outputs from the unrolled steps: Y [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]),
 * Y_h and (LSTM) Y_c [dirs, batch, H] (layout 1: [batch, dirs, H]). steps: per direction, per time step. */
static symc_status rec_outputs(fe_ctx *c, const rec *rp, int64_t layout, const uint32_t *steps, const uint32_t *last_h,
                               const uint32_t *last_c) {
    rec r = *rp;
    symc_status st = SYMC_OK;
    int64_t perm3[3] = {1, 0, 2};
    if (!st && fe_has_out(c, 0)) { /* Y [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]) */
        uint32_t *per = malloc((size_t)r.seq * sizeof *per), y;
        if (!per) st = fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
        for (int64_t t = 0; t < r.seq && !st; t++) {
            uint32_t both[2] = {steps[t], r.dirs == 2 ? steps[r.seq + t] : 0};
            st = rec_stack(c, both, (uint32_t)r.dirs, 0, -1, &per[t]);
        }
        if (!st) st = rec_stack(c, per, (uint32_t)r.seq, 0, layout ? -1 : 0, &y);
        if (!st && layout) {
            int64_t perm4[4] = {2, 0, 1, 3};
            st = rec_perm(c, y, perm4, 4, 0, &y);
        }
        free(per);
    }
    uint32_t y;
    if (!st && fe_has_out(c, 1)) {
        st = rec_stack(c, last_h, (uint32_t)r.dirs, 0, layout ? -1 : 1, &y);
        if (!st && layout) st = rec_perm(c, y, perm3, 3, 1, &y);
    }
    if (!st && r.kind == REC_LSTM && fe_has_out(c, 2)) {
        st = rec_stack(c, last_c, (uint32_t)r.dirs, 0, layout ? -1 : 2, &y);
        if (!st && layout) st = rec_perm(c, y, perm3, 3, 2, &y);
    }
    return st;
}

static symc_status recurrent(fe_ctx *c, int kind) {
    static const int ngates[3] = {1, 3, 4};
    symc_status st = fe_need_inputs(c, 3, kind == REC_LSTM ? 8 : 6);
    rec r = {.kind = kind, .gates = ngates[kind]};
    uint32_t x, w, rw;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &w);
    if (!st) st = fe_in(c, 2, &rw);
    if (st) return st;
    r.dt = T(c, x)->dtype;
    if (!ir_dtype_is_float(r.dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' must be a float tensor", T(c, x)->name);
    const char *dir = fe_attr_s(c, "direction", "forward");
    int rev_only = !strcmp(dir, "reverse");
    r.dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
    if (r.dirs == 1 && !rev_only && strcmp(dir, "forward"))
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'direction' = '%s' (forward, reverse or bidirectional)", dir);
    int64_t layout = fe_attr_i(c, "layout", 0);
    r.hs = fe_attr_i(c, "hidden_size", 0);
    r.lbr = (int)fe_attr_i(c, "linear_before_reset", 0);
    r.clip = fe_attr_f(c, "clip", 0.0);
    if (layout != 0 && layout != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'layout' = %" PRId64 " must be 0 or 1", layout);
    if (fe_attr(c, "clip") && !(r.clip > 0))
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'clip' = %g must be positive", r.clip);
    if (kind == REC_LSTM && fe_attr_i(c, "input_forget", 0))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attribute 'input_forget' = 1 is not supported");
    if (fe_attr(c, "activation_alpha") || fe_attr(c, "activation_beta"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attributes 'activation_alpha'/'activation_beta' are not supported");
    if ((st = rec_activations(c, &r))) return st;
    const ir_tensor *xt = T(c, x);
    if (xt->rank != 3) return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' must be 3-D", xt->name);
    if (layout) { /* [batch, seq, in] -> [seq, batch, in] */
        int64_t perm[3] = {1, 0, 2};
        if ((st = rec_perm(c, x, perm, 3, -1, &x))) return st;
        xt = T(c, x);
    }
    if (!sym_is_const(c->t, xt->dims[0], &r.seq))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "the sequence length of '%s' is the symbol %s; symc unrolls %s over a constant sequence length "
                       "only",
                       c->node->input[0], fe_txt(c, xt->dims[0]), c->node->op_type);
    if (r.seq < 1 || r.seq * r.dirs > 512)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "sequence length %" PRId64 " is outside [1, %d] for unrolling", r.seq,
                       512 / r.dirs);
    r.batch = xt->dims[1];
    int64_t wd[3];
    const ir_tensor *wt = T(c, w);
    if (r.hs < 1 || wt->rank != 3 || !sym_is_const(c->t, wt->dims[0], &wd[0]) || wd[0] != r.dirs ||
        !sym_is_const(c->t, wt->dims[1], &wd[1]) || wd[1] != r.gates * r.hs)
        return fe_fail(c, SYMC_ERR_FORMAT, "W '%s' must be [%d, %" PRId64 ", input size] (hidden_size %" PRId64 ")",
                       wt->name, r.dirs, r.gates * r.hs, r.hs);
    /* sequence_lens: every entry must be the whole sequence */
    if (fe_has_in(c, 4)) {
        uint32_t sl, n;
        int64_t lens[64];
        if ((st = fe_in(c, 4, &sl)) || (st = fe_const_ints(c, sl, 4, "sequence_lens", lens, 64, &n))) return st;
        for (uint32_t k = 0; k < n; k++)
            if (lens[k] != r.seq)
                return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                               "sequence_lens[%u] = %" PRId64 " is shorter than the sequence (%" PRId64
                               "); only full-length sequences are supported",
                               k, lens[k], r.seq);
    }
    uint32_t h0 = 0, c0 = 0, bias = 0, peep = 0, zero;
    if (fe_has_in(c, 3) && (st = fe_in(c, 3, &bias))) return st;
    if (fe_has_in(c, 5) && (st = fe_in(c, 5, &h0))) return st;
    if (kind == REC_LSTM && fe_has_in(c, 6) && (st = fe_in(c, 6, &c0))) return st;
    if (kind == REC_LSTM && fe_has_in(c, 7) && (st = fe_in(c, 7, &peep))) return st;
    int64_t perm3[3] = {1, 0, 2};
    if (layout && h0 && (st = rec_perm(c, h0, perm3, 3, -1, &h0))) return st;
    if (layout && c0 && (st = rec_perm(c, c0, perm3, 3, -1, &c0))) return st;
    sym_expr zd[2] = {r.batch, sym_const(c->t, r.hs)};
    ir_attr za = symc_attr_dims("shape", zd, 2);
    if ((st = fe_emit_scalar(c, r.dt, 0.0, &zero)) || (st = fe_emit1(c, IR_OP_EXPAND, &zero, 1, &za, 1, -1, &zero)))
        return st;
    uint32_t *steps = malloc((size_t)(r.seq * r.dirs) * sizeof *steps);
    if (!steps) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    uint32_t last_h[2], last_c[2];
    int64_t p2[2] = {1, 0};
    for (int d = 0; d < r.dirs && !st; d++) {
        int dd = rev_only ? 1 : d; /* the reverse pass walks backwards */
        uint32_t wdir, rdir, xw, rt, rb, h = zero, cc = zero, p = 0;
        if ((st = rec_pick(c, w, d, &wdir)) || (st = rec_perm(c, wdir, p2, 2, -1, &wdir)) ||
            (st = fe_emit_bin(c, IR_OP_MATMUL, x, wdir, -1, &xw)) || (st = rec_pick(c, rw, d, &rdir)) ||
            (st = rec_perm(c, rdir, p2, 2, -1, &rt)))
            break;
        if (bias) {
            uint32_t bd, halves[2];
            int out_k[2] = {-1, -1};
            sym_expr sz[2] = {sym_const(c->t, r.gates * r.hs), sym_const(c->t, r.gates * r.hs)};
            ir_attr sa[2] = {symc_attr_int("axis", 0), symc_attr_dims("sizes", sz, 2)};
            if ((st = rec_pick(c, bias, d, &bd)) || (st = fe_emit(c, IR_OP_SPLIT, &bd, 1, sa, 2, out_k, 2, halves)) ||
                (st = fe_emit_bin(c, IR_OP_ADD, xw, halves[0], -1, &xw)))
                break;
            rb = halves[1];
        } else {
            int64_t gd = r.gates * r.hs;
            sym_expr bdim = sym_const(c->t, gd);
            ir_attr ba = symc_attr_dims("shape", &bdim, 1);
            uint32_t z1;
            if ((st = fe_emit_scalar(c, r.dt, 0.0, &z1)) || (st = fe_emit1(c, IR_OP_EXPAND, &z1, 1, &ba, 1, -1, &rb)))
                break;
        }
        if (h0 && (st = rec_pick(c, h0, d, &h))) break;
        if (c0 && (st = rec_pick(c, c0, d, &cc))) break;
        if (peep && (st = rec_pick(c, peep, d, &p))) break;
        if ((st = rec_dir(c, &r, d, dd, xw, rt, rb, h, cc, p, steps + d * r.seq, &last_c[d]))) break;
        last_h[d] = steps[d * r.seq + (dd ? 0 : r.seq - 1)];
    }
    if (!st) st = rec_outputs(c, &r, layout, steps, last_h, last_c);
    free(steps);
    return st;
}
static symc_status h_rnn(fe_ctx *c) { return recurrent(c, REC_RNN); }
static symc_status h_gru(fe_ctx *c) { return recurrent(c, REC_GRU); }
static symc_status h_lstm(fe_ctx *c) { return recurrent(c, REC_LSTM); }

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_recurrent[] = {
    {"GRU", h_gru},
    {"LSTM", h_lstm},
    {"RNN", h_rnn},
};
const uint32_t fe_onnx_n_ops_recurrent = sizeof fe_onnx_ops_recurrent / sizeof fe_onnx_ops_recurrent[0];
