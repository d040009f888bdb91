/* The bump arena (common/arena.h): chunks of 64 KiB, a larger request in a
 * chunk of its own, each request rounded up to 16 bytes and zeroed,
 * everything freed at once. A chunk of its own goes behind the current one,
 * which keeps its room for the small requests after it. */
#include "common/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES 65536

typedef struct cm_chunk {
    struct cm_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} cm_chunk;

void *cm_arena_calloc(cm_arena *a, size_t n, size_t size) {
    if (size && n > (SIZE_MAX - 15 - sizeof(cm_chunk)) / size) return NULL;
    size_t bytes = (n * size + 15) & ~(size_t)15;
    if (bytes == 0) bytes = 16;
    cm_chunk *c = a->head;
    if (!c || c->cap - c->used < bytes) {
        size_t cap = bytes > CHUNK_BYTES ? bytes : CHUNK_BYTES;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->used = 0;
        c->cap = cap;
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

void cm_arena_free(cm_arena *a) {
    for (cm_chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    a->head = NULL;
}
