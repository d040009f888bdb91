/* The builder tests' one-line node: the result of op(in[0..n_in)) named `name` in module m, added by
 * symc_add_node with attrs[0..n_attrs); a failed check naming the node and the builder's message
 * when it refuses (SYMC_TENSOR_NONE then). Header-only, after tests/check.h: its checks count in
 * the including test. */
#ifndef SYMC_TESTS_TEST_NODE_H
#define SYMC_TESTS_TEST_NODE_H

#include "symc/symc.h"
#include "tests/check.h"

static symc_tensor test_node(symc_module *m, const char *op, const char *name, const symc_tensor *in, uint32_t n_in,
                             const symc_attr *attrs, uint32_t n_attrs) {
    symc_error err;
    symc_tensor out = SYMC_TENSOR_NONE;
    CHECK_MSG(symc_add_node(m, op, name, in, n_in, attrs, n_attrs, &out, 1, &err) == SYMC_OK, "%s: %s", name, err.msg);
    return out;
}

#endif
