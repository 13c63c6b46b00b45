build-x/src/conf/cycle.o: src/conf/cycle.c src/conf/cycle.h \
 src/conf/../core/hayate.h src/conf/../core/types.h \
 src/conf/../core/str.h src/conf/../core/types.h src/conf/../core/mem.h \
 src/conf/../core/hayate.h
src/conf/cycle.h:
src/conf/../core/hayate.h:
src/conf/../core/types.h:
src/conf/../core/str.h:
src/conf/../core/types.h:
src/conf/../core/mem.h:
src/conf/../core/hayate.h:
