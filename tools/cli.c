/* The driver's command-line reading (tools/cli.h). Every flag takes "--flag=value" or
 * "--flag value", as trtexec's do; the shape flags are recognized by the frontend's one table of
 * their spellings (fe_shape_flag_parse) and parsed by its one grammar, so compile, dot and run
 * read them alike. */
#include "tools/cli.h"

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
