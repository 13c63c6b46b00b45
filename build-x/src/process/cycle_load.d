build-x/src/process/cycle_load.o: src/process/cycle_load.c \
 src/process/process.h src/process/../conf/cycle.h \
 src/process/../conf/../core/hayate.h src/process/../conf/../core/types.h \
 src/process/../conf/../core/str.h src/process/../conf/../core/types.h \
 src/process/../conf/../core/mem.h src/process/../conf/../core/hayate.h \
 src/process/core_conf.h src/process/../conf/conf.h \
 src/process/../core/log.h src/process/../core/hayate.h \
 src/process/../core/types.h src/process/../http/core.h \
 src/process/../http/../core/regex.h src/process/../http/../core/mem.h \
 src/process/../http/../core/str.h src/process/../http/../conf/conf.h \
 src/process/../http/../event/listen.h \
 src/process/../http/../event/loop.h \
 src/process/../http/../event/../core/hayate.h \
 src/process/../http/../event/../core/types.h src/process/../conf/zone.h \
 src/process/../conf/conf.h src/process/../conf/../core/shm.h \
 src/process/../conf/../core/slab.h src/process/../core/paths.h
src/process/process.h:
src/process/../conf/cycle.h:
src/process/../conf/../core/hayate.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/str.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/mem.h:
src/process/../conf/../core/hayate.h:
src/process/core_conf.h:
src/process/../conf/conf.h:
src/process/../core/log.h:
src/process/../core/hayate.h:
src/process/../core/types.h:
src/process/../http/core.h:
src/process/../http/../core/regex.h:
src/process/../http/../core/mem.h:
src/process/../http/../core/str.h:
src/process/../http/../conf/conf.h:
src/process/../http/../event/listen.h:
src/process/../http/../event/loop.h:
src/process/../http/../event/../core/hayate.h:
src/process/../http/../event/../core/types.h:
src/process/../conf/zone.h:
src/process/../conf/conf.h:
src/process/../conf/../core/shm.h:
src/process/../conf/../core/slab.h:
src/process/../core/paths.h:
