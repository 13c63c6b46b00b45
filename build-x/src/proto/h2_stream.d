build-x/src/proto/h2_stream.o: src/proto/h2_stream.c src/proto/h2_int.h \
 src/proto/h2_compat.h src/proto/../http/conn.h \
 src/proto/../http/../core/hayate.h src/proto/../http/../core/types.h \
 src/proto/../http/../core/str.h src/proto/../http/../core/types.h \
 src/proto/../http/../event/sock.h src/proto/../http/../event/loop.h \
 src/proto/../http/../event/../core/hayate.h \
 src/proto/../http/../event/../core/types.h \
 src/proto/../http/../event/../core/buf.h \
 src/proto/../http/../event/../core/hayate.h \
 src/proto/../http/../event/../core/types.h \
 src/proto/../http/../event/../core/outq.h \
 src/proto/../http/../event/../core/str.h \
 src/proto/../http/../event/listen.h \
 src/proto/../http/../event/proxy_protocol.h src/proto/../http/request.h \
 src/proto/../http/../core/mem.h src/proto/../http/../core/hayate.h \
 src/proto/../http/../core/outq.h src/proto/../http/../core/regex.h \
 src/proto/../http/../core/mem.h src/proto/../http/../core/str.h \
 src/proto/../http/core.h src/proto/../http/../conf/conf.h \
 src/proto/../http/../conf/../core/hayate.h \
 src/proto/../http/../conf/../core/types.h \
 src/proto/../http/../conf/../core/str.h \
 src/proto/../http/../conf/../core/mem.h src/proto/../http/conn.h \
 src/proto/../http/../event/loop.h src/proto/../http/http2_module.h \
 src/proto/../http/body.h src/proto/../http/request.h \
 src/proto/../core/file.h src/proto/../core/hayate.h \
 src/proto/../core/types.h src/proto/../core/log.h \
 src/proto/../core/clock.h
src/proto/h2_int.h:
src/proto/h2_compat.h:
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
src/proto/../http/request.h:
src/proto/../http/../core/mem.h:
src/proto/../http/../core/hayate.h:
src/proto/../http/../core/outq.h:
src/proto/../http/../core/regex.h:
src/proto/../http/../core/mem.h:
src/proto/../http/../core/str.h:
src/proto/../http/core.h:
src/proto/../http/../conf/conf.h:
src/proto/../http/../conf/../core/hayate.h:
src/proto/../http/../conf/../core/types.h:
src/proto/../http/../conf/../core/str.h:
src/proto/../http/../conf/../core/mem.h:
src/proto/../http/conn.h:
src/proto/../http/../event/loop.h:
src/proto/../http/http2_module.h:
src/proto/../http/body.h:
src/proto/../http/request.h:
src/proto/../core/file.h:
src/proto/../core/hayate.h:
src/proto/../core/types.h:
src/proto/../core/log.h:
src/proto/../core/clock.h:
