build-x/src/process/notify.o: src/process/notify.c src/process/notify.h \
 src/process/../core/log.h src/process/../core/hayate.h \
 src/process/../core/types.h
src/process/notify.h:
src/process/../core/log.h:
src/process/../core/hayate.h:
src/process/../core/types.h:
