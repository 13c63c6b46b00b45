build-x/src/http/metrics.o: src/http/metrics.c src/http/metrics.h \
 src/http/../conf/conf.h src/http/../conf/../core/hayate.h \
 src/http/../conf/../core/types.h src/http/../conf/../core/str.h \
 src/http/../conf/../core/types.h src/http/../conf/../core/mem.h \
 src/http/../conf/../core/hayate.h src/http/../core/str.h \
 src/http/request.h src/http/../core/hayate.h src/http/../core/types.h \
 src/http/../core/mem.h src/http/../core/outq.h src/http/../core/hayate.h \
 src/http/../core/types.h src/http/../core/regex.h src/http/../core/mem.h \
 src/http/../core/str.h src/http/core.h src/http/../event/listen.h \
 src/http/../event/loop.h src/http/../event/../core/hayate.h \
 src/http/../event/../core/types.h src/http/conn.h \
 src/http/../event/sock.h src/http/../event/../core/buf.h \
 src/http/../event/../core/hayate.h src/http/../event/../core/types.h \
 src/http/../event/../core/outq.h src/http/../event/../core/str.h \
 src/http/../event/proxy_protocol.h src/http/../event/loop.h \
 src/http/phases.h src/http/../core/clock.h src/http/../core/stats.h \
 src/http/../core/shm.h src/http/../conf/cycle.h src/http/../conf/zone.h \
 src/http/../conf/conf.h src/http/../conf/../core/shm.h \
 src/http/../conf/../core/slab.h src/http/limit_req.h \
 src/http/limit_table.h src/http/../core/slab.h src/http/limit_conn.h
src/http/metrics.h:
src/http/../conf/conf.h:
src/http/../conf/../core/hayate.h:
src/http/../conf/../core/types.h:
src/http/../conf/../core/str.h:
src/http/../conf/../core/types.h:
src/http/../conf/../core/mem.h:
src/http/../conf/../core/hayate.h:
src/http/../core/str.h:
src/http/request.h:
src/http/../core/hayate.h:
src/http/../core/types.h:
src/http/../core/mem.h:
src/http/../core/outq.h:
src/http/../core/hayate.h:
src/http/../core/types.h:
src/http/../core/regex.h:
src/http/../core/mem.h:
src/http/../core/str.h:
src/http/core.h:
src/http/../event/listen.h:
src/http/../event/loop.h:
src/http/../event/../core/hayate.h:
src/http/../event/../core/types.h:
src/http/conn.h:
src/http/../event/sock.h:
src/http/../event/../core/buf.h:
src/http/../event/../core/hayate.h:
src/http/../event/../core/types.h:
src/http/../event/../core/outq.h:
src/http/../event/../core/str.h:
src/http/../event/proxy_protocol.h:
src/http/../event/loop.h:
src/http/phases.h:
src/http/../core/clock.h:
src/http/../core/stats.h:
src/http/../core/shm.h:
src/http/../conf/cycle.h:
src/http/../conf/zone.h:
src/http/../conf/conf.h:
src/http/../conf/../core/shm.h:
src/http/../conf/../core/slab.h:
src/http/limit_req.h:
src/http/limit_table.h:
src/http/../core/slab.h:
src/http/limit_conn.h:
