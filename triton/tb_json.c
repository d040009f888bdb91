/* tb_json.c: a recursive-descent JSON reader (RFC 8259) into a tree of
 * malloc'ed nodes, for the model configuration Triton gives the backend. It
 * keeps a depth limit (the configuration is shallow; a hostile document must
 * not exhaust the stack), decodes strings into fresh buffers, and keeps
 * numbers as their text so an int64 is never rounded through a double. */
#include "triton/tb_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TB_JSON_MAX_DEPTH = 64 };

typedef struct parser {
    const char *s;
    size_t n, i;
    char *err;
    size_t cap;
    bool failed;
} parser;

static void fail(parser *p, const char *fmt, ...) {
    if (p->failed) return;
    p->failed = true;
    va_list ap;
    va_start(ap, fmt);
    char what[160];
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (p->err && p->cap) snprintf(p->err, p->cap, "model configuration JSON, byte %zu: %s", p->i, what);
}

static void skip_ws(parser *p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')) p->i++;
}

static tb_json *node(parser *p, tb_json_kind kind) {
    tb_json *j = calloc(1, sizeof *j);
    if (!j) fail(p, "out of memory");
    else j->kind = kind;
    return j;
}

static int hex4(parser *p, unsigned *out) {
    if (p->i + 4 > p->n) return -1;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->i++];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* a string at p->i (its opening quote) decoded into a new buffer */
static char *string(parser *p) {
    p->i++;                              /* the quote */
    char *out = malloc(p->n - p->i + 1); /* decoding never grows the text */
    if (!out) {
        fail(p, "out of memory");
        return NULL;
    }
    size_t o = 0;
    while (p->i < p->n) {
        unsigned char c = (unsigned char)p->s[p->i++];
        if (c == '"') {
            out[o] = '\0';
            return out;
        }
        if (c < 0x20) break;
        if (c != '\\') {
            out[o++] = (char)c;
            continue;
        }
        if (p->i >= p->n) break;
        char e = p->s[p->i++];
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *at = strchr(from, e);
        if (e && at) {
            out[o++] = to[at - from];
            continue;
        }
        unsigned u;
        if (e != 'u' || hex4(p, &u)) break;
        if (u >= 0xD800 && u < 0xDC00) { /* a surrogate pair */
            unsigned lo;
            if (p->i + 2 > p->n || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') break;
            p->i += 2;
            if (hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF) break;
            u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
        } else if (u >= 0xDC00 && u < 0xE000) {
            break;
        }
        /* 6 escape bytes become at most 4 (and a pair's 12 at most 4) */
        if (u < 0x80) out[o++] = (char)u;
        else if (u < 0x800) {
            out[o++] = (char)(0xC0 | (u >> 6));
            out[o++] = (char)(0x80 | (u & 0x3F));
        } else if (u < 0x10000) {
            out[o++] = (char)(0xE0 | (u >> 12));
            out[o++] = (char)(0x80 | ((u >> 6) & 0x3F));
            out[o++] = (char)(0x80 | (u & 0x3F));
        } else {
            out[o++] = (char)(0xF0 | (u >> 18));
            out[o++] = (char)(0x80 | ((u >> 12) & 0x3F));
            out[o++] = (char)(0x80 | ((u >> 6) & 0x3F));
            out[o++] = (char)(0x80 | (u & 0x3F));
        }
    }
    free(out);
    fail(p, "a string is cut or holds a bad escape or control character");
    return NULL;
}

static tb_json *value(parser *p, int depth);

/* the members or elements of an object or array whose opening bracket is at p->i */
static tb_json *container(parser *p, int depth, bool obj) {
    tb_json *j = node(p, obj ? TB_JSON_OBJ : TB_JSON_ARR);
    if (!j) return NULL;
    p->i++;
    skip_ws(p);
    char close = obj ? '}' : ']';
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        return j;
    }
    tb_json **tail = &j->child;
    for (;;) {
        char *key = NULL;
        skip_ws(p);
        if (obj) {
            if (p->i >= p->n || p->s[p->i] != '"') {
                fail(p, "expected a member name in quotes");
                break;
            }
            if (!(key = string(p))) break;
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') {
                free(key);
                fail(p, "expected ':' after a member name");
                break;
            }
            p->i++;
        }
        tb_json *v = value(p, depth + 1);
        if (!v) {
            free(key);
            break;
        }
        v->key = key;
        *tail = v;
        tail = &v->next;
        skip_ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
            return j;
        }
        fail(p, "expected ',' or '%c'", close);
        break;
    }
    tb_json_free(j);
    return NULL;
}

static tb_json *value(parser *p, int depth) {
    if (depth > TB_JSON_MAX_DEPTH) {
        fail(p, "nested deeper than %d levels", TB_JSON_MAX_DEPTH);
        return NULL;
    }
    skip_ws(p);
    if (p->i >= p->n) {
        fail(p, "the text ends where a value should be");
        return NULL;
    }
    char c = p->s[p->i];
    if (c == '{' || c == '[') return container(p, depth, c == '{');
    if (c == '"') {
        char *s = string(p);
        if (!s) return NULL;
        tb_json *j = node(p, TB_JSON_STR);
        if (!j) free(s);
        else j->str = s;
        return j;
    }
    static const char *words[] = {"true", "false", "null"};
    for (int w = 0; w < 3; w++) {
        size_t len = strlen(words[w]);
        if (p->n - p->i >= len && !memcmp(p->s + p->i, words[w], len)) {
            p->i += len;
            tb_json *j = node(p, w < 2 ? TB_JSON_BOOL : TB_JSON_NULL);
            if (j) j->boolean = w == 0;
            return j;
        }
    }
    size_t start = p->i;
    if (p->s[p->i] == '-') p->i++;
    size_t digits = p->i;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    if (p->i == digits) {
        fail(p, "unexpected character '%c'", c >= 32 && c < 127 ? c : '?');
        return NULL;
    }
    while (p->i < p->n && strchr("0123456789.eE+-", p->s[p->i])) p->i++;
    tb_json *j = node(p, TB_JSON_NUM);
    if (!j) return NULL;
    if (!(j->str = malloc(p->i - start + 1))) {
        free(j);
        fail(p, "out of memory");
        return NULL;
    }
    memcpy(j->str, p->s + start, p->i - start);
    j->str[p->i - start] = '\0';
    return j;
}

tb_json *tb_json_parse(const char *text, size_t n, char *err, size_t cap) {
    parser p = {text, n, 0, err, cap, false};
    if (!text) {
        fail(&p, "no text");
        return NULL;
    }
    tb_json *j = value(&p, 0);
    if (!j) return NULL;
    skip_ws(&p);
    if (p.i != n) {
        fail(&p, "text after the document");
        tb_json_free(j);
        return NULL;
    }
    return j;
}

void tb_json_free(tb_json *j) {
    while (j) {
        tb_json *next = j->next;
        tb_json_free(j->child);
        free(j->key);
        free(j->str);
        free(j);
        j = next;
    }
}

const tb_json *tb_json_get(const tb_json *j, const char *key) {
    if (!j || j->kind != TB_JSON_OBJ) return NULL;
    for (const tb_json *c = j->child; c; c = c->next)
        if (c->key && !strcmp(c->key, key)) return c;
    return NULL;
}

bool tb_json_int(const tb_json *j, int64_t *out) {
    if (!j || (j->kind != TB_JSON_NUM && j->kind != TB_JSON_STR) || !j->str[0]) return false;
    char *end;
    errno = 0;
    long long v = strtoll(j->str, &end, 10);
    if (errno || *end || (j->str[0] != '-' && (j->str[0] < '0' || j->str[0] > '9'))) return false;
    *out = (int64_t)v;
    return true;
}

size_t tb_json_len(const tb_json *j) {
    size_t n = 0;
    if (j && j->kind == TB_JSON_ARR)
        for (const tb_json *c = j->child; c; c = c->next) n++;
    return n;
}
