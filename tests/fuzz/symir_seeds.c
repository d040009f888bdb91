/* symir_seeds DIR: small .symir modules for the .symir fuzzer's seed corpus.
 * The example module (vit_seed) is 7 MB of weights, beyond libFuzzer's
 * default input size, so without these the fuzzer never starts from a valid
 * file. Each uses a different part of the format: symbols with ranges and
 * multiples, dims that are expressions, broadcasting, dim/int/float
 * attributes, constants, several inputs and outputs; saved after shape
 * inference, so tensor shapes and guards are in the file too. */
#include <stdio.h>

#include "symc/symc.h"

static int save(symc_module *m, const char *dir, const char *name, symc_error *err) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.symir", dir, name);
    int rc = symc_module_infer_shapes(m, err) || symc_module_save(m, path, err);
    symc_module_destroy(m);
    if (rc) fprintf(stderr, "symir_seeds: %s: %s\n", name, err->msg);
    return rc;
}

/* r = reshape(relu(x + b), [B, 2, -1]); z = x + w (broadcast B against C) */
static int small(const char *dir, symc_error *err) {
    symc_module *m = symc_module_create("small", err);
    symc_dim B, C;
    symc_declare_symbol(m, "B", 1, 3, 8, 1, &B, err);
    symc_declare_symbol(m, "C", 1, 3, 8, 1, &C, err);
    symc_dim four = symc_dim_const(m, 4), two = symc_dim_const(m, 2);
    symc_tensor x, w, b, s, y, z, r;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, four}, &x, err);
    symc_add_input(m, "w", SYMC_F32, 2, (symc_dim[]){C, four}, &w, err);
    static const float bias[4] = {0.5f, -0.5f, 1.0f, -1.0f};
    symc_add_constant(m, "b", SYMC_F32, 1, (int64_t[]){4}, bias, sizeof bias, &b, err);
    symc_add_node(m, "add", "s", (symc_tensor[]){x, b}, 2, NULL, 0, &s, 1, err);
    symc_add_node(m, "relu", "y", &s, 1, NULL, 0, &y, 1, err);
    symc_attr ra = symc_attr_dims("shape", (symc_dim[]){B, two, SYMC_DIM_NONE}, 3);
    symc_add_node(m, "reshape", "r", &y, 1, &ra, 1, &r, 1, err);
    symc_add_node(m, "add", "z", (symc_tensor[]){x, w}, 2, NULL, 0, &z, 1, err);
    symc_mark_output(m, r, err);
    symc_mark_output(m, z, err);
    return save(m, dir, "small", err);
}

/* y = softmax(x @ w + b, axis -1) * x, then a transpose; S a multiple of 2 */
static int block(const char *dir, symc_error *err) {
    symc_module *m = symc_module_create("block", err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, err);
    symc_declare_symbol(m, "S", 2, 4, 16, 2, &S, err);
    float w[8 * 8], b[8];
    for (int i = 0; i < 64; i++) w[i] = (float)(i % 7) / 8.0f - 0.375f;
    for (int i = 0; i < 8; i++) b[i] = (float)i / 16.0f;
    symc_tensor x, wt, bt, mm, h, s, p, t;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, S, symc_dim_const(m, 8)}, &x, err);
    symc_add_constant(m, "w", SYMC_F32, 2, (int64_t[]){8, 8}, w, sizeof w, &wt, err);
    symc_add_constant(m, "b", SYMC_F32, 1, (int64_t[]){8}, b, sizeof b, &bt, err);
    symc_add_node(m, "matmul", "mm", (symc_tensor[]){x, wt}, 2, NULL, 0, &mm, 1, err);
    symc_add_node(m, "add", "h", (symc_tensor[]){mm, bt}, 2, NULL, 0, &h, 1, err);
    symc_attr axis = symc_attr_int("axis", -1);
    symc_add_node(m, "softmax", "s", &h, 1, &axis, 1, &s, 1, err);
    symc_add_node(m, "mul", "p", (symc_tensor[]){s, x}, 2, NULL, 0, &p, 1, err);
    symc_attr perm = symc_attr_ints("perm", (const int64_t[]){2, 0, 1}, 3);
    symc_add_node(m, "transpose", "t", &p, 1, &perm, 1, &t, 1, err);
    symc_mark_output(m, t, err);
    return save(m, dir, "block", err);
}

/* x [B, 3, H, H], y [B, 2*H]: fixed dims and a dim computed from a symbol */
static int image(const char *dir, symc_error *err) {
    symc_module *m = symc_module_create("image", err);
    symc_dim B, H;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, err);
    symc_declare_symbol(m, "H", 8, 8, 16, 1, &H, err);
    symc_tensor x, y, o1, o2;
    symc_add_input(m, "x", SYMC_F32, 4, (symc_dim[]){B, symc_dim_const(m, 3), H, H}, &x, err);
    symc_add_input(m, "y", SYMC_F32, 2, (symc_dim[]){B, symc_dim_mul(m, symc_dim_const(m, 2), H)}, &y, err);
    symc_add_node(m, "relu", "o1", &x, 1, NULL, 0, &o1, 1, err);
    symc_add_node(m, "tanh", "o2", &y, 1, NULL, 0, &o2, 1, err);
    symc_mark_output(m, o1, err);
    symc_mark_output(m, o2, err);
    return save(m, dir, "image", err);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: symir_seeds DIR\n");
        return 2;
    }
    symc_error err;
    return small(argv[1], &err) || block(argv[1], &err) || image(argv[1], &err);
}
