/* .symir (de)serialization: the one C++ translation unit for this
 * schema, using the official FlatBuffers runtime and code that flatc
 * generates from ir/symir.fbs at build time, behind the C API of ir/ir.h.
 *
 * Writing: the expressions reachable from tensor dims, dim attributes and
 * guards are gathered by a post-order walk, so the pool is topologically
 * ordered and holds none of the intermediate expressions the simplifier made.
 *
 * Reading untrusted bytes happens in three steps, the first two allocating
 * nothing: (1) the identifier and the FlatBuffers verifier (every offset and
 * vector in bounds), (2) a semantic check of every index, count and enum
 * against the sizes in the file, (3) building the module through the same
 * calls the builder uses, then ir_verify. Any failure frees what was built and
 * reports what is wrong and where. A buffer at an address that is not 8-byte
 * aligned is copied before step (1) (the verifier checks alignment relative
 * to the buffer's start only), and int64/double vector elements are read with
 * memcpy (the verifier never checks their alignment). No exception escapes:
 * allocation failures inside the C++ runtime become SYMC_ERR_NOMEM. */
#include "ir/ir.h"

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sys/stat.h>
#include <vector>

#include "symir_generated.h"
#include "common/symir_fb.h"

namespace fb = symc::fb;

namespace {

const uint32_t kNoIndex = 0xffffffffu;
/* FlatBuffers addresses at most 2 GiB; keep a margin for everything else. */
const size_t kMaxConstantBytes = (size_t)2047 * 1024 * 1024;

/* ---- writing ---------------------------------------------------------- */

struct Writer {
    ir_module *m;
    std::vector<uint32_t> pool_of; /* handle -> pool index, kNoIndex if absent */
    std::vector<sym_expr> pool;    /* pool index -> handle */

    /* Post-order walk from one root (iterative: expressions can be deep). */
    bool add(sym_expr root, symc_error *err) {
        if (root == SYM_NONE) return true;
        if (root >= pool_of.size()) {
            symc_error_setf(err, SYMC_ERR_VERIFY, "expression %u is outside the module's %zu", root, pool_of.size());
            return false;
        }
        std::vector<std::pair<sym_expr, uint32_t>> stack;
        stack.push_back({root, 0});
        while (!stack.empty()) {
            sym_expr e = stack.back().first;
            uint32_t next = stack.back().second;
            if (pool_of[e] != kNoIndex) {
                stack.pop_back();
                continue;
            }
            sym_view v;
            sym_expr_view(m->syms, e, &v);
            if (next < v.n) {
                stack.back().second++;
                sym_expr child = v.ops[next];
                if (child >= pool_of.size()) {
                    symc_error_setf(err, SYMC_ERR_INTERNAL, "expression %u has operand %u out of range", e, child);
                    return false;
                }
                if (pool_of[child] == kNoIndex) stack.push_back({child, 0});
                continue;
            }
            pool_of[e] = (uint32_t)pool.size();
            pool.push_back(e);
            stack.pop_back();
        }
        return true;
    }
    uint32_t idx(sym_expr e) const { return e == SYM_NONE ? kNoIndex : pool_of[e]; }
};

symc_status serialize(ir_module *m, uint8_t **buf, size_t *size, symc_error *err) {
    Writer w;
    w.m = m;
    w.pool_of.assign(sym_expr_count(m->syms), kNoIndex);
    size_t const_bytes = 0;
    for (uint32_t i = 0; i < m->n_constants; i++) const_bytes += m->constants[i].size;
    if (const_bytes > kMaxConstantBytes)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "module '%s' holds %zu bytes of constants; a .symir file holds at "
                               "most %zu",
                               m->name, const_bytes, kMaxConstantBytes);

    for (uint32_t i = 0; i < m->n_tensors; i++)
        for (int d = 0; d < m->tensors[i].rank; d++)
            if (!w.add(m->tensors[i].dims[d], err)) return err ? err->code : SYMC_ERR_VERIFY;
    for (uint32_t i = 0; i < m->n_nodes; i++)
        for (uint32_t a = 0; a < m->nodes[i].n_attrs; a++) {
            const ir_attr &at = m->nodes[i].attrs[a];
            if (at.kind == IR_ATTR_DIMS)
                for (uint32_t k = 0; k < at.n; k++)
                    if (!w.add(at.dims[k], err)) return err ? err->code : SYMC_ERR_VERIFY;
        }
    for (sym_id i = 0; i < sym_symbol_count(m->syms); i++)
        if (sym_symbol_bound(m->syms, i) != SYM_NONE && !w.add(sym_symbol_bound(m->syms, i), err))
            return err ? err->code : SYMC_ERR_VERIFY;
    uint32_t ng = sym_guard_count(m->syms);
    for (uint32_t i = 0; i < ng; i++) {
        sym_guard g;
        sym_guard_get(m->syms, i, &g);
        if (!w.add(g.lhs, err) || !w.add(g.rhs, err)) return err ? err->code : SYMC_ERR_VERIFY;
    }

    flatbuffers::FlatBufferBuilder b(1024 + const_bytes);

    std::vector<flatbuffers::Offset<fb::Expr>> exprs;
    for (sym_expr e : w.pool) {
        sym_view v;
        sym_expr_view(m->syms, e, &v);
        std::vector<uint32_t> ops(v.n);
        for (uint32_t k = 0; k < v.n; k++) ops[k] = w.idx(v.ops[k]);
        auto ops_v = v.n ? b.CreateVector(ops) : 0;
        flatbuffers::Offset<flatbuffers::Vector<int64_t>> coefs_v = 0;
        if (v.kind == SYM_ADD && v.coefs) coefs_v = b.CreateVector(v.coefs, v.n);
        exprs.push_back(fb::CreateExpr(b, (fb::ExprKind)v.kind, v.value, ops_v, coefs_v));
    }

    std::vector<flatbuffers::Offset<fb::Symbol>> symbols;
    for (sym_id i = 0; i < sym_symbol_count(m->syms); i++) {
        sym_symbol_info s;
        sym_symbol_get(m->syms, i, &s);
        sym_expr bound = sym_symbol_bound(m->syms, i);
        symbols.push_back(fb::CreateSymbol(b, b.CreateString(s.name), s.min, s.opt, s.max, s.multiple_of,
                                           b.CreateString(s.provenance ? s.provenance : ""),
                                           bound == SYM_NONE ? -1 : (int32_t)w.idx(bound)));
    }

    std::vector<flatbuffers::Offset<fb::Guard>> guards;
    for (uint32_t i = 0; i < ng; i++) {
        sym_guard g;
        sym_guard_get(m->syms, i, &g);
        guards.push_back(fb::CreateGuard(b, (fb::Rel)g.rel, w.idx(g.lhs), w.idx(g.rhs),
                                         b.CreateString(g.provenance ? g.provenance : "")));
    }

    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    for (uint32_t i = 0; i < m->n_tensors; i++) {
        const ir_tensor &t = m->tensors[i];
        std::vector<uint32_t> dims;
        for (int d = 0; d < t.rank; d++) dims.push_back(w.idx(t.dims[d]));
        tensors.push_back(
            fb::CreateTensor(b, b.CreateString(t.name), (fb::DType)t.dtype, t.rank, b.CreateVector(dims), t.constant));
    }

    std::vector<flatbuffers::Offset<fb::Node>> nodes;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node &n = m->nodes[i];
        std::vector<flatbuffers::Offset<fb::Attr>> attrs;
        for (uint32_t a = 0; a < n.n_attrs; a++)
            attrs.push_back(symc::fbutil::encode_attr(b, n.attrs[a], [&](sym_expr e) { return w.idx(e); }));
        nodes.push_back(fb::CreateNode(b, b.CreateString(ir_op_get(n.op)->name), b.CreateString(n.name),
                                       b.CreateString(n.source), b.CreateVector(n.in, n.n_in),
                                       b.CreateVector(n.out, n.n_out), b.CreateVector(attrs)));
    }

    std::vector<flatbuffers::Offset<fb::Constant>> constants;
    for (uint32_t i = 0; i < m->n_constants; i++) {
        b.ForceVectorAlignment(m->constants[i].size, 1, 16);
        auto data = b.CreateVector(m->constants[i].data, m->constants[i].size);
        constants.push_back(fb::CreateConstant(b, data));
    }

    char producer[64];
    snprintf(producer, sizeof producer, "symc %s", SYMC_VERSION_STRING);
    auto root = fb::CreateModule(b, IR_FORMAT_VERSION, b.CreateString(producer), b.CreateString(m->name),
                                 b.CreateVector(symbols), b.CreateVector(exprs), b.CreateVector(guards),
                                 b.CreateVector(tensors), b.CreateVector(nodes), b.CreateVector(m->inputs, m->n_inputs),
                                 b.CreateVector(m->outputs, m->n_outputs), b.CreateVector(constants));
    fb::FinishModuleBuffer(b, root);

    *size = b.GetSize();
    *buf = (uint8_t *)malloc(*size);
    if (!*buf) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory serializing module '%s'", m->name);
    memcpy(*buf, b.GetBufferPointer(), *size);
    return SYMC_OK;
}

/* ---- reading: semantic check (no allocation) ---------------------------- */

using symc::fbutil::bad;
using symc::fbutil::len;

symc_status check(const fb::Module *mod, symc_error *err) {
    uint32_t nsym = len(mod->symbols()), nexpr = len(mod->exprs()), nt = len(mod->tensors());
    uint32_t nc = len(mod->constants());
    for (uint32_t i = 0; i < nsym; i++) {
        const fb::Symbol *s = mod->symbols()->Get(i);
        if (s->min() > s->max() || s->opt() < s->min() || s->opt() > s->max() || s->multiple_of() < 1)
            return bad(err,
                       "symbol %u '%s' has an invalid range [%" PRId64 ", %" PRId64 "] opt %" PRId64
                       " multiple of %" PRId64,
                       i, s->name()->c_str(), s->min(), s->max(), s->opt(), s->multiple_of());
        if (s->bound() < -1 || s->bound() >= (int64_t)nexpr)
            return bad(err, "symbol %u '%s' has bound %d, but the file has %u expressions", i, s->name()->c_str(),
                       (int)s->bound(), nexpr);
    }
    for (uint32_t i = 0; i < nexpr; i++) {
        const fb::Expr *e = mod->exprs()->Get(i);
        int k = (int)e->kind();
        if (k < (int)fb::ExprKind::MIN || k > (int)fb::ExprKind::MAX)
            return bad(err, "expression %u has unknown kind %d", i, k);
        uint32_t nops = len(e->ops());
        for (uint32_t j = 0; j < nops; j++)
            if (e->ops()->Get(j) >= i)
                return bad(err, "expression %u refers to expression %u, which is not an earlier one", i,
                           e->ops()->Get(j));
        /* coefficients belong to sums only, one per operand */
        uint32_t ncoefs = len(e->coefs());
        if (e->kind() != fb::ExprKind::Add && ncoefs != 0)
            return bad(err, "expression %u (%s) has %u coefficients; only sums (Add) have them", i,
                       fb::EnumNameExprKind(e->kind()), ncoefs);
        switch (e->kind()) {
        case fb::ExprKind::Const:
            if (nops) return bad(err, "expression %u (constant) has %u operands", i, nops);
            break;
        case fb::ExprKind::Symbol:
            if (nops) return bad(err, "expression %u (symbol) has %u operands", i, nops);
            if (e->value() < 0 || (uint64_t)e->value() >= nsym)
                return bad(err, "expression %u refers to symbol %" PRId64 ", but the file has %u", i, e->value(), nsym);
            break;
        case fb::ExprKind::Add:
            if (nops < 1 || ncoefs != nops)
                return bad(err, "expression %u (sum) has %u operands and %u coefficients", i, nops, ncoefs);
            break;
        case fb::ExprKind::Mul:
            if (nops < 1 || e->value() == 0)
                return bad(err, "expression %u (product) has %u operands and factor %" PRId64, i, nops, e->value());
            break;
        default:
            if (nops != 2) return bad(err, "expression %u needs 2 operands, has %u", i, nops);
        }
    }
    for (uint32_t i = 0; i < len(mod->guards()); i++) {
        const fb::Guard *g = mod->guards()->Get(i);
        if ((int)g->rel() < (int)fb::Rel::MIN || (int)g->rel() > (int)fb::Rel::MAX)
            return bad(err, "guard %u has unknown relation %d", i, (int)g->rel());
        if (g->lhs() >= nexpr || g->rhs() >= nexpr)
            return bad(err, "guard %u refers to expressions %u and %u, but the file has %u", i, g->lhs(), g->rhs(),
                       nexpr);
    }
    for (uint32_t i = 0; i < nt; i++) {
        const fb::Tensor *t = mod->tensors()->Get(i);
        if ((int)t->dtype() < 0 || (int)t->dtype() >= SYMC_DTYPE_COUNT)
            return bad(err, "tensor '%s' has unknown dtype %d", t->name()->c_str(), (int)t->dtype());
        if (t->rank() < IR_RANK_UNKNOWN || t->rank() > IR_MAX_RANK)
            return bad(err, "tensor '%s' has rank %d, outside [-1, %d]", t->name()->c_str(), t->rank(), IR_MAX_RANK);
        uint32_t want = t->rank() > 0 ? (uint32_t)t->rank() : 0;
        if (len(t->dims()) != want)
            return bad(err, "tensor '%s' has rank %d but %u dims", t->name()->c_str(), t->rank(), len(t->dims()));
        for (uint32_t d = 0; d < want; d++)
            if (t->dims()->Get(d) >= nexpr)
                return bad(err, "tensor '%s' dim %u refers to expression %u, but the file has %u", t->name()->c_str(),
                           d, t->dims()->Get(d), nexpr);
        if (t->constant() != kNoIndex && t->constant() >= nc)
            return bad(err, "tensor '%s' refers to constant %u, but the file has %u", t->name()->c_str(), t->constant(),
                       nc);
    }
    for (uint32_t i = 0; i < len(mod->nodes()); i++) {
        const fb::Node *n = mod->nodes()->Get(i);
        ir_op op;
        if (!ir_op_find(n->op()->c_str(), &op))
            return bad(err, "node '%s' has unknown op '%s' (written by a newer symc?)", n->name()->c_str(),
                       n->op()->c_str());
        for (uint32_t j = 0; j < len(n->inputs()); j++)
            if (n->inputs()->Get(j) >= nt)
                return bad(err, "node '%s' input %u refers to tensor %u, but the file has %u tensors",
                           n->name()->c_str(), j, n->inputs()->Get(j), nt);
        for (uint32_t j = 0; j < len(n->outputs()); j++)
            if (n->outputs()->Get(j) >= nt)
                return bad(err, "node '%s' output %u refers to tensor %u, but the file has %u tensors",
                           n->name()->c_str(), j, n->outputs()->Get(j), nt);
        for (uint32_t a = 0; a < len(n->attrs()); a++) {
            const fb::Attr *at = n->attrs()->Get(a);
            if ((int)at->kind() < (int)fb::AttrKind::MIN || (int)at->kind() > (int)fb::AttrKind::MAX)
                return bad(err, "node '%s' attribute '%s' has unknown kind %d", n->name()->c_str(), at->name()->c_str(),
                           (int)at->kind());
            if (at->kind() == fb::AttrKind::Str && !at->s())
                return bad(err, "node '%s' attribute '%s' has no string", n->name()->c_str(), at->name()->c_str());
            for (uint32_t k = 0; k < len(at->dims()); k++)
                if (at->dims()->Get(k) != kNoIndex && at->dims()->Get(k) >= nexpr)
                    return bad(err,
                               "node '%s' attribute '%s'[%u] refers to expression %u, but the "
                               "file has %u",
                               n->name()->c_str(), at->name()->c_str(), k, at->dims()->Get(k), nexpr);
        }
    }
    for (uint32_t i = 0; i < len(mod->inputs()); i++)
        if (mod->inputs()->Get(i) >= nt)
            return bad(err, "input %u refers to tensor %u, but the file has %u tensors", i, mod->inputs()->Get(i), nt);
    for (uint32_t i = 0; i < len(mod->outputs()); i++)
        if (mod->outputs()->Get(i) >= nt)
            return bad(err, "output %u refers to tensor %u, but the file has %u tensors", i, mod->outputs()->Get(i),
                       nt);
    return SYMC_OK;
}

/* ---- reading: build ------------------------------------------------------- */

/* The first n elements of a vector of 8-byte scalars (n <= its length; the
 * rest zero) through memcpy: the verifier checks that the vector's length
 * field is 4-byte aligned, not that its int64/double elements are 8-byte
 * aligned, so a crafted file can place them anywhere. */
template <typename T> void copy_vector(const flatbuffers::Vector<T> *v, std::vector<T> &out, uint32_t n) {
    out.assign(n, T());
    uint32_t have = len(v) < n ? len(v) : n;
    if (have) memcpy(out.data(), v->Data(), have * sizeof(T));
}

/* Pool entry i into map[i] (its operands, earlier entries, are built). */
symc_status build_expr(const fb::Module *mod, sym_table *t, uint32_t i, std::vector<sym_expr> &map,
                       std::vector<sym_expr> &ops, std::vector<int64_t> &coefs, symc_error *err) {
    const fb::Expr *e = mod->exprs()->Get(i);
    uint32_t n = len(e->ops());
    ops.resize(n);
    coefs.resize(n);
    for (uint32_t k = 0; k < n; k++) ops[k] = map[e->ops()->Get(k)];
    copy_vector(e->coefs(), coefs, n);
    if (e->kind() == fb::ExprKind::Const) map[i] = sym_const(t, e->value());
    else if (e->kind() == fb::ExprKind::Symbol) map[i] = sym_var(t, (sym_id)e->value());
    else
        map[i] = sym_make(t, (sym_kind)e->kind(), e->value(), n, ops.data(),
                          e->kind() == fb::ExprKind::Add ? coefs.data() : nullptr);
    if (map[i] == SYM_NONE) {
        const symc_error *why = sym_table_error(t);
        return bad(err, "expression %u cannot be rebuilt: %s", i, why ? why->msg : "invalid");
    }
    return SYMC_OK;
}

symc_status build(const fb::Module *mod, ir_module *m, const ir_constant *lend, symc_error *err) {
    symc_status st;
    sym_table *t = m->syms;
    std::vector<sym_expr> map(len(mod->exprs()), SYM_NONE);
    std::vector<sym_expr> ops;
    std::vector<int64_t> coefs;
    std::vector<uint8_t> need;
    uint32_t nsym = len(mod->symbols());
    for (uint32_t i = 0; i < nsym; i++) {
        const fb::Symbol *s = mod->symbols()->Get(i);
        const char *prov = s->provenance() ? s->provenance()->c_str() : "";
        sym_id id;
        if (s->bound() < 0) {
            sym_symbol_info info = {s->name()->c_str(), s->min(), s->opt(), s->max(), s->multiple_of(), prov};
            if ((st = sym_symbol_new(t, &info, &id, err))) return st;
            continue;
        }
        /* an unbacked symbol: its bound first, from the pool entries it
         * reaches (operands come before their users: one pass down marks
         * them, one pass up builds them), which may name earlier symbols only */
        uint32_t bi = (uint32_t)s->bound();
        need.assign(bi + 1, 0);
        need[bi] = 1;
        for (uint32_t k = bi + 1; k-- > 0;) {
            if (!need[k]) continue;
            const fb::Expr *e = mod->exprs()->Get(k);
            if (e->kind() == fb::ExprKind::Symbol && (uint64_t)e->value() >= i)
                return bad(err, "the bound of symbol %u '%s' refers to symbol %" PRId64 ", which is not an earlier one",
                           i, s->name()->c_str(), e->value());
            for (uint32_t j = 0; j < len(e->ops()); j++) need[e->ops()->Get(j)] = 1;
        }
        for (uint32_t k = 0; k <= bi; k++)
            if (need[k] && map[k] == SYM_NONE && (st = build_expr(mod, t, k, map, ops, coefs, err))) return st;
        if ((st = sym_symbol_new_unbacked(t, s->name()->c_str(), map[bi], prov, &id, err))) return st;
    }
    for (uint32_t i = 0; i < map.size(); i++)
        if (map[i] == SYM_NONE && (st = build_expr(mod, t, i, map, ops, coefs, err))) return st;
    for (uint32_t i = 0; i < len(mod->guards()); i++) {
        const fb::Guard *g = mod->guards()->Get(i);
        uint32_t index;
        if ((st = sym_guard_add(t, (sym_rel)g->rel(), map[g->lhs()], map[g->rhs()],
                                g->provenance() ? g->provenance()->c_str() : "", &index, err)))
            return st;
    }
    for (uint32_t i = 0; i < len(mod->constants()); i++) {
        uint32_t idx;
        if (lend) { /* ir_module_copy: m's data, not a copy of it */
            if ((st = ir_add_constant(m, lend[i].data, lend[i].size, &idx, err))) return st;
            m->n_lent = i + 1;
            continue;
        }
        const flatbuffers::Vector<uint8_t> *d = mod->constants()->Get(i)->data();
        size_t size = d ? d->size() : 0;
        uint8_t *copy = (uint8_t *)malloc(size ? size : 1);
        if (!copy) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory loading constant %u", i);
        if (size) memcpy(copy, d->data(), size);
        if ((st = ir_add_constant(m, copy, size, &idx, err))) return st;
    }
    for (uint32_t i = 0; i < len(mod->tensors()); i++) {
        const fb::Tensor *ft = mod->tensors()->Get(i);
        sym_expr dims[IR_MAX_RANK];
        for (int d = 0; d < ft->rank(); d++) dims[d] = map[ft->dims()->Get(d)];
        uint32_t idx;
        if ((st = ir_add_tensor(m, ft->name()->c_str(), (symc_dtype)ft->dtype(), ft->rank(), dims, &idx, err)))
            return st;
        m->tensors[idx].constant = ft->constant();
    }
    std::vector<ir_attr> attrs;
    std::vector<sym_expr> dims;
    std::vector<std::vector<int64_t>> ints;
    std::vector<std::vector<double>> floats;
    for (uint32_t i = 0; i < len(mod->nodes()); i++) {
        const fb::Node *n = mod->nodes()->Get(i);
        ir_op op;
        ir_op_find(n->op()->c_str(), &op);
        uint32_t na = len(n->attrs());
        attrs.assign(na, ir_attr());
        ints.resize(na);
        floats.resize(na);
        size_t ndims = 0;
        for (uint32_t a = 0; a < na; a++) ndims += len(n->attrs()->Get(a)->dims());
        dims.resize(ndims);
        size_t used = 0;
        for (uint32_t a = 0; a < na; a++) {
            const fb::Attr *fa = n->attrs()->Get(a);
            ir_attr &at = attrs[a];
            at.name = fa->name()->c_str();
            at.kind = (ir_attr_kind)fa->kind();
            at.i = fa->i();
            at.f = fa->f();
            switch (at.kind) {
            case IR_ATTR_INTS:
                at.n = len(fa->ints());
                copy_vector(fa->ints(), ints[a], at.n);
                at.ints = fa->ints() ? ints[a].data() : nullptr;
                break;
            case IR_ATTR_FLOATS:
                at.n = len(fa->floats());
                copy_vector(fa->floats(), floats[a], at.n);
                at.floats = fa->floats() ? floats[a].data() : nullptr;
                break;
            case IR_ATTR_STR: at.s = fa->s()->c_str(); break;
            case IR_ATTR_DIMS:
                at.n = len(fa->dims());
                for (uint32_t k = 0; k < at.n; k++) {
                    uint32_t p = fa->dims()->Get(k);
                    dims[used + k] = p == kNoIndex ? SYM_NONE : map[p];
                }
                at.dims = dims.data() + used;
                used += at.n;
                break;
            default: break;
            }
        }
        std::vector<uint32_t> in(len(n->inputs())), out(len(n->outputs()));
        for (uint32_t k = 0; k < in.size(); k++) in[k] = n->inputs()->Get(k);
        for (uint32_t k = 0; k < out.size(); k++) out[k] = n->outputs()->Get(k);
        if ((st = ir_add_node(m, op, n->name()->c_str(), n->source() ? n->source()->c_str() : "", in.data(),
                              (uint32_t)in.size(), out.data(), (uint32_t)out.size(), attrs.data(), na, nullptr, err)))
            return st;
    }
    for (uint32_t i = 0; i < len(mod->inputs()); i++)
        if ((st = ir_mark_input(m, mod->inputs()->Get(i), err))) return st;
    for (uint32_t i = 0; i < len(mod->outputs()); i++)
        if ((st = ir_mark_output(m, mod->outputs()->Get(i), err))) return st;
    /* a file from before the IR's axes were non-negative (ir/axes.c) */
    for (uint32_t i = 0; i < m->n_nodes; i++)
        if ((st = ir_normalize_axes(m, i, err))) return st;
    return ir_verify(m, err);
}

symc_status deserialize(const uint8_t *buf, size_t size, ir_module **out, const ir_constant *lend, symc_error *err) {
    *out = nullptr;
    if (!buf || size < 8) return bad(err, "not a .symir file: %zu bytes is too short for a header", buf ? size : 0);
    if (!fb::ModuleBufferHasIdentifier(buf)) {
        char id[5];
        for (int i = 0; i < 4; i++) id[i] = (buf[4 + i] >= 32 && buf[4 + i] < 127) ? (char)buf[4 + i] : '?';
        id[4] = '\0';
        return bad(err, "not a .symir file: identifier '%s', expected '%s'", id, fb::ModuleIdentifier());
    }
    if (size > (size_t)FLATBUFFERS_MAX_BUFFER_SIZE)
        return bad(err, ".symir file of %zu bytes exceeds the FlatBuffers limit", size);
    /* FlatBuffers reads tables and vectors in place, and its verifier checks
     * their alignment relative to the buffer's start: a buffer at an address
     * that is not 8-byte aligned (inside a larger file, a fuzzer's input) is
     * copied first so every aligned offset is an aligned address. */
    std::vector<uint64_t> aligned;
    if (reinterpret_cast<uintptr_t>(buf) % alignof(uint64_t)) {
        aligned.resize(size / sizeof(uint64_t) + 1);
        memcpy(aligned.data(), buf, size);
        buf = reinterpret_cast<const uint8_t *>(aligned.data());
    }
    flatbuffers::Verifier v(buf, size);
    if (!fb::VerifyModuleBuffer(v))
        return bad(err,
                   "corrupt or truncated .symir file (%zu bytes): the FlatBuffers verifier "
                   "rejects it",
                   size);
    const fb::Module *mod = fb::GetModule(buf);
    if (mod->version() != IR_FORMAT_VERSION)
        return bad(err, ".symir format version %u (written by %s); this symc %s reads version %u", mod->version(),
                   mod->producer() ? mod->producer()->c_str() : "unknown", SYMC_VERSION_STRING, IR_FORMAT_VERSION);
    symc_status st = check(mod, err);
    if (st) return st;
    ir_module *m = ir_module_new(mod->name() ? mod->name()->c_str() : "module", err);
    if (!m) return err ? err->code : SYMC_ERR_NOMEM;
    if ((st = build(mod, m, lend, err))) {
        ir_module_free(m);
        if (st == SYMC_ERR_VERIFY) symc_error_prefix(err, "invalid .symir module");
        return st;
    }
    *out = m;
    return SYMC_OK;
}

} // namespace

