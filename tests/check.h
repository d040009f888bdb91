/* Minimal assertions for symc's C tests: a failed check prints where and why
 * and is counted; the test's exit code is the failure count (capped), so
 * ctest sees each test pass or fail, and one run shows every failure. */
#ifndef SYMC_TESTS_CHECK_H
#define SYMC_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        check_count++;                                                               \
        if (!(cond)) {                                                               \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                         \
    do {                                                                             \
        check_count++;                                                               \
        if (!(cond)) {                                                               \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fprintf(stderr, "\n");                                                   \
        }                                                                            \
    } while (0)

/* haystack contains needle */
#define CHECK_CONTAINS(haystack, needle)                                                      \
    CHECK_MSG((haystack) && strstr((haystack), (needle)), "'%s' not found in '%s'", (needle), \
              (haystack) ? (haystack) : "(null)")

static inline int check_report(const char *name) {
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures > 100 ? 100 : check_failures;
}

#endif
