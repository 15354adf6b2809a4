/* checksum.c - four-lane 64-bit checksum (xxHash64 round and avalanche). */
#include <string.h>

#include "checksum.h"

#define P1 0x9e3779b185ebca87ull
#define P2 0xc2b2ae3d27d4eb4full
#define P3 0x165667b19e3779f9ull

static inline uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t round64(uint64_t acc, uint64_t word)
{
	return rotl64(acc + word * P2, 31) * P1;
}

uint64_t checksum64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t a = seed + P1 + P2, b = seed + P2, c = seed, d = seed - P1;
	size_t i = 0;

	for (; i + 32 <= len; i += 32) {
		uint64_t w[4];
		memcpy(w, p + i, sizeof(w));
		a = round64(a, w[0]);
		b = round64(b, w[1]);
		c = round64(c, w[2]);
		d = round64(d, w[3]);
	}
	uint64_t h = rotl64(a, 1) + rotl64(b, 7) + rotl64(c, 12) + rotl64(d, 18) + len;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, sizeof(w));
		h = rotl64(h ^ round64(0, w), 27) * P1 + P3;
	}
	for (; i < len; i++)
		h = rotl64(h ^ (p[i] * P3), 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}
