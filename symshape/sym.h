/* symshape: the symbolic integer engine.
 *
 * A sym_table owns symbols (named integer variables with an inclusive range
 * [min, max], an opt hint and an optional multiple_of) and hash-consed integer
 * expressions over them, addressed by 32-bit handles: structurally equal
 * canonical expressions get the same handle, so `a == b` on handles is a cheap,
 * sound (never wrong, sometimes incomplete) equality test. Every constructor
 * returns the canonical form (constants folded, sums sorted and merged, the
 * floordiv/mod rules (docs/ARCHITECTURE.md, symshape) applied using ranges and divisibility).
 *
 * Errors while building (a constant division by zero, int64 overflow in
 * folding, out of memory) make a constructor return SYM_NONE and record the
 * first error in the table (sym_table_error); SYM_NONE fed to a constructor
 * yields SYM_NONE, so a chain of calls is checked once at the end.
 *
 * Facts: ranges (interval arithmetic, saturating at SYM_NEG_INF/SYM_POS_INF),
 * divisibility (gcd reasoning) and equalities between symbols (union-find)
 * drive three-valued proofs. Guards record facts a pass needs but cannot
 * prove. Shape programs are compact bytecode that the runtime evaluates
 * without the table.
 *
 * The table is not thread-safe; shape programs (bytes) are immutable and may
 * be evaluated from any thread. */
#ifndef SYMC_SYMSHAPE_SYM_H
#define SYMC_SYMSHAPE_SYM_H

#include <stddef.h>
#include <stdint.h>

#include "symc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t sym_expr; /* handle of an interned expression */
typedef uint32_t sym_id;   /* index of a symbol: 0 .. sym_symbol_count()-1 */
#define SYM_NONE ((sym_expr)0xffffffffu)

#define SYM_NEG_INF INT64_MIN /* range bound meaning "unbounded below" */
#define SYM_POS_INF INT64_MAX /* range bound meaning "unbounded above" */

typedef struct sym_table sym_table;

/* ---- table ------------------------------------------------------------ */
sym_table *sym_table_new(void); /* NULL when out of memory */
void sym_table_free(sym_table *t);
/* First error recorded by a constructor since the last clear; NULL if none. */
const symc_error *sym_table_error(const sym_table *t);
void sym_table_clear_error(sym_table *t);
uint32_t sym_expr_count(const sym_table *t); /* handles are 0 .. count-1 */

/* ---- symbols ---------------------------------------------------------- */
typedef struct sym_symbol_info {
    const char *name;
    int64_t min, opt, max;  /* inclusive; min <= opt <= max */
    int64_t multiple_of;    /* 1 when none; every value in range is a multiple */
    const char *provenance; /* e.g. "input 'x' dim 0" or "node 'Reshape_3'"; may be "" */
} sym_symbol_info;

/* Declares a symbol. Errors: empty name, duplicate name, min > max, opt outside
 * [min, max], multiple_of < 1, no multiple of multiple_of in [min, max]
 * (the message names the symbol and the range). min is raised / max lowered to
 * the nearest multiple. Strings are copied. */
symc_status sym_symbol_new(sym_table *t, const sym_symbol_info *info, sym_id *out, symc_error *err);
uint32_t sym_symbol_count(const sym_table *t);
/* Pointers stay valid until the table is freed; min/max reflect narrowing by
 * sym_assume_eq. Returns 0 (zeroed info) for a bad id. */
int sym_symbol_get(const sym_table *t, sym_id id, sym_symbol_info *out);
int sym_symbol_find(const sym_table *t, const char *name, sym_id *out); /* 1 if found */
/* Marks a symbol whose value is produced at run time (a NonZero count, a
 * shape read from tensor data) rather than declared by the user: guards on it
 * can never "narrow a declared range", so they classify as RUNTIME (see
 * sym_guard_state). Error only for a bad id. */
symc_status sym_symbol_set_data_dependent(sym_table *t, sym_id id, int on);
int sym_symbol_is_data_dependent(const sym_table *t, sym_id id);
/* Declares an "unbacked" symbol: a size known only after a kernel runs (the
 * row count of a NonZero, the boxes an NMS keeps), never an input dim. Its
 * upper bound is an expression over the symbols declared before it (the
 * producer's derived bound, e.g. B*N, or one the user declared); its range
 * is [0, the bound's largest value], its opt the bound at every symbol's opt
 * (memory is planned at the bound, so kernels are tuned there), and it is
 * data-dependent (guards on it are RUNTIME, never NARROWS). Proofs use the
 * bound: u <= bound(u) holds for every binding, and a guard's domain
 * leaves out bindings above it. Errors: a bad handle, a bound that may be
 * negative or has no finite maximum, the errors of sym_symbol_new. */
symc_status sym_symbol_new_unbacked(sym_table *t, const char *name, sym_expr bound, const char *provenance, sym_id *out,
                                    symc_error *err);
/* The upper bound of an unbacked symbol; SYM_NONE for any other symbol. */
sym_expr sym_symbol_bound(const sym_table *t, sym_id id);
/* How the user declares this symbol's dim a multiple, in the words of the
 * frontend that declared it ("--multiple x:1={m}", "symc.Input(...,
 * multiple_of={1: {m}})"): "{m}" stands for the multiple. A guard that
 * needs the symbol to be a multiple suggests exactly that text
 * (sym_guard_explain). NULL or "" removes it. The text is copied. */
symc_status sym_symbol_set_hint(sym_table *t, sym_id id, const char *hint, symc_error *err);
const char *sym_symbol_hint(const sym_table *t, sym_id id); /* NULL when none */

/* ---- expressions ------------------------------------------------------ */
typedef enum sym_kind {
    SYM_CONST,    /* value */
    SYM_SYMBOL,   /* value = symbol id */
    SYM_ADD,      /* value (the constant term) + sum(coefs[i] * ops[i]); n >= 1 */
    SYM_MUL,      /* value (constant factor, != 0, 1 allowed) * prod(ops[i]); n >= 2 or value != 1 */
    SYM_FLOORDIV, /* ops[0] // ops[1], rounding toward -infinity */
    SYM_MOD,      /* ops[0] % ops[1], result has the sign of ops[1] (Python) */
    SYM_MIN,      /* min(ops[0], ops[1]) */
    SYM_MAX       /* max(ops[0], ops[1]) */
} sym_kind;

/* A read-only view of one interned node; pointers valid until the next
 * constructor call on the table. */
typedef struct sym_view {
    sym_kind kind;
    int64_t value;
    uint32_t n;
    const sym_expr *ops;
    const int64_t *coefs; /* only for SYM_ADD, else NULL */
} sym_view;
int sym_expr_view(const sym_table *t, sym_expr e, sym_view *out); /* 0 for a bad handle */

sym_expr sym_const(sym_table *t, int64_t v);
sym_expr sym_var(sym_table *t, sym_id id);
sym_expr sym_add(sym_table *t, sym_expr a, sym_expr b);
sym_expr sym_sub(sym_table *t, sym_expr a, sym_expr b);
sym_expr sym_neg(sym_table *t, sym_expr a);
sym_expr sym_mul(sym_table *t, sym_expr a, sym_expr b);
sym_expr sym_scale(sym_table *t, sym_expr a, int64_t k);
sym_expr sym_add_const(sym_table *t, sym_expr a, int64_t k);
sym_expr sym_floordiv(sym_table *t, sym_expr a, sym_expr b);
sym_expr sym_ceildiv(sym_table *t, sym_expr a, sym_expr b); /* (a + b - 1) // b, for b > 0 */
sym_expr sym_mod(sym_table *t, sym_expr a, sym_expr b);
sym_expr sym_min(sym_table *t, sym_expr a, sym_expr b);
sym_expr sym_max(sym_table *t, sym_expr a, sym_expr b);
/* Rebuilds a node from a view's parts (used by deserializers); same checks as
 * the constructors, result canonical. ops must be valid handles of t. */
sym_expr sym_make(sym_table *t, sym_kind kind, int64_t value, uint32_t n, const sym_expr *ops, const int64_t *coefs);

int sym_is_const(const sym_table *t, sym_expr e, int64_t *value); /* 1 and *value if constant */
/* e with symbol id replaced by the expression by (memory planning puts an
 * unbacked symbol's bound in its place: size[u := bound(u)]). The result is
 * canonical and equals e wherever by's value is one symbol id may take (in its
 * range and a multiple of its multiple_of: e was simplified under those
 * facts); elsewhere it is some expression. SYM_NONE for SYM_NONE operands; a
 * bad handle or id, or a constructor's error (a divisor that becomes 0), is
 * recorded as the table's error and gives SYM_NONE. */
sym_expr sym_substitute(sym_table *t, sym_expr e, sym_id id, sym_expr by);
/* 1 when e's canonical form mentions symbol id (syntactically; equalities are
 * not followed); 0 otherwise or for a bad handle. Out of memory answers 1. */
int sym_mentions(const sym_table *t, sym_expr e, sym_id id);

/* Readable text, e.g. "(B*197)", "((H-1)//2+1)". snprintf semantics: returns
 * the length the full text needs; writes at most cap bytes, NUL-terminated.
 * Shared subterms print once per use, so the text of a deep DAG can be
 * exponentially long: text longer than SYM_PRINT_LIMIT characters is cut to
 * exactly SYM_PRINT_LIMIT, its head followed by SYM_PRINT_CUT (the "full
 * text" above is then the cut one), and printing costs O(SYM_PRINT_LIMIT). */
#define SYM_PRINT_LIMIT 4096
#define SYM_PRINT_CUT "...[cut]"
size_t sym_print(const sym_table *t, sym_expr e, char *buf, size_t cap);
/* Reads the printer's syntax back (Python integer syntax: + - * // %, unary
 * minus, parentheses, min(a, b), max(a, b), decimal literals, declared symbol
 * names made of letters, digits and '_'), building through the canonical
 * constructors: sym_parse(sym_print(e)) == e when the text was not cut. Errors: SYMC_ERR_FORMAT with the
 * column, SYMC_ERR_INVALID_ARG for an unknown symbol, or the constructor's
 * error (division by zero, overflow); the table's own error is not touched. */
symc_status sym_parse(sym_table *t, const char *text, sym_expr *out, symc_error *err);

/* ---- facts ------------------------------------------------------------- */
typedef struct sym_range {
    int64_t lo, hi; /* inclusive; SYM_NEG_INF / SYM_POS_INF when unbounded */
} sym_range;
sym_range sym_range_of(sym_table *t, sym_expr e);
/* Ranges hold for every binding in range at which e evaluates without error;
 * the bounds are plain int64 values (saturating at the limits).
 * Largest known k >= 1 such that k divides e for every binding in range;
 * 0 when e is provably always 0. */
int64_t sym_divisor_of(sym_table *t, sym_expr e);

typedef enum sym_tri { SYM_FALSE = 0, SYM_TRUE = 1, SYM_UNKNOWN = 2 } sym_tri;
/* TRUE: holds for every binding in range (and consistent with assumed
 * equalities); FALSE: holds for none; UNKNOWN otherwise. */
sym_tri sym_prove_eq(sym_table *t, sym_expr a, sym_expr b);
sym_tri sym_prove_ne(sym_table *t, sym_expr a, sym_expr b);
sym_tri sym_prove_le(sym_table *t, sym_expr a, sym_expr b);
sym_tri sym_prove_lt(sym_table *t, sym_expr a, sym_expr b);
sym_tri sym_prove_divisible(sym_table *t, sym_expr a, int64_t k); /* k >= 1 */

/* Declares two symbols (or a symbol and an expression over other symbols)
 * equal for the rest of the compilation: union-find merge, the surviving range
 * is the intersection. Contradiction (disjoint ranges, provably unequal) is an
 * error naming both symbols and their ranges; the table is left unchanged.
 * A symbol == expression merge binds the symbol's class to the expression
 * (proofs see through it) and narrows the symbol's range and multiple_of to
 * the expression's facts; any other pair (two compound expressions, or an
 * expression mentioning the symbol itself) is kept as a plain fact that
 * sym_prove_eq uses. Every call, even one proven TRUE, is recorded for
 * sym_check_binding: the domain of later proofs, simplifications and guard
 * classifications is the bindings in range at which both (canonical) sides
 * evaluate and are equal. */
symc_status sym_assume_eq(sym_table *t, sym_expr a, sym_expr b, symc_error *err);

/* ---- guards ------------------------------------------------------------ */
typedef enum sym_rel {
    SYM_REL_EQ,        /* lhs == rhs */
    SYM_REL_NE,        /* lhs != rhs */
    SYM_REL_LE,        /* lhs <= rhs */
    SYM_REL_LT,        /* lhs <  rhs */
    SYM_REL_DIVISIBLE, /* lhs % rhs == 0; rhs a positive constant */
    SYM_REL_BROADCAST  /* lhs == rhs || lhs == 1 || rhs == 1 */
} sym_rel;
/* Whether rel holds for the values a (lhs) and b (rhs): the one definition the
 * guard classifier, the runtime's guard checks and the tuner share. A
 * divisibility by b < 1 never holds (the builder only makes positive
 * constants; an engine file may say anything). An unknown rel never holds. */
int sym_rel_holds(sym_rel rel, int64_t a, int64_t b);

/* Classification of a guard over its domain: every binding of its symbols in
 * the current ranges (declared, narrowed by sym_assume_eq) and multiples that
 * satisfies the assumed equalities, ignoring bindings where the guard's own
 * expressions fail to evaluate (the shape program reports those). Domains of
 * up to 65536 bindings are decided exactly by enumeration; larger ones by the
 * prover plus sampled witnesses (corners, opt, midpoints).
 *  IMPLIED: holds on the whole domain (proven or enumerated).
 *  FALSE:   holds nowhere on the domain.
 *  NARROWS: a binding of the domain is known to violate it (enumerated or a
 *           concrete witness), the relation is EQ/NE/LE/LT/DIVISIBLE and no
 *           symbol involved is data-dependent: a run-time check would reject
 *           inputs the user declared valid, so it is a build error with a
 *           suggested fix (sym_guard_explain).
 *  RUNTIME: everything else, i.e. a BROADCAST guard that holds only for some
 *           bindings (its satisfying set "equal or either is 1" is not
 *           expressible as a range or multiple, so it is resolved and checked
 *           when shapes are set, not at build time), a guard on a
 *           data-dependent symbol that holds only for some bindings, or a
 *           guard the search could neither prove nor refute. RUNTIME claims
 *           nothing and is always safe: the runtime evaluates the guard.
 * IMPLIED, FALSE and NARROWS are never wrong. */
typedef enum sym_guard_state {
    SYM_GUARD_IMPLIED, /* proven by the declared ranges: nothing to check at run time */
    SYM_GUARD_RUNTIME, /* resolved/checked at run time (see above) */
    SYM_GUARD_NARROWS, /* would exclude bindings the user declared: a build error by default */
    SYM_GUARD_FALSE    /* holds for no binding in range */
} sym_guard_state;

typedef struct sym_guard {
    sym_rel rel;
    sym_expr lhs, rhs;
    const char *provenance; /* the op / node / input that needed it */
} sym_guard;

/* Guards live in the table. Adding a guard already present returns its index. */
symc_status sym_guard_add(sym_table *t, sym_rel rel, sym_expr lhs, sym_expr rhs, const char *provenance,
                          uint32_t *index, symc_error *err);
uint32_t sym_guard_count(const sym_table *t);
int sym_guard_get(const sym_table *t, uint32_t index, sym_guard *out);
sym_guard_state sym_guard_classify(sym_table *t, uint32_t index);
/* One line for a NARROWS/FALSE guard: the relation, the provenance, the
 * declared ranges involved and a suggested fix, e.g. "declare seq as a
 * multiple of 8" or "narrow B to [1, 16]". Returns the needed length. */
size_t sym_guard_explain(sym_table *t, uint32_t index, char *buf, size_t cap);
const char *sym_guard_state_name(sym_guard_state s); /* "implied", "runtime", ... */

/* ---- evaluation -------------------------------------------------------- */
/* values[i] is the value of symbol i. Checks every value against its symbol's
 * range and multiple_of, an unbacked symbol's against its bound, and assumed
 * equalities; the error names the symbol, the value and the allowed set,
 * e.g. "symbol B = 40 must be in [1, 32]", "symbol u0 = 7 exceeds its bound
 * (B*N) = 6". */
symc_status sym_check_binding(const sym_table *t, const int64_t *values, uint32_t n, symc_error *err);
/* Exact int64 evaluation; overflow, division by zero and a missing symbol
 * (n too small) are errors. Does not check ranges (see sym_check_binding). */
symc_status sym_eval(const sym_table *t, sym_expr e, const int64_t *values, uint32_t n, int64_t *out, symc_error *err);
/* Evaluates a guard: *holds = 1 when it holds for this binding. */
symc_status sym_guard_eval(const sym_table *t, uint32_t index, const int64_t *values, uint32_t n, int *holds,
                           symc_error *err);

/* ---- shape programs ---------------------------------------------------- */
/* The evaluator keeps its registers (symbol values plus temporaries) on the
 * stack; compile fails with SYMC_ERR_UNSUPPORTED beyond this many. The
 * compiler reuses temporaries, so this bounds the DAG's width, not its size. */
#define SYM_PROGRAM_MAX_REGS 1024
/* Compiles exprs[0..n) into bytecode (shared subexpressions computed once).
 * The caller frees *code with free(). */
symc_status sym_program_compile(sym_table *t, const sym_expr *exprs, uint32_t n, uint8_t **code, size_t *size,
                                symc_error *err);
/* Validates untrusted bytes (bounds, opcodes, register indices) before use:
 * reports how many symbol values and outputs the program expects. */
symc_status sym_program_check(const uint8_t *code, size_t size, uint32_t *nsym, uint32_t *nout, symc_error *err);
/* Evaluates a checked program: no allocation, no table, about 2-3 ns per
 * instruction. out has nout slots. Bytes that were not checked cannot make it
 * access memory outside code, values, out and its stack, but may give wrong
 * values: run sym_program_check once when loading untrusted bytes. */
symc_status sym_program_eval(const uint8_t *code, size_t size, const int64_t *values, uint32_t nsym, int64_t *out,
                             uint32_t nout, symc_error *err);

/* Decodes a program back into expressions of t, the inverse of compile for
 * a tool that has only the bytes (an engine): register i < nsym is symbol i
 * of t (declare the program's symbols first, in order, with their ranges),
 * each instruction is rebuilt with the canonical constructors, and output j
 * goes to out[j] (room for nout). The bytes are checked first. The results
 * are canonical (not necessarily the handles that were compiled) and, for
 * every binding in range, evaluate (sym_eval) to what sym_program_eval gives
 * when both succeed. Errors: bad bytes, too few symbols in t or too little
 * room, a constructor's failure (e.g. a constant division by zero). */
symc_status sym_program_decode(sym_table *t, const uint8_t *code, size_t size, sym_expr *out, uint32_t nout,
                               symc_error *err);

/* ---- shape helpers (used by shape rules in passes/) --------------------- */
/* Each helper returns SYMC_OK with the result, or an error naming `what`
 * (the op or node) and the offending dims. Facts that are needed but not
 * provable are added as guards with provenance `what`. */

/* Proves rel(lhs, rhs): TRUE -> SYMC_OK; UNKNOWN -> adds a guard with
 * provenance `what`, SYMC_OK; FALSE -> adds the guard and fails with
 * SYMC_ERR_VERIFY and the guard's explanation. */
symc_status sym_require(sym_table *t, sym_rel rel, sym_expr lhs, sym_expr rhs, const char *what, symc_error *err);
/* Product of n dims (1 for n == 0); SYM_NONE and the table error on failure. */
sym_expr sym_numel(sym_table *t, const sym_expr *dims, uint32_t n);

/* NumPy broadcasting of two dim lists (right-aligned). A dim that may be 1
 * and may be other than 1 is resolved at run time: the result dim is
 * max(a, b) under a SYM_REL_BROADCAST guard; no specialization. */
symc_status sym_broadcast(sym_table *t, const sym_expr *a, uint32_t na, const sym_expr *b, uint32_t nb, sym_expr *out,
                          uint32_t *nout, const char *what, symc_error *err);
/* Conv / pool output size: (in + pad_lo + pad_hi - dilation*(kernel-1) - 1) // stride + 1,
 * ceil_mode rounds up (with the PyTorch rule that the last window starts inside
 * the input or left padding). Guards that the output is >= 1. */
symc_status sym_window_out(sym_table *t, sym_expr in, int64_t kernel, int64_t stride, int64_t pad_lo, int64_t pad_hi,
                           int64_t dilation, int ceil_mode, const char *what, sym_expr *out, symc_error *err);
/* Reshape: `target` holds n entries that are expressions, with at most one
 * entry equal to SYM_NONE meaning -1 (inferred). Solves the -1 symbolically so
 * prod(out) == prod(in), guarding divisibility when it is not provable. */
symc_status sym_reshape(sym_table *t, const sym_expr *in, uint32_t nin, const sym_expr *target, uint32_t n,
                        sym_expr *out, const char *what, symc_error *err);
/* ONNX/NumPy MatMul: 1-D operands are promoted and their dim dropped again,
 * batch dims broadcast (sym_broadcast), the inner dims must be equal (proven,
 * guarded, or an error). out needs room for max(na, nb) dims; ranks <= 64. */
symc_status sym_matmul(sym_table *t, const sym_expr *a, uint32_t na, const sym_expr *b, uint32_t nb, sym_expr *out,
                       uint32_t *nout, const char *what, symc_error *err);
/* Concat of ninputs shapes of one rank along axis: the axis dims add up, the
 * other dims must equal input 0's (proven, guarded, or an error). */
symc_status sym_concat(sym_table *t, const sym_expr *const *shapes, uint32_t ninputs, uint32_t rank, uint32_t axis,
                       sym_expr *out, const char *what, symc_error *err);
/* Slice length of [start, end) with step != 0 on a dim of size `dim`, with
 * ONNX/NumPy clamping of negative and out-of-range start/end. */
symc_status sym_slice_len(sym_table *t, sym_expr dim, sym_expr start, sym_expr end, int64_t step, sym_expr *out,
                          const char *what, symc_error *err);

#ifdef __cplusplus
}
#endif
#endif
