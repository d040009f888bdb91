/* IR tests: the op table, the builder's refusals, the verifier, the printer,
 * and the .symir round trip with its bad-input cases (truncation at every
 * length, wrong identifier, random bytes, out-of-range references).
 *
 * The round-trip oracle is the printer: a module saved and loaded back must
 * print byte for byte the same, and the printer shows every symbol, range,
 * guard, shape, attribute and a checksum of every constant. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/ir.h"
#include "tests/check.h"

static const char *tmpdir;

/* ---- op table ------------------------------------------------------------ */
static void test_op_table(void) {
    for (int i = 0; i < IR_OP_COUNT; i++) {
        const ir_op_info *info = ir_op_get((ir_op)i);
        ir_op back;
        CHECK_MSG(ir_op_find(info->name, &back) && back == (ir_op)i, "op %s", info->name);
        /* every schema parses to its end */
        size_t pos = 0;
        ir_attr_spec spec;
        while (ir_attr_schema_next(info->attrs, &pos, &spec)) {
        }
        while (info->attrs[pos] == ' ') pos++;
        CHECK_MSG(info->attrs[pos] == '\0', "schema of %s stops at '%s'", info->name, info->attrs + pos);
        CHECK(info->min_in >= 0 && (info->max_in < 0 || info->max_in >= info->min_in));
        CHECK(info->min_out >= 1);
    }
    ir_op op;
    CHECK(!ir_op_find("no_such_op", &op));
    CHECK(ir_op_get((ir_op)IR_OP_COUNT) == NULL);
}

/* ---- the seed ViT pattern (docs/BENCHMARKS-SUITE.md S1) ---------------------------------- */
typedef struct vit {
    symc_module *m;
    symc_dim B;
    symc_tensor x, heads;
} vit;

static int build_vit(vit *v, symc_error *err) {
    memset(v, 0, sizeof *v);
    v->m = symc_module_create("vit_seed", err);
    if (!v->m) return 0;
    symc_module *m = v->m;
    if (symc_declare_symbol(m, "B", 1, 4, 32, 1, &v->B, err)) return 0;
    symc_dim d196 = symc_dim_const(m, 196), d768 = symc_dim_const(m, 768), one = symc_dim_const(m, 1);
    symc_dim xd[] = {v->B, d196, d768};
    if (symc_add_input(m, "x", SYMC_F32, 3, xd, &v->x, err)) return 0;
    static float cls_data[768], w_data[768 * 48], b_data[48];
    for (int i = 0; i < 768; i++) cls_data[i] = (float)i * 0.001f;
    for (int i = 0; i < 768 * 48; i++) w_data[i] = (float)(i % 97) * 0.01f;
    for (int i = 0; i < 48; i++) b_data[i] = (float)i;
    symc_tensor cls, w, b, clsb, tok, mm, qkv;
    if (symc_add_constant(m, "cls", SYMC_F32, 3, (int64_t[]){1, 1, 768}, cls_data, sizeof cls_data, &cls, err))
        return 0;
    if (symc_add_constant(m, "w", SYMC_F32, 2, (int64_t[]){768, 48}, w_data, sizeof w_data, &w, err)) return 0;
    if (symc_add_constant(m, "b", SYMC_F32, 1, (int64_t[]){48}, b_data, sizeof b_data, &b, err)) return 0;
    symc_dim es[] = {v->B, one, d768};
    symc_attr ea = symc_attr_dims("shape", es, 3);
    if (symc_add_node(m, "expand", "cls_b", &cls, 1, &ea, 1, &clsb, 1, err)) return 0;
    symc_attr ca = symc_attr_int("axis", 1);
    if (symc_add_node(m, "concat", "tok", (symc_tensor[]){clsb, v->x}, 2, &ca, 1, &tok, 1, err)) return 0;
    if (symc_add_node(m, "matmul", "mm", (symc_tensor[]){tok, w}, 2, NULL, 0, &mm, 1, err)) return 0;
    if (symc_add_node(m, "add", "qkv", (symc_tensor[]){mm, b}, 2, NULL, 0, &qkv, 1, err)) return 0;
    symc_dim rs[] = {v->B, symc_dim_add(m, d196, one), symc_dim_const(m, 3), symc_dim_const(m, 4), SYMC_DIM_NONE};
    symc_attr ra = symc_attr_dims("shape", rs, 5);
    if (symc_add_node(m, "reshape", "heads", &qkv, 1, &ra, 1, &v->heads, 1, err)) return 0;
    /* a few more attribute kinds so the round trip covers them all */
    symc_tensor g, s;
    symc_attr ga[] = {symc_attr_str("approximate", "tanh")};
    if (symc_add_node(m, "gelu", "g", &v->heads, 1, ga, 1, &g, 1, err)) return 0;
    int64_t axes[] = {0}, steps[] = {1};
    symc_dim half_b = symc_dim_add(m, symc_dim_floordiv(m, v->B, symc_dim_const(m, 2)), one);
    symc_attr sa[] = {symc_attr_dims("starts", (symc_dim[]){symc_dim_const(m, 0)}, 1),
                      symc_attr_dims("ends", &half_b, 1), symc_attr_ints("axes", axes, 1),
                      symc_attr_ints("steps", steps, 1)};
    symc_tensor sl;
    if (symc_add_node(m, "slice", "sl", &g, 1, sa, 4, &sl, 1, err)) return 0;
    symc_attr cast_to = symc_attr_dtype("to", SYMC_F16);
    if (symc_add_node(m, "cast", "s", &sl, 1, &cast_to, 1, &s, 1, err)) return 0;
    if (symc_mark_output(m, s, err)) return 0;
    if (symc_mark_output(m, v->heads, err)) return 0;
    return 1;
}

static void test_builder_and_printer(void) {
    symc_error err;
    vit v;
    CHECK_MSG(build_vit(&v, &err), "%s", err.msg);
    CHECK_MSG(symc_module_verify(v.m, &err) == SYMC_OK, "%s", err.msg);
    char *text = symc_module_print(v.m);
    CHECK_CONTAINS(text, "module vit_seed\n");
    CHECK_CONTAINS(text, "  B in [1, 32] opt 4");
    CHECK_CONTAINS(text, "  x: f32[B, 196, 768]\n");
    CHECK_CONTAINS(text, "cls: f32[1, 1, 768] = constant <3072 bytes, fnv1a ");
    CHECK_CONTAINS(text, "cls_b: f32[?] = expand(cls) {shape=[B, 1, 768]}\n");
    CHECK_CONTAINS(text, "tok: f32[?] = concat(cls_b, x) {axis=1}\n");
    CHECK_CONTAINS(text, "heads: f32[?] = reshape(qkv) {shape=[B, 197, 3, 4, -1]}\n");
    CHECK_CONTAINS(text, "s: f16[?] = cast(sl) {to=f16}\n");
    CHECK_CONTAINS(text, "sl: f32[?] = slice(g) {starts=[0], ends=[");
    CHECK_CONTAINS(text, "axes=[0], steps=[1]}\n");
    CHECK_CONTAINS(text, "g: f32[?] = gelu(heads) {approximate=\"tanh\"}\n");
    CHECK_CONTAINS(text, "outputs:\n  s: f16[?]\n  heads: f32[?]\n");
    free(text);
    symc_module_destroy(v.m);
}

/* Each refusal names the node and the op, and leaves the module unchanged. */
static void test_builder_errors(void) {
    symc_error err;
    vit v;
    CHECK(build_vit(&v, &err));
    symc_module *m = v.m;
    char *before = symc_module_print(m);
    symc_tensor y, x = v.x;
    uint32_t nt = m->n_tensors, nn = m->n_nodes;

    CHECK(symc_add_node(m, "frobnicate", "f", &x, 1, NULL, 0, &y, 1, &err) == SYMC_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "unknown op 'frobnicate'");
    CHECK(symc_add_node(m, "add", "a1", &x, 1, NULL, 0, &y, 1, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "node 'a1' (add): has 1 inputs, needs 2");
    CHECK(symc_add_node(m, "softmax", "sm", &x, 1, NULL, 0, &y, 1, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "missing required attribute 'axis'");
    symc_attr bogus = symc_attr_int("bogus", 1);
    CHECK(symc_add_node(m, "relu", "r", &x, 1, &bogus, 1, &y, 1, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "unknown attribute 'bogus'");
    symc_attr wrong = symc_attr_float("axis", 1.0);
    CHECK(symc_add_node(m, "softmax", "sm", &x, 1, &wrong, 1, &y, 1, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "attribute 'axis' is float, must be int");
    int64_t perm[] = {0, 0, 1};
    symc_attr pa = symc_attr_ints("perm", perm, 3);
    CHECK(symc_add_node(m, "transpose", "t", &x, 1, &pa, 1, &y, 1, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "not a permutation");
    symc_dim two_inferred[] = {SYMC_DIM_NONE, SYMC_DIM_NONE};
    symc_attr ra = symc_attr_dims("shape", two_inferred, 2);
    CHECK(symc_add_node(m, "reshape", "rr", &x, 1, &ra, 1, &y, 1, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "at most one may be inferred");
    symc_tensor bad_in = 9999;
    CHECK(symc_add_node(m, "relu", "r", &bad_in, 1, NULL, 0, &y, 1, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "refers to tensor 9999");
    CHECK(symc_add_node(m, "relu", "qkv", &x, 1, NULL, 0, &y, 1, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "node 'qkv': a node of that name exists");
    symc_tensor cond_not_bool[] = {x, x, x};
    CHECK(symc_add_node(m, "where", "wh", cond_not_bool, 3, NULL, 0, &y, 1, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "must be bool");
    symc_tensor half;
    symc_attr to16 = symc_attr_dtype("to", SYMC_F16);
    CHECK(symc_add_node(m, "cast", "h16", &x, 1, &to16, 1, &half, 1, &err) == SYMC_OK);
    nt = m->n_tensors, nn = m->n_nodes;
    free(before);
    before = symc_module_print(m);
    CHECK(symc_add_node(m, "add", "mixed", (symc_tensor[]){x, half}, 2, NULL, 0, &y, 1, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "input 1 'h16' is f16 but input 0 'x' is f32");

    /* inputs and constants */
    symc_dim dd[] = {v.B};
    CHECK(symc_add_input(m, "x", SYMC_F32, 1, dd, &y, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "input 'x': a tensor of that name exists");
    symc_dim neg[] = {symc_dim_add(m, v.B, symc_dim_const(m, -5))};
    CHECK(symc_add_input(m, "z", SYMC_F32, 1, neg, &y, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "input 'z' dim 0 = ");
    CHECK_CONTAINS(err.msg, "may be negative");
    symc_dim none[] = {SYMC_DIM_NONE};
    CHECK(symc_add_input(m, "z", SYMC_F32, 1, none, &y, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "input 'z' dim 0 is not a valid dimension");
    float data[4] = {0};
    CHECK(symc_add_constant(m, "c", SYMC_F32, 1, (int64_t[]){5}, data, sizeof data, &y, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "16 bytes given, its shape and dtype need 20");
    symc_dim Bdup;
    CHECK(symc_declare_symbol(m, "B", 1, 1, 2, 1, &Bdup, &err) != SYMC_OK);
    CHECK(symc_declare_symbol(m, "E", 5, 6, 4, 1, &Bdup, &err) != SYMC_OK);
    CHECK_CONTAINS(err.msg, "E");

    CHECK(m->n_tensors == nt && m->n_nodes == nn);
    char *after = symc_module_print(m);
    CHECK_MSG(before && after && strcmp(before, after) == 0, "a refused call changed the module");
    free(before);
    free(after);
    CHECK(symc_module_verify(m, &err) == SYMC_OK);
    symc_module_destroy(m);
}

/* Invariants the builder cannot break but a file or a pass could. */
static uint32_t node_index(ir_module *m, const char *name) {
    uint32_t i = 0;
    CHECK_MSG(ir_find_node(m, name, &i), "no node '%s'", name);
    return i;
}

static void test_verifier(void) {
    symc_error err;
    vit v;
    CHECK(build_vit(&v, &err));
    ir_module *m = v.m;
    uint32_t mm = node_index(m, "mm"), qkv = node_index(m, "qkv");
    uint32_t saved = m->nodes[mm].in[0];
    m->nodes[mm].in[0] = m->nodes[qkv].out[0]; /* matmul reads what a later node makes */
    CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "is used before node");
    m->nodes[mm].in[0] = saved;
    CHECK(ir_verify(m, &err) == SYMC_OK);

    m->tensors[v.heads].dtype = SYMC_I32;
    CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "output 'heads' is i32, the op makes f32");
    m->tensors[v.heads].dtype = SYMC_F32;

    m->constants[0].size -= 4;
    CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "constant 'cls' holds 3068 bytes, its shape needs 3072");
    m->constants[0].size += 4;

    const char *old = m->tensors[v.heads].name;
    m->tensors[v.heads].name = "x";
    CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "two tensors are named 'x'");
    m->tensors[v.heads].name = old;
    CHECK(ir_verify(m, &err) == SYMC_OK);
    symc_module_destroy(m);
}

static char *path_in_tmp(const char *name) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static void test_round_trip(void) {
    symc_error err;
    vit v;
    CHECK(build_vit(&v, &err));
    char *text = symc_module_print(v.m);

    uint8_t *buf;
    size_t size;
    CHECK_MSG(ir_serialize(v.m, &buf, &size, &err) == SYMC_OK, "%s", err.msg);
    ir_module *back = NULL;
    CHECK_MSG(ir_deserialize(buf, size, &back, &err) == SYMC_OK, "%s", err.msg);
    char *text2 = back ? ir_print_to_string(back) : NULL;
    CHECK_MSG(text2 && strcmp(text, text2) == 0, "round trip changed the printout:\n%s\n---\n%s", text,
              text2 ? text2 : "(null)");
    /* a second trip is byte-identical: the file is canonical */
    uint8_t *buf2;
    size_t size2;
    CHECK(back && ir_serialize(back, &buf2, &size2, &err) == SYMC_OK);
    CHECK(back && size2 == size && memcmp(buf, buf2, size) == 0);
    if (back) free(buf2);
    ir_module_free(back);
    free(text2);

    /* through a file, for the CLI test and flatc */
    char *p = path_in_tmp("vit_seed_test.symir");
    CHECK_MSG(symc_module_save(v.m, p, &err) == SYMC_OK, "%s", err.msg);
    symc_module *loaded;
    CHECK_MSG(symc_module_load(p, &loaded, &err) == SYMC_OK, "%s", err.msg);
    char *text3 = symc_module_print(loaded);
    CHECK(text3 && strcmp(text, text3) == 0);
    free(text3);
    symc_module_destroy(loaded);

    /* truncated at every length: an error, never a crash or a module */
    int accepted = 0;
    for (size_t n = 0; n < size; n += (n < 4096 ? 1 : 997)) {
        ir_module *t = NULL;
        symc_status st = ir_deserialize(buf, n, &t, &err);
        if (st == SYMC_OK) accepted++;
        CHECK(st == SYMC_OK || (t == NULL && err.msg[0]));
        ir_module_free(t);
    }
    CHECK_MSG(accepted == 0, "%d truncated buffers loaded", accepted);
    ir_module *t = NULL;
    CHECK(ir_deserialize(buf, size / 2, &t, &err) == SYMC_ERR_FORMAT);

    /* wrong identifier */
    uint8_t *copy = malloc(size);
    memcpy(copy, buf, size);
    memcpy(copy + 4, "ONNX", 4);
    CHECK(ir_deserialize(copy, size, &t, &err) == SYMC_ERR_FORMAT);
    CHECK_CONTAINS(err.msg, "identifier 'ONNX', expected 'SYMI'");

    /* single-byte corruptions all over the file: errors or valid modules, never crashes */
    for (size_t i = 0; i < size; i += 7) {
        memcpy(copy, buf, size);
        copy[i] ^= 0xA5;
        t = NULL;
        symc_status st = ir_deserialize(copy, size, &t, &err);
        CHECK(st == SYMC_OK || (t == NULL && err.msg[0]));
        if (st == SYMC_OK) CHECK(ir_verify(t, &err) == SYMC_OK);
        ir_module_free(t);
    }
    free(copy);

    /* random bytes (fixed seed), some with the right identifier */
    uint32_t seed = 12345;
    uint8_t junk[512];
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(round % 512);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            junk[i] = (uint8_t)(seed >> 16);
        }
        if (n >= 8 && round % 2) memcpy(junk + 4, "SYMI", 4);
        t = NULL;
        symc_status st = ir_deserialize(junk, n, &t, &err);
        CHECK(st != SYMC_OK && t == NULL);
    }

    /* missing file */
    CHECK(symc_module_load(path_in_tmp("does_not_exist.symir"), &loaded, &err) == SYMC_ERR_IO);
    CHECK_CONTAINS(err.msg, "does_not_exist.symir");
    /* a directory is said to be one (fopen succeeds on it, reading fails) */
    mkdir(path_in_tmp("dir.symir"), 0755);
    CHECK(symc_module_load(path_in_tmp("dir.symir"), &loaded, &err) == SYMC_ERR_IO);
    CHECK_CONTAINS(err.msg, "dir.symir' is a directory, not a .symir file");
    free(buf);
    free(text);
    symc_module_destroy(v.m);
}

/* A file whose node refers to a tensor that does not exist: made by
 * corrupting a module in memory (the builder would refuse) and saving it. */
static void test_bad_references(void) {
    symc_error err;
    vit v;
    CHECK(build_vit(&v, &err));
    ir_module *m = v.m;
    uint8_t *buf;
    size_t size;
    ir_module *t = NULL;
    uint32_t mm = node_index(m, "mm"), qkv = node_index(m, "qkv");

    uint32_t w = m->nodes[mm].in[1];
    m->nodes[mm].in[1] = 4242;
    CHECK(ir_serialize(m, &buf, &size, &err) == SYMC_OK);
    CHECK(ir_deserialize(buf, size, &t, &err) == SYMC_ERR_FORMAT && t == NULL);
    CHECK_CONTAINS(err.msg, "node 'mm' input 1 refers to tensor 4242, but the file has");
    free(buf);
    m->nodes[mm].in[1] = w;

    uint32_t saved_out = m->outputs[0];
    m->outputs[0] = 777;
    CHECK(ir_serialize(m, &buf, &size, &err) == SYMC_OK);
    CHECK(ir_deserialize(buf, size, &t, &err) == SYMC_ERR_FORMAT);
    CHECK_CONTAINS(err.msg, "output 0 refers to tensor 777");
    free(buf);
    m->outputs[0] = saved_out;

    /* semantically wrong but in range: caught by the verifier after loading */
    m->nodes[mm].in[0] = m->nodes[qkv].out[0];
    CHECK(ir_serialize(m, &buf, &size, &err) == SYMC_OK);
    CHECK(ir_deserialize(buf, size, &t, &err) == SYMC_ERR_VERIFY && t == NULL);
    CHECK_CONTAINS(err.msg, "invalid .symir module: node 'mm' (matmul): input 'qkv' is used before");
    free(buf);
    symc_module_destroy(m);
}

/* symc_tensor_info / symc_dim_equal / symc_dim_eval (what the torch frontend checks its lowerings with),
 * and the verifier's refusal of a graph input marked as an output (it was never written: the caller
 * read whatever its buffer held). */
static void test_shape_queries_and_output_rules(void) {
    symc_error err = {0};
    symc_module *m = symc_module_create("q", &err);
    CHECK(m != NULL);
    if (!m) return;
    symc_dim B, S;
    CHECK(symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err) == SYMC_OK);
    CHECK(symc_declare_symbol(m, "S", 2, 4, 16, 2, &S, &err) == SYMC_OK);
    symc_dim dims[2] = {B, S};
    symc_tensor x, y;
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, dims, &x, &err) == SYMC_OK);
    symc_dtype dt;
    int32_t rank = 0;
    symc_dim got[8];
    CHECK(symc_tensor_info(m, x, &dt, &rank, got, &err) == SYMC_OK && dt == SYMC_F32 && rank == 2 && got[0] == B &&
          got[1] == S);
    CHECK(symc_tensor_info(m, 99, &dt, &rank, got, &err) == SYMC_ERR_INVALID_ARG);
    CHECK(symc_add_node(m, "relu", "r", &x, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    CHECK(symc_tensor_info(m, y, &dt, &rank, got, &err) == SYMC_OK && rank == -1); /* before inference */
    /* a graph input as an output: refused by the verifier with the input's name */
    CHECK(symc_mark_output(m, x, &err) == SYMC_OK);
    CHECK(symc_module_verify(m, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "graph input 'x'");
    symc_module_destroy(m);

    m = symc_module_create("q2", &err);
    CHECK(m != NULL);
    if (!m) return;
    CHECK(symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err) == SYMC_OK);
    CHECK(symc_declare_symbol(m, "S", 2, 4, 16, 2, &S, &err) == SYMC_OK);
    dims[0] = B, dims[1] = S;
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, dims, &x, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "r", &x, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, y, &err) != SYMC_OK); /* the builder refuses a second mark itself */
    CHECK(symc_module_verify(m, &err) == SYMC_OK);
    /* S+S == 2*S is proven (one canonical form), S+1 == S holds nowhere, B == S is unknown */
    symc_dim two = symc_dim_const(m, 2);
    CHECK(symc_dim_equal(m, symc_dim_add(m, S, S), symc_dim_mul(m, two, S)) == 1);
    CHECK(symc_dim_equal(m, symc_dim_add(m, B, two),
                         symc_dim_add(m, symc_dim_const(m, 1), symc_dim_add(m, B, symc_dim_const(m, 1)))) == 1);
    CHECK(symc_dim_equal(m, symc_dim_add(m, S, symc_dim_const(m, 1)), S) == 0);
    CHECK(symc_dim_equal(m, B, S) == -1);
    CHECK(symc_dim_equal(m, B, SYMC_DIM_NONE) == -1);
    int64_t vals[2] = {3, 10}, v = 0;
    CHECK(symc_dim_eval(m, symc_dim_add(m, symc_dim_mul(m, B, S), symc_dim_const(m, 1)), vals, 2, &v, &err) ==
              SYMC_OK &&
          v == 31);
    CHECK(symc_dim_eval(m, B, vals, 1, &v, &err) == SYMC_ERR_UNBOUND); /* every declared symbol needs a value */
    symc_module_destroy(m);
}

/* A .symir buffer at any address loads the same (issue 13): the FlatBuffers
 * verifier checks offsets relative to the buffer's start, never that an
 * int64/double vector element is aligned in memory, so a buffer at an odd
 * address (inside a larger file, a fuzzer's input) must not be read through
 * int64_t pointers. Under UBSan a misaligned load aborts the test. */
static void test_unaligned_buffer(void) {
    symc_error err;
    symc_module *m = symc_module_create("unaligned", &err);
    symc_dim B = SYMC_DIM_NONE;
    symc_tensor x, t, r;
    CHECK(m && symc_declare_symbol(m, "B", 1, 2, 9, 1, &B, &err) == SYMC_OK);
    CHECK(symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, symc_dim_const(m, 3), symc_dim_const(m, 5)}, &x, &err) ==
          SYMC_OK);
    symc_attr perm = symc_attr_ints("perm", (const int64_t[]){2, 0, 1}, 3);
    symc_attr axes[2] = {symc_attr_ints("axes", (const int64_t[]){-1, 0}, 2), symc_attr_int("keepdims", 0)};
    CHECK_MSG(symc_add_node(m, "transpose", "t", &x, 1, &perm, 1, &t, 1, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symc_add_node(m, "reduce_sum", "r", &t, 1, axes, 2, &r, 1, &err) == SYMC_OK, "%s", err.msg);
    CHECK(symc_mark_output(m, r, &err) == SYMC_OK);
    char *text = symc_module_print(m);
    uint8_t *buf;
    size_t size;
    CHECK_MSG(ir_serialize(m, &buf, &size, &err) == SYMC_OK, "%s", err.msg);
    uint8_t *block = malloc(size + 8);
    for (size_t off = 1; block && off < 8; off++) {
        memcpy(block + off, buf, size);
        ir_module *back = NULL;
        CHECK_MSG(ir_deserialize(block + off, size, &back, &err) == SYMC_OK, "offset %zu: %s", off, err.msg);
        char *text2 = back ? ir_print_to_string(back) : NULL;
        CHECK_MSG(text2 && text && !strcmp(text, text2), "offset %zu changed the printout", off);
        free(text2);
        ir_module_free(back);
    }
    free(block);
    free(buf);
    free(text);
    symc_module_destroy(m);
}

int main(int argc, char **argv) {
    tmpdir = argc > 1 ? argv[1] : ".";
    test_op_table();
    test_builder_and_printer();
    test_builder_errors();
    test_verifier();
    test_round_trip();
    test_bad_references();
    test_shape_queries_and_output_rules();
    test_unaligned_buffer();
    return check_report("test_ir");
}
