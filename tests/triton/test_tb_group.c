/* tb_group_plan (triton/tb_group.c), the groups the Triton backend joins a batch into, against brute
 * force on random batches (classes, rows, lengths; with and without padding; max_rows from 1 to
 * past the batch): every request of a class in exactly one group and the others in none, group
 * numbers dense, a group one class and at most max_rows rows, padded groups within the 2x cap
 * (checked in exact integers), never more groups than first-fit in arrival order nor as many with
 * more padded positions, and the plan exactly the one tb_group.c describes: first-fit over the
 * batch stably sorted by (class, length), written here again with qsort and an arrival-index
 * tie-break, unless first-fit in arrival order is strictly better; without padding the same
 * partition as arrival order. Fixed cases: sorting saving a group and saving padding, arrival
 * order winning (short requests riding on long ones), the cap splitting one long request from 31
 * short ones. For batches of up to 7 it also finds the fewest groups any partition allows
 * (every set partition) and prints how often the plan and arrival order reach it: a measure, not
 * a check, since neither is guaranteed optimal. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "triton/tb_group.h"

enum { MAXN = 40 };

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint32_t rnd(uint32_t n) { /* uniform enough in [0, n) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

typedef struct batch {
    uint32_t n;
    int64_t max_rows;
    int pad;
    tb_group_item it[MAXN];
} batch;

static int eligible(const batch *b, uint32_t i) {
    return b->it[i].cls != TB_GROUP_ALONE && b->it[i].rows >= 1 && b->it[i].rows <= b->max_rows;
}

/* exact: a group of rows at longest smax with real positions stays within the cap */
static int cap_ok(int64_t rows, int64_t smax, int64_t real) { return rows * smax <= 2 * real; }

/* first-fit in the given order (indices into b->it), written from the description; groups numbered
 * by first use; returns their number, their padded positions in *padded */
static uint32_t ref_first_fit(const batch *b, const uint32_t *order, uint32_t *assign, int64_t *padded) {
    uint32_t cls[MAXN], ng = 0;
    int64_t rows[MAXN], real[MAXN], smax[MAXN];
    for (uint32_t k = 0; k < b->n; k++) {
        const uint32_t i = order[k];
        const tb_group_item *t = &b->it[i];
        if (!eligible(b, i)) {
            assign[i] = TB_GROUP_ALONE;
            continue;
        }
        const int64_t s = b->pad ? t->seq : 1;
        uint32_t g = 0;
        for (; g < ng; g++) {
            const int64_t r = rows[g] + t->rows, m = s > smax[g] ? s : smax[g], re = real[g] + t->rows * s;
            if (cls[g] == t->cls && r <= b->max_rows && (!b->pad || cap_ok(r, m, re))) break;
        }
        if (g == ng) {
            cls[ng] = t->cls;
            rows[ng] = real[ng] = 0;
            smax[ng++] = s;
        }
        rows[g] += t->rows;
        real[g] += t->rows * s;
        if (s > smax[g]) smax[g] = s;
        assign[i] = g;
    }
    *padded = 0;
    for (uint32_t g = 0; g < ng; g++) *padded += rows[g] * smax[g];
    return ng;
}

static const batch *cmp_batch;
static int cmp_sorted(const void *pa, const void *pb) {
    const uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const tb_group_item *x = &cmp_batch->it[a], *y = &cmp_batch->it[b];
    if (x->cls != y->cls) return x->cls < y->cls ? -1 : 1;
    if (cmp_batch->pad && x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return a < b ? -1 : a > b; /* ties keep arrival order */
}

static uint32_t ref_sorted(const batch *b, uint32_t *assign, int64_t *padded) {
    uint32_t order[MAXN];
    for (uint32_t i = 0; i < b->n; i++) order[i] = i;
    cmp_batch = b;
    qsort(order, b->n, sizeof *order, cmp_sorted);
    return ref_first_fit(b, order, assign, padded);
}

static uint32_t ref_arrival(const batch *b, uint32_t *assign, int64_t *padded) {
    uint32_t order[MAXN];
    for (uint32_t i = 0; i < b->n; i++) order[i] = i;
    return ref_first_fit(b, order, assign, padded);
}

/* the groups as a partition: same[i][j] when i and j share a group */
static int same_partition(uint32_t n, const uint32_t *a, const uint32_t *b) {
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            if ((a[i] == a[j] && a[i] != TB_GROUP_ALONE) != (b[i] == b[j] && b[i] != TB_GROUP_ALONE)) return 0;
    return 1;
}

/* every property of a plan; returns its padded positions */
static int64_t check_plan(const batch *b, const uint32_t *group, uint32_t ng, const char *what) {
    int64_t rows[MAXN] = {0}, real[MAXN] = {0}, smax[MAXN] = {0}, padded = 0;
    uint32_t cls[MAXN], used[MAXN] = {0};
    int ok = ng <= b->n;
    for (uint32_t i = 0; ok && i < b->n; i++) {
        if (!eligible(b, i)) {
            ok = group[i] == TB_GROUP_ALONE;
            continue;
        }
        const uint32_t g = group[i];
        if (g >= ng) {
            ok = 0;
            break;
        }
        const int64_t s = b->pad ? b->it[i].seq : 1;
        if (used[g]++ && cls[g] != b->it[i].cls) ok = 0; /* one class a group */
        cls[g] = b->it[i].cls;
        rows[g] += b->it[i].rows;
        real[g] += b->it[i].rows * s;
        if (s > smax[g]) smax[g] = s;
    }
    for (uint32_t g = 0; ok && g < ng; g++) {
        ok = used[g] && rows[g] <= b->max_rows && (!b->pad || cap_ok(rows[g], smax[g], real[g]));
        padded += rows[g] * smax[g];
    }
    CHECK_MSG(ok, "%s: a plan of %u groups over %u requests breaks a rule", what, ng, b->n);
    return padded;
}

static uint32_t plan(const batch *b, uint32_t *group) {
    tb_group_work work[MAXN];
    memset(group, 0xA5, sizeof(uint32_t) * MAXN);
    return tb_group_plan(b->it, b->n, b->max_rows, b->pad, group, work);
}

/* the fewest groups any partition of b allows (every set partition; small n) */
static uint32_t best_groups(const batch *b, uint32_t k, uint32_t *label, uint32_t nl, uint32_t best) {
    if (nl >= best) return best;
    if (k == b->n) {
        for (uint32_t g = 0; g < nl; g++) {
            int64_t rows = 0, real = 0, smax = 0;
            uint32_t c = TB_GROUP_ALONE;
            for (uint32_t i = 0; i < b->n; i++) {
                if (label[i] != g) continue;
                if (c != TB_GROUP_ALONE && c != b->it[i].cls) return best;
                c = b->it[i].cls;
                rows += b->it[i].rows;
                real += b->it[i].rows * b->it[i].seq;
                if (b->it[i].seq > smax) smax = b->it[i].seq;
            }
            if (rows > b->max_rows || (b->pad && !cap_ok(rows, smax, real))) return best;
        }
        return nl;
    }
    for (uint32_t g = 0; g <= nl; g++) {
        label[k] = g;
        best = best_groups(b, k + 1, label, g == nl ? nl + 1 : nl, best);
    }
    return best;
}

static void random_batch(batch *b, uint32_t nmax) {
    static const int64_t spans[] = {2, 4, 16, 128, 512};
    b->n = 1 + rnd(nmax);
    b->max_rows = rnd(3) == 0 ? 1 + rnd(4) : 1 + rnd(2 * b->n + 2); /* tight, or loose */
    b->pad = rnd(4) != 0;
    const uint32_t classes = 1 + rnd(3);
    const int64_t span = spans[rnd(5)];
    for (uint32_t i = 0; i < b->n; i++) {
        b->it[i].cls = rnd(12) == 0 ? TB_GROUP_ALONE : rnd(classes);
        b->it[i].rows = rnd(10) == 0 ? (int64_t)rnd(6) : rnd(3) ? 1 : 1 + (int64_t)rnd(4); /* some 0, some past max */
        b->it[i].seq = b->pad ? 1 + (int64_t)rnd((uint32_t)span) : -1;
    }
}

static void test_random(void) {
    uint32_t fewer = 0, less_padding = 0, arrival_kept = 0, cases = 0;
    for (int t = 0; t < 20000; t++) {
        batch b;
        random_batch(&b, MAXN);
        uint32_t group[MAXN], sorted[MAXN], arrival[MAXN];
        int64_t ps, pa;
        const uint32_t ng = plan(&b, group);
        const int64_t p = check_plan(&b, group, ng, "random");
        const uint32_t gs = ref_sorted(&b, sorted, &ps), ga = ref_arrival(&b, arrival, &pa);
        CHECK_MSG(ng < ga || (ng == ga && p <= pa), "case %d: %u groups, %lld padded; arrival order %u, %lld", t, ng,
                  (long long)p, ga, (long long)pa);
        const int take_arrival = ga < gs || (ga == gs && pa < ps);
        const uint32_t *want = take_arrival ? arrival : sorted;
        CHECK_MSG(ng == (take_arrival ? ga : gs) && !memcmp(group, want, b.n * sizeof *group),
                  "case %d: not the %s plan", t, take_arrival ? "arrival" : "sorted");
        if (!b.pad) CHECK_MSG(same_partition(b.n, group, arrival), "case %d: unpadded, not arrival's groups", t);
        uint32_t again[MAXN];
        CHECK(plan(&b, again) == ng && !memcmp(again, group, b.n * sizeof *group)); /* deterministic */
        cases += b.pad;
        fewer += b.pad && ng < ga;
        less_padding += b.pad && ng == ga && p < pa;
        arrival_kept += b.pad && take_arrival;
    }
    printf("padded batches: %u; the plan has fewer groups than arrival order in %u, as many with less padding in "
           "%u; arrival order's plan kept in %u\n",
           cases, fewer, less_padding, arrival_kept);
}

static void test_optimum(void) {
    uint32_t cases = 0, plan_best = 0, arrival_best = 0;
    for (int t = 0; t < 3000; t++) {
        batch b;
        random_batch(&b, 7);
        for (uint32_t i = 0; i < b.n; i++) { /* every request in a class, rows in range: partitions cover all */
            if (b.it[i].cls == TB_GROUP_ALONE) b.it[i].cls = 0;
            if (b.it[i].rows < 1) b.it[i].rows = 1;
            if (b.it[i].rows > b.max_rows) b.it[i].rows = b.max_rows;
        }
        uint32_t group[MAXN], arrival[MAXN], label[MAXN];
        int64_t pa;
        const uint32_t ng = plan(&b, group), ga = ref_arrival(&b, arrival, &pa);
        const uint32_t best = best_groups(&b, 0, label, 0, b.n + 1);
        CHECK_MSG(best <= ng, "case %d: brute force %u groups, the plan %u", t, best, ng); /* the search itself */
        cases++;
        plan_best += ng == best;
        arrival_best += ga == best;
    }
    printf("batches of up to 7: the fewest groups possible reached by the plan in %u of %u, by arrival order in %u\n",
           plan_best, cases, arrival_best);
}

static batch unit_batch(const int64_t *seq, uint32_t n, int64_t max_rows) {
    batch b = {.n = n, .max_rows = max_rows, .pad = 1};
    for (uint32_t i = 0; i < n; i++) b.it[i] = (tb_group_item){0, 1, seq[i]};
    return b;
}

static void test_fixed(void) {
    uint32_t g[MAXN], ref[MAXN];
    int64_t p;
    { /* sorting saves a group: 1 1 6 4 in arrival order is {1 1 4} {6}; sorted 1 1 4 6 is one group */
        const batch b = unit_batch((const int64_t[]){1, 1, 6, 4}, 4, 8);
        CHECK(ref_arrival(&b, ref, &p) == 2);
        CHECK(plan(&b, g) == 1);
        check_plan(&b, g, 1, "1 1 6 4");
    }
    { /* sorting saves padding: 10 100 11 101 two at a time: {10 11} {100 101}, not {10 100} {11 101} */
        const batch b = unit_batch((const int64_t[]){10, 100, 11, 101}, 4, 2);
        CHECK(plan(&b, g) == 2);
        CHECK(g[0] == g[2] && g[1] == g[3] && g[0] != g[1]);
        CHECK(check_plan(&b, g, 2, "10 100 11 101") == 2 * 11 + 2 * 101);
    }
    { /* arrival order wins: 5 5 5 5 1 1 is one group (the 1s ride on the 5s' slack); sorted first-fit
         closes {1 1} before the 5s come and needs two */
        const batch b = unit_batch((const int64_t[]){5, 5, 5, 5, 1, 1}, 6, 64);
        CHECK(ref_sorted(&b, ref, &p) == 2);
        CHECK(plan(&b, g) == 1);
        check_plan(&b, g, 1, "5 5 5 5 1 1");
    }
    { /* the cap: 31 requests of length 1 and one of 512, rows to spare: the long one runs apart */
        int64_t seq[32];
        for (int i = 0; i < 32; i++) seq[i] = i == 7 ? 512 : 1;
        const batch b = unit_batch(seq, 32, 64);
        CHECK(plan(&b, g) == 2);
        for (int i = 0; i < 32; i++) CHECK(i == 7 ? g[i] != g[0] : g[i] == g[0]);
    }
    { /* ties keep arrival order: equal lengths, rows 3 1 2 2 into 4: {3 1} then {2 2}, numbered so */
        batch b = unit_batch((const int64_t[]){9, 9, 9, 9}, 4, 4);
        const int64_t rows[] = {3, 1, 2, 2};
        for (int i = 0; i < 4; i++) b.it[i].rows = rows[i];
        CHECK(plan(&b, g) == 2);
        CHECK(g[0] == 0 && g[1] == 0 && g[2] == 1 && g[3] == 1);
    }
    { /* classes never meet, a refused request and one past max_rows run alone */
        batch b = unit_batch((const int64_t[]){4, 4, 4, 4}, 4, 2);
        b.it[1].cls = 1;
        b.it[2].cls = TB_GROUP_ALONE;
        b.it[3].rows = 3;
        CHECK(plan(&b, g) == 2);
        CHECK(g[0] != g[1] && g[2] == TB_GROUP_ALONE && g[3] == TB_GROUP_ALONE);
    }
    { /* an empty batch */
        const batch b = {.n = 0, .max_rows = 4, .pad = 1};
        CHECK(plan(&b, g) == 0);
    }
}

int main(void) {
    test_fixed();
    test_random();
    test_optimum();
    return check_report("triton.group");
}
