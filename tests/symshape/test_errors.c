/* Bad input: every case must come back as a status with a message that names
 * the symbol, range or place at fault, never a crash. Also the shape-program
 * bytes: truncations at every length, corruptions of every byte, and
 * hand-made programs that break each rule of the checker. */
#include "test.h"

#define HAS(msg, frag) CHECK_MSG(strstr((msg), (frag)) != NULL, "'%s' lacks '%s'", (msg), (frag))

static void symbols(void) {
    sym_table *t = sym_table_new();
    symc_error err;
    sym_id id;
    sym_symbol_info ok = {"B", 1, 4, 32, 1, "input 'x' dim 0"};
    CHECK(sym_symbol_new(t, &ok, &id, &err) == SYMC_OK && id == 0);
    CHECK(sym_symbol_new(t, &ok, &id, &err) == SYMC_ERR_INVALID_ARG);
    HAS(err.msg, "B");
    sym_symbol_info empty = {"E", 5, 5, 3, 1, ""};
    CHECK(sym_symbol_new(t, &empty, &id, &err) == SYMC_ERR_RANGE);
    HAS(err.msg, "E: empty range [5, 3]");
    sym_symbol_info badopt = {"O", 1, 40, 32, 1, ""};
    CHECK(sym_symbol_new(t, &badopt, &id, &err) == SYMC_ERR_RANGE);
    HAS(err.msg, "opt = 40 must be in [1, 32]");
    sym_symbol_info nomult = {"M", 9, 9, 15, 16, ""};
    CHECK(sym_symbol_new(t, &nomult, &id, &err) == SYMC_ERR_RANGE);
    HAS(err.msg, "no multiple of 16 in [9, 15]");
    sym_symbol_info badmult = {"Z", 1, 1, 2, 0, ""};
    CHECK(sym_symbol_new(t, &badmult, &id, &err) == SYMC_ERR_INVALID_ARG);
    sym_symbol_info noname = {"", 1, 1, 2, 1, ""};
    CHECK(sym_symbol_new(t, &noname, &id, &err) == SYMC_ERR_INVALID_ARG);
    CHECK(sym_symbol_new(t, NULL, &id, &err) == SYMC_ERR_INVALID_ARG);
    /* min/max rounded to the multiple */
    sym_symbol_info r = {"S", 3, 20, 61, 8, ""};
    CHECK(sym_symbol_new(t, &r, &id, &err) == SYMC_OK);
    sym_symbol_info g;
    CHECK(sym_symbol_get(t, id, &g) && g.min == 8 && g.max == 56 && g.opt == 16 && g.multiple_of == 8);
    CHECK(!sym_symbol_get(t, 99, &g) && g.name == NULL);
    CHECK(sym_symbol_count(t) == 2);
    sym_table_free(t);
}

static void bindings(void) {
    sym_table *t = test_table("B:1..32 S:8..64:8");
    symc_error err;
    int64_t v[2] = {40, 8};
    CHECK(sym_check_binding(t, v, 2, &err) == SYMC_ERR_RANGE);
    HAS(err.msg, "symbol B = 40 must be in [1, 32]");
    v[0] = 4;
    v[1] = 12;
    CHECK(sym_check_binding(t, v, 2, &err) == SYMC_ERR_RANGE);
    HAS(err.msg, "symbol S = 12 must be a multiple of 8 in [8, 64]");
    CHECK(sym_check_binding(t, v, 1, &err) == SYMC_ERR_UNBOUND);
    HAS(err.msg, "symbol S has no value");
    v[1] = 16;
    CHECK(sym_check_binding(t, v, 2, &err) == SYMC_OK);
    /* evaluation: unbound symbols, division by zero, overflow */
    sym_expr e = test_parse(t, "B*S"), out;
    int64_t x;
    CHECK(sym_eval(t, e, v, 1, &x, &err) == SYMC_ERR_UNBOUND);
    HAS(err.msg, "symbol S has no value");
    CHECK(sym_eval(t, e, v, 2, &x, &err) == SYMC_OK && x == 64);
    sym_table_free(t);

    t = test_table("B:0..32 N:-5..5");
    e = test_parse(t, "100//B");
    v[0] = 0;
    v[1] = 0;
    CHECK(sym_eval(t, e, v, 2, &x, &err) == SYMC_ERR_DIV_ZERO);
    HAS(err.msg, "100//B");
    e = test_parse(t, "N%B");
    CHECK(sym_eval(t, e, v, 2, &x, &err) == SYMC_ERR_DIV_ZERO);
    sym_expr big = sym_mul(t, test_parse(t, "B"), sym_const(t, INT64_MAX / 2));
    v[0] = 3;
    CHECK(sym_eval(t, big, v, 2, &x, &err) == SYMC_ERR_OVERFLOW);
    HAS(err.msg, "overflow");
    v[0] = 2;
    CHECK(sym_eval(t, big, v, 2, &x, &err) == SYMC_OK && x == INT64_MAX - 1);
    /* INT64_MIN // -1 overflows, INT64_MIN % -1 is 0 */
    sym_expr m = sym_floordiv(t, sym_add_const(t, test_parse(t, "N"), INT64_MIN + 5), sym_const(t, -1));
    v[1] = -5;
    CHECK(sym_eval(t, m, v, 2, &x, &err) == SYMC_ERR_OVERFLOW);
    CHECK(sym_eval(t, SYM_NONE, v, 2, &x, &err) == SYMC_ERR_INVALID_ARG);
    CHECK(sym_eval(t, 123456, v, 2, &x, &err) == SYMC_ERR_INVALID_ARG);
    (void)out;
    sym_table_free(t);
}

static void constructors(void) {
    sym_table *t = test_table("B:1..32");
    sym_expr B = test_parse(t, "B");
    CHECK(sym_table_error(t) == NULL);
    /* constant division by zero: SYM_NONE, the error recorded, SYM_NONE propagates */
    sym_expr e = sym_floordiv(t, B, sym_sub(t, B, B));
    CHECK(e == SYM_NONE);
    const symc_error *te = sym_table_error(t);
    CHECK(te && te->code == SYMC_ERR_DIV_ZERO);
    if (te) HAS(te->msg, "B // 0");
    CHECK(sym_add(t, e, B) == SYM_NONE && sym_mul(t, B, e) == SYM_NONE && sym_min(t, e, e) == SYM_NONE);
    CHECK(sym_table_error(t)->code == SYMC_ERR_DIV_ZERO); /* the first error stays */
    sym_table_clear_error(t);
    CHECK(sym_table_error(t) == NULL);
    CHECK(sym_mod(t, B, sym_const(t, 0)) == SYM_NONE && sym_table_error(t)->code == SYMC_ERR_DIV_ZERO);
    sym_table_clear_error(t);
    /* overflow while folding constants */
    CHECK(sym_add(t, sym_const(t, INT64_MAX), sym_const(t, 1)) == SYM_NONE);
    CHECK(sym_table_error(t)->code == SYMC_ERR_OVERFLOW);
    sym_table_clear_error(t);
    CHECK(sym_scale(t, sym_add_const(t, B, INT64_MAX / 2), 3) == SYM_NONE &&
          sym_table_error(t)->code == SYMC_ERR_OVERFLOW);
    sym_table_clear_error(t);
    CHECK(sym_floordiv(t, sym_const(t, INT64_MIN), sym_const(t, -1)) == SYM_NONE);
    sym_table_clear_error(t);
    /* bad handles and bad sym_make shapes */
    CHECK(sym_add(t, B, 99999) == SYM_NONE && sym_table_error(t)->code == SYMC_ERR_INVALID_ARG);
    sym_table_clear_error(t);
    CHECK(sym_var(t, 7) == SYM_NONE && sym_table_error(t)->code == SYMC_ERR_INVALID_ARG);
    sym_table_clear_error(t);
    CHECK(sym_make(t, SYM_FLOORDIV, 0, 1, &B, NULL) == SYM_NONE);
    CHECK(sym_make(t, SYM_ADD, 0, 1, &B, NULL) == SYM_NONE);
    CHECK(sym_make(t, (sym_kind)77, 0, 0, NULL, NULL) == SYM_NONE);
    sym_table_clear_error(t);
    sym_view v;
    CHECK(!sym_expr_view(t, SYM_NONE, &v));
    char buf[32];
    CHECK(sym_print(t, SYM_NONE, buf, sizeof buf) == 6 && strcmp(buf, "<none>") == 0);
    /* the parser reports the column and leaves the table error alone */
    symc_error err;
    sym_expr p;
    CHECK(sym_parse(t, "B + ", &p, &err) == SYMC_ERR_FORMAT && p == SYM_NONE);
    HAS(err.msg, "column 5");
    CHECK(sym_parse(t, "B + Q", &p, &err) == SYMC_ERR_INVALID_ARG);
    HAS(err.msg, "unknown symbol");
    CHECK(sym_parse(t, "B // 0", &p, &err) == SYMC_ERR_DIV_ZERO);
    CHECK(sym_parse(t, "99999999999999999999", &p, &err) == SYMC_ERR_OVERFLOW);
    CHECK(sym_parse(t, "(B", &p, &err) == SYMC_ERR_FORMAT);
    CHECK(sym_parse(t, "B B", &p, &err) == SYMC_ERR_FORMAT);
    CHECK(sym_parse(t, "-9223372036854775808", &p, &err) == SYMC_OK && sym_is_const(t, p, NULL));
    CHECK(sym_table_error(t) == NULL);
    /* proofs on bad input are UNKNOWN, never a crash */
    CHECK(sym_prove_eq(t, SYM_NONE, B) == SYM_UNKNOWN && sym_prove_le(t, B, 12345) == SYM_UNKNOWN);
    CHECK(sym_prove_divisible(t, B, 0) == SYM_UNKNOWN);
    CHECK(sym_assume_eq(t, B, SYM_NONE, &err) == SYMC_ERR_INVALID_ARG);
    /* NULL tables */
    CHECK(sym_const(NULL, 1) == SYM_NONE && sym_expr_count(NULL) == 0 && sym_table_error(NULL) == NULL);
    sym_table_free(NULL);
    sym_table_free(t);
}

static void programs(void) {
    sym_table *t = test_table("B:1..32 H:1..224 W:1..224");
    const char *srcs[] = {
        "B*197", "((H-1)//2+1)*((W-1)//2+1)*B", "min(H, W)", "max(H, W)%7", "(B*3+H)//W", "B", "42", "H*W - W*H + B*2"};
    sym_expr es[8];
    for (int i = 0; i < 8; i++) es[i] = test_parse(t, srcs[i]);
    uint8_t *code;
    size_t size;
    symc_error err;
    CHECK(sym_program_compile(t, es, 8, &code, &size, &err) == SYMC_OK);
    uint32_t ns, no;
    CHECK(sym_program_check(code, size, &ns, &no, &err) == SYMC_OK && ns == 3 && no == 8);
    int64_t v[3] = {4, 224, 17}, out[8], want;
    CHECK(sym_program_eval(code, size, v, 3, out, 8, &err) == SYMC_OK);
    for (int i = 0; i < 8; i++) CHECK(sym_eval(t, es[i], v, 3, &want, &err) == SYMC_OK && out[i] == want);
    /* run-time errors: division by zero */
    v[2] = 0;
    CHECK(sym_program_eval(code, size, v, 3, out, 8, &err) == SYMC_ERR_DIV_ZERO);
    HAS(err.msg, "division by zero");
    v[2] = 17;
    CHECK(sym_program_eval(code, size, v, 2, out, 8, &err) == SYMC_ERR_UNBOUND);
    CHECK(sym_program_eval(code, size, v, 3, out, 7, &err) == SYMC_ERR_INVALID_ARG);
    /* every truncation is rejected by the checker and by the evaluator */
    for (size_t n = 0; n < size; n++) {
        CHECK_MSG(sym_program_check(code, n, &ns, &no, &err) == SYMC_ERR_FORMAT, "prefix %zu accepted", n);
        CHECK(sym_program_eval(code, n, v, 3, out, 8, &err) != SYMC_OK);
    }
    /* every single-byte corruption: checked or not, no crash; checked ones evaluate */
    uint8_t *bad = malloc(size + 1);
    int rejected = 0;
    for (size_t i = 0; i < size; i++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(bad, code, size);
            bad[i] ^= (uint8_t)(1u << bit);
            if (sym_program_check(bad, size, &ns, &no, &err) != SYMC_OK) rejected++;
            (void)sym_program_eval(bad, size, v, 3, out, 8, &err); /* must not crash (ASan) */
        }
    CHECK(rejected > 0);
    /* trailing bytes */
    memcpy(bad, code, size);
    bad[size] = 0;
    CHECK(sym_program_check(bad, size + 1, &ns, &no, &err) == SYMC_ERR_FORMAT);
    HAS(err.msg, "trailing");
    /* bad magic, version */
    memcpy(bad, code, size);
    bad[0] = 'X';
    CHECK(sym_program_check(bad, size, &ns, &no, &err) == SYMC_ERR_FORMAT);
    HAS(err.msg, "magic");
    memcpy(bad, code, size);
    bad[4] = 9;
    CHECK(sym_program_check(bad, size, &ns, &no, &err) == SYMC_ERR_FORMAT);
    HAS(err.msg, "version");
    CHECK(sym_program_check(NULL, 0, &ns, &no, &err) == SYMC_ERR_INVALID_ARG);
    free(bad);
    free(code);

    /* hand-made programs breaking one rule each */
    static const uint8_t hdr[24] = {'S', 'Y', 'M', 'P', 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0};
    uint8_t p[64];
    /* reads a temporary before writing it: ADDK r1 = r1 + 1 ; OUT r1 */
    memcpy(p, hdr, 24);
    uint8_t a1[] = {8, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 13, 1, 0};
    memcpy(p + 24, a1, sizeof a1);
    CHECK(sym_program_check(p, 24 + sizeof a1, &ns, &no, &err) == SYMC_ERR_FORMAT);
    HAS(err.msg, "not yet written");
    int64_t one = 5;
    CHECK(sym_program_eval(p, 24 + sizeof a1, &one, 1, out, 1, &err) == SYMC_OK); /* defined, if meaningless */
    /* writes a symbol register: the checker refuses; unchecked, the evaluator stays in bounds */
    uint8_t a2[] = {8, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 13, 0, 0};
    memcpy(p + 24, a2, sizeof a2);
    CHECK(sym_program_check(p, 24 + sizeof a2, &ns, &no, &err) == SYMC_ERR_FORMAT);
    (void)sym_program_eval(p, 24 + sizeof a2, &one, 1, out, 1, &err);
    /* register out of range: refused; unchecked, indices are masked into the register file */
    uint8_t a3[] = {8, 1, 0, 0xff, 0xff, 1, 0, 0, 0, 0, 0, 0, 0, 13, 1, 0};
    memcpy(p + 24, a3, sizeof a3);
    CHECK(sym_program_check(p, 24 + sizeof a3, &ns, &no, &err) == SYMC_ERR_FORMAT);
    HAS(err.msg, "out of range");
    (void)sym_program_eval(p, 24 + sizeof a3, &one, 1, out, 1, &err);
    /* bad opcode */
    uint8_t a4[] = {99, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 13, 1, 0};
    memcpy(p + 24, a4, sizeof a4);
    CHECK(sym_program_check(p, 24 + sizeof a4, &ns, &no, &err) == SYMC_ERR_FORMAT);
    HAS(err.msg, "opcode");
    CHECK(sym_program_eval(p, 24 + sizeof a4, &one, 1, out, 1, &err) == SYMC_ERR_FORMAT);
    /* FLOORDIVK r1 = r0 // k with its multiplier and shift; OUT r1 */
    uint8_t a5[] = {10, 1, 0, 0, 0, /* k */ 0,     0,  0, 0, 0, 0, 0, 0, /* magic */ 1, 0, 0,
                    0,  0, 0, 0, 0, /* shift */ 0, 13, 1, 0};
    memcpy(p + 24, a5, sizeof a5);
    CHECK(sym_program_check(p, 24 + sizeof a5, &ns, &no, &err) == SYMC_ERR_FORMAT); /* k = 0 */
    HAS(err.msg, "divides by the constant 0");
    CHECK(sym_program_eval(p, 24 + sizeof a5, &one, 1, out, 1, &err) == SYMC_ERR_FORMAT);
    p[24 + 5] = 2; /* k = 2: multiplier 1, shift 0 */
    CHECK(sym_program_check(p, 24 + sizeof a5, &ns, &no, &err) == SYMC_OK);
    CHECK(sym_program_eval(p, 24 + sizeof a5, &one, 1, out, 1, &err) == SYMC_OK && out[0] == 2);
    p[24 + 13] = 3; /* a tampered multiplier is refused */
    CHECK(sym_program_check(p, 24 + sizeof a5, &ns, &no, &err) == SYMC_ERR_FORMAT);
    HAS(err.msg, "multiplier");
    p[24 + 13] = 1;
    /* output count mismatch */
    p[16] = 2;
    CHECK(sym_program_check(p, 24 + sizeof a5, &ns, &no, &err) == SYMC_ERR_FORMAT);
    CHECK(sym_program_eval(p, 24 + sizeof a5, &one, 1, out, 2, &err) == SYMC_ERR_FORMAT);
    /* instruction count mismatch */
    p[16] = 1;
    p[20] = 3;
    CHECK(sym_program_check(p, 24 + sizeof a5, &ns, &no, &err) == SYMC_ERR_FORMAT);
    CHECK(sym_program_eval(p, 24 + sizeof a5, &one, 1, out, 1, &err) == SYMC_ERR_FORMAT);
    p[20] = 2;
    /* too many registers for the evaluator's stack */
    p[16] = 1;
    p[13] = 0x10;
    CHECK(sym_program_check(p, 24 + sizeof a5, &ns, &no, &err) == SYMC_ERR_FORMAT);
    sym_table_free(t);
}

int main(void) {
    symbols();
    bindings();
    constructors();
    programs();
    return check_report("test_errors");
}
