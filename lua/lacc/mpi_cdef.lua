-- Generated from mpi/lacc_mpi.h by tools/gen_cdef.sh: do not edit.
return [[
typedef struct lacc_mpi_stats {
  int64_t bytes_sent, bytes_received, messages_sent, messages_received, collectives;
} lacc_mpi_stats;
int lacc_mpi_init(void);
int lacc_mpi_initialized(void);
int lacc_mpi_rank(void);
int lacc_mpi_size(void);
const char *lacc_mpi_error(void);
void lacc_mpi_free(void *p);
double lacc_mpi_wtime(void);
void lacc_mpi_get_stats(lacc_mpi_stats *out);
void lacc_mpi_reset_stats(void);
int lacc_mpi_allgather(const void *data, int64_t n, int64_t *lens, void **out);
int lacc_mpi_alltoall(const void *send, const int64_t *sendlens, int64_t *recvlens, void **out);
int lacc_mpi_agree(int failed, const char *msg, const char *what, int *first, char **out);
int lacc_mpi_exchange(int to, const void *data, int64_t n, int from, void **out, int64_t *outlen);
int lacc_mpi_reserve(int64_t n);
int lacc_mpi_barrier(void);
void lacc_mpi_abort(int status);
]]
