build-x/src/http/uri.o: src/http/uri.c src/http/uri.h \
 src/http/../core/str.h src/http/../core/types.h
src/http/uri.h:
src/http/../core/str.h:
src/http/../core/types.h:
