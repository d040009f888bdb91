/* A monotonic clock in seconds, for the timings symc reports (build phases,
 * the tuner's budget, host time per step). Header only: one inline
 * function over clock_gettime(CLOCK_MONOTONIC), shared by codegen/ and
 * runtime/ so neither keeps its own copy. */
#ifndef SYMC_COMMON_CLOCK_H
#define SYMC_COMMON_CLOCK_H

#include <time.h>

static inline double symc_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
