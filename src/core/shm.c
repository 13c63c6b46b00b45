/* shm.c — anonymous shared mappings and the robust process-shared mutex.
 *
 * Why a pthread robust mutex and not a futex of our own (or nginx's spinlock + pid, which the master force-
 * unlocks when it reaps a dead worker): glibc's robust mutexes are futexes whose owner list the kernel walks
 * when a thread exits for any reason, SIGKILL included, so a lock held by a dead process is released at once
 * and the next locker is told (EOWNERDEAD). A futex of our own could only get that by registering its own
 * robust list, which glibc already owns per thread. Uncontended lock/unlock stay one atomic each in user
 * space; contention sleeps in the kernel instead of spinning, which matters on machines with few cores. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "shm.h"
#include "log.h"

int hy_shm_map(hy_shm_t *shm, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size == 0 || size > SIZE_MAX - page)
        return -EINVAL;
    size = (size + page - 1) / page * page;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -errno;
    shm->addr = p;
    shm->size = size;
    return 0;
}

void hy_shm_unmap(hy_shm_t *shm)
{
    if (shm->addr != NULL && munmap(shm->addr, shm->size) != 0)
        hy_log(HY_LOG_ALERT, "munmap(%p, %zu) failed (%d: %s)", shm->addr, shm->size, errno, strerror(errno));
    shm->addr = NULL;
    shm->size = 0;
}

int hy_shm_mutex_init(hy_shm_mutex_t *m)
{
    pthread_mutexattr_t a;
    int rc = pthread_mutexattr_init(&a);
    if (rc != 0)
        return -rc;
    rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (rc == 0)
        rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (rc == 0)
        rc = pthread_mutex_init(&m->mutex, &a);
    pthread_mutexattr_destroy(&a);
    m->owner_died = 0;
    return -rc;
}

/* The previous owner died with the lock: we hold it now. Mark it consistent, or the next unlock would make it
 * unusable for good (ENOTRECOVERABLE). */
static void recover(hy_shm_mutex_t *m)
{
    int rc = pthread_mutex_consistent(&m->mutex);
    if (rc != 0)
        hy_fatal("pthread_mutex_consistent() failed (%d: %s)", rc, strerror(rc));
    m->owner_died++;
    hy_log(HY_LOG_ALERT, "a process died holding a shared memory lock; the lock was recovered");
}

bool hy_shm_mutex_lock(hy_shm_mutex_t *m)
{
    int rc = pthread_mutex_lock(&m->mutex);
    if (rc == 0)
        return false;
    if (rc == EOWNERDEAD) {
        recover(m);
        return true;
    }
    hy_fatal("pthread_mutex_lock() on a shared memory lock failed (%d: %s)", rc, strerror(rc));
}

bool hy_shm_mutex_trylock(hy_shm_mutex_t *m)
{
    int rc = pthread_mutex_trylock(&m->mutex);
    if (rc == 0)
        return true;
    if (rc == EBUSY)
        return false;
    if (rc == EOWNERDEAD) {
        recover(m);
        return true;
    }
    hy_fatal("pthread_mutex_trylock() on a shared memory lock failed (%d: %s)", rc, strerror(rc));
}

void hy_shm_mutex_unlock(hy_shm_mutex_t *m)
{
    int rc = pthread_mutex_unlock(&m->mutex);
    if (rc != 0)
        hy_fatal("pthread_mutex_unlock() on a shared memory lock failed (%d: %s)", rc, strerror(rc));
}
