build-x/src/process/serve.o: src/process/serve.c src/process/process.h \
 src/process/../conf/cycle.h src/process/../conf/../core/hayate.h \
 src/process/../conf/../core/types.h src/process/../conf/../core/str.h \
 src/process/../conf/../core/types.h src/process/../conf/../core/mem.h \
 src/process/../conf/../core/hayate.h src/process/core_conf.h \
 src/process/../conf/conf.h src/process/limits.h src/process/lset.h \
 src/process/../event/listen.h src/process/../event/loop.h \
 src/process/../event/../core/hayate.h \
 src/process/../event/../core/types.h src/process/master.h \
 src/process/worker.h src/process/upgrade.h src/process/perms.h \
 src/process/../core/log.h src/process/../core/hayate.h \
 src/process/../core/types.h src/process/../conf/lexer.h \
 src/process/../conf/conf.h src/process/../conf/zone.h \
 src/process/../conf/../core/shm.h src/process/../conf/../core/slab.h \
 src/process/../core/stats.h src/process/../core/shm.h
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
src/process/limits.h:
src/process/lset.h:
src/process/../event/listen.h:
src/process/../event/loop.h:
src/process/../event/../core/hayate.h:
src/process/../event/../core/types.h:
src/process/master.h:
src/process/worker.h:
src/process/upgrade.h:
src/process/perms.h:
src/process/../core/log.h:
src/process/../core/hayate.h:
src/process/../core/types.h:
src/process/../conf/lexer.h:
src/process/../conf/conf.h:
src/process/../conf/zone.h:
src/process/../conf/../core/shm.h:
src/process/../conf/../core/slab.h:
src/process/../core/stats.h:
src/process/../core/shm.h:
