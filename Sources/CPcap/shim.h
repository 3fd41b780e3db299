#ifndef FAULTLINE_CPCAP_SHIM_H
#define FAULTLINE_CPCAP_SHIM_H
#include <pcap/pcap.h>
#endif
