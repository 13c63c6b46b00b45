build-x/src/filters/gzip.o: src/filters/gzip.c src/filters/gzip.h \
 src/filters/../http/request.h src/filters/../http/../core/hayate.h \
 src/filters/../http/../core/types.h src/filters/../http/../core/str.h \
 src/filters/../http/../core/types.h src/filters/../http/../core/mem.h \
 src/filters/../http/../core/hayate.h src/filters/../http/../core/outq.h \
 src/filters/../http/../core/regex.h src/filters/../http/../core/mem.h \
 src/filters/../http/../core/str.h src/filters/../http/core.h \
 src/filters/../http/../conf/conf.h \
 src/filters/../http/../conf/../core/hayate.h \
 src/filters/../http/../conf/../core/types.h \
 src/filters/../http/../conf/../core/str.h \
 src/filters/../http/../conf/../core/mem.h \
 src/filters/../http/../event/listen.h \
 src/filters/../http/../event/loop.h \
 src/filters/../http/../event/../core/hayate.h \
 src/filters/../http/../event/../core/types.h src/filters/../http/conn.h \
 src/filters/../http/../event/sock.h \
 src/filters/../http/../event/../core/buf.h \
 src/filters/../http/../event/../core/hayate.h \
 src/filters/../http/../event/../core/types.h \
 src/filters/../http/../event/../core/outq.h \
 src/filters/../http/../event/../core/str.h \
 src/filters/../http/../event/proxy_protocol.h \
 src/filters/../http/../event/loop.h src/filters/../core/file.h \
 src/filters/../core/hayate.h src/filters/../core/types.h \
 src/filters/compress.h src/filters/accept_encoding.h \
 src/filters/compress_cache.h src/filters/../conf/cycle.h \
 src/filters/../conf/../core/hayate.h src/filters/../conf/../core/types.h \
 src/filters/../conf/../core/str.h src/filters/../conf/../core/mem.h \
 src/filters/../conf/conf_regex.h src/filters/../conf/conf.h \
 src/filters/../conf/../core/regex.h src/filters/../core/httpdate.h \
 src/filters/../core/clock.h src/filters/../core/log.h
src/filters/gzip.h:
src/filters/../http/request.h:
src/filters/../http/../core/hayate.h:
src/filters/../http/../core/types.h:
src/filters/../http/../core/str.h:
src/filters/../http/../core/types.h:
src/filters/../http/../core/mem.h:
src/filters/../http/../core/hayate.h:
src/filters/../http/../core/outq.h:
src/filters/../http/../core/regex.h:
src/filters/../http/../core/mem.h:
src/filters/../http/../core/str.h:
src/filters/../http/core.h:
src/filters/../http/../conf/conf.h:
src/filters/../http/../conf/../core/hayate.h:
src/filters/../http/../conf/../core/types.h:
src/filters/../http/../conf/../core/str.h:
src/filters/../http/../conf/../core/mem.h:
src/filters/../http/../event/listen.h:
src/filters/../http/../event/loop.h:
src/filters/../http/../event/../core/hayate.h:
src/filters/../http/../event/../core/types.h:
src/filters/../http/conn.h:
src/filters/../http/../event/sock.h:
src/filters/../http/../event/../core/buf.h:
src/filters/../http/../event/../core/hayate.h:
src/filters/../http/../event/../core/types.h:
src/filters/../http/../event/../core/outq.h:
src/filters/../http/../event/../core/str.h:
src/filters/../http/../event/proxy_protocol.h:
src/filters/../http/../event/loop.h:
src/filters/../core/file.h:
src/filters/../core/hayate.h:
src/filters/../core/types.h:
src/filters/compress.h:
src/filters/accept_encoding.h:
src/filters/compress_cache.h:
src/filters/../conf/cycle.h:
src/filters/../conf/../core/hayate.h:
src/filters/../conf/../core/types.h:
src/filters/../conf/../core/str.h:
src/filters/../conf/../core/mem.h:
src/filters/../conf/conf_regex.h:
src/filters/../conf/conf.h:
src/filters/../conf/../core/regex.h:
src/filters/../core/httpdate.h:
src/filters/../core/clock.h:
src/filters/../core/log.h:
