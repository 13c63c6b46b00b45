/* murmur.h — MurmurHash2 (Austin Appleby's 32-bit hash, seed 0), the hash nginx uses for split_clients. */
#ifndef HY_CORE_MURMUR_H
#define HY_CORE_MURMUR_H

#include <stddef.h>
#include <stdint.h>

/** MurmurHash2 of len bytes at p with seed 0, reading 4-byte blocks little-endian whatever the host's byte
 * order, so the result equals nginx's ngx_murmur_hash2 for the same bytes. p may be NULL when len is 0. */
uint32_t hy_murmur_hash2(const void *p, size_t len);

#endif
