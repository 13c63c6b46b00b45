build-x/src/core/murmur.o: src/core/murmur.c src/core/murmur.h
src/core/murmur.h:
