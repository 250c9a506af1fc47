/* inflight.h: what builds under way leave on disk, removed when SIGTERM ends the process
 * (inflight.c). */
#ifndef LACC_INFLIGHT_H
#define LACC_INFLIGHT_H
#include <sys/types.h>

/* A build's private directory, in a slot of the table; -1 when the table is full (the
 * build goes on, only without the cleanup). */
int inflight_add(const char *dir);
/* The slot's claim file in the disk cache (NULL: none now). */
void inflight_claim(int slot, const char *claim);
/* The slot's compiler, a process group of its own (0: none now). */
void inflight_compiler(int slot, pid_t group);
/* The build has cleaned up after itself: the slot is free again. */
void inflight_done(int slot);

#endif
