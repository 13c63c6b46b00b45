build-x/src/process/core_conf.o: src/process/core_conf.c \
 src/process/core_conf.h src/process/../conf/conf.h \
 src/process/../conf/../core/hayate.h src/process/../conf/../core/types.h \
 src/process/../conf/../core/str.h src/process/../conf/../core/types.h \
 src/process/../conf/../core/mem.h src/process/../conf/../core/hayate.h \
 src/process/../conf/cycle.h src/process/../core/log.h \
 src/process/../core/hayate.h src/process/../core/types.h \
 src/process/../core/paths.h
src/process/core_conf.h:
src/process/../conf/conf.h:
src/process/../conf/../core/hayate.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/str.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/mem.h:
src/process/../conf/../core/hayate.h:
src/process/../conf/cycle.h:
src/process/../core/log.h:
src/process/../core/hayate.h:
src/process/../core/types.h:
src/process/../core/paths.h:
