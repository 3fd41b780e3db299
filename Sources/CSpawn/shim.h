#ifndef FAULTLINE_CSPAWN_SHIM_H
#define FAULTLINE_CSPAWN_SHIM_H
/* glibc calls that Swift's Glibc module leaves out (they are declared only under
 * _GNU_SOURCE): the posix_spawn file actions that close every inherited descriptor from a
 * number up (glibc 2.34) and change directory in the child (glibc 2.29), and pipe2 (a pipe
 * made close-on-exec atomically). TestSupport's ChildProcess spawns with
 * them instead of Foundation's Process, whose run() on this toolchain can read past a
 * readdir buffer while listing /proc/self/fd (swift-corelibs-foundation #5472). */
#include <spawn.h>
#include <unistd.h>

extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *restrict actions,
                                                const char *restrict path);
extern int pipe2(int fds[2], int flags);
#endif
