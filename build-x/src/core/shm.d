build-x/src/core/shm.o: src/core/shm.c src/core/shm.h src/core/hayate.h \
 src/core/log.h src/core/types.h
src/core/shm.h:
src/core/hayate.h:
src/core/log.h:
src/core/types.h:
