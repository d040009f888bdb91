/* tb_json.h: the little JSON reader the Triton backend needs for the model
 * configuration the server hands it (TRITONBACKEND_ModelConfig serialized as
 * JSON). A whole document becomes a tree of nodes; objects keep their members
 * in order, strings are decoded (escapes, \u sequences as UTF-8). Integers
 * are read from numbers and, since protobuf writes int64 fields as strings,
 * from strings of digits too (tb_json_int). Errors say where the text broke. */
#ifndef SYMC_TRITON_TB_JSON_H
#define SYMC_TRITON_TB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum tb_json_kind {
    TB_JSON_NULL,
    TB_JSON_BOOL,
    TB_JSON_NUM,
    TB_JSON_STR,
    TB_JSON_ARR,
    TB_JSON_OBJ
} tb_json_kind;

typedef struct tb_json {
    tb_json_kind kind;
    char *key;                    /* member name inside an object, else NULL */
    char *str;                    /* TB_JSON_STR: the decoded text; TB_JSON_NUM: the number's text */
    bool boolean;                 /* TB_JSON_BOOL */
    struct tb_json *child, *next; /* TB_JSON_ARR / TB_JSON_OBJ: first element; the next sibling */
} tb_json;

/* The tree of text[0..n), or NULL with a message in err (cap bytes). */
tb_json *tb_json_parse(const char *text, size_t n, char *err, size_t cap);
void tb_json_free(tb_json *j);
/* The member key of object j (NULL when j is no object or has none). */
const tb_json *tb_json_get(const tb_json *j, const char *key);
/* j as an integer: a number without fraction or a string of one; false otherwise. */
bool tb_json_int(const tb_json *j, int64_t *out);
/* The number of elements of an array (0 for anything else). */
size_t tb_json_len(const tb_json *j);

#endif
