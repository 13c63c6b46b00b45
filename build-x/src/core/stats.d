build-x/src/core/stats.o: src/core/stats.c src/core/stats.h \
 src/core/shm.h src/core/hayate.h
src/core/stats.h:
src/core/shm.h:
src/core/hayate.h:
