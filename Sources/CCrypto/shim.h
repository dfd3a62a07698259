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

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

/// HKDF-SHA256 (RFC 5869) through OpenSSL 3's EVP_KDF: 1 on success. Here rather than in Swift because the
/// parameter array holds pointers to its names and buffers, which must outlive the call that reads them.
static inline int loyalty_hkdf_sha256(const unsigned char *salt, size_t saltCount, const unsigned char *secret,
                                      size_t secretCount, const unsigned char *info, size_t infoCount,
                                      unsigned char *key, size_t keyCount)
{
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *context = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    EVP_KDF_free(kdf);
    if (context == NULL) return 0;
    OSSL_PARAM parameters[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, saltCount),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)secret, secretCount),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, infoCount),
        OSSL_PARAM_construct_end(),
    };
    int ok = EVP_KDF_derive(context, key, keyCount, parameters);
    EVP_KDF_CTX_free(context);
    return ok == 1;
}
