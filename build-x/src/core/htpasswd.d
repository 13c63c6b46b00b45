build-x/src/core/htpasswd.o: src/core/htpasswd.c src/core/htpasswd.h \
 src/core/base64.h
src/core/htpasswd.h:
src/core/base64.h:
