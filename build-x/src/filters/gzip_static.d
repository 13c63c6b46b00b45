build-x/src/filters/gzip_static.o: src/filters/gzip_static.c \
 src/filters/gzip_static.h src/filters/../http/request.h \
 src/filters/../http/../core/hayate.h src/filters/../http/../core/types.h \
 src/filters/../http/../core/str.h src/filters/../http/../core/types.h \
 src/filters/../http/../core/mem.h src/filters/../http/../core/hayate.h \
 src/filters/../http/../core/outq.h src/filters/../http/../core/regex.h \
 src/filters/../http/../core/mem.h src/filters/../http/../core/str.h \
 src/filters/../http/core.h src/filters/../http/../conf/conf.h \
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
 src/filters/../http/../event/loop.h src/filters/gzip.h \
 src/filters/../core/file.h src/filters/../core/hayate.h \
 src/filters/../core/types.h src/filters/../http/phases.h \
 src/filters/../http/path.h src/filters/../http/request.h \
 src/filters/../http/open_file_cache.h src/filters/../http/../core/file.h
src/filters/gzip_static.h:
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
src/filters/gzip.h:
src/filters/../core/file.h:
src/filters/../core/hayate.h:
src/filters/../core/types.h:
src/filters/../http/phases.h:
src/filters/../http/path.h:
src/filters/../http/request.h:
src/filters/../http/open_file_cache.h:
src/filters/../http/../core/file.h:
