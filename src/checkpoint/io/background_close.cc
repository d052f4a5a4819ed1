#include "checkpoint/io/background_close.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace tw {
namespace checkpoint {
namespace {

// One deferred free: close `fd` when it is >= 0, unmap [addr, addr + size) when addr is set.
struct Job {
  Job *next;
  int fd;
  void *addr;
  size_t size;
};

void Run(Job *job) {
  if (job->fd >= 0) ::close(job->fd);
  if (job->addr != nullptr) ::munmap(job->addr, job->size);
}

// The process's worker. Only objects with static initializers and no destructors: the state outlives
// every static destructor of the library, some of which may still hand in a job (and do it inline).
pthread_mutex_t g_queue_mutex = PTHREAD_MUTEX_INITIALIZER;  // guards the variables below
pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
Job *g_head = nullptr;  // jobs, oldest first
Job *g_tail = nullptr;
bool g_running = false;  // this process's worker exists (g_thread)
bool g_stopped = false;  // the library is unloading or the process exiting: every job is done inline
pthread_t g_thread;
// Held by the worker while it runs a job, and by fork around its copy of the process: a job is then
// either done or still queued, never half done, so the child knows which descriptors and mappings it
// holds copies of. Taken before g_queue_mutex, and never by a thread that only queues a job.
pthread_mutex_t g_job_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_once_t g_fork_handlers_once = PTHREAD_ONCE_INIT;
bool g_fork_handlers = false;  // registered; without them no worker is started

Job *Pop() {  // under g_queue_mutex
  Job *job = g_head;
  if (job != nullptr) {
    g_head = job->next;
    if (g_head == nullptr) g_tail = nullptr;
  }
  return job;
}

void *Serve(void *) {
  pthread_mutex_lock(&g_queue_mutex);
  for (;;) {
    while (g_head == nullptr && !g_stopped) pthread_cond_wait(&g_wake, &g_queue_mutex);
    if (g_head == nullptr) break;  // stopped, and StopWorker took what was left
    pthread_mutex_unlock(&g_queue_mutex);
    pthread_mutex_lock(&g_job_mutex);
    pthread_mutex_lock(&g_queue_mutex);
    Job *job = Pop();  // null when StopWorker took the queue meanwhile
    pthread_mutex_unlock(&g_queue_mutex);
    if (job != nullptr) Run(job);
    delete job;  // before a fork may copy the process: a child would not know the record
    pthread_mutex_unlock(&g_job_mutex);
    pthread_mutex_lock(&g_queue_mutex);
  }
  pthread_mutex_unlock(&g_queue_mutex);
  return nullptr;
}

bool StartWorker() {  // under g_queue_mutex
  // No signal is delivered to the worker (it inherits the mask): a handler must not interrupt a close.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  g_running = pthread_create(&g_thread, nullptr, Serve, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (g_running) pthread_setname_np(g_thread, "tw-bg-free");
  return g_running;
}

void BeforeFork() {
  pthread_mutex_lock(&g_job_mutex);
  pthread_mutex_lock(&g_queue_mutex);
}

void AfterForkInParent() {
  pthread_mutex_unlock(&g_queue_mutex);
  pthread_mutex_unlock(&g_job_mutex);
}

// The worker is the parent's: this process starts its own on first use. The queued jobs are the
// parent's too, but the child got copies of their descriptors and mappings; it drops them now rather
// than leave them to its own worker, which may never start: a long-lived child (a data loader's worker
// process) would otherwise hold a deleted checkpoint's storage for its whole life. Dropping copies is
// cheap while the parent still holds the originals. Only close and munmap here (async-signal-safe);
// the emptied records are freed with the next job or at exit.
void AfterForkInChild() {
  for (Job *job = g_head; job != nullptr; job = job->next) {
    Run(job);
    job->fd = -1;
    job->addr = nullptr;
  }
  g_running = false;
  pthread_cond_init(&g_wake, nullptr);  // the parent's worker may have been waiting on it
  pthread_mutex_unlock(&g_queue_mutex);
  pthread_mutex_unlock(&g_job_mutex);
}

void RegisterForkHandlers() { g_fork_handlers = pthread_atfork(BeforeFork, AfterForkInParent, AfterForkInChild) == 0; }

// Hands a job to the worker, starting it on first use. False when there is none to take it (the
// library unloading, no thread or memory to spare): the caller then does the work itself.
bool Queue(int fd, void *addr, size_t size) {
  pthread_once(&g_fork_handlers_once, RegisterForkHandlers);
  if (!g_fork_handlers) return false;
  Job *job = new (std::nothrow) Job{nullptr, fd, addr, size};
  if (job == nullptr) return false;
  pthread_mutex_lock(&g_queue_mutex);
  const bool queued = !g_stopped && (g_running || StartWorker());
  if (queued) {
    (g_tail != nullptr ? g_tail->next : g_head) = job;
    g_tail = job;
    pthread_cond_signal(&g_wake);
  }
  pthread_mutex_unlock(&g_queue_mutex);
  if (!queued) delete job;
  return queued;
}

// At dlclose of the library, or at exit: no thread may run its code once it is unmapped. The worker
// finishes the job in hand and is joined; the jobs still queued are done here, and later ones inline.
// Jobs queued by another thread while the process exits are in the queue (done here) or come after
// g_stopped (done by that thread).
__attribute__((destructor)) void StopWorker() {
  pthread_mutex_lock(&g_queue_mutex);
  g_stopped = true;
  const bool join = g_running;
  const pthread_t thread = g_thread;
  g_running = false;
  Job *left = g_head;
  g_head = g_tail = nullptr;
  pthread_cond_signal(&g_wake);
  pthread_mutex_unlock(&g_queue_mutex);
  if (join) pthread_join(thread, nullptr);
  while (left != nullptr) {
    Job *job = left;
    left = job->next;
    Run(job);
    delete job;
  }
}

}  // namespace

void CloseInBackground(int fd) {
  if (fd >= 0 && !Queue(fd, nullptr, 0)) ::close(fd);
}

void UnmapInBackground(void *addr, size_t size) {
  // Small mappings are unmapped here: their teardown is short, and handing it over costs a wake-up.
  if (size >= (16u << 20) && Queue(-1, addr, size)) return;
  ::munmap(addr, size);
}

}  // namespace checkpoint
}  // namespace tw
