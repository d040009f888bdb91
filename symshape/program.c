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
 * Division by a constant is the one expensive operation (a hardware divide is
 * tens of cycles), so FLOORDIVK/MODK carry a precomputed multiplier and shift
 * (Granlund-Montgomery, round-up variant): floor division becomes a 64x64->128
 * multiply and shifts. The checker recomputes them, so a tampered constant is
 * rejected rather than silently dividing wrong.
 *
 * The operation order matches sym_eval exactly (terms before constants,
 * products checked factor by factor), so both evaluators agree on values and
 * on where int64 overflow happens. An instruction whose result is an output
 * carries a flag bit instead of being followed by an OUT, and the evaluator
 * is written for speed (constant-size handlers, threaded dispatch, masked
 * register indices): bytes that skipped sym_program_check still cannot make
 * it read or write outside its buffers, they just compute garbage or fail.
 */
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
#define OUTF 0x80 /* opcode flag: also append the result to the outputs */

#define HEADER 24
#define VERSION 1

/* operand count (u16 registers incl. dst), immediate presence, and bytes
 * after the opcode, per opcode */
static const uint8_t op_regs[OP_LAST] = {0, 1, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 3, 1};
static const uint8_t op_imm[OP_LAST] = {0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0};
static const uint8_t op_size[OP_LAST] = {0, 10, 6, 6, 6, 6, 6, 6, 12, 12, 21, 21, 14, 2};

typedef unsigned __int128 u128; /* GCC/Clang; the one non-ISO type here */

/* Magic multiplier and shift for unsigned division by d in [2, 2^63). */
static void div_magic(uint64_t d, uint64_t *m, uint8_t *sh) {
    int l = 64 - __builtin_clzll(d - 1); /* ceil(log2 d), 1..63 */
    *m = (uint64_t)(((u128)((1ull << l) - d) << 64) / d) + 1;
    *sh = (uint8_t)(l - 1);
}

static bool op_is_valid(uint8_t byte) {
    uint8_t op = byte & ~OUTF;
    return op != 0 && op < OP_LAST;
}

static inline uint64_t udiv_magic(uint64_t n, uint64_t m, uint8_t sh) {
    uint64_t t = (uint64_t)(((u128)n * m) >> 64);
    return (t + ((n - t) >> 1)) >> (sh & 63); /* mask: unchecked bytes must not shift by >= 64 */
}

/* floor(a / d) for d >= 2: for a < 0, floor(a/d) == ~floor(~a/d). */
static inline int64_t floordiv_magic(int64_t a, uint64_t m, uint8_t sh) {
    return a >= 0 ? (int64_t)udiv_magic((uint64_t)a, m, sh) : ~(int64_t)udiv_magic((uint64_t)~a, m, sh);
}

/* Little-endian loads; on little-endian hosts one unaligned load each (the
 * byte loop is not always recognized, and it dominated evaluation time). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint32_t rd32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint16_t rd16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}
static inline int64_t rd64(const uint8_t *p) {
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}
#else
static inline uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline int64_t rd64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return (int64_t)v;
}
#endif
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
            if (i == 0) r = cf == 1 ? x : emit(c, OP_MULK, x, UINT32_MAX, cf, true);
            else if (!add) r = emit(c, OP_MUL, r, x, 0, true);
            else r = cf == 1 ? emit(c, OP_ADD, r, x, 0, true) : emit(c, OP_MADDK, r, x, cf, true);
        }
        if (n == 0) r = emit(c, OP_CONST, UINT32_MAX, UINT32_MAX, add ? 0 : 1, true);
        if (add ? value != 0 : value != 1) r = emit(c, add ? OP_ADDK : OP_MULK, r, UINT32_MAX, value, true);
        break;
    }
    default: {
        sym_expr a = sym__ops(t, e)[0], b = sym__ops(t, e)[1];
        uint32_t x = gen(c, a);
        if ((nd->kind == SYM_FLOORDIV || nd->kind == SYM_MOD) && sym_is_const(t, b, &k) && k >= 2) {
            r = emit(c, nd->kind == SYM_FLOORDIV ? OP_FLOORDIVK : OP_MODK, x, UINT32_MAX, k, true);
        } else {
            uint32_t y = gen(c, b);
            uint8_t op = nd->kind == SYM_FLOORDIV ? OP_FLOORDIV
                : nd->kind == SYM_MOD             ? OP_MOD
                : nd->kind == SYM_MIN             ? OP_MIN
                                                  : OP_MAX;
            r = emit(c, op, x, y, 0, true);
        }
    }
    }
    c->vreg[e] = r;
    return r;
}

symc_status sym_program_compile(sym_table *t, const sym_expr *exprs, uint32_t n, uint8_t **code, size_t *size,
                                symc_error *err) {
    if (!t || !code || !size || (n && !exprs))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_program_compile: NULL argument");
    *code = NULL;
    *size = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!sym__valid(t, exprs[i]))
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_program_compile: output %u has a bad handle %u", i,
                                   exprs[i]);
    if (t->nsyms > SYM_PROGRAM_MAX_REGS)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "shape program: %u symbols exceed the %d registers", t->nsyms,
                               SYM_PROGRAM_MAX_REGS);
    comp c = {t, NULL, 0, 0, NULL, t->nsyms, false};
    uint32_t *last = NULL, *phys = NULL, *freel = NULL;
    uint8_t *buf = NULL;
    symc_status st = SYMC_OK;
    c.vreg = malloc((t->nnodes ? t->nnodes : 1) * sizeof *c.vreg);
    if (!c.vreg) goto nomem;
    memset(c.vreg, 0xff, (t->nnodes ? t->nnodes : 1) * sizeof *c.vreg);
    for (uint32_t i = 0; i < n && !c.oom; i++) {
        uint32_t before = c.nins, v = gen(&c, exprs[i]);
        /* the root was just computed: flag its instruction instead of an OUT */
        if (c.nins > before && c.ins[c.nins - 1].dst == v && !(c.ins[c.nins - 1].op & OUTF))
            c.ins[c.nins - 1].op |= OUTF;
        else emit(&c, OP_OUT, v, UINT32_MAX, 0, false);
    }
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
        if (in->dst != UINT32_MAX) {
            phys[in->dst] = nfree ? freel[--nfree] : t->nsyms + ntemp++;
            if (last[in->dst] <= i) freel[nfree++] = phys[in->dst]; /* only an output: free at once */
        }
        bytes += 1u + op_size[in->op & ~OUTF];
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
        uint8_t base = in->op & ~OUTF;
        *p++ = in->op;
        if (base == OP_OUT) {
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
        if (op_imm[base]) {
            wr64(p, in->imm);
            p += 8;
        }
        if (base == OP_FLOORDIVK || base == OP_MODK) {
            uint64_t m;
            uint8_t sh;
            div_magic((uint64_t)in->imm, &m, &sh);
            wr64(p, (int64_t)m);
            p[8] = sh;
            p += 9;
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
/* Opcode byte: low 7 bits the operation, OUTF "also output the result". */

static symc_status header(const uint8_t *code, size_t size, uint32_t *nsym, uint32_t *ntemp, uint32_t *nout,
                          uint32_t *ninstr, symc_error *err) {
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

symc_status sym_program_check(const uint8_t *code, size_t size, uint32_t *nsym, uint32_t *nout, symc_error *err) {
    uint32_t ns = 0, nt = 0, no = 0, ni = 0; /* header() sets them on success; gcc -O3 cannot see it */
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
        uint8_t op = code[off] & ~OUTF;
        if (op == 0 || op >= OP_LAST || code[off] == (OP_OUT | OUTF))
            return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program: bad opcode %u at instruction %u", code[off],
                                   i);
        if (code[off] & OUTF) outs++;
        size_t len = 1u + op_size[op];
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
                return symc_error_setf(
                    err, SYMC_ERR_FORMAT,
                    "shape program: instruction %u writes register %u outside the temporaries [%u, %u)", i, d, ns,
                    nreg);
            defined[d / 8] |= (uint8_t)(1u << (d % 8));
        } else {
            outs++;
        }
        if (op == OP_FLOORDIVK || op == OP_MODK) {
            int64_t k = rd64(p + 4);
            uint64_t m;
            uint8_t sh;
            if (k < 2)
                return symc_error_setf(err, SYMC_ERR_FORMAT,
                                       "shape program: instruction %u divides by the constant %lld (must be >= 2)", i,
                                       (long long)k);
            div_magic((uint64_t)k, &m, &sh);
            if ((uint64_t)rd64(p + 12) != m || p[20] != sh)
                return symc_error_setf(err, SYMC_ERR_FORMAT,
                                       "shape program: instruction %u has a corrupt division multiplier", i);
        }
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

/* ---- decoder ------------------------------------------------------------------ */
/* The inverse of the compiler for tools that only have the bytes (symc
 * inspect's memory formula): one pass over the checked instructions, each
 * rebuilt through the canonical constructors into a register file of
 * handles. The magic multipliers are ignored: FLOORDIVK/MODK are plain
 * divisions by their constant. */
symc_status sym_program_decode(sym_table *t, const uint8_t *code, size_t size, sym_expr *out, uint32_t nout,
                               symc_error *err) {
    uint32_t ns = 0, nt = 0, no = 0, ni = 0; /* header() sets them on success; gcc -O3 cannot see it */
    if (!t || (nout && !out)) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_program_decode: NULL argument");
    symc_status s = sym_program_check(code, size, &ns, &no, err);
    if (s) return s;
    if ((s = header(code, size, &ns, &nt, &no, &ni, err))) return s;
    if (ns > t->nsyms)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "shape program reads %u symbols, the table has %u", ns,
                               t->nsyms);
    if (nout < no)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "shape program writes %u outputs, room for %u", no, nout);
    sym_expr *reg = malloc(((size_t)ns + nt + 1) * sizeof *reg);
    if (!reg) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory decoding a shape program");
    for (uint32_t r = 0; r < ns; r++) reg[r] = sym_var(t, r);
    const uint8_t *p = code + HEADER;
    uint32_t o = 0;
    for (uint32_t i = 0; i < ni; i++) {
        uint8_t byte = *p++, op = byte & ~OUTF;
        if (op == OP_OUT) {
            out[o++] = reg[rd16(p)];
            p += op_size[op];
            continue;
        }
        sym_expr a = op_regs[op] > 1 ? reg[rd16(p + 2)] : SYM_NONE;
        sym_expr b = op_regs[op] > 2 ? reg[rd16(p + 4)] : SYM_NONE;
        int64_t k = op_imm[op] ? rd64(p + 2 * op_regs[op]) : 0;
        sym_expr r;
        switch (op) {
        case OP_CONST: r = sym_const(t, k); break;
        case OP_ADD: r = sym_add(t, a, b); break;
        case OP_MUL: r = sym_mul(t, a, b); break;
        case OP_FLOORDIV: r = sym_floordiv(t, a, b); break;
        case OP_MOD: r = sym_mod(t, a, b); break;
        case OP_MIN: r = sym_min(t, a, b); break;
        case OP_MAX: r = sym_max(t, a, b); break;
        case OP_ADDK: r = sym_add_const(t, a, k); break;
        case OP_MULK: r = sym_scale(t, a, k); break;
        case OP_FLOORDIVK: r = sym_floordiv(t, a, sym_const(t, k)); break;
        case OP_MODK: r = sym_mod(t, a, sym_const(t, k)); break;
        default: r = sym_add(t, a, sym_scale(t, b, k)); break; /* OP_MADDK */
        }
        if (r == SYM_NONE) {
            free(reg);
            const symc_error *te = sym_table_error(t);
            return symc_error_setf(err, te ? te->code : SYMC_ERR_INVALID_ARG,
                                   "decoding shape program instruction %u: %s", i, te ? te->msg : "constructor failed");
        }
        reg[rd16(p)] = r;
        if (byte & OUTF) out[o++] = r;
        p += op_size[op];
    }
    free(reg);
    return SYMC_OK;
}

symc_status sym_program_eval(const uint8_t *code, size_t size, const int64_t *values, uint32_t nsym, int64_t *out,
                             uint32_t nout, symc_error *err) {
    uint32_t ns = 0, nt = 0, no = 0, ni = 0; /* header() sets them on success; gcc -O3 cannot see it */
    symc_status s = header(code, size, &ns, &nt, &no, &ni, err);
    if (s) return s;
    if (nsym < ns)
        return symc_error_setf(err, SYMC_ERR_UNBOUND, "shape program needs %u symbol values, %u given", ns, nsym);
    if (nout < no)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "shape program writes %u outputs, room for %u", no, nout);
    if ((ns && !values) || (no && !out))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "shape program: NULL values or outputs");
    int64_t reg[SYM_PROGRAM_MAX_REGS]; /* a power of two: indices are masked into it */
    uint32_t o = 0, i = 0;
    if (ns) memcpy(reg, values, ns * sizeof *reg);
    if (nt) memset(reg + ns, 0, nt * sizeof *reg); /* unchecked bytes may read before writing */
    const uint8_t *p = code + HEADER, *end = code + size;
    /* Register indices are masked into reg[] instead of range-checked:
     * sym_program_check rejects bad indices, and masking keeps even unchecked
     * bytes from touching memory outside the stack array, for free. Every
     * handler advances p by a constant (so the next decode does not wait on a
     * table load) and, with GCC/Clang, dispatches the next instruction itself
     * (threaded code: one indirect branch per handler predicts far better
     * than the single branch of a switch). */
#define R(off) (rd16(p + (off)) & (SYM_PROGRAM_MAX_REGS - 1))
#define DECODE()                                                                               \
    do {                                                                                       \
        if (p >= end) goto done; /* the end of the bytes ends the run; counts checked there */ \
        byte = *p++;                                                                           \
        op = byte & ~OUTF;                                                                     \
        if (op >= OP_LAST || (size_t)(end - p) < op_size[op]) goto truncated_or_bad;           \
        d = R(0);                                                                              \
    } while (0)
#if defined(__GNUC__)
    static const void *const handler[OP_LAST] = {&&h_bad,       &&h_const, &&h_add,   &&h_mul,  &&h_floordiv,
                                                 &&h_mod,       &&h_min,   &&h_max,   &&h_addk, &&h_mulk,
                                                 &&h_floordivk, &&h_modk,  &&h_maddk, &&h_out};
#define DISPATCH() goto *handler[op]
#define HANDLER(name, op) \
    name:
#else
#define DISPATCH() goto dispatch
#define HANDLER(name, op) case op:
#endif
#define NEXT(n)                         \
    do {                                \
        p += (n);                       \
        if (byte & OUTF) {              \
            if (o >= no) goto too_many; \
            out[o++] = reg[d];          \
        }                               \
        i++;                            \
        DECODE();                       \
        DISPATCH();                     \
    } while (0)
    uint8_t byte = 0, op = 0;
    uint32_t d = 0;
    int64_t x, y, k;
    DECODE();
#if defined(__GNUC__)
    DISPATCH();
#else
dispatch:
    switch (op) {
#endif
    HANDLER(h_out, OP_OUT)
    if (o >= no || (byte & OUTF)) goto too_many;
    out[o++] = reg[d];
    byte = 0;
    NEXT(2);
    HANDLER(h_const, OP_CONST)
    reg[d] = rd64(p + 2);
    NEXT(10);
    HANDLER(h_add, OP_ADD)
    if (__builtin_add_overflow(reg[R(2)], reg[R(4)], &reg[d])) goto overflow;
    NEXT(6);
    HANDLER(h_mul, OP_MUL)
    if (__builtin_mul_overflow(reg[R(2)], reg[R(4)], &reg[d])) goto overflow;
    NEXT(6);
    HANDLER(h_floordiv, OP_FLOORDIV)
    x = reg[R(2)];
    y = reg[R(4)];
    if (y == 0) goto div_zero;
    if (x == INT64_MIN && y == -1) goto overflow;
    reg[d] = sym__floordiv(x, y);
    NEXT(6);
    HANDLER(h_mod, OP_MOD)
    x = reg[R(2)];
    y = reg[R(4)];
    if (y == 0) goto div_zero;
    reg[d] = sym__mod(x, y);
    NEXT(6);
    HANDLER(h_min, OP_MIN)
    x = reg[R(2)];
    y = reg[R(4)];
    reg[d] = x < y ? x : y;
    NEXT(6);
    HANDLER(h_max, OP_MAX)
    x = reg[R(2)];
    y = reg[R(4)];
    reg[d] = x > y ? x : y;
    NEXT(6);
    HANDLER(h_addk, OP_ADDK)
    if (__builtin_add_overflow(reg[R(2)], rd64(p + 4), &reg[d])) goto overflow;
    NEXT(12);
    HANDLER(h_mulk, OP_MULK)
    if (__builtin_mul_overflow(reg[R(2)], rd64(p + 4), &reg[d])) goto overflow;
    NEXT(12);
    HANDLER(h_maddk, OP_MADDK)
    if (__builtin_mul_overflow(reg[R(4)], rd64(p + 6), &y) || __builtin_add_overflow(reg[R(2)], y, &reg[d]))
        goto overflow;
    NEXT(14);
    HANDLER(h_floordivk, OP_FLOORDIVK)
    if (rd64(p + 4) < 2) goto bad_op; /* checked programs never get here */
    reg[d] = floordiv_magic(reg[R(2)], (uint64_t)rd64(p + 12), p[20]);
    NEXT(21);
    HANDLER(h_modk, OP_MODK) /* x - k*floor(x/k), exact in unsigned arithmetic */
    k = rd64(p + 4);
    if (k < 2) goto bad_op;
    x = reg[R(2)];
    reg[d] = (int64_t)((uint64_t)x - (uint64_t)floordiv_magic(x, (uint64_t)rd64(p + 12), p[20]) * (uint64_t)k);
    NEXT(21);
    HANDLER(h_bad, 0)
    goto bad_op;
#if !defined(__GNUC__)
default: goto bad_op;
}
#endif
done:
#undef DECODE
#undef DISPATCH
#undef HANDLER
#undef NEXT
#undef R
    if (i != ni) return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program has %u instructions, header says %u", i,
                                        ni);
if (o != no) return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program wrote %u of %u outputs", o, no);
return SYMC_OK;
truncated_or_bad: if (op_is_valid(p[-1])) goto truncated;
bad_op: return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program: bad instruction %u", i);
truncated: return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program truncated at instruction %u", i);
too_many: return symc_error_setf(err, SYMC_ERR_FORMAT, "shape program writes too many outputs");
overflow: return symc_error_setf(err, SYMC_ERR_OVERFLOW, "shape program: int64 overflow at instruction %u", i);
div_zero: return symc_error_setf(err, SYMC_ERR_DIV_ZERO, "shape program: division by zero at instruction %u", i);
}
