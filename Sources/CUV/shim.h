#ifndef FAULTLINE_CUV_SHIM_H
#define FAULTLINE_CUV_SHIM_H
#include <uv.h>

/* libuv's "inheritance" is C casts; Swift cannot cast between unrelated pointer types. */
static inline uv_handle_t *CUV_handle(void *h) { return (uv_handle_t *)h; }
static inline uv_stream_t *CUV_stream(void *h) { return (uv_stream_t *)h; }
#endif
