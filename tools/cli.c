/* The driver's command-line reading (tools/cli.h). Every flag takes "--flag=value" or
 * "--flag value", as trtexec's do; the shape flags are recognized by the frontend's one table of
 * their spellings (fe_shape_flag_parse) and parsed by its one grammar, so compile, dot and run
 * read them alike. */
#include "tools/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tool_flag(int argc, char **argv, int *i, const char *flag) {
    size_t n = strlen(flag);
    if (!strncmp(argv[*i], flag, n) && argv[*i][n] == '=') return argv[*i] + n + 1;
    if (!strcmp(argv[*i], flag) && *i + 1 < argc) return argv[++*i];
    return NULL;
}

int tool_has_suffix(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

void tool_batch_rows_line(symrt_batch_rows state, const char *batch, const char *why, char *buf, size_t cap) {
    why = why && why[0] ? why : "no reason recorded";
    if (state == SYMRT_BATCH_ROWS_NONE) snprintf(buf, cap, "batch rows: no batch axis: %s", why);
    else if (state == SYMRT_BATCH_ROWS_INDEPENDENT && batch)
        snprintf(buf, cap,
                 "batch rows: independent over %s (each output row b is computed from input rows b alone: requests "
                 "may run joined along dim 0)",
                 batch);
    else if (state == SYMRT_BATCH_ROWS_BATCHED || state == SYMRT_BATCH_ROWS_INDEPENDENT)
        snprintf(buf, cap, "batch rows: not proved independent: %s", why);
    else
        snprintf(buf, cap,
                 "batch rows: unknown (the engine was built before symc stored the batch-row proof: rebuild it to "
                 "know whether requests may run joined along dim 0)");
}

int tool_vusage(const char *cmd, const char *fmt, va_list ap) {
    fprintf(stderr, "symc: %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'symc %s --help')\n", cmd);
    return 2;
}

int tool_usage(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = tool_vusage(cmd, fmt, ap);
    va_end(ap);
    return rc;
}

/* room for n more bytes and the terminator */
static int buf_room(tool_buf *b, size_t n) {
    if (b->oom) return 0;
    if (b->len + n + 1 <= b->cap) return 1;
    size_t cap = (b->len + n + 1) * 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return 0;
    }
    b->s = s, b->cap = cap;
    return 1;
}

void tool_buf_add(tool_buf *b, const char *text, size_t n) {
    if (!buf_room(b, n)) return;
    memcpy(b->s + b->len, text, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void tool_buf_addf(tool_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !buf_room(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

tool_shape_flag_result tool_shape_flag(int argc, char **argv, int *i, fe_shape_list *shapes, int *n_multiple,
                                       char flag[32], symc_error *err) {
    const char *eq = strchr(argv[*i], '='), *v;
    fe_shape_flag sf;
    flag[0] = '\0';
    if (argv[*i][0] == '-' && argv[*i][1] == '-') {
        size_t n = eq ? (size_t)(eq - argv[*i]) : strlen(argv[*i]);
        if (n < 32) memcpy(flag, argv[*i], n), flag[n] = '\0';
    }
    if (*flag && fe_shape_flag_parse(flag, &sf)) {
        if (!(v = tool_flag(argc, argv, i, flag))) return TOOL_SHAPES_NO_VALUE;
        return fe_parse_shapes(shapes, sf, v, err) ? TOOL_SHAPES_BAD : TOOL_SHAPES_READ;
    }
    if ((v = tool_flag(argc, argv, i, "--multiple"))) {
        if (fe_parse_multiple(shapes, v, err)) return TOOL_SHAPES_BAD;
        ++*n_multiple;
        return TOOL_SHAPES_READ;
    }
    return TOOL_NOT_SHAPES;
}
