/* coverage.h — `make coverage` builds with --coverage and -DHY_COVERAGE. gcov writes its counters from an
 * atexit handler, which processes that end with _exit (forked workers) never run: they call HY_COVERAGE_FLUSH()
 * first, and so does a process about to exec. The counters are zeroed once written (libgcov writes a process's
 * counters once, unless reset), so a later flush or exit adds only what ran since. In every other build the
 * macro is empty. */
#ifndef HY_CORE_COVERAGE_H
#define HY_CORE_COVERAGE_H

#ifdef HY_COVERAGE
void __gcov_dump(void);  /* libgcov: write (merge) the counters of this process now */
void __gcov_reset(void); /* libgcov: zero them, and allow the next write */
#define HY_COVERAGE_FLUSH() (__gcov_dump(), __gcov_reset())
#else
#define HY_COVERAGE_FLUSH() ((void)0)
#endif

#endif
