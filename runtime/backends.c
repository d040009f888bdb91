/* The backend registry (runtime/backend.h): the one place that names the
 * backends, so the rest of the core knows none of them. A new backend adds
 * its table's declaration and its entry here, next to a new value of
 * symrt_backend; the CMake glob picks its folder up. */
#include "runtime/backend.h"

extern const rt_backend rt_ref_backend;  /* runtime/ref/ref_backend.c */
extern const rt_backend rt_cuda_backend; /* runtime/cuda/cuda_backend.c */

static const rt_backend *const registry[] = {
    [SYMRT_BACKEND_REF] = &rt_ref_backend,
    [SYMRT_BACKEND_CUDA] = &rt_cuda_backend,
};

const rt_backend *rt_backend_get(symrt_backend which) {
    return (unsigned)which < sizeof registry / sizeof *registry ? registry[which] : NULL;
}
