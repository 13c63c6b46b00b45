build-x/src/process/env.o: src/process/env.c src/process/core_conf.h \
 src/process/../conf/conf.h src/process/../conf/../core/hayate.h \
 src/process/../conf/../core/types.h src/process/../conf/../core/str.h \
 src/process/../conf/../core/types.h src/process/../conf/../core/mem.h \
 src/process/../conf/../core/hayate.h src/process/../conf/cycle.h
src/process/core_conf.h:
src/process/../conf/conf.h:
src/process/../conf/../core/hayate.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/str.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/mem.h:
src/process/../conf/../core/hayate.h:
src/process/../conf/cycle.h:
