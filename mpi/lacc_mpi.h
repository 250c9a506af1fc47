/* lacc_mpi.h: the few MPI operations lacc.mpi needs, over byte buffers.
 *
 * A library of its own (liblacc_mpi.so, and inside the Lua 5.4 module lacc.mpi_core), built
 * only where mpicc is found: the rest of lacc never needs MPI. Every function is
 * collective over MPI_COMM_WORLD unless it says otherwise, and returns 0 on success or
 * -1 with a message for lacc_mpi_error. Buffers it returns are malloc'd: free them with
 * lacc_mpi_free. Ranks here are MPI's, 0-based (lacc.mpi adds 1). One thread of a
 * process calls these (MPI is initialised at MPI_THREAD_SERIALIZED; a lock orders calls
 * from several threads, but collectives of several Lua states would still interleave).
 */
#ifndef LACC_MPI_H
#define LACC_MPI_H
#include <stdint.h>

/* Counters of what this rank has sent and received (bytes to and from other ranks, not
 * to itself), in messages of at least one byte, and the collectives it took part in. */
typedef struct lacc_mpi_stats {
  int64_t bytes_sent, bytes_received, messages_sent, messages_received, collectives;
} lacc_mpi_stats;

/* Not collective. Starts MPI unless started (by this library or by the host); 0, or -1
 * where the library cannot start it or LACC_MPI_TIMEOUT is not a number of seconds. Ends
 * it at exit when it started it: a clean exit first agrees with the others (see
 * lacc_mpi_agree) until every rank leaves; any other exit aborts the job. */
int lacc_mpi_init(void);
int lacc_mpi_initialized(void);
int lacc_mpi_rank(void);
int lacc_mpi_size(void);
const char *lacc_mpi_error(void);
void lacc_mpi_free(void *p);
double lacc_mpi_wtime(void);
void lacc_mpi_get_stats(lacc_mpi_stats *out);
void lacc_mpi_reset_stats(void);

/* Each rank's n bytes, to every rank: *out holds them in rank order, lens[r] bytes from
 * rank r (lens has size() entries). */
int lacc_mpi_allgather(const void *data, int64_t n, int64_t *lens, void **out);
/* Rank r's part for rank q is sendlens[q] bytes of send (parts in rank order); what each
 * rank sent this one lands in *out in rank order, recvlens[r] bytes from rank r. */
int lacc_mpi_alltoall(const void *send, const int64_t *sendlens, int64_t *recvlens, void **out);
/* The agreement before an exchange: each rank passes what it is about to do (`what`, a
 * description that ranks in step give alike: the operation, element types, shapes) and
 * whether it failed. *first: the first rank (0-based) whose flag is non-zero, or -1 where
 * none is; the message of that rank (msg, its own bytes; ignored elsewhere) lands in *out
 * (NUL-terminated) on every rank: how a failure on one rank becomes the same error on
 * all. -1 on every rank where none failed but the descriptions differ (the error names
 * each rank's: "ranks disagree on the next step: rank 1 runs ...; rank 2 runs ..."), and
 * where the others do not all arrive within LACC_MPI_TIMEOUT seconds (default 600, 0: no
 * bound; MPI is then unusable in this process, every later call fails and its exit ends
 * the job). One all-reduce where all agree. A rank whose program ended takes part as
 * "the end of its program". */
int lacc_mpi_agree(int failed, const char *msg, const char *what, int *first, char **out);
/* Not collective: n bytes of data to rank `to` (none where to < 0), and one message from
 * rank `from` (none where from < 0) into *out (*outlen bytes; NULL where none): this
 * library's receive buffer, valid until the next call (not to be freed). A fold's
 * combining tree (lua/lacc/mpi/folds.lua) pairs ranks with it, after the agreement
 * that lets every rank enter, and before which each rank reserves the buffer for its
 * messages (lacc_mpi_reserve: a rank that cannot then says so at the agreement, not in
 * the middle of the exchanges). */
int lacc_mpi_exchange(int to, const void *data, int64_t n, int from, void **out, int64_t *outlen);
/* Not collective: a receive buffer of at least n bytes for lacc_mpi_exchange. */
int lacc_mpi_reserve(int64_t n);
/* An agreement on "lacc.mpi.barrier" */
int lacc_mpi_barrier(void);
/* Not collective: ends the job (every rank) with this exit status. */
void lacc_mpi_abort(int status);

#endif
