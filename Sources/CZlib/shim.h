#ifndef GATEHOUSE_CZLIB_SHIM_H
#define GATEHOUSE_CZLIB_SHIM_H

#include <zlib.h>

/* deflateInit2 and inflateInit2 are macros that pass the library version and stream size
 * for an ABI check; Swift imports neither the macros nor a way to spell sizeof. */
static inline int gh_deflate_init_gzip(z_stream *stream) {
    /* windowBits 15 + 16 asks zlib for a gzip (RFC 1952) wrapper instead of zlib's. */
    return deflateInit2(stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

static inline int gh_inflate_init_gzip(z_stream *stream) {
    /* 15 + 16: gzip only; a zlib or raw stream is refused rather than guessed at. */
    return inflateInit2(stream, 15 + 16);
}

#endif
