build-x/src/core/str.o: src/core/str.c src/core/str.h src/core/types.h \
 src/core/mem.h src/core/hayate.h
src/core/str.h:
src/core/types.h:
src/core/mem.h:
src/core/hayate.h:
