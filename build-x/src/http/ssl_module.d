build-x/src/http/ssl_module.o: src/http/ssl_module.c \
 src/http/ssl_module.h src/http/core.h src/http/../core/regex.h \
 src/http/../core/mem.h src/http/../core/hayate.h \
 src/http/../core/types.h src/http/../core/str.h src/http/../conf/conf.h \
 src/http/../conf/../core/hayate.h src/http/../conf/../core/types.h \
 src/http/../conf/../core/str.h src/http/../conf/../core/mem.h \
 src/http/../event/listen.h src/http/../event/loop.h \
 src/http/../event/../core/hayate.h src/http/../event/../core/types.h \
 src/http/ssl-t.h src/http/http2_module.h src/http/ssl_session.h \
 src/http/conn.h src/http/../core/hayate.h src/http/../core/types.h \
 src/http/../core/str.h src/http/../event/sock.h \
 src/http/../event/../core/buf.h src/http/../event/../core/hayate.h \
 src/http/../event/../core/types.h src/http/../event/../core/outq.h \
 src/http/../event/../core/str.h src/http/../event/proxy_protocol.h \
 src/http/request.h src/http/../core/mem.h src/http/../core/outq.h \
 src/http/../event/loop.h src/http/phases.h src/http/vars.h \
 src/http/vars-t.h src/http/vars_builtin.h src/http/../conf/suggest.h \
 src/http/../conf/cycle.h src/http/../core/log.h src/http/../event/tls.h \
 src/http/../event/sock.h
src/http/ssl_module.h:
src/http/core.h:
src/http/../core/regex.h:
src/http/../core/mem.h:
src/http/../core/hayate.h:
src/http/../core/types.h:
src/http/../core/str.h:
src/http/../conf/conf.h:
src/http/../conf/../core/hayate.h:
src/http/../conf/../core/types.h:
src/http/../conf/../core/str.h:
src/http/../conf/../core/mem.h:
src/http/../event/listen.h:
src/http/../event/loop.h:
src/http/../event/../core/hayate.h:
src/http/../event/../core/types.h:
src/http/ssl-t.h:
src/http/http2_module.h:
src/http/ssl_session.h:
src/http/conn.h:
src/http/../core/hayate.h:
src/http/../core/types.h:
src/http/../core/str.h:
src/http/../event/sock.h:
src/http/../event/../core/buf.h:
src/http/../event/../core/hayate.h:
src/http/../event/../core/types.h:
src/http/../event/../core/outq.h:
src/http/../event/../core/str.h:
src/http/../event/proxy_protocol.h:
src/http/request.h:
src/http/../core/mem.h:
src/http/../core/outq.h:
src/http/../event/loop.h:
src/http/phases.h:
src/http/vars.h:
src/http/vars-t.h:
src/http/vars_builtin.h:
src/http/../conf/suggest.h:
src/http/../conf/cycle.h:
src/http/../core/log.h:
src/http/../event/tls.h:
src/http/../event/sock.h:
