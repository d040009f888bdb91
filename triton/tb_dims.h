/* tb_dims.h: dim text as symrt_engine_input_dim and symrt_engine_output_dim print it ("B",
 * "(S*2)", "64"), read the same way by the backend (which checks a config against its engine) and
 * by `symc triton` (which writes the config): whether a symbol occurs in a dim, as itself or as a
 * whole word of an expression (S in "(S*2)", not in "S2"). */
#ifndef SYMC_TRITON_TB_DIMS_H
#define SYMC_TRITON_TB_DIMS_H

#include <string.h>

static inline int tb_ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* symbol `name` occurs in dim text t */
static inline int tb_dim_mentions(const char *t, const char *name) {
    size_t n = strlen(name);
    for (const char *p = t; n && (p = strstr(p, name)); p++)
        if ((p == t || !tb_ident_char(p[-1])) && !tb_ident_char(p[n])) return 1;
    return 0;
}

#endif
