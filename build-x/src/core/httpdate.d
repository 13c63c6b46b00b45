build-x/src/core/httpdate.o: src/core/httpdate.c src/core/httpdate.h
src/core/httpdate.h:
