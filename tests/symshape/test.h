/* The symshape tests' helpers over tests/check.h (the one harness: CHECK and
 * CHECK_MSG record a failure with its location and go on, so one run reports
 * every broken row; main returns check_report()). Tables are declared from a compact spec such as
 * "B:1..32 N:8..64:8 H:1..224@56" (name:min..max[:multiple_of][@opt]) and
 * expressions are written in the printer's syntax and read with sym_parse. */
#ifndef SYMC_TESTS_SYMSHAPE_TEST_H
#define SYMC_TESTS_SYMSHAPE_TEST_H

#include "symshape/sym.h"
#include "tests/check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Declares the symbols of spec; aborts the test on a malformed spec. */
static inline sym_table *test_table(const char *spec) {
    sym_table *t = sym_table_new();
    if (!t) abort();
    const char *p = spec;
    while (p && *p) {
        while (*p == ' ') p++;
        if (!*p) break;
        char name[64];
        long long lo, hi, mult = 1, opt;
        int n = 0;
        if (sscanf(p, "%63[A-Za-z0-9_]:%lld..%lld%n", name, &lo, &hi, &n) != 3) {
            fprintf(stderr, "bad spec '%s'\n", p);
            abort();
        }
        p += n;
        opt = lo;
        if (*p == ':') {
            if (sscanf(p, ":%lld%n", &mult, &n) != 1) abort();
            p += n;
        }
        if (*p == '@') {
            if (sscanf(p, "@%lld%n", &opt, &n) != 1) abort();
            p += n;
        } else {
            opt = lo + ((hi - lo) / 2);
            if (opt < lo) opt = lo;
        }
        sym_symbol_info info = {name, lo, opt, hi, mult, "test"};
        symc_error err;
        if (sym_symbol_new(t, &info, NULL, &err)) {
            fprintf(stderr, "spec symbol %s: %s\n", name, err.msg);
            abort();
        }
    }
    return t;
}

static inline sym_expr test_parse(sym_table *t, const char *text) {
    sym_expr e;
    symc_error err;
    if (sym_parse(t, text, &e, &err)) {
        fprintf(stderr, "parse '%s': %s\n", text, err.msg);
        return SYM_NONE;
    }
    return e;
}

static inline const char *test_print(const sym_table *t, sym_expr e) {
    static char buf[8][512];
    static int k;
    char *b = buf[k++ & 7];
    sym_print(t, e, b, 512);
    return b;
}

#endif