extern "C" symc_status ir_serialize(ir_module *m, uint8_t **buf, size_t *size, symc_error *err) {
    if (!m || !buf || !size) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "ir_serialize: NULL argument");
    *buf = nullptr;
    *size = 0;
    try {
        return serialize(m, buf, size, err);
    } catch (const std::bad_alloc &) {
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory serializing module '%s'", m->name);
    } catch (...) {
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "unexpected failure serializing module '%s'", m->name);
    }
}

extern "C" symc_status ir_deserialize(const uint8_t *buf, size_t size, ir_module **out, symc_error *err) {
    if (!out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "ir_deserialize: NULL argument");
    try {
        return deserialize(buf, size, out, nullptr, err);
    } catch (const std::bad_alloc &) {
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory loading a .symir module");
    } catch (...) {
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "unexpected failure loading a .symir module");
    }
}

/* the writer sees every constant empty (their data stays where it is), the reader lends them back */
extern "C" symc_status ir_module_copy(ir_module *m, ir_module **out, symc_error *err) {
    if (!m || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "ir_module_copy: NULL argument");
    *out = nullptr;
    std::vector<ir_constant> lent;
    uint8_t *buf = nullptr;
    size_t size = 0;
    symc_status st;
    try {
        lent.assign(m->constants, m->constants + m->n_constants);
        for (uint32_t i = 0; i < m->n_constants; i++) m->constants[i] = ir_constant{nullptr, 0};
        st = serialize(m, &buf, &size, err);
    } catch (const std::bad_alloc &) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory copying module '%s'", m->name);
    }
    if (lent.size() == m->n_constants)
        for (uint32_t i = 0; i < m->n_constants; i++) m->constants[i] = lent[i];
    if (st) return st;
    try {
        st = deserialize(buf, size, out, lent.data(), err);
    } catch (const std::bad_alloc &) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory copying module '%s'", m->name);
    }
    free(buf);
    return st;
}

extern "C" symc_status ir_save(ir_module *m, const char *path, symc_error *err) {
    uint8_t *buf;
    size_t size;
    symc_status st = ir_serialize(m, &buf, &size, err);
    if (st) return st;
    st = ir_write_file(path, buf, size, err);
    free(buf);
    return st;
}

extern "C" symc_status ir_load(const char *path, ir_module **out, symc_error *err) {
    if (!path || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "ir_load: NULL argument");
    *out = nullptr;
    /* a directory would open and then fail to read, a FIFO would block the open */
    const char *kind;
    FILE *f = ir_open_regular(path, &kind);
    if (!f && kind) return symc_error_setf(err, SYMC_ERR_IO, "'%s' is %s, not a .symir file", path, kind);
    if (!f) return symc_error_setf(err, SYMC_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    std::vector<uint8_t> data;
    uint8_t chunk[65536];
    size_t n;
    try {
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
            data.insert(data.end(), chunk, chunk + n);
            if (data.size() > (size_t)FLATBUFFERS_MAX_BUFFER_SIZE) break;
        }
    } catch (const std::bad_alloc &) {
        fclose(f);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory reading '%s'", path);
    }
    int read_failed = ferror(f);
    fclose(f);
    if (read_failed) return symc_error_setf(err, SYMC_ERR_IO, "cannot read '%s'", path);
    symc_status st = ir_deserialize(data.data(), data.size(), out, err);
    if (st) symc_error_prefix(err, "%s", path);
    return st;
}
