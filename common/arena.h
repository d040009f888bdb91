/* common/arena.h: the one bump arena (internal to symc, prefix cm_). Memory
 * that lives as long as its owner and is freed all at once: the IR module's
 * strings and per-node arrays (ir/module.c), and every array of one engine
 * build (codegen/). Chunks never move, so pointers stay valid until
 * cm_arena_free. A zero-initialized cm_arena ({NULL}) is an empty arena. */
#ifndef SYMC_COMMON_ARENA_H
#define SYMC_COMMON_ARENA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cm_arena {
    struct cm_chunk *head;
} cm_arena;

/* n zeroed elements of `size` bytes, 16-byte aligned (never NULL for n = 0
 * unless out of memory); NULL when out of memory or n * size overflows. */
void *cm_arena_calloc(cm_arena *a, size_t n, size_t size);
/* Frees every chunk; the arena is empty again. */
void cm_arena_free(cm_arena *a);

#ifdef __cplusplus
}
#endif
#endif
