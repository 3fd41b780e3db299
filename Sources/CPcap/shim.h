#ifndef FAULTLINE_CPCAP_SHIM_H
#define FAULTLINE_CPCAP_SHIM_H
#include <pcap/pcap.h>

/// Asks the CPU to start loading the cache line at `address` (a hint: never faults). The
/// pcap decoder looks up the flows of a batch of packets ahead of decoding them, so the
/// cold flow state of thousands of open connections arrives while earlier packets decode.
static inline void CPcap_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }
/// glibc's `fopencookie`, which <stdio.h> declares only under _GNU_SOURCE (not set for
/// the Glibc module), under another name so it can never clash with that declaration. The
/// struct has the four callbacks of glibc's `cookie_io_functions_t`, in its order; the
/// seek offset is glibc's `off64_t`. Used to put `PcapngInterfaceTypes` in front of libpcap.
typedef struct {
    long (*read)(void *cookie, char *buffer, unsigned long size);
    long (*write)(void *cookie, const char *buffer, unsigned long size);
    int (*seek)(void *cookie, long long *offset, int whence);
    int (*close)(void *cookie);
} CPcap_cookie_io;
extern FILE *CPcap_fopencookie(void *cookie, const char *mode, CPcap_cookie_io io) __asm__("fopencookie");
#endif
