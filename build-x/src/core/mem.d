build-x/src/core/mem.o: src/core/mem.c src/core/mem.h src/core/hayate.h \
 src/core/types.h
src/core/mem.h:
src/core/hayate.h:
src/core/types.h:
