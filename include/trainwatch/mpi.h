/*
 * trainwatch/mpi.h — the collective of an MPI job (libtrainwatch_mpi; link -ltrainwatch_mpi -ltrainwatch
 * and your MPI). Not part of <trainwatch.h>: the core library never links MPI.
 *
 *   tw_collective table;
 *   void *user_data;
 *   if (tw_mpi_collective_create(&table, &user_data, MPI_COMM_WORLD) != TW_OK) ...;
 *   tw_options_set_collective(opts, &table, user_data);   // the options own user_data from here on
 *
 * Every operation runs on a duplicate of the communicator (so the session's messages never meet the
 * program's own) and never blocks past its timeout. The allreduce of the per-run vote is recursive
 * doubling over nonblocking point-to-point messages (MPI_Isend/MPI_Irecv; about the cost of a blocking
 * MPI_Allreduce of the same size, where MPI_Iallreduce costs several times more); broadcast and barrier
 * are MPI_Ibcast and MPI_Ibarrier. Each is polled with MPI_Test until it completes or the timeout passes:
 * then TW_DEADLINE_EXCEEDED, naming the operation, the timeout, the communicator's size and, for the
 * allreduce, the rank it was waiting for (MPI cannot say how many ranks took part in a broadcast or
 * barrier that did not complete). Such an operation stays pending and the communicator is unusable
 * afterwards (trainwatch then makes no further call on it, D9). A program whose session or saver failed
 * so should end with MPI_Abort, not MPI_Finalize: Open MPI's MPI_Finalize waits for every process of the
 * job, a dead one included (under mpirun's defaults a rank killed or exiting without MPI_Finalize ends
 * the whole job anyway). An MPI error returns TW_UNAVAILABLE with
 * MPI's error string (errors return instead of aborting on the duplicate: MPI_ERRORS_RETURN).
 *
 * The collective seam is experimental (trainwatch/distributed.h): define TW_EXPERIMENTAL_API before
 * including this header, whose one function is outside the ABI promise as the seam is.
 *
 * Threads: the session calls the table from the thread that calls the session; MPI must have been
 * initialized with a thread level that allows that (MPI_THREAD_FUNNELED when it is the main thread,
 * MPI_THREAD_MULTIPLE when the program also uses MPI from other threads at the same time).
 */
#ifndef TRAINWATCH_MPI_H
#define TRAINWATCH_MPI_H

#ifndef TW_EXPERIMENTAL_API
#error "trainwatch/mpi.h fills the experimental tw_collective: define TW_EXPERIMENTAL_API before including it"
#endif

#include <mpi.h>

#include "trainwatch/distributed.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills *out_table (rank and size of comm, the three operations, and destroy, which frees the
 * duplicate communicator — unless MPI is finalized by then — and *out_user_data). Collective over comm:
 * every rank of comm must call it (MPI_Comm_dup). Pass both to tw_options_set_collective; if that is
 * never done, call out_table->destroy(*out_user_data) yourself.
 * Errors: TW_INVALID_ARGUMENT (out_table or out_user_data NULL, comm MPI_COMM_NULL),
 * TW_FAILED_PRECONDITION (MPI not initialized, or finalized), TW_UNAVAILABLE (an MPI call failed, with
 * MPI's error string), TW_RESOURCE_EXHAUSTED. On error *out_user_data is NULL. */
TW_NODISCARD TW_API tw_status tw_mpi_collective_create(tw_collective *out_table, void **out_user_data, MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif /* TRAINWATCH_MPI_H */
