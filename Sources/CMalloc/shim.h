#ifndef FAULTLINE_CMALLOC_SHIM_H
#define FAULTLINE_CMALLOC_SHIM_H
/* glibc's malloc tuning (mallopt), which Swift's Glibc module leaves out. */
#include <malloc.h>
#endif
