/* compress.h — the codecs behind the compression filters: gzip (libdeflate for whole buffers, zlib for
 * streams), brotli (libbrotlienc) and zstd (libzstd). Codec ids are enum hy_coding (accept_encoding.h). */
#ifndef HY_HTTP_COMPRESS_H
#define HY_HTTP_COMPRESS_H

#include <stddef.h>
#include <stdbool.h>
#include "accept_encoding.h"

/** Content-Encoding token of a codec: "gzip", "br", "zstd". */
const char *hy_codec_name(int codec);
/** Compress a whole buffer. Returns a malloc'd buffer with *out_len bytes, or NULL on failure. */
char *hy_compress_buf(int codec, int level, const char *in, size_t len, size_t *out_len);

/** Receives compressed output: buf is malloc'd and becomes the callee's. */
typedef void (*hy_zemit_fn)(void *arg, char *buf, size_t len);

typedef struct hy_zstream hy_zstream_t;
/** A streaming compressor, or NULL on failure. */
hy_zstream_t *hy_zstream_new(int codec, int level);
/** Feed len bytes; with final, finish the stream. Output goes to emit in chunks. -1 on a codec error. */
int hy_zstream_write(hy_zstream_t *z, const char *in, size_t len, bool final, hy_zemit_fn emit, void *arg);
/** Free the stream (NULL is fine). */
void hy_zstream_free(hy_zstream_t *z);
/** Free the per-worker whole-buffer compressors (exit; they are created on first use). */
void hy_compress_cleanup(void);

#endif
