#pragma once
#include <stddef.h>
// OpenSSL 3 deprecates SHA256_Init/Update/Final for EVP, whose each digest allocates a context and takes a reference
// on the algorithm shared by every thread: on the server's hot path (a token per request) EVP was 2.1 % of the
// server's CPU even with the algorithm fetched once (2.9 % with SHA256(), which looks it up at each call), this 0.4 %
// (perf on loyalty-server under wrk, GET /v1/catalog answered 304).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

/// SHA-256 of `count` bytes into `digest` (32 bytes), without EVP's allocation or shared state.
static inline void loyalty_sha256(const unsigned char *bytes, size_t count, unsigned char *digest)
{
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, bytes, count);
    SHA256_Final(digest, &context);
}
