build-x/src/filters/accept_encoding.o: src/filters/accept_encoding.c \
 src/filters/accept_encoding.h
src/filters/accept_encoding.h:
