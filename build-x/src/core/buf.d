build-x/src/core/buf.o: src/core/buf.c src/core/buf.h src/core/hayate.h \
 src/core/types.h src/core/mem.h
src/core/buf.h:
src/core/hayate.h:
src/core/types.h:
src/core/mem.h:
