build-x/src/process/worker.o: src/process/worker.c src/process/worker.h \
 src/process/process.h src/process/../conf/cycle.h \
 src/process/../conf/../core/hayate.h src/process/../conf/../core/types.h \
 src/process/../conf/../core/str.h src/process/../conf/../core/types.h \
 src/process/../conf/../core/mem.h src/process/../conf/../core/hayate.h \
 src/process/lset.h src/process/../event/listen.h \
 src/process/../event/loop.h src/process/../event/../core/hayate.h \
 src/process/../event/../core/types.h src/process/core_conf.h \
 src/process/../conf/conf.h src/process/limits.h src/process/title.h \
 src/process/notify.h src/process/upgrade.h src/process/../core/log.h \
 src/process/../core/hayate.h src/process/../core/types.h \
 src/process/../core/clock.h src/process/../event/loop.h \
 src/process/../http/core.h src/process/../http/../core/regex.h \
 src/process/../http/../core/mem.h src/process/../http/../core/str.h \
 src/process/../http/../conf/conf.h src/process/../http/../event/listen.h \
 src/process/../proto/accept.h src/process/../proto/../http/conn.h \
 src/process/../proto/../http/../core/hayate.h \
 src/process/../proto/../http/../core/types.h \
 src/process/../proto/../http/../core/str.h \
 src/process/../proto/../http/../event/sock.h \
 src/process/../proto/../http/../event/loop.h \
 src/process/../proto/../http/../event/../core/buf.h \
 src/process/../proto/../http/../event/../core/hayate.h \
 src/process/../proto/../http/../event/../core/types.h \
 src/process/../proto/../http/../event/../core/outq.h \
 src/process/../proto/../http/../event/../core/str.h \
 src/process/../proto/../http/../event/listen.h \
 src/process/../proto/../http/../event/proxy_protocol.h \
 src/process/../conf/lexer.h src/process/../conf/conf.h \
 src/process/../conf/zone.h src/process/../conf/../core/shm.h \
 src/process/../conf/../core/slab.h src/process/../core/stats.h \
 src/process/../core/shm.h
src/process/worker.h:
src/process/process.h:
src/process/../conf/cycle.h:
src/process/../conf/../core/hayate.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/str.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/mem.h:
src/process/../conf/../core/hayate.h:
src/process/lset.h:
src/process/../event/listen.h:
src/process/../event/loop.h:
src/process/../event/../core/hayate.h:
src/process/../event/../core/types.h:
src/process/core_conf.h:
src/process/../conf/conf.h:
src/process/limits.h:
src/process/title.h:
src/process/notify.h:
src/process/upgrade.h:
src/process/../core/log.h:
src/process/../core/hayate.h:
src/process/../core/types.h:
src/process/../core/clock.h:
src/process/../event/loop.h:
src/process/../http/core.h:
src/process/../http/../core/regex.h:
src/process/../http/../core/mem.h:
src/process/../http/../core/str.h:
src/process/../http/../conf/conf.h:
src/process/../http/../event/listen.h:
src/process/../proto/accept.h:
src/process/../proto/../http/conn.h:
src/process/../proto/../http/../core/hayate.h:
src/process/../proto/../http/../core/types.h:
src/process/../proto/../http/../core/str.h:
src/process/../proto/../http/../event/sock.h:
src/process/../proto/../http/../event/loop.h:
src/process/../proto/../http/../event/../core/buf.h:
src/process/../proto/../http/../event/../core/hayate.h:
src/process/../proto/../http/../event/../core/types.h:
src/process/../proto/../http/../event/../core/outq.h:
src/process/../proto/../http/../event/../core/str.h:
src/process/../proto/../http/../event/listen.h:
src/process/../proto/../http/../event/proxy_protocol.h:
src/process/../conf/lexer.h:
src/process/../conf/conf.h:
src/process/../conf/zone.h:
src/process/../conf/../core/shm.h:
src/process/../conf/../core/slab.h:
src/process/../core/stats.h:
src/process/../core/shm.h:
