#ifndef FAULTLINE_CPCAP_SHIM_H
#define FAULTLINE_CPCAP_SHIM_H
#include <pcap/pcap.h>

/// Asks the CPU to start loading the cache line at `address` (a hint: never faults). The
/// pcap decoder looks up the flows of a batch of packets ahead of decoding them, so the
/// cold flow state of thousands of open connections arrives while earlier packets decode.
static inline void CPcap_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }
#endif
