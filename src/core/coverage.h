/* coverage.h — `make coverage` builds with --coverage and -DHY_COVERAGE. gcov writes its counters from an
 * atexit handler, which processes that end with _exit (forked workers) never run: they call HY_COVERAGE_FLUSH()
 * first. In every other build the macro is empty. */
#ifndef HY_CORE_COVERAGE_H
#define HY_CORE_COVERAGE_H

#ifdef HY_COVERAGE
void __gcov_dump(void); /* libgcov: write the counters of this process now */
#define HY_COVERAGE_FLUSH() __gcov_dump()
#else
#define HY_COVERAGE_FLUSH() ((void)0)
#endif

#endif
