/* ONNX control flow and optionals: an If whose condition is known at build time, or decided by
 * the input sizes (onnx_branch.c), is its chosen branch, imported in place; Loop (constant trip count) and Scan (constant length) are unrolled,
 * their bodies imported once per iteration (fe_translate_node for each body node);
 * OptionalHasElement and OptionalGetElement of a present value. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- control flow ----------------------------------------------------------------------------------- */

/* Imports the nodes of a sub-graph (a branch of If, the body of Loop or
 * Scan) in place: they read outer values and the body's inputs (bound by
 * the caller) by name. A loop body imported once per iteration rebinds its
 * names each time (its tensors get fresh names). */
static symc_status import_body(fe_ctx *c, const Onnx__GraphProto *g, const char *label) {
    if (g->n_initializer || g->n_sparse_initializer)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the %s has initializers, which are not supported (use Constant nodes)",
                       label);
    const Onnx__NodeProto *node = c->node;
    const char *where = c->where, *source = c->source;
    char w2[1200], s2[300];
    symc_status st = SYMC_OK;
    for (size_t i = 0; i < g->n_node && !st; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (!n || !n->op_type || !*n->op_type)
            return fe_fail(c, SYMC_ERR_FORMAT, "node %zu of the %s has no op type", i, label);
        int bad = n->n_output == 0;
        for (size_t k = 0; k < n->n_input; k++) bad |= !n->input[k];
        for (size_t k = 0; k < n->n_output; k++) bad |= !n->output[k];
        for (size_t k = 0; k < n->n_attribute; k++) bad |= !n->attribute[k] || !n->attribute[k]->name;
        if (bad)
            return fe_fail(c, SYMC_ERR_FORMAT, "node %zu (%s) of the %s has a missing input, output or attribute name",
                           i, n->op_type, label);
        if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "op '%s' of domain '%s' in the %s is not supported", n->op_type,
                           n->domain, label);
        if (n->name && *n->name) snprintf(s2, sizeof s2, "%s", n->name);
        else snprintf(s2, sizeof s2, "%.200s/%.60s#%zu", source, n->op_type, i);
        snprintf(w2, sizeof w2, "node '%.299s' (%.100s, opset %" PRId64 ") in the %s of %.600s", s2, n->op_type,
                 c->opset, label, where);
        c->node = n, c->where = w2, c->source = s2;
        st = fe_translate_node(c);
        for (size_t k = 0; k < n->n_output && !st; k++)
            if (n->output[k][0] && !fe_map_get(&c->values, n->output[k], NULL))
                st = fe_fail(c, SYMC_ERR_INTERNAL, "output %zu '%s' was not produced", k, n->output[k]);
        c->node = node, c->where = where, c->source = source;
    }
    return st;
}

/* The tensor of sub-graph output k (after import_body). */
static symc_status body_output(fe_ctx *c, const Onnx__GraphProto *g, size_t k, const char *label, uint32_t *t) {
    if (k >= g->n_output || !g->output[k] || !g->output[k]->name || !fe_map_get(&c->values, g->output[k]->name, t))
        return fe_fail(c, SYMC_ERR_FORMAT, "output %zu of the %s is not produced by it or an outer value", k, label);
    return SYMC_OK;
}

/* ONNX output k as an identity of t, carrying t's build-time values on. */
static symc_status emit_named(fe_ctx *c, uint32_t t, uint32_t k) {
    uint32_t out;
    if (!fe_has_out(c, k)) return SYMC_OK;
    symc_status st = fe_emit1(c, IR_OP_IDENTITY, &t, 1, NULL, 0, (int)k, &out);
    if (!st && T(c, t)->value) st = fe_set_values(c, out, T(c, t)->value, T(c, t)->n_value);
    return st;
}

static symc_status bind_name(fe_ctx *c, const char *name, uint32_t t) {
    if (!name || !*name) return SYMC_OK;
    return fe_map_put(&c->values, name, t) ? SYMC_OK : fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
}

/* If whose condition is known at build time (a constant, or a value folded
 * from shapes, as in ONNX's function-expanded AffineGrid) or a comparison of
 * input sizes (onnx_branch.c: proven over the ranges, or one region per
 * side): the chosen branch's nodes are imported in place and the If's
 * outputs are the branch's outputs. A condition known only at run time is
 * refused: symc compiles the branches ahead of the data. */
static symc_status h_if(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t cond;
    if (!st) st = fe_in(c, 0, &cond);
    if (st) return st;
    const ir_tensor *ct = T(c, cond);
    int64_t v;
    double d = 0;
    int take = -1;
    if (ct->value && ct->n_value == 1 && sym_is_const(c->t, ct->value[0], &v)) d = (double)v;
    else if (ct->constant == IR_NONE && (st = fe_shape_condition(c, cond, &take))) return st;
    else if (take >= 0) d = take;
    else if ((st = fe_const_scalar(c, cond, 0, "the condition", &d))) return st;
    const char *which = d != 0 ? "then_branch" : "else_branch";
    const Onnx__AttributeProto *ba = fe_attr_of(c, which, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    if (!ba || !ba->g) return fe_fail(c, SYMC_ERR_FORMAT, "attribute '%s' (a graph) is missing", which);
    const Onnx__GraphProto *g = ba->g;
    if (g->n_output != c->node->n_output)
        return fe_fail(c, SYMC_ERR_FORMAT, "the %s has %zu outputs, the node %zu", which, g->n_output,
                       c->node->n_output);
    if ((st = import_body(c, g, which))) return st;
    for (size_t k = 0; k < g->n_output && !st; k++) {
        uint32_t t;
        if (!(st = body_output(c, g, k, which, &t))) st = emit_named(c, t, (uint32_t)k);
    }
    return st;
}

#define MAX_UNROLL 4096 /* iterations of Loop and Scan unrolled at import, at most */

/* Stacks per-iteration tensors along a new axis `axis` into ONNX output k. */
static symc_status stack_into(fe_ctx *c, const uint32_t *parts, uint32_t n, int64_t axis, int reverse, uint32_t k) {
    uint32_t *u = malloc((n ? n : 1) * sizeof *u), out;
    if (!u) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    ir_attr un = symc_attr_ints("axes", &axis, 1), cat = symc_attr_int("axis", axis);
    symc_status st = SYMC_OK;
    for (uint32_t i = 0; i < n && !st; i++)
        st = fe_emit1(c, IR_OP_UNSQUEEZE, &parts[reverse ? n - 1 - i : i], 1, &un, 1, -1, &u[i]);
    if (!st) st = fe_emit1(c, IR_OP_CONCAT, u, n, &cat, 1, (int)k, &out);
    free(u);
    return st;
}

/* Loop with a trip count known at build time, unrolled: the body imported
 * once per iteration with the iteration number a constant, the loop-carried
 * values threaded through, and the scan outputs stacked along a new axis 0.
 * The body's condition must be decided at build time each iteration (a
 * false one ends the loop); a loop of zero iterations with scan outputs,
 * whose shapes only the body knows, is refused. */
static symc_status h_loop(fe_ctx *c) {
    uint32_t n_in = (uint32_t)c->node->n_input, t;
    if (n_in < 2) return fe_fail(c, SYMC_ERR_FORMAT, "has %u inputs, needs at least 2 (M, cond)", n_in);
    const Onnx__AttributeProto *ba = fe_attr_of(c, "body", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    if (!ba || !ba->g) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'body' (a graph) is missing");
    const Onnx__GraphProto *g = ba->g;
    uint32_t n_carried = n_in - 2, n_out = (uint32_t)c->node->n_output;
    if (g->n_input != n_carried + 2 || g->n_output < n_carried + 1 || n_out != g->n_output - 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "the body has %zu inputs and %zu outputs for %u loop-carried values",
                       g->n_input, g->n_output, n_carried);
    for (size_t k = 0; k < g->n_input; k++)
        if (!g->input[k] || !g->input[k]->name) return fe_fail(c, SYMC_ERR_FORMAT, "body input %zu has no name", k);
    symc_status st;
    sym_expr me;
    int64_t trip = -1;
    if (!fe_has_in(c, 0))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "a Loop without a trip count (input 0) is not supported");
    if ((st = fe_scalar_value(c, 0, "the trip count", &me))) return st;
    if (!sym_is_const(c->t, me, &trip))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the trip count %s must be a constant", fe_txt(c, me));
    if (trip < 0 || trip > MAX_UNROLL)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "trip count %" PRId64 " is outside [0, %d] (the loop is unrolled)",
                       trip, MAX_UNROLL);
    if (fe_has_in(c, 1)) {
        double cd;
        uint32_t ct;
        if ((st = fe_in(c, 1, &ct))) return st;
        const ir_tensor *cx = T(c, ct);
        int64_t v;
        if (cx->value && cx->n_value == 1 && sym_is_const(c->t, cx->value[0], &v)) cd = (double)v;
        else if ((st = fe_const_scalar(c, ct, 1, "the condition", &cd))) return st;
        if (cd == 0) trip = 0;
    }
    uint32_t n_scan = n_out - n_carried;
    if (trip == 0 && n_scan)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "a Loop of zero iterations with scan outputs is not supported");
    uint32_t *state = malloc((n_carried + 1) * sizeof *state);
    uint32_t *scans = malloc(((size_t)n_scan * (size_t)(trip ? trip : 1) + 1) * sizeof *scans);
    if (!state || !scans) {
        free(state), free(scans);
        return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    }
    st = SYMC_OK;
    for (uint32_t k = 0; k < n_carried && !st; k++) st = fe_in(c, 2 + k, &state[k]);
    uint8_t yes = 1;
    uint32_t cond_t = 0;
    if (!st) st = fe_const(c, SYMC_BOOL, 0, NULL, &yes, -1, &cond_t);
    sym_expr one = sym_const(c->t, 1);
    if (!st) st = fe_set_values(c, cond_t, &one, 1); /* a body passing it on (Identity) keeps it known */
    int64_t it = 0;
    for (; it < trip && !st; it++) {
        uint32_t iter;
        if ((st = fe_const(c, SYMC_I64, 0, NULL, &it, -1, &iter)) || (st = bind_name(c, g->input[0]->name, iter)) ||
            (st = bind_name(c, g->input[1]->name, cond_t)))
            break;
        for (uint32_t k = 0; k < n_carried && !st; k++) st = bind_name(c, g->input[2 + k]->name, state[k]);
        if (st || (st = import_body(c, g, "Loop body"))) break;
        for (uint32_t k = 0; k < n_carried && !st; k++) st = body_output(c, g, 1 + k, "Loop body", &state[k]);
        for (uint32_t k = 0; k < n_scan && !st; k++)
            st = body_output(c, g, 1 + n_carried + k, "Loop body", &scans[(size_t)k * (size_t)trip + (size_t)it]);
        if (st || (st = body_output(c, g, 0, "Loop body", &t))) break;
        const ir_tensor *cx = T(c, t);
        int64_t v;
        if (!(cx->value && cx->n_value == 1 && sym_is_const(c->t, cx->value[0], &v))) {
            double cd;
            if (cx->constant == IR_NONE || fe_const_scalar(c, t, 0, "the body's condition", &cd)) {
                st = fe_fail(c, SYMC_ERR_UNSUPPORTED,
                             "the Loop body's condition '%s' is not known at build time in iteration %" PRId64
                             " (the loop is unrolled)",
                             g->output[0]->name, it);
                break;
            }
            v = cd != 0;
        }
        if (!v && it + 1 < trip) {
            if (n_scan) {
                st = fe_fail(c, SYMC_ERR_UNSUPPORTED, "a Loop ending early with scan outputs is not supported");
                break;
            }
            it++;
            break;
        }
    }
    for (uint32_t k = 0; k < n_carried && !st; k++) st = emit_named(c, state[k], k);
    for (uint32_t k = 0; k < n_scan && !st; k++)
        st = stack_into(c, &scans[(size_t)k * (size_t)trip], (uint32_t)trip, 0, 0, n_carried + k);
    free(state), free(scans);
    return st;
}

