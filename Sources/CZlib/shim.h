#pragma once
#include <zlib.h>

// deflateInit2 and inflateInit2 are macros (they pass zlib's version and the stream's size), which Swift
// cannot call: fixed-arity wrappers for the two streams Compression makes.

/// A gzip stream (RFC 1952: window bits 15, plus 16 for the gzip header and trailer) at `level` (0-9).
static inline int loyalty_deflate_init_gzip(z_stream *stream, int level)
{
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

/// Reads gzip only (window bits 15, plus 16: a zlib or raw deflate stream is refused).
static inline int loyalty_inflate_init_gzip(z_stream *stream)
{
    return inflateInit2(stream, 15 + 16);
}
