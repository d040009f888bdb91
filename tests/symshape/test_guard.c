/* Table tests of guard classification and explanations: each row is a
 * relation over declared ranges, the expected state and fragments the
 * one-line explanation must contain (the suggested fix in particular). */
#include "test.h"

#include <stdint.h>

typedef struct grow {
    const char *spec;
    sym_rel rel;
    const char *lhs, *rhs;
    sym_guard_state want;
    const char *frag1, *frag2;
} grow;

static const grow rows[] = {
    /* implied by the ranges */
    {"B:1..32", SYM_REL_LE, "1", "B", SYM_GUARD_IMPLIED, "implied", NULL},
    {"S:8..512:8", SYM_REL_DIVISIBLE, "S*3", "8", SYM_GUARD_IMPLIED, "implied", NULL},
    {"B:1..32 N:40..64", SYM_REL_LT, "B", "N", SYM_GUARD_IMPLIED, NULL, NULL},
    {"B:1..32", SYM_REL_BROADCAST, "B", "1", SYM_GUARD_IMPLIED, NULL, NULL},
    /* narrows: the suggested fix */
    {"seq:1..512", SYM_REL_DIVISIBLE, "seq", "8", SYM_GUARD_NARROWS, "declare seq as a multiple of 8", "e.g. seq = 1"},
    {"seq:1..512", SYM_REL_DIVISIBLE, "seq*4", "8", SYM_GUARD_NARROWS, "declare seq as a multiple of 2", NULL},
    {"seq:2..512:2", SYM_REL_DIVISIBLE, "seq*3", "12", SYM_GUARD_NARROWS, "declare seq as a multiple of 4", NULL},
    {"B:1..32", SYM_REL_LE, "B", "16", SYM_GUARD_NARROWS, "narrow B to [1, 16]", "B in [1, 32]"},
    {"H:1..224", SYM_REL_LE, "1", "(H-3)//2+1", SYM_GUARD_NARROWS, "narrow H to [3, 224]", NULL},
    {"B:1..32", SYM_REL_EQ, "B", "8", SYM_GUARD_NARROWS, "declare B as the constant 8", NULL},
    {"B:1..32 N:1..32", SYM_REL_EQ, "B", "N", SYM_GUARD_NARROWS, "declare B and N as one symbol", NULL},
    {"B:1..32 N:1..16", SYM_REL_EQ, "N", "B*2", SYM_GUARD_NARROWS, "declare N as (B*2)", NULL},
    {"B:1..32", SYM_REL_NE, "B", "3", SYM_GUARD_NARROWS, "restrict B", NULL},
    /* large domains: prover plus sampled witness */
    {"B:1..100000 N:1..100000", SYM_REL_LE, "B", "N", SYM_GUARD_NARROWS, "e.g.", NULL},
    {"B:1..100000 N:1..100000", SYM_REL_LE, "B", "B+N", SYM_GUARD_IMPLIED, NULL, NULL},
    /* never holds */
    {"B:1..7", SYM_REL_DIVISIBLE, "B", "8", SYM_GUARD_FALSE, "holds for no declared shape", "no multiple of 8"},
    {"B:1..32 N:40..64", SYM_REL_EQ, "B", "N", SYM_GUARD_FALSE, NULL, NULL},
    /* run time: broadcasting, never a build error */
    {"B:1..32 N:1..32", SYM_REL_BROADCAST, "B", "N", SYM_GUARD_RUNTIME, "checked at run time", NULL},
    {"B:1..32", SYM_REL_BROADCAST, "B", "8", SYM_GUARD_RUNTIME, NULL, NULL},
    {"B:2..32", SYM_REL_BROADCAST, "B", "1", SYM_GUARD_IMPLIED, NULL, NULL},
    {"B:2..32", SYM_REL_BROADCAST, "B+40", "3", SYM_GUARD_FALSE, NULL, NULL},
};

/* sym_rel_holds: the one definition the classifier, the runtime and the tuner share. Engine files are
 * untrusted, so a divisor < 1 (including INT64_MIN % -1, which traps in C) must answer, not crash. */
static void test_rel_holds(void) {
    CHECK(sym_rel_holds(SYM_REL_EQ, 3, 3) && !sym_rel_holds(SYM_REL_EQ, 3, 4));
    CHECK(sym_rel_holds(SYM_REL_NE, 3, 4) && !sym_rel_holds(SYM_REL_NE, 4, 4));
    CHECK(sym_rel_holds(SYM_REL_LE, 4, 4) && !sym_rel_holds(SYM_REL_LE, 5, 4));
    CHECK(sym_rel_holds(SYM_REL_LT, 3, 4) && !sym_rel_holds(SYM_REL_LT, 4, 4));
    CHECK(sym_rel_holds(SYM_REL_DIVISIBLE, -6, 3) && sym_rel_holds(SYM_REL_DIVISIBLE, 0, 8));
    CHECK(!sym_rel_holds(SYM_REL_DIVISIBLE, 7, 2));
    CHECK(!sym_rel_holds(SYM_REL_DIVISIBLE, 6, 0));
    CHECK(!sym_rel_holds(SYM_REL_DIVISIBLE, 6, -3));
    CHECK(!sym_rel_holds(SYM_REL_DIVISIBLE, INT64_MIN, -1));
    CHECK(sym_rel_holds(SYM_REL_BROADCAST, 1, 7) && sym_rel_holds(SYM_REL_BROADCAST, 7, 1) &&
          sym_rel_holds(SYM_REL_BROADCAST, 7, 7) && !sym_rel_holds(SYM_REL_BROADCAST, 7, 2));
    CHECK(!sym_rel_holds((sym_rel)99, 1, 1));
}

int main(void) {
    test_rel_holds();
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const grow *r = &rows[i];
        sym_table *t = test_table(r->spec);
        uint32_t idx;
        symc_error err;
        CHECK(sym_guard_add(t, r->rel, test_parse(t, r->lhs), test_parse(t, r->rhs), "node 'Op_7'", &idx, &err) ==
              SYMC_OK);
        sym_guard_state st = sym_guard_classify(t, idx);
        char line[512];
        size_t n = sym_guard_explain(t, idx, line, sizeof line);
        CHECK_MSG(st == r->want, "row %zu (%s ? %s): %s, want %s: %s", i, r->lhs, r->rhs, sym_guard_state_name(st),
                  sym_guard_state_name(r->want), line);
        CHECK_MSG(n == strlen(line) && strstr(line, "node 'Op_7'"), "%s", line);
        CHECK_MSG(!r->frag1 || strstr(line, r->frag1), "row %zu: '%s' lacks '%s'", i, line, r->frag1);
        CHECK_MSG(!r->frag2 || strstr(line, r->frag2), "row %zu: '%s' lacks '%s'", i, line, r->frag2);
        if (i == 4) printf("example: %s\n", line);
        sym_table_free(t);
    }

    /* data-dependent symbols: a mixed guard is a run-time check, not a narrowing */
    {
        sym_table *t = test_table("B:1..32 K:0..32");
        sym_symbol_set_data_dependent(t, 1, 1);
        CHECK(sym_symbol_is_data_dependent(t, 1) && !sym_symbol_is_data_dependent(t, 0));
        uint32_t idx;
        symc_error err;
        CHECK(sym_guard_add(t, SYM_REL_LE, test_parse(t, "K"), test_parse(t, "B"), "NonZero", &idx, &err) == SYMC_OK);
        CHECK(sym_guard_classify(t, idx) == SYM_GUARD_RUNTIME);
        /* duplicates return the first index; guard_get and guard_eval */
        uint32_t again;
        CHECK(sym_guard_add(t, SYM_REL_LE, test_parse(t, "K"), test_parse(t, "B"), "other", &again, &err) == SYMC_OK &&
              again == idx && sym_guard_count(t) == 1);
        sym_guard g;
        CHECK(sym_guard_get(t, idx, &g) && g.rel == SYM_REL_LE && strcmp(g.provenance, "NonZero") == 0);
        int64_t v[2] = {4, 5};
        int holds = -1;
        CHECK(sym_guard_eval(t, idx, v, 2, &holds, &err) == SYMC_OK && holds == 0);
        v[1] = 4;
        CHECK(sym_guard_eval(t, idx, v, 2, &holds, &err) == SYMC_OK && holds == 1);
        CHECK(sym_guard_eval(t, 9, v, 2, &holds, &err) == SYMC_ERR_INVALID_ARG);
        CHECK(!sym_guard_get(t, 9, &g));
        /* a divisibility guard needs a positive constant divisor */
        CHECK(sym_guard_add(t, SYM_REL_DIVISIBLE, test_parse(t, "B"), test_parse(t, "K"), "x", &idx, &err) ==
              SYMC_ERR_INVALID_ARG);
        CHECK(sym_guard_add(t, SYM_REL_DIVISIBLE, test_parse(t, "B"), sym_const(t, 0), "x", &idx, &err) ==
              SYMC_ERR_INVALID_ARG);
        CHECK(sym_guard_add(t, (sym_rel)42, test_parse(t, "B"), sym_const(t, 0), "x", &idx, &err) ==
              SYMC_ERR_INVALID_ARG);
        sym_table_free(t);
    }
    return check_report("test_guard");
}