/* Scan (opset 9+), unrolled over the scan axis, whose length must be a
 * constant: step t slices every scan input at t (or length - 1 - t when
 * reversed) and drops the axis, imports the body with the states and the
 * slices bound, threads the states on, and stacks the scan outputs along
 * their axes. */
static symc_status h_scan(fe_ctx *c) {
    const Onnx__AttributeProto *ba = fe_attr_of(c, "body", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    if (!ba || !ba->g) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'body' (a graph) is missing");
    const Onnx__GraphProto *g = ba->g;
    int64_t n_scan_in = fe_attr_i(c, "num_scan_inputs", -1);
    uint32_t n_in = (uint32_t)c->node->n_input, n_out = (uint32_t)c->node->n_output;
    if (n_scan_in < 1 || n_scan_in > n_in)
        return fe_fail(c, SYMC_ERR_FORMAT, "num_scan_inputs = %" PRId64 " for %u inputs", n_scan_in, n_in);
    uint32_t n_state = n_in - (uint32_t)n_scan_in, n_scan_out = n_out - n_state;
    if (n_out < n_state || g->n_input != n_in || g->n_output != n_out)
        return fe_fail(c, SYMC_ERR_FORMAT, "the body has %zu inputs and %zu outputs; the node %u and %u", g->n_input,
                       g->n_output, n_in, n_out);
    for (size_t k = 0; k < g->n_input; k++)
        if (!g->input[k] || !g->input[k]->name) return fe_fail(c, SYMC_ERR_FORMAT, "body input %zu has no name", k);
    const int64_t *ia = NULL, *id = NULL, *oa = NULL, *od = NULL;
    uint32_t nia = 0, nid = 0, noa = 0, nod = 0;
    fe_attr_ints(c, "scan_input_axes", &ia, &nia);
    fe_attr_ints(c, "scan_input_directions", &id, &nid);
    fe_attr_ints(c, "scan_output_axes", &oa, &noa);
    fe_attr_ints(c, "scan_output_directions", &od, &nod);
    if ((nia && nia != n_scan_in) || (nid && nid != n_scan_in) || (noa && noa != n_scan_out) ||
        (nod && nod != n_scan_out))
        return fe_fail(c, SYMC_ERR_FORMAT, "the scan axes and directions do not match the scan inputs and outputs");
    symc_status st = SYMC_OK;
    uint32_t xs[64], state[64];
    int32_t axes[64];
    int64_t len = -1;
    if (n_in > 64 || n_out > 64) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "more than 64 inputs or outputs");
    for (uint32_t k = 0; k < n_state && !st; k++) st = fe_in(c, k, &state[k]);
    for (uint32_t j = 0; j < (uint32_t)n_scan_in && !st; j++) {
        if ((st = fe_in(c, n_state + j, &xs[j]))) break;
        int32_t r = T(c, xs[j])->rank;
        if ((st = fe_norm_axis_of(c, nia ? ia[j] : 0, r, &axes[j]))) break;
        int64_t l;
        if (!sym_is_const(c->t, T(c, xs[j])->dims[axes[j]], &l))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "the scan length %s of input '%s' must be a constant (the scan is unrolled)",
                           fe_txt(c, T(c, xs[j])->dims[axes[j]]), T(c, xs[j])->name);
        if (len >= 0 && l != len)
            return fe_fail(c, SYMC_ERR_FORMAT, "scan inputs have lengths %" PRId64 " and %" PRId64, len, l);
        len = l;
    }
    if (st) return st;
    if (len > MAX_UNROLL)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "scan length %" PRId64 " exceeds %d (the scan is unrolled)", len,
                       MAX_UNROLL);
    if (len == 0 && n_scan_out)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "a Scan of length 0 with scan outputs is not supported");
    uint32_t *outs = malloc(((size_t)n_scan_out * (size_t)(len ? len : 1) + 1) * sizeof *outs);
    if (!outs) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    for (int64_t t = 0; t < len && !st; t++) {
        for (uint32_t k = 0; k < n_state && !st; k++) st = bind_name(c, g->input[k]->name, state[k]);
        for (uint32_t j = 0; j < (uint32_t)n_scan_in && !st; j++) {
            int64_t at = nid && id[j] ? len - 1 - t : t, ax = axes[j];
            sym_expr s0 = sym_const(c->t, at), e0 = sym_const(c->t, at + 1);
            ir_attr sl[3] = {symc_attr_dims("starts", &s0, 1), symc_attr_dims("ends", &e0, 1),
                             symc_attr_ints("axes", &ax, 1)};
            ir_attr sq = symc_attr_ints("axes", &ax, 1);
            uint32_t piece;
            if ((st = fe_emit1(c, IR_OP_SLICE, &xs[j], 1, sl, 3, -1, &piece)) ||
                (st = fe_emit1(c, IR_OP_SQUEEZE, &piece, 1, &sq, 1, -1, &piece)))
                break;
            st = bind_name(c, g->input[n_state + j]->name, piece);
        }
        if (st || (st = import_body(c, g, "Scan body"))) break;
        for (uint32_t k = 0; k < n_state && !st; k++) st = body_output(c, g, k, "Scan body", &state[k]);
        for (uint32_t k = 0; k < n_scan_out && !st; k++)
            st = body_output(c, g, n_state + k, "Scan body", &outs[(size_t)k * (size_t)len + (size_t)t]);
    }
    for (uint32_t k = 0; k < n_state && !st; k++) st = emit_named(c, state[k], k);
    for (uint32_t k = 0; k < n_scan_out && !st; k++) {
        int32_t r = T(c, outs[(size_t)k * (size_t)len])->rank + 1, ax = 0;
        if ((st = fe_norm_axis_of(c, noa ? oa[k] : 0, r, &ax))) break;
        st = stack_into(c, &outs[(size_t)k * (size_t)len], (uint32_t)len, ax, nod && od[k], n_state + k);
    }
    free(outs);
    return st;
}

/* ---- optionals ------------------------------------------------------------------------------------- */

/* symc's values are tensors, never optional or sequence types, so an
 * optional reaching these ops is a tensor when its input is named and
 * "none" when it is absent: OptionalHasElement is a constant, and
 * OptionalGetElement of a tensor is the tensor. */
static symc_status h_optional_has_element(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 0, 1);
    uint32_t x, out;
    if (!st && fe_has_in(c, 0)) st = fe_in(c, 0, &x);
    uint8_t has = fe_has_in(c, 0);
    return st ? st : fe_const(c, SYMC_BOOL, 0, NULL, &has, 0, &out);
}

static symc_status h_optional_get_element(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, out;
    if (!st) st = fe_in(c, 0, &x);
    return st ? st : fe_emit1(c, IR_OP_IDENTITY, &x, 1, NULL, 0, 0, &out);
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_control[] = {
    {"If", h_if},
    {"Loop", h_loop},
    {"OptionalGetElement", h_optional_get_element},
    {"OptionalHasElement", h_optional_has_element},
    {"Scan", h_scan},
};
const uint32_t fe_onnx_n_ops_control = sizeof fe_onnx_ops_control / sizeof fe_onnx_ops_control[0];
