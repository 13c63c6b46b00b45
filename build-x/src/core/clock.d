build-x/src/core/clock.o: src/core/clock.c src/core/clock.h \
 src/core/httpdate.h
src/core/clock.h:
src/core/httpdate.h:
