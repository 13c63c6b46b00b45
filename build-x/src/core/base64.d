build-x/src/core/base64.o: src/core/base64.c src/core/base64.h
src/core/base64.h:
