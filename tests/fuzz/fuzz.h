/* fuzz.h — shared by the libFuzzer drivers (tests/fuzz/NAME_fuzz.c, seeds in tests/fuzz/corpus/NAME_fuzz/):
 * CHECK aborts with the failed invariant, which libFuzzer reports as a crash and saves the input. */
#ifndef HY_TESTS_FUZZ_H
#define HY_TESTS_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__);                                 \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
