build-x/src/conf/suggest.o: src/conf/suggest.c src/conf/suggest.h
src/conf/suggest.h:
