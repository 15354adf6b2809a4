/* checksum.h - a fast 64-bit checksum for blocks and log records.
 *
 * Four independent lanes of xxHash64-style rounds, so a block is read at
 * close to memory speed while every byte still affects the result: a
 * torn or stale block or record fails the check. Not cryptographic.
 */
#ifndef MSHARE_BENCH_CHECKSUM_H
#define MSHARE_BENCH_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

uint64_t checksum64(const void *data, size_t len, uint64_t seed);

#endif
