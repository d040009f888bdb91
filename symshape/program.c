/* Shape programs: expressions compiled to bytecode for the runtime.
 *
 * Layout (all little-endian):
 *   "SYMP" u8 version=1 u8 0 u16 0 | u32 nsym | u32 ntemp | u32 nout | u32 ninstr
 *   then ninstr instructions: u8 opcode followed by u16 register operands and,
 *   for the K forms, an i64 immediate; nothing may follow the last one.
 * Registers 0..nsym-1 hold the symbol values, nsym..nsym+ntemp-1 are
 * temporaries. The compiler numbers values SSA-style, then reuses a temporary
 * as soon as its last reader has run, so the register file stays as small as
 * the widest point of the expression DAG and fits on the evaluator's stack
 * (SYM_PROGRAM_MAX_REGS): evaluation never allocates. Shared subexpressions
 * are computed once. OUT writes the outputs in order, so a checker can prove
 * every output slot is written exactly once by counting.
 *
 * The operation order matches sym_eval exactly (terms before constants,
 * products checked factor by factor), so both evaluators agree on values and
 * on where int64 overflow happens. The evaluator re-checks operand indices as
 * it goes (a few compares per instruction) so that bytes that skipped
 * sym_program_check still cannot make it read or write out of bounds. */
#include "symshape/sym_internal.h"

#include <stdlib.h>
#include <string.h>

enum {
    OP_CONST = 1, /* dst, imm */
    OP_ADD,       /* dst, a, b */
    OP_MUL,
    OP_FLOORDIV,
    OP_MOD,
    OP_MIN,
    OP_MAX,
    OP_ADDK, /* dst, a, imm */
    OP_MULK,
    OP_FLOORDIVK,
    OP_MODK,
    OP_MADDK, /* dst, a, b, imm: a + b*imm */
    OP_OUT,   /* a */
    OP_LAST
};

#define HEADER 24
#define VERSION 1

/* operand count (u16 registers incl. dst) and immediate presence per opcode */
static const uint8_t op_regs[OP_LAST] = {0, 1, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 3, 1};
static const uint8_t op_imm[OP_LAST] = {0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0};
static const sym_kind op_kind[OP_LAST] = {SYM_CONST, SYM_CONST, SYM_ADD, SYM_MUL, SYM_FLOORDIV, SYM_MOD,
                                          SYM_MIN, SYM_MAX, SYM_ADD, SYM_MUL, SYM_FLOORDIV, SYM_MOD,
                                          SYM_ADD, SYM_CONST};

static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static int64_t rd64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return (int64_t)v;
}
static void wr32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void wr16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void wr64(uint8_t *p, int64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

/* ---- compiler ---------------------------------------------------------------- */

typedef struct vins {
    uint8_t op;
    uint32_t dst, a, b; /* virtual registers; UINT32_MAX when unused */
    int64_t imm;
} vins;

typedef struct comp {
    sym_table *t;
    vins *ins;
    uint32_t nins, capins;
    uint32_t *vreg; /* per handle: virtual register, UINT32_MAX = not yet computed */
    uint32_t nv;    /* next virtual register */
    bool oom;
} comp;

static uint32_t emit(comp *c, uint8_t op, uint32_t a, uint32_t b, int64_t imm, bool has_dst) {
    if (sym__grow((void **)&c->ins, &c->capins, c->nins + 1, sizeof *c->ins)) {
        c->oom = true;
        return 0;
    }
    uint32_t d = has_dst ? c->nv++ : UINT32_MAX;
    c->ins[c->nins++] = (vins){op, d, a, b, imm};
    return d;
}

static uint32_t gen(comp *c, sym_expr e) {
    if (c->vreg[e] != UINT32_MAX) return c->vreg[e];
    const sym_table *t = c->t;
    const sym_node *nd = sym__node(t, e);
    uint32_t r = 0, n = nd->n;
    int64_t value = nd->value, k;
    switch ((sym_kind)nd->kind) {
    case SYM_CONST: r = emit(c, OP_CONST, UINT32_MAX, UINT32_MAX, value, true); break;
    case SYM_SYMBOL: r = (uint32_t)value; break;
    case SYM_ADD:
    case SYM_MUL: {
        bool add = nd->kind == SYM_ADD;
        for (uint32_t i = 0; i < n && !c->oom; i++) {
            sym_expr op = sym__ops(t, e)[i];
            int64_t cf = add ? sym__coefs(t, e)[i] : 1;
            uint32_t x = gen(c, op);
            if (i == 0)
                r = cf == 1 ? x : emit(c, OP_MULK, x, UINT32_MAX, cf, true);
            else if (!add)
                r = emit(c, OP_MUL, r, x, 0, true);
            else
                r = cf == 1 ? emit(c, OP_ADD, r, x, 0, true) : emit(c, OP_MADDK, r, x, cf, true);
        }
        if (n == 0) r = emit(c, OP_CONST, UINT32_MAX, UINT32_MAX, add ? 0 : 1, true);
        if (add ? value != 0 : value != 1) r = emit(c, add ? OP_ADDK : OP_MULK, r, UINT32_MAX, value, true);
        break;
    }
    default: {
        sym_expr a = sym__ops(t, e)[0], b = sym__ops(t, e)[1];
        uint32_t x = gen(c, a);
        if ((nd->kind == SYM_FLOORDIV || nd->kind == SYM_MOD) && sym_is_const(t, b, &k) && k != 0) {
            r = emit(c, nd->kind == SYM_FLOORDIV ? OP_FLOORDIVK : OP_MODK, x, UINT32_MAX, k, true);
        } else {
            uint32_t y = gen(c, b);
            uint8_t op = nd->kind == SYM_FLOORDIV ? OP_FLOORDIV
                       : nd->kind == SYM_MOD      ? OP_MOD
                       : nd->kind == SYM_MIN      ? OP_MIN
                                                  : OP_MAX;
            r = emit(c, op, x, y, 0, true);
        }
    }
    }
    c->vreg[e] = r;
    return r;
}

symc_status sym_program_compile(sym_table *t, const sym_expr *exprs, uint32_t n, uint8_t **code,
                                size_t *size, symc_error *err) {
    if (!t || !code || !size || (n && !exprs))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_program_compile: NULL argument");
    *code = NULL;
    *size = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!sym__valid(t, exprs[i]))
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_program_compile: output %u has a bad handle %u",
                                   i, exprs[i]);
    if (t->nsyms > SYM_PROGRAM_MAX_REGS)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "shape program: %u symbols exceed the %d registers",
                               t->nsyms, SYM_PROGRAM_MAX_REGS);
    comp c = {t, NULL, 0, 0, NULL, t->nsyms, false};
    uint32_t *last = NULL, *phys = NULL, *freel = NULL;
    uint8_t *buf = NULL;
    symc_status st = SYMC_OK;
    c.vreg = malloc((t->nnodes ? t->nnodes : 1) * sizeof *c.vreg);
    if (!c.vreg) goto nomem;
    memset(c.vreg, 0xff, (t->nnodes ? t->nnodes : 1) * sizeof *c.vreg);
    for (uint32_t i = 0; i < n && !c.oom; i++) emit(&c, OP_OUT, gen(&c, exprs[i]), UINT32_MAX, 0, false);
    if (c.oom) goto nomem;

    /* last reader of each virtual register, then linear-scan reuse */
    last = calloc(c.nv ? c.nv : 1, sizeof *last);
    phys = malloc((c.nv ? c.nv : 1) * sizeof *phys);
    freel = malloc((c.nv ? c.nv : 1) * sizeof *freel);
    if (!last || !phys || !freel) goto nomem;
    for (uint32_t i = 0; i < c.nins; i++) {
        if (c.ins[i].a != UINT32_MAX) last[c.ins[i].a] = i;
        if (c.ins[i].b != UINT32_MAX) last[c.ins[i].b] = i;
    }
    for (uint32_t v = 0; v < t->nsyms && v < c.nv; v++) phys[v] = v;
    uint32_t nfree = 0, ntemp = 0;
    size_t bytes = HEADER;
    for (uint32_t i = 0; i < c.nins; i++) {
        vins *in = &c.ins[i];
        /* operands die here: free before allocating dst so it can reuse them */
        uint32_t src[2] = {in->a, in->b};
        for (int s = 0; s < 2; s++) {
            uint32_t v = src[s];
            if (v == UINT32_MAX || v < t->nsyms || last[v] != i) continue;
            if (s == 1 && src[0] == v) continue; /* same register twice: free once */
            freel[nfree++] = phys[v];
        }
        if (in->dst != UINT32_MAX) phys[in->dst] = nfree ? freel[--nfree] : t->nsyms + ntemp++;
        bytes += 1 + 2u * op_regs[in->op] + (op_imm[in->op] ? 8 : 0);
    }
    if (t->nsyms + ntemp > SYM_PROGRAM_MAX_REGS) {
        st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                             "shape program needs %u registers (at most %d): split the expression set",
                             t->nsyms + ntemp, SYM_PROGRAM_MAX_REGS);
        goto done;
    }
    buf = malloc(bytes);
    if (!buf) goto nomem;
    memcpy(buf, "SYMP", 4);
    buf[4] = VERSION;
    buf[5] = buf[6] = buf[7] = 0;
    wr32(buf + 8, t->nsyms);
    wr32(buf + 12, ntemp);
    wr32(buf + 16, n);
    wr32(buf + 20, c.nins);
    uint8_t *p = buf + HEADER;
    for (uint32_t i = 0; i < c.nins; i++) {
        const vins *in = &c.ins[i];
        *p++ = in->op;
        if (in->op == OP_OUT) {
            wr16(p, (uint16_t)phys[in->a]);
            p += 2;
            continue;
        }
        wr16(p, (uint16_t)phys[in->dst]);
        p += 2;
        if (in->a != UINT32_MAX) {
            wr16(p, (uint16_t)phys[in->a]);
            p += 2;
        }
        if (in->b != UINT32_MAX) {
            wr16(p, (uint16_t)phys[in->b]);
            p += 2;
        }
        if (op_imm[in->op]) {
            wr64(p, in->imm);
            p += 8;
        }
    }
    *code = buf;
    *size = bytes;
    buf = NULL;
    goto done;
nomem:
    st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory compiling a shape program");
done:
    free(buf);
    free(c.ins);
    free(c.vreg);
    free(last);
    free(phys);
    free(freel);
    return st;
}

/* ---- checker and evaluator ---------------------------------------------------- */

static symc_status header(const uint8_t *code, size_t size, uint32_t *nsym, uint32_t *ntemp,
                          uint32_t *nout, uint32_t *ninstr, symc_error *err) {
    if (!code) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "shape program: NULL code");
    if (size < HEADER)
        return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program truncated: %zu bytes, header needs %d", size,
                               HEADER);
    if (memcmp(code, "SYMP", 4) != 0) return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program: bad magic");
    if (code[4] != VERSION)
        return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program: version %u, this build reads %d", code[4],
                               VERSION);
    *nsym = rd32(code + 8);
    *ntemp = rd32(code + 12);
    *nout = rd32(code + 16);
    *ninstr = rd32(code + 20);
    if ((uint64_t)*nsym + *ntemp > SYM_PROGRAM_MAX_REGS)
        return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program: %u + %u registers exceed %d", *nsym, *ntemp,
                               SYM_PROGRAM_MAX_REGS);
    return SYMC_OK;
}

symc_status sym_program_check(const uint8_t *code, size_t size, uint32_t *nsym, uint32_t *nout,
                              symc_error *err) {
    uint32_t ns, nt, no, ni;
    symc_status s = header(code, size, &ns, &nt, &no, &ni, err);
    if (s) return s;
    uint32_t nreg = ns + nt;
    uint8_t defined[SYM_PROGRAM_MAX_REGS / 8] = {0};
    for (uint32_t r = 0; r < ns; r++) defined[r / 8] |= (uint8_t)(1u << (r % 8));
    size_t off = HEADER;
    uint64_t outs = 0;
    for (uint32_t i = 0; i < ni; i++) {
        if (off >= size)
            return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program truncated at instruction %u of %u", i, ni);
        uint8_t op = code[off];
        if (op == 0 || op >= OP_LAST)
            return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program: bad opcode %u at instruction %u", op, i);
        size_t len = 1 + 2u * op_regs[op] + (op_imm[op] ? 8 : 0);
        if (len > size - off)
            return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program truncated inside instruction %u", i);
        const uint8_t *p = code + off + 1;
        uint32_t first_src = op == OP_OUT ? 0 : 1;
        for (uint32_t j = first_src; j < op_regs[op]; j++) {
            uint16_t r = rd16(p + 2 * j);
            if (r >= nreg || !(defined[r / 8] & (1u << (r % 8))))
                return symc_error_setf(err, SYMC_ERR_FORMAT,
                                       "shape program: instruction %u reads register %u, which is %s", i, r,
                                       r >= nreg ? "out of range" : "not yet written");
        }
        if (op != OP_OUT) {
            uint16_t d = rd16(p);
            if (d < ns || d >= nreg)
                return symc_error_setf(err, SYMC_ERR_FORMAT,
                                       "shape program: instruction %u writes register %u outside the temporaries [%u, %u)",
                                       i, d, ns, nreg);
            defined[d / 8] |= (uint8_t)(1u << (d % 8));
        } else {
            outs++;
        }
        if ((op == OP_FLOORDIVK || op == OP_MODK) && rd64(p + 2 * op_regs[op]) == 0)
            return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program: instruction %u divides by the constant 0", i);
        off += len;
    }
    if (off != size)
        return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program: %zu trailing bytes after %u instructions",
                               size - off, ni);
    if (outs != no)
        return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program writes %llu outputs, header says %u",
                               (unsigned long long)outs, no);
    if (nsym) *nsym = ns;
    if (nout) *nout = no;
    return SYMC_OK;
}

symc_status sym_program_eval(const uint8_t *code, size_t size, const int64_t *values,
                             uint32_t nsym, int64_t *out, uint32_t nout, symc_error *err) {
    uint32_t ns, nt, no, ni;
    symc_status s = header(code, size, &ns, &nt, &no, &ni, err);
    if (s) return s;
    if (nsym < ns)
        return symc_error_setf(err, SYMC_ERR_UNBOUND, "shape program needs %u symbol values, %u given", ns, nsym);
    if (nout < no)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "shape program writes %u outputs, room for %u", no, nout);
    if ((ns && !values) || (no && !out))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "shape program: NULL values or outputs");
    int64_t reg[SYM_PROGRAM_MAX_REGS];
    uint32_t nreg = ns + nt, o = 0;
    if (ns) memcpy(reg, values, ns * sizeof *reg);
    if (nt) memset(reg + ns, 0, nt * sizeof *reg); /* unchecked bytes may read before writing */
    const uint8_t *p = code + HEADER, *end = code + size;
    for (uint32_t i = 0; i < ni; i++) {
        if (p >= end) return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program truncated at instruction %u", i);
        uint8_t op = *p++;
        if (op == 0 || op >= OP_LAST)
            return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program: bad opcode %u at instruction %u", op, i);
        size_t len = 2u * op_regs[op] + (op_imm[op] ? 8 : 0);
        if ((size_t)(end - p) < len)
            return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program truncated inside instruction %u", i);
        uint32_t d = rd16(p);
        if (d >= nreg) return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program: register %u out of range", d);
        if (op == OP_OUT) {
            if (o >= no) return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program writes too many outputs");
            out[o++] = reg[d];
            p += 2;
            continue;
        }
        if (d < ns) return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program writes symbol register %u", d);
        int64_t x, y, imm = 0, r;
        uint32_t a = op_regs[op] > 1 ? rd16(p + 2) : 0, b = op_regs[op] > 2 ? rd16(p + 4) : 0;
        if (a >= nreg || b >= nreg)
            return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program: register out of range at instruction %u", i);
        if (op_imm[op]) imm = rd64(p + 2u * op_regs[op]);
        p += len;
        x = op_regs[op] > 1 ? reg[a] : 0;
        y = op_regs[op] > 2 ? reg[b] : 0;
        switch (op) {
        case OP_CONST: reg[d] = imm; continue;
        case OP_ADDK:
        case OP_MULK:
        case OP_FLOORDIVK:
        case OP_MODK: y = imm; break;
        case OP_MADDK:
            if (__builtin_mul_overflow(y, imm, &y)) {
                s = SYMC_ERR_OVERFLOW;
                goto fail;
            }
            break;
        default: break;
        }
        if ((s = sym__eval_op(op_kind[op], x, y, &r))) goto fail;
        reg[d] = r;
        continue;
    fail:
        return symc_error_setf(err, s, "shape program: %s at instruction %u",
                               s == SYMC_ERR_DIV_ZERO ? "division by zero" : "int64 overflow", i);
    }
    if (o != no) return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program wrote %u of %u outputs", o, no);
    return SYMC_OK;
}
