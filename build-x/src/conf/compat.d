build-x/src/conf/compat.o: src/conf/compat.c src/conf/compat.h
src/conf/compat.h:
