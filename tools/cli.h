/* The driver's command-line reading, one copy for every command (tools/cli.c): a flag's value in
 * either spelling, and the shape flags that compile, dot and the others share. */
#ifndef SYMC_TOOLS_CLI_H
#define SYMC_TOOLS_CLI_H

#include <stdarg.h>
#include <stddef.h>

#include "frontend/onnx.h"
#include "symc/status.h"
#include "symc/symrt.h" /* symrt_batch_rows */

/* "--flag=value" or "--flag value" at argv[*i]: the value, with *i moved past it; NULL when
 * argv[*i] is another flag, or the flag comes last with no value. */
const char *tool_flag(int argc, char **argv, int *i, const char *flag);

/* s ends with suffix */
int tool_has_suffix(const char *s, const char *suffix);

/* A usage error of command cmd on stderr, "symc: CMD: message (see 'symc CMD --help')"; returns 2,
 * the exit code of a usage error. */
int tool_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tool_vusage(const char *cmd, const char *fmt, va_list ap);

/* A growing string for the commands that compose text (dot's labels, triton's config.pbtxt):
 * s is NUL-terminated once anything was added; after a failed allocation oom is set and nothing
 * more is added. Start from {0}; the caller frees s. */
typedef struct tool_buf {
    char *s;
    size_t len, cap;
    int oom;
} tool_buf;
void tool_buf_add(tool_buf *b, const char *text, size_t n);
void tool_buf_addf(tool_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The "batch rows: ..." line (no newline) that symc inspect ends with for a module (ir_batch_rows)
 * and an engine (the verdict stored in it) alike, and symc triton repeats: the state, batch the
 * batch symbol's name (BATCHED, INDEPENDENT; NULL where unknown), why the reason (NONE, BATCHED).
 * snprintf semantics into buf. */
void tool_batch_rows_line(symrt_batch_rows state, const char *batch, const char *why, char *buf, size_t cap);

/* What tool_shape_flag found at argv[*i]. */
typedef enum tool_shape_flag_result {
    TOOL_NOT_SHAPES = 0,  /* another argument: nothing read */
    TOOL_SHAPES_READ,     /* a shape flag or --multiple, parsed into the list */
    TOOL_SHAPES_NO_VALUE, /* a shape flag with no value: its name in flag */
    TOOL_SHAPES_BAD,      /* its value does not parse: err says why */
} tool_shape_flag_result;

/* The shape flags at argv[*i]: --shapes and the --min-/--opt-/--max-shapes family in symc's and
 * trtexec's spellings (fe_shape_flag_parse), each parsed into shapes; --multiple NAME:AXIS=M into
 * shapes too, counted in *n_multiple. flag receives the flag's name (32 bytes). */
tool_shape_flag_result tool_shape_flag(int argc, char **argv, int *i, fe_shape_list *shapes, int *n_multiple,
                                       char flag[32], symc_error *err);

#endif
