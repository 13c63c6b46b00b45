build-x/src/filters/compress_cache.o: src/filters/compress_cache.c \
 src/filters/compress_cache.h src/filters/../core/mem.h \
 src/filters/../core/hayate.h src/filters/../core/types.h
src/filters/compress_cache.h:
src/filters/../core/mem.h:
src/filters/../core/hayate.h:
src/filters/../core/types.h:
