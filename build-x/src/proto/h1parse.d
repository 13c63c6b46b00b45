build-x/src/proto/h1parse.o: src/proto/h1parse.c src/proto/h1parse.h \
 src/proto/../core/str.h src/proto/../core/types.h
src/proto/h1parse.h:
src/proto/../core/str.h:
src/proto/../core/types.h:
