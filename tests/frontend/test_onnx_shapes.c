/* The trtexec-style shape flags (fe_parse_shapes): one and three shapes per
 * input, several inputs per flag, repeated flags, --min/--opt/--max-shapes,
 * names containing ':', scalars, and every syntax error quoting the text and
 * the column; a failed flag leaves the list unchanged. The same parser's
 * points (fe_parse_point, symc bench): symbol dims, ';', an input given twice,
 * and a failed flag leaving the point unchanged. trtexec's flag spellings, and
 * --multiple (fe_parse_multiple): items applied by fe_shape_list_check, and
 * what it refuses. */
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx.h"
#include "tests/check.h"

static symc_error err;

static const fe_input_shape *item(const fe_shape_list *l, const char *name) {
    for (uint32_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].name, name)) return &l->items[i];
    return NULL;
}

static int dims_are(const int64_t *d, int32_t rank, const int64_t *want) {
    for (int32_t i = 0; i < rank; i++)
        if (d[i] != want[i]) return 0;
    return 1;
}

#define W(...) ((const int64_t[]){__VA_ARGS__})

static void test_good(void) {
    fe_shape_list l;
    fe_shape_list_init(&l);
    CHECK(fe_parse_shapes(&l, FE_SHAPES, "x:1x196x768,4x196x768,32x196x768", &err) == SYMC_OK);
    CHECK(fe_parse_shapes(&l, FE_SHAPES, "mask:2x7", &err) == SYMC_OK);
    CHECK(fe_parse_shapes(&l, FE_SHAPES, "a:1x3,b:1x7,2x7,4x7", &err) == SYMC_OK);
    CHECK(fe_parse_shapes(&l, FE_SHAPES, "input:0:5", &err) == SYMC_OK); /* name runs to the last ':' */
    CHECK(fe_parse_shapes(&l, FE_SHAPES, "scalar:", &err) == SYMC_OK);
    CHECK(fe_shape_list_check(&l, &err) == SYMC_OK);
    CHECK(l.n == 6);
    const fe_input_shape *x = item(&l, "x");
    CHECK(x && x->rank == 3 && dims_are(x->min, 3, W(1, 196, 768)) && dims_are(x->opt, 3, W(4, 196, 768)) &&
          dims_are(x->max, 3, W(32, 196, 768)));
    const fe_input_shape *m = item(&l, "mask");
    CHECK(m && m->rank == 2 && dims_are(m->min, 2, W(2, 7)) && dims_are(m->opt, 2, W(2, 7)) &&
          dims_are(m->max, 2, W(2, 7)));
    const fe_input_shape *a = item(&l, "a"), *b = item(&l, "b");
    CHECK(a && a->rank == 2 && dims_are(a->max, 2, W(1, 3)));
    CHECK(b && dims_are(b->min, 2, W(1, 7)) && dims_are(b->opt, 2, W(2, 7)) && dims_are(b->max, 2, W(4, 7)));
    const fe_input_shape *c = item(&l, "input:0");
    CHECK(c && c->rank == 1 && c->max[0] == 5);
    const fe_input_shape *s = item(&l, "scalar");
    CHECK(s && s->rank == 0);
    fe_shape_list_free(&l);

    /* --min/--opt/--max-shapes, several inputs each, in any order */
    fe_shape_list_init(&l);
    CHECK(fe_parse_shapes(&l, FE_MAX_SHAPES, "a:8x3,b:8x7", &err) == SYMC_OK);
    CHECK(fe_parse_shapes(&l, FE_MIN_SHAPES, "a:1x3,b:1x7", &err) == SYMC_OK);
    CHECK_MSG(fe_shape_list_check(&l, &err) == SYMC_ERR_INVALID_ARG, "%s", err.msg);
    CHECK_CONTAINS(err.msg, "input 'a' has no opt shape: add --opt-shapes a:...");
    CHECK(fe_parse_shapes(&l, FE_OPT_SHAPES, "b:2x7", &err) == SYMC_OK);
    CHECK(fe_parse_shapes(&l, FE_OPT_SHAPES, "a:4x3", &err) == SYMC_OK);
    CHECK_MSG(fe_shape_list_check(&l, &err) == SYMC_OK, "%s", err.msg);
    a = item(&l, "a");
    CHECK(a && dims_are(a->min, 2, W(1, 3)) && dims_are(a->opt, 2, W(4, 3)) && dims_are(a->max, 2, W(8, 3)));
    fe_shape_flag f;
    CHECK(fe_shape_flag_parse("--opt-shapes", &f) && f == FE_OPT_SHAPES);
    CHECK(fe_shape_flag_parse("--shapes", &f) && f == FE_SHAPES);
    CHECK(!fe_shape_flag_parse("--shape", &f));
    fe_shape_list_free(&l);
}

/* Each bad spec fails with this text in the message and leaves the list as it was. */
static void bad(fe_shape_flag flag, const char *spec, const char *text) {
    fe_shape_list l;
    fe_shape_list_init(&l);
    CHECK(fe_parse_shapes(&l, FE_MIN_SHAPES, "keep:1x2", &err) == SYMC_OK);
    symc_error_clear(&err);
    CHECK_MSG(fe_parse_shapes(&l, flag, spec, &err) == SYMC_ERR_INVALID_ARG, "spec '%s' was accepted", spec);
    CHECK_CONTAINS(err.msg, text);
    CHECK(l.n == 1 && !strcmp(l.items[0].name, "keep") && l.given[0] == 1);
    fe_shape_list_free(&l);
}

static void test_bad(void) {
    bad(FE_SHAPES, "x:1x3,4xAx5", "--shapes 'x:1x3,4xAx5': expected a dimension (digits) at column 9");
    bad(FE_SHAPES, "1x3", "expected 'name:' before the shape at column 1");
    bad(FE_SHAPES, ":1x3", "expected an input name before ':' at column 1");
    bad(FE_SHAPES, "x:1x", "expected a dimension after 'x' at column 5");
    bad(FE_SHAPES, "x:1y3", "expected 'x' between dimensions, ',' or the end at column 4");
    bad(FE_SHAPES, "x:1x3,", "empty shape at column 7");
    bad(FE_SHAPES, "x:1,2,3,4", "a fourth shape for one input");
    bad(FE_SHAPES, "x:1x3,2x3", "input 'x' has 2 shapes; give one (fixed) or three (min,opt,max)");
    bad(FE_SHAPES, "x:1x3,2,4x3", "shapes of input 'x' have 2 and 1 dims (column 7)");
    bad(FE_SHAPES, "x:1x2x3x4x5x6x7x8x9", "more than 8 dimensions");
    bad(FE_SHAPES, "x:99999999999999999999", "dimension too large");
    bad(FE_MIN_SHAPES, "x:1x2,3x4", "a second shape for one input (start the next with 'name:') at column 7");
    bad(FE_MIN_SHAPES, "keep:1x3", "--min-shapes 'keep:1x3': the min shape of input 'keep' is already declared");
    bad(FE_MAX_SHAPES, "keep:1x3x4", "input 'keep' has 3 dims here but 2 in an earlier flag");
    bad(FE_SHAPES, "a:1,a:2", "input 'a' appears twice (column 5)");
    bad(FE_SHAPES, "", "--shapes needs a value like x:1x3x224x224");

    fe_shape_list l;
    fe_shape_list_init(&l);
    CHECK(fe_parse_shapes(&l, FE_SHAPES, "x:4x3,2x3,8x3", &err) == SYMC_OK);
    CHECK(fe_shape_list_check(&l, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "input 'x' dim 0: min 4, opt 2, max 8 must satisfy min <= opt <= max");
    fe_shape_list_free(&l);
}

static void test_point(void) {
    fe_point p;
    fe_point_init(&p);
    CHECK(fe_parse_point(&p, "--shapes", "x:Bx196x768;mask:B_2xS", &err) == SYMC_OK);
    CHECK(fe_parse_point(&p, "--shapes", ";input:0:4X5,,s:,", &err) == SYMC_OK); /* empty items skipped */
    CHECK(p.n == 4);
    CHECK(!strcmp(p.items[0].name, "x") && p.items[0].rank == 3 && p.items[0].dims[0] == -1);
    CHECK(p.items[0].sym[0] && !strcmp(p.items[0].sym[0], "B") && !p.items[0].sym[1]);
    CHECK(dims_are(p.items[0].dims + 1, 2, W(196, 768)));
    CHECK(!strcmp(p.items[1].sym[0], "B_2") && !strcmp(p.items[1].sym[1], "S"));
    CHECK(!strcmp(p.items[2].name, "input:0") && dims_are(p.items[2].dims, 2, W(4, 5)) && !p.items[2].sym[0]);
    CHECK(!strcmp(p.items[3].name, "s") && p.items[3].rank == 0);
    static const struct {
        const char *spec, *text;
    } bad_points[] = {
        {"x1x196", "--point 'x1x196': expected NAME:AxBxC at column 1"},
        {"y:1x3,2x3", "expected NAME:AxBxC at column 7"},
        {"y:1,y:2", "input 'y' appears twice (column 5)"},
        {"x:3", "--point 'x:3': input 'x' is already given by an earlier flag"},
        {"y:B-1", "expected 'x' between dimensions, ',' or the end at column 4"},
        {"y:1x", "expected a dimension after 'x' at column 5"},
        {"y:1x.", "expected a dimension (digits or a symbol name) at column 5"},
        {"", "--point needs a value like x:1x3x224x224"},
        {",;", "--point ',;': expected NAME:AxBxC at column 1"},
    };
    for (size_t i = 0; i < sizeof bad_points / sizeof bad_points[0]; i++) {
        symc_error_clear(&err);
        CHECK_MSG(fe_parse_point(&p, "--point", bad_points[i].spec, &err) == SYMC_ERR_INVALID_ARG,
                  "point '%s' was accepted", bad_points[i].spec);
        CHECK_CONTAINS(err.msg, bad_points[i].text);
        CHECK(p.n == 4);
    }
    fe_point_free(&p);
}

static void test_multiple(void) {
    fe_shape_flag f;
    CHECK(fe_shape_flag_parse("--minShapes", &f) && f == FE_MIN_SHAPES);
    CHECK(fe_shape_flag_parse("--optShapes", &f) && f == FE_OPT_SHAPES);
    CHECK(fe_shape_flag_parse("--maxShapes", &f) && f == FE_MAX_SHAPES);
    CHECK(fe_shape_flag_parse("--max-shapes", &f) && f == FE_MAX_SHAPES);
    CHECK(!fe_shape_flag_parse("--maxshapes", &f));
    fe_shape_list l;
    fe_shape_list_init(&l);
    /* --multiple before --shapes: applied when the list is checked */
    CHECK(fe_parse_multiple(&l, "x:1=8,input:0:0=2", &err) == SYMC_OK);
    CHECK(fe_parse_shapes(&l, FE_SHAPES, "x:1x8x16,2x16x16,4x64x16", &err) == SYMC_OK);
    CHECK(fe_parse_shapes(&l, FE_SHAPES, "input:0:2,4,8", &err) == SYMC_OK);
    static const struct {
        const char *spec, *text;
    } bad_specs[] = {
        {"", "--multiple needs a value like x:1=8"},
        {"x1=8", "--multiple 'x1=8': expected NAME:AXIS=MULTIPLE at column 1"},
        {":1=8", "expected NAME:AXIS=MULTIPLE at column 1"},
        {"x:=8", "expected an axis (0 to 7) after ':' at column 3"},
        {"x:8=8", "expected an axis (0 to 7) after ':' at column 3"},
        {"x:1", "expected '=' after the axis at column 4"},
        {"x:1=", "expected a multiple (>= 1) after '=' at column 5"},
        {"x:1=0", "expected a multiple (>= 1) after '=' at column 5"},
        {"x:1=99999999999999999999", "the multiple is too large"},
        {"x:1=8x", "expected ',' or the end at column 6"},
        {"y:0=2,x:1=4", "input 'x' dim 1 is declared a multiple twice (column 7)"},
    };
    for (size_t i = 0; i < sizeof bad_specs / sizeof bad_specs[0]; i++) {
        symc_error_clear(&err);
        CHECK_MSG(fe_parse_multiple(&l, bad_specs[i].spec, &err) == SYMC_ERR_INVALID_ARG, "'%s' was accepted",
                  bad_specs[i].spec);
        CHECK_CONTAINS(err.msg, bad_specs[i].text);
        CHECK(l.n_mult == 2); /* a failed flag adds nothing, not even its good items */
    }
    CHECK(fe_shape_list_check(&l, &err) == SYMC_OK);
    const fe_input_shape *x = item(&l, "x"), *in0 = item(&l, "input:0");
    CHECK(x && x->multiple[0] == 0 && x->multiple[1] == 8 && x->multiple[2] == 0);
    CHECK(in0 && in0->multiple[0] == 2);
    fe_shape_list_free(&l);
    /* what the check refuses: an undeclared input, an axis past the rank, a fixed dim */
    static const struct {
        const char *spec, *text;
    } bad_checks[] = {
        {"y:0=2", "--multiple y:0=2: input 'y' has no declared shapes (declared: 'x'); give its range with --shapes"},
        {"x:3=2", "--multiple x:3=2: input 'x' has 3 dims (axes 0 to 2)"},
        {"x:2=2", "--multiple x:2=2: input 'x' dim 2 is fixed (16); --multiple is for a dynamic dim (min < max)"},
    };
    for (size_t i = 0; i < sizeof bad_checks / sizeof bad_checks[0]; i++) {
        fe_shape_list_init(&l);
        CHECK(fe_parse_shapes(&l, FE_SHAPES, "x:1x8x16,2x16x16,4x64x16", &err) == SYMC_OK);
        CHECK(fe_parse_multiple(&l, bad_checks[i].spec, &err) == SYMC_OK);
        symc_error_clear(&err);
        CHECK_MSG(fe_shape_list_check(&l, &err) == SYMC_ERR_INVALID_ARG, "'%s' passed the check", bad_checks[i].spec);
        CHECK_CONTAINS(err.msg, bad_checks[i].text);
        fe_shape_list_free(&l);
    }
}

int main(void) {
    test_good();
    test_multiple();
    test_bad();
    test_point();
    return check_report("test_onnx_shapes");
}
