build-x/src/core/slab.o: src/core/slab.c src/core/slab.h \
 src/core/hayate.h src/core/shm.h
src/core/slab.h:
src/core/hayate.h:
src/core/shm.h:
