build-x/src/process/title.o: src/process/title.c src/process/title.h \
 src/process/../core/mem.h src/process/../core/hayate.h \
 src/process/../core/types.h
src/process/title.h:
src/process/../core/mem.h:
src/process/../core/hayate.h:
src/process/../core/types.h:
