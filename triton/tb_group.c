/* tb_group.c: the groups the Triton backend joins a batch's requests into (tb_backend.c).
 *
 * Requests meet only within a join class (the same dims past the batch and, for padded joins,
 * past the length, and the same region). A plan is first-fit: each request in turn goes to the
 * first group of its class it fits, up to max_rows rows and, for padded joins, while the group's
 * padded positions (rows times its longest length) stay at most twice its real ones (the 2x cap,
 * tb_pad_fits). The turn is the batch sorted by (class, length), stable (ties keep arrival
 * order): requests of similar lengths share a group, so a group's longest is close to the rest,
 * it pads less and the cap closes fewer groups.
 *
 * The cap stays. Sorting chooses who meets; it does not bound what a group wastes: where the
 * rows allow, one long request among many short ones pads them all to its length (31 requests of
 * length 1 and one of 512: 16,384 positions for 543 real, where two runs take 543), in any order.
 * The cap bounds every run's padding at half its work whatever the order; after sorting it binds
 * only where a batch's lengths spread past 2x, which is where a second run costs less than the
 * padding.
 *
 * Sorted is not always better: first-fit in length order can close a group of short requests
 * before the long ones that could have carried them come (lengths 1, 1, 5, 5, 5, 5 with rows to
 * spare: {1, 1} and {5, 5, 5, 5}, where arrival order 5, 5, 5, 5, 1, 1 gives one group, the short
 * ones riding on the long ones' slack), and packing rows into max_rows depends on the order too.
 * So both plans are made (first-fit, O(n x groups) each) and the one with fewer groups kept, then
 * the one with fewer padded positions, then the sorted one: never worse than arrival order on
 * (runs, padded positions). Without padding, first-fit within a class sees no other class, so the
 * sorted plan is the arrival plan with its groups numbered class by class. */
#include "triton/tb_group.h"

#include <string.h>

int tb_pad_fits(int64_t sum, int64_t real, int64_t smax, int64_t rows, int64_t seq) {
    double longest = (double)(seq > smax ? seq : smax);
    return (double)(sum + rows) * longest <= 2.0 * ((double)real + (double)rows * (double)seq);
}

static int tb_group_eligible(const tb_group_item *it, int64_t max_rows) {
    return it->cls != TB_GROUP_ALONE && it->rows >= 1 && it->rows <= max_rows;
}

/* work[].order: the items sorted by (class, length with pad), stable (insertion sort: a batch
 * holds at most max_batch_size requests) */
static void tb_group_sort(const tb_group_item *items, uint32_t n, int pad, tb_group_work *work) {
    for (uint32_t k = 0; k < n; k++) {
        const tb_group_item *a = &items[k];
        uint32_t j = k;
        for (; j > 0; j--) {
            const tb_group_item *b = &items[work[j - 1].order];
            if (!(b->cls > a->cls || (b->cls == a->cls && pad && b->seq > a->seq))) break;
            work[j].order = work[j - 1].order;
        }
        work[j].order = k;
    }
}

/* First-fit over the items in sorted order (sorted) or in arrival order into work[].assign;
 * the number of groups, and their padded positions (rows, without pad) in *padded. */
static uint32_t tb_group_first_fit(const tb_group_item *items, uint32_t n, int64_t max_rows, int pad, int sorted,
                                   tb_group_work *work, double *padded) {
    uint32_t ng = 0;
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t i = sorted ? work[k].order : k;
        const tb_group_item *it = &items[i];
        if (!tb_group_eligible(it, max_rows)) {
            work[i].assign = TB_GROUP_ALONE;
            continue;
        }
        uint32_t g = 0;
        while (g < ng &&
               (work[g].cls != it->cls || work[g].rows + it->rows > max_rows ||
                (pad && !tb_pad_fits(work[g].rows, work[g].real, work[g].smax, it->rows, it->seq))))
            g++;
        if (g == ng) {
            work[ng].cls = it->cls;
            work[ng].rows = work[ng].real = 0;
            work[ng].smax = pad ? it->seq : 1;
            ng++;
        }
        work[g].rows += it->rows;
        work[g].real += it->rows * (pad ? it->seq : 1);
        if (pad && it->seq > work[g].smax) work[g].smax = it->seq;
        work[i].assign = g;
    }
    *padded = 0;
    for (uint32_t g = 0; g < ng; g++) *padded += (double)work[g].rows * (double)work[g].smax;
    return ng;
}

uint32_t tb_group_plan(const tb_group_item *items, uint32_t n, int64_t max_rows, int pad, uint32_t *group,
                       tb_group_work *work) {
    double ps = 0, pa = 0;
    tb_group_sort(items, n, pad, work);
    const uint32_t gs = tb_group_first_fit(items, n, max_rows, pad, 1, work, &ps);
    for (uint32_t i = 0; i < n; i++) group[i] = work[i].assign;
    const uint32_t ga = tb_group_first_fit(items, n, max_rows, pad, 0, work, &pa);
    if (ga > gs || (ga == gs && pa >= ps)) return gs;
    for (uint32_t i = 0; i < n; i++) group[i] = work[i].assign;
    return ga;
}
