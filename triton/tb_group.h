/* tb_group.h: which requests of a batch the Triton backend runs together (tb_backend.c's joined
 * runs), as a pure function of their join classes, rows and lengths, so a unit test can check it
 * against brute force (tests/triton/test_tb_group.c). tb_group.c says how a plan is made and why. */
#ifndef SYMC_TRITON_TB_GROUP_H
#define SYMC_TRITON_TB_GROUP_H

#include <stdint.h>

#define TB_GROUP_ALONE UINT32_MAX /* a request in no group: it runs by itself */

typedef struct tb_group_item {
    uint32_t cls; /* join class: requests meet only within one (same dims past the batch and the
                     length, same region); TB_GROUP_ALONE: runs alone */
    int64_t rows; /* its batch rows; outside [1, max_rows] it runs alone */
    int64_t seq;  /* its length, dim 1 of its inputs (padded joins; ignored otherwise) */
} tb_group_item;

/* scratch for tb_group_plan, one per item (the caller owns it: the plan allocates nothing) */
typedef struct tb_group_work {
    uint32_t order, assign;   /* per item: the sorted order, a candidate plan's group */
    uint32_t cls;             /* per group: its class */
    int64_t rows, real, smax; /* per group: its rows, real positions, longest length */
} tb_group_work;

/* Whether a request of `rows` rows at length `seq` may join a padded group of `sum` rows, `real`
 * real positions and longest length `smax`: the group's padded positions (its rows times its
 * longest length) stay at most twice its real ones. */
int tb_pad_fits(int64_t sum, int64_t real, int64_t smax, int64_t rows, int64_t seq);

/* The groups of items[0..n): group[i] is item i's group, numbered 0.. in the order the groups run,
 * or TB_GROUP_ALONE; returns the number of groups. Every item of a class (and with rows in [1,
 * max_rows]) is in exactly one group; a group holds one class and at most max_rows rows, and with
 * pad every group's padded positions are at most twice its real ones (tb_pad_fits). The plan
 * never has more groups than first-fit in arrival order, nor, with as many, more padded
 * positions (tb_group.c). Deterministic: the same items give the same plan. */
uint32_t tb_group_plan(const tb_group_item *items, uint32_t n, int64_t max_rows, int pad, uint32_t *group,
                       tb_group_work *work);

#endif
