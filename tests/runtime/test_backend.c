/* The backend table (runtime/backend.h) and its registry: every symrt_backend
 * value has a table with the entries the core calls unconditionally, the
 * optional ones are what each backend needs (the reference backend runs
 * synchronously on host memory: no buffer check, no run check, no graphs),
 * and values outside the registry have none (symrt_context_create then says
 * "unknown backend N"). Behaviour through the tables is tested by every
 * symrt test (test_engine.c, test_limits.c, test_cuda_backend.c, ...). */
#include <string.h>

#include "runtime/backend.h"
#include "tests/check.h"

static void complete(symrt_backend which, const char *name) {
    const rt_backend *b = rt_backend_get(which);
    CHECK_MSG(b != NULL, "no table for backend %d", (int)which);
    if (!b) return;
    CHECK(b->name && !strcmp(b->name, name));
    CHECK(b->create && b->destroy && b->layout && b->enqueue);
    b->destroy(NULL); /* what a context that failed to create hands it */
}

int main(void) {
    complete(SYMRT_BACKEND_REF, "reference");
    complete(SYMRT_BACKEND_CUDA, "CUDA");
    const rt_backend *ref = rt_backend_get(SYMRT_BACKEND_REF), *cuda = rt_backend_get(SYMRT_BACKEND_CUDA);
    CHECK(ref && !ref->check_buffer && !ref->check_run && !ref->set_graphs && !ref->graph_stats && !ref->profile);
    CHECK(cuda && cuda->check_buffer && cuda->check_run && cuda->set_graphs && cuda->graph_stats && cuda->profile);
    CHECK(ref != cuda);
    CHECK(rt_backend_get((symrt_backend)2) == NULL);
    CHECK(rt_backend_get((symrt_backend)-1) == NULL);
    CHECK(rt_backend_get((symrt_backend)1000) == NULL);
    return check_report("runtime.backend");
}
