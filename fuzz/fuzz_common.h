/* Shared helpers of the libFuzzer targets: a byte reader that never runs out (zeros past the end), value
 * pickers biased towards the cases that break code, and CHECK, which aborts with a message so that
 * libFuzzer reports the input as a crash. */
#ifndef TROCAR_FUZZ_COMMON_H
#define TROCAR_FUZZ_COMMON_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                                                \
    do {                                                                                                \
        if (!(cond)) {                                                                                  \
            fprintf(stderr, "\n*** trocar fuzz invariant violated at %s:%d: %s\n    ", __FILE__, __LINE__, \
                    #cond);                                                                             \
            fprintf(stderr, __VA_ARGS__);                                                               \
            fprintf(stderr, "\n");                                                                      \
            abort();                                                                                    \
        }                                                                                               \
    } while (0)

typedef struct {
    const uint8_t *p;
    size_t n;
} Reader;

static inline uint8_t rd_u8(Reader *r) {
    if (r->n == 0) return 0;
    r->n--;
    return *r->p++;
}

static inline uint16_t rd_u16(Reader *r) {
    uint16_t lo = rd_u8(r);
    return (uint16_t)(lo | (uint16_t)rd_u8(r) << 8);
}

static inline uint32_t rd_u32(Reader *r) {
    uint32_t lo = rd_u16(r);
    return lo | (uint32_t)rd_u16(r) << 16;
}

static inline uint64_t rd_u64(Reader *r) {
    uint64_t lo = rd_u32(r);
    return lo | (uint64_t)rd_u32(r) << 32;
}

static inline float bits_f32(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static inline double bits_f64(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* A float coordinate: mostly a multiple of 1/16 in [-8, 8) (so that meshes and tools meet, touch exactly and
 * line up), sometimes a special value (NaN, infinities, zero signs, the coordinate limit and just past it,
 * huge, tiny, subnormal), sometimes raw bits. */
static inline float rd_coord(Reader *r) {
    static const float special[] = {
        0.0f,  -0.0f, 1.0f,   -1.0f,  0.5f,         NAN,           INFINITY,  -INFINITY,    1.0e6f,
        -1.0e6f, 1.0000001e6f, 2.0e6f, 3.0e38f, -3.0e38f, 1.0e-30f, 1.0e-45f, 1.1754942e-38f, 1.0e-7f,
    };
    uint8_t sel = rd_u8(r);
    if (sel < 208) return (float)(int8_t)rd_u8(r) / 16.0f;
    if (sel < 240) return special[rd_u8(r) % (sizeof special / sizeof special[0])];
    return bits_f32(rd_u32(r));
}

#endif
