#ifndef FAULTLINE_CZSTD_SHIM_H
#define FAULTLINE_CZSTD_SHIM_H
/* libzstd (Debian's libzstd-dev): compressed captures (.jsonl.zst). */
#include <zstd.h>
#endif
