/* The engine file's checksum trailer (runtime/engine.h): the writer (engine_fb.cc's write_out)
 * feeds it the bytes in the pieces it writes them in (the FlatBuffer between the constants, each
 * constant from the engine), the loader the whole file at once. Eight interleaved FNV-1a lanes
 * (~8x faster than one lane on multi-megabyte engines, same detection of any single change):
 * byte i goes to lane i % 8 up to the last whole 8 bytes, the rest to lane 0; the lanes are then
 * folded byte by byte and the length xored in. Whole 8-byte words are read with one load, byte k
 * of the word to lane k: the same value as a byte at a time, twice as fast (the lanes' multiplies
 * then bound it). */
#include <string.h>

#include "runtime/engine.h"

static const uint64_t kBasis = 1469598103934665603ull, kPrime = 1099511628211ull;

void rt_checksum_init(rt_checksum *c, size_t n) {
    for (int k = 0; k < 8; k++) c->lane[k] = kBasis ^ (uint64_t)k;
    c->n = n;
    c->whole = n - n % 8;
    c->at = 0;
}

/* whole words from a multiple of 8 below c->whole */
static void add_words(rt_checksum *c, const uint8_t *p, size_t words) {
    uint64_t l0 = c->lane[0], l1 = c->lane[1], l2 = c->lane[2], l3 = c->lane[3], l4 = c->lane[4], l5 = c->lane[5],
             l6 = c->lane[6], l7 = c->lane[7];
    for (size_t i = 0; i < words; i++, p += 8) {
        uint64_t w;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = 0;
        for (int k = 0; k < 8; k++) w |= (uint64_t)p[k] << (8 * k);
#else
        memcpy(&w, p, 8); /* little endian: byte k is bits 8k..8k+7 */
#endif
        l0 = (l0 ^ (w & 0xff)) * kPrime;
        l1 = (l1 ^ ((w >> 8) & 0xff)) * kPrime;
        l2 = (l2 ^ ((w >> 16) & 0xff)) * kPrime;
        l3 = (l3 ^ ((w >> 24) & 0xff)) * kPrime;
        l4 = (l4 ^ ((w >> 32) & 0xff)) * kPrime;
        l5 = (l5 ^ ((w >> 40) & 0xff)) * kPrime;
        l6 = (l6 ^ ((w >> 48) & 0xff)) * kPrime;
        l7 = (l7 ^ (w >> 56)) * kPrime;
    }
    c->lane[0] = l0, c->lane[1] = l1, c->lane[2] = l2, c->lane[3] = l3;
    c->lane[4] = l4, c->lane[5] = l5, c->lane[6] = l6, c->lane[7] = l7;
}

void rt_checksum_add(rt_checksum *c, const uint8_t *p, size_t len) {
    while (len) {
        if (c->at % 8 == 0 && c->at < c->whole && len >= 8) {
            size_t left = c->whole - c->at, words = (len < left ? len : left) / 8;
            add_words(c, p, words);
            p += 8 * words, len -= 8 * words, c->at += 8 * words;
            continue;
        }
        int k = c->at < c->whole ? (int)(c->at % 8) : 0; /* a piece's ragged ends, and the last n % 8 bytes */
        c->lane[k] = (c->lane[k] ^ *p++) * kPrime;
        c->at++, len--;
    }
}

uint64_t rt_checksum_finish(const rt_checksum *c) {
    uint64_t h = kBasis;
    for (int k = 0; k < 8; k++)
        for (int byte = 0; byte < 8; byte++) h = (h ^ ((c->lane[k] >> (8 * byte)) & 0xff)) * kPrime;
    return h ^ c->n;
}

uint64_t rt_engine_checksum(const uint8_t *bytes, size_t size) {
    rt_checksum c;
    rt_checksum_init(&c, size);
    rt_checksum_add(&c, bytes, size);
    return rt_checksum_finish(&c);
}
