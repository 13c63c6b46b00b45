build-x/src/http/log_escape.o: src/http/log_escape.c \
 src/http/log_escape.h
src/http/log_escape.h:
