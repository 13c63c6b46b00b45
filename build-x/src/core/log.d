build-x/src/core/log.o: src/core/log.c src/core/log.h src/core/hayate.h \
 src/core/types.h src/core/clock.h
src/core/log.h:
src/core/hayate.h:
src/core/types.h:
src/core/clock.h:
