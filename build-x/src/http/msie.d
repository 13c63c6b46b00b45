build-x/src/http/msie.o: src/http/msie.c src/http/msie.h \
 src/http/../core/str.h src/http/../core/types.h
src/http/msie.h:
src/http/../core/str.h:
src/http/../core/types.h:
