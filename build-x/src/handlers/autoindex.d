build-x/src/handlers/autoindex.o: src/handlers/autoindex.c \
 src/handlers/autoindex.h src/handlers/../core/str.h \
 src/handlers/../core/types.h src/handlers/../conf/conf.h \
 src/handlers/../conf/../core/hayate.h \
 src/handlers/../conf/../core/types.h src/handlers/../conf/../core/str.h \
 src/handlers/../conf/../core/mem.h src/handlers/../conf/../core/hayate.h \
 src/handlers/../conf/../core/types.h src/handlers/../core/hayate.h \
 src/handlers/../core/httpdate.h src/handlers/../http/phases.h \
 src/handlers/../http/../conf/conf.h src/handlers/../http/../core/str.h \
 src/handlers/../http/path.h src/handlers/../http/request.h \
 src/handlers/../http/../core/hayate.h \
 src/handlers/../http/../core/types.h src/handlers/../http/../core/mem.h \
 src/handlers/../http/../core/outq.h \
 src/handlers/../http/../core/hayate.h \
 src/handlers/../http/../core/types.h \
 src/handlers/../http/../core/regex.h src/handlers/../http/../core/mem.h \
 src/handlers/../http/../core/str.h src/handlers/../http/core.h \
 src/handlers/../http/../event/listen.h \
 src/handlers/../http/../event/loop.h \
 src/handlers/../http/../event/../core/hayate.h \
 src/handlers/../http/../event/../core/types.h \
 src/handlers/../http/conn.h src/handlers/../http/../event/sock.h \
 src/handlers/../http/../event/../core/buf.h \
 src/handlers/../http/../event/../core/hayate.h \
 src/handlers/../http/../event/../core/types.h \
 src/handlers/../http/../event/../core/outq.h \
 src/handlers/../http/../event/../core/str.h \
 src/handlers/../http/../event/proxy_protocol.h \
 src/handlers/../http/../event/loop.h \
 src/handlers/../http/open_file_cache.h \
 src/handlers/../http/../core/file.h src/handlers/../core/log.h \
 src/handlers/../core/hayate.h
src/handlers/autoindex.h:
src/handlers/../core/str.h:
src/handlers/../core/types.h:
src/handlers/../conf/conf.h:
src/handlers/../conf/../core/hayate.h:
src/handlers/../conf/../core/types.h:
src/handlers/../conf/../core/str.h:
src/handlers/../conf/../core/mem.h:
src/handlers/../conf/../core/hayate.h:
src/handlers/../conf/../core/types.h:
src/handlers/../core/hayate.h:
src/handlers/../core/httpdate.h:
src/handlers/../http/phases.h:
src/handlers/../http/../conf/conf.h:
src/handlers/../http/../core/str.h:
src/handlers/../http/path.h:
src/handlers/../http/request.h:
src/handlers/../http/../core/hayate.h:
src/handlers/../http/../core/types.h:
src/handlers/../http/../core/mem.h:
src/handlers/../http/../core/outq.h:
src/handlers/../http/../core/hayate.h:
src/handlers/../http/../core/types.h:
src/handlers/../http/../core/regex.h:
src/handlers/../http/../core/mem.h:
src/handlers/../http/../core/str.h:
src/handlers/../http/core.h:
src/handlers/../http/../event/listen.h:
src/handlers/../http/../event/loop.h:
src/handlers/../http/../event/../core/hayate.h:
src/handlers/../http/../event/../core/types.h:
src/handlers/../http/conn.h:
src/handlers/../http/../event/sock.h:
src/handlers/../http/../event/../core/buf.h:
src/handlers/../http/../event/../core/hayate.h:
src/handlers/../http/../event/../core/types.h:
src/handlers/../http/../event/../core/outq.h:
src/handlers/../http/../event/../core/str.h:
src/handlers/../http/../event/proxy_protocol.h:
src/handlers/../http/../event/loop.h:
src/handlers/../http/open_file_cache.h:
src/handlers/../http/../core/file.h:
src/handlers/../core/log.h:
src/handlers/../core/hayate.h:
