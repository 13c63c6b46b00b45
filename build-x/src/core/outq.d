build-x/src/core/outq.o: src/core/outq.c src/core/outq.h \
 src/core/hayate.h src/core/types.h src/core/file.h src/core/mem.h
src/core/outq.h:
src/core/hayate.h:
src/core/types.h:
src/core/file.h:
src/core/mem.h:
