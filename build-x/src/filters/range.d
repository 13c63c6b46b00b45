build-x/src/filters/range.o: src/filters/range.c src/filters/range.h \
 src/filters/../core/str.h src/filters/../core/types.h \
 src/filters/../core/httpdate.h
src/filters/range.h:
src/filters/../core/str.h:
src/filters/../core/types.h:
src/filters/../core/httpdate.h:
