build-x/src/core/regex.o: src/core/regex.c src/core/regex.h \
 src/core/mem.h src/core/hayate.h src/core/types.h src/core/str.h
src/core/regex.h:
src/core/mem.h:
src/core/hayate.h:
src/core/types.h:
src/core/str.h:
