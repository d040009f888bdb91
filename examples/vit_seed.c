/* The bundled example model: docs/BENCHMARKS-SUITE.md's seed S1, the ViT pattern whose batch
 * dim trips static compilers: a class token expanded to the batch, concatenated
 * in front of the patch tokens, a qkv Linear, and a reshape with -1 into
 * (B, 197, 3, 12, 64). Built with the public builder API only, as an embedder
 * would, with the batch B declared in [1, 32], tuned for 4.
 *
 * usage: vit_seed OUT.symir   (weights are seeded pseudo-random numbers) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "symc/symc.h"

enum { N = 196, D = 768, QKV = 3 * D };

static float *random_weights(size_t n, uint32_t seed) {
    float *w = malloc(n * sizeof *w);
    if (!w) return NULL;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        w[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 0.05f;
    }
    return w;
}

#define CHECK(call)                                     \
    do {                                                \
        if ((call) != SYMC_OK) {                        \
            fprintf(stderr, "vit_seed: %s\n", err.msg); \
            goto fail;                                  \
        }                                               \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: vit_seed OUT.symir\n");
        return 2;
    }
    symc_error err;
    int rc = 1;
    float *cls_w = random_weights(D, 1), *qkv_w = random_weights((size_t)D * QKV, 2), *qkv_b = random_weights(QKV, 3);
    symc_module *m = symc_module_create("vit_seed", &err);
    if (!m || !cls_w || !qkv_w || !qkv_b) {
        fprintf(stderr, "vit_seed: out of memory\n");
        goto fail;
    }

    symc_dim B;
    CHECK(symc_declare_symbol(m, "B", 1, 4, 32, 1, &B, &err));
    symc_dim one = symc_dim_const(m, 1), n = symc_dim_const(m, N), d = symc_dim_const(m, D);
    symc_dim x_dims[] = {B, n, d};
    symc_tensor x, cls, w, b;
    CHECK(symc_add_input(m, "x", SYMC_F32, 3, x_dims, &x, &err));
    CHECK(symc_add_constant(m, "cls_token", SYMC_F32, 3, (int64_t[]){1, 1, D}, cls_w, D * sizeof(float), &cls, &err));
    CHECK(symc_add_constant(m, "qkv.weight", SYMC_F32, 2, (int64_t[]){D, QKV}, qkv_w, (size_t)D * QKV * sizeof(float),
                            &w, &err));
    CHECK(symc_add_constant(m, "qkv.bias", SYMC_F32, 1, (int64_t[]){QKV}, qkv_b, QKV * sizeof(float), &b, &err));

    /* cls_token.expand(B, 1, D); cat((cls, x), dim=1) */
    symc_tensor cls_b, tokens, h, qkv, heads;
    symc_dim cls_shape[] = {B, one, d};
    symc_attr expand_attr = symc_attr_dims("shape", cls_shape, 3);
    CHECK(symc_add_node(m, "expand", "cls_expand", &cls, 1, &expand_attr, 1, &cls_b, 1, &err));
    symc_attr cat_attr = symc_attr_int("axis", 1);
    CHECK(symc_add_node(m, "concat", "tokens", (symc_tensor[]){cls_b, x}, 2, &cat_attr, 1, &tokens, 1, &err));
    /* qkv = tokens @ W + b */
    CHECK(symc_add_node(m, "matmul", "qkv_mm", (symc_tensor[]){tokens, w}, 2, NULL, 0, &h, 1, &err));
    CHECK(symc_add_node(m, "add", "qkv", (symc_tensor[]){h, b}, 2, NULL, 0, &qkv, 1, &err));
    /* reshape(B, N + 1, 3, 12, -1): the -1 is 64 for every B */
    symc_dim target[] = {B, symc_dim_add(m, n, one), symc_dim_const(m, 3), symc_dim_const(m, 12), SYMC_DIM_NONE};
    symc_attr reshape_attr = symc_attr_dims("shape", target, 5);
    CHECK(symc_add_node(m, "reshape", "heads", &qkv, 1, &reshape_attr, 1, &heads, 1, &err));
    CHECK(symc_mark_output(m, heads, &err));

    CHECK(symc_module_verify(m, &err));
    CHECK(symc_module_infer_shapes(m, &err));
    CHECK(symc_module_save(m, argv[1], &err));
    printf("vit_seed: wrote %s\n", argv[1]);
    rc = 0;
fail:
    symc_module_destroy(m);
    free(cls_w);
    free(qkv_w);
    free(qkv_b);
    return rc;
}
