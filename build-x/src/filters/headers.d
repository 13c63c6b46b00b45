build-x/src/filters/headers.o: src/filters/headers.c \
 src/filters/headers.h src/filters/../http/request.h \
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
 src/filters/../http/../event/loop.h src/filters/../http/vars.h \
 src/filters/../http/request.h src/filters/../http/vars-t.h \
 src/filters/../http/vars_builtin.h src/filters/../http/../conf/suggest.h \
 src/filters/../core/httpdate.h src/filters/../core/clock.h
src/filters/headers.h:
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
src/filters/../http/vars.h:
src/filters/../http/request.h:
src/filters/../http/vars-t.h:
src/filters/../http/vars_builtin.h:
src/filters/../http/../conf/suggest.h:
src/filters/../core/httpdate.h:
src/filters/../core/clock.h:
