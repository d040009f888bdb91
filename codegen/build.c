/* The arena and progress lines of one engine build (codegen/build.h).
 *
 * The arena is the IR module's approach (ir/module.c) on its own: chunks of
 * 64 KiB, a larger request in a chunk of its own, each request rounded up to
 * 16 bytes and zeroed, everything freed at once. A build makes a few dozen
 * requests (one array per engine table, one per node with dim attributes,
 * the tuner's entries), so the chunk list stays short. */
#include "codegen/build.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES 65536

typedef struct cg_chunk {
    struct cg_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} cg_chunk;

void *cg_arena_calloc(cg_arena *a, size_t n, size_t size) {
    if (size && n > (SIZE_MAX - 15 - sizeof(cg_chunk)) / size) return NULL;
    size_t bytes = (n * size + 15) & ~(size_t)15;
    if (bytes == 0) bytes = 16;
    cg_chunk *c = a->head;
    if (!c || c->cap - c->used < bytes) {
        size_t cap = bytes > CHUNK_BYTES ? bytes : CHUNK_BYTES;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->used = 0;
        c->cap = cap;
        /* a chunk of its own goes behind the current one, which keeps its room */
        if (a->head && bytes > CHUNK_BYTES) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = c->data + c->used;
    c->used += bytes;
    memset(p, 0, bytes);
    return p;
}

void cg_arena_free(cg_arena *a) {
    for (cg_chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    a->head = NULL;
}

void cg_progress(const cg_options *o, const char *fmt, ...) {
    if (!o->progress) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->progress(o->progress_ctx, msg);
}
