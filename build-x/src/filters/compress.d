build-x/src/filters/compress.o: src/filters/compress.c \
 src/filters/compress.h src/filters/accept_encoding.h \
 src/filters/../core/mem.h src/filters/../core/hayate.h \
 src/filters/../core/types.h
src/filters/compress.h:
src/filters/accept_encoding.h:
src/filters/../core/mem.h:
src/filters/../core/hayate.h:
src/filters/../core/types.h:
