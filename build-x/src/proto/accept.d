build-x/src/proto/accept.o: src/proto/accept.c src/proto/accept.h \
 src/proto/../http/conn.h src/proto/../http/../core/hayate.h \
 src/proto/../http/../core/types.h src/proto/../http/../core/str.h \
 src/proto/../http/../core/types.h src/proto/../http/../event/sock.h \
 src/proto/../http/../event/loop.h \
 src/proto/../http/../event/../core/hayate.h \
 src/proto/../http/../event/../core/types.h \
 src/proto/../http/../event/../core/buf.h \
 src/proto/../http/../event/../core/hayate.h \
 src/proto/../http/../event/../core/types.h \
 src/proto/../http/../event/../core/outq.h \
 src/proto/../http/../event/../core/str.h \
 src/proto/../http/../event/listen.h \
 src/proto/../http/../event/proxy_protocol.h src/proto/h1.h \
 src/proto/h2.h src/proto/../core/log.h src/proto/../core/hayate.h \
 src/proto/../core/types.h src/proto/../core/mem.h \
 src/proto/../http/core.h src/proto/../http/../core/regex.h \
 src/proto/../http/../core/mem.h src/proto/../http/../core/str.h \
 src/proto/../http/../conf/conf.h \
 src/proto/../http/../conf/../core/hayate.h \
 src/proto/../http/../conf/../core/types.h \
 src/proto/../http/../conf/../core/str.h \
 src/proto/../http/../conf/../core/mem.h src/proto/../event/tls.h \
 src/proto/../event/sock.h src/proto/../http/ssl_module.h \
 src/proto/../http/core.h src/proto/../http/ssl-t.h
src/proto/accept.h:
src/proto/../http/conn.h:
src/proto/../http/../core/hayate.h:
src/proto/../http/../core/types.h:
src/proto/../http/../core/str.h:
src/proto/../http/../core/types.h:
src/proto/../http/../event/sock.h:
src/proto/../http/../event/loop.h:
src/proto/../http/../event/../core/hayate.h:
src/proto/../http/../event/../core/types.h:
src/proto/../http/../event/../core/buf.h:
src/proto/../http/../event/../core/hayate.h:
src/proto/../http/../event/../core/types.h:
src/proto/../http/../event/../core/outq.h:
src/proto/../http/../event/../core/str.h:
src/proto/../http/../event/listen.h:
src/proto/../http/../event/proxy_protocol.h:
src/proto/h1.h:
src/proto/h2.h:
src/proto/../core/log.h:
src/proto/../core/hayate.h:
src/proto/../core/types.h:
src/proto/../core/mem.h:
src/proto/../http/core.h:
src/proto/../http/../core/regex.h:
src/proto/../http/../core/mem.h:
src/proto/../http/../core/str.h:
src/proto/../http/../conf/conf.h:
src/proto/../http/../conf/../core/hayate.h:
src/proto/../http/../conf/../core/types.h:
src/proto/../http/../conf/../core/str.h:
src/proto/../http/../conf/../core/mem.h:
src/proto/../event/tls.h:
src/proto/../event/sock.h:
src/proto/../http/ssl_module.h:
src/proto/../http/core.h:
src/proto/../http/ssl-t.h:
