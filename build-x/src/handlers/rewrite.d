build-x/src/handlers/rewrite.o: src/handlers/rewrite.c \
 src/handlers/rewrite.h src/handlers/../http/request.h \
 src/handlers/../http/../core/hayate.h \
 src/handlers/../http/../core/types.h src/handlers/../http/../core/str.h \
 src/handlers/../http/../core/types.h src/handlers/../http/../core/mem.h \
 src/handlers/../http/../core/hayate.h \
 src/handlers/../http/../core/outq.h src/handlers/../http/../core/regex.h \
 src/handlers/../http/../core/mem.h src/handlers/../http/../core/str.h \
 src/handlers/../http/core.h src/handlers/../http/../conf/conf.h \
 src/handlers/../http/../conf/../core/hayate.h \
 src/handlers/../http/../conf/../core/types.h \
 src/handlers/../http/../conf/../core/str.h \
 src/handlers/../http/../conf/../core/mem.h \
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
 src/handlers/../http/../event/loop.h src/handlers/../http/phases.h \
 src/handlers/../http/vars.h src/handlers/../http/request.h \
 src/handlers/../http/vars-t.h src/handlers/../http/vars_builtin.h \
 src/handlers/../http/../conf/suggest.h src/handlers/../http/limit_rate.h \
 src/handlers/../conf/cycle.h src/handlers/../conf/../core/hayate.h \
 src/handlers/../conf/../core/types.h src/handlers/../conf/../core/str.h \
 src/handlers/../conf/../core/mem.h src/handlers/../conf/conf_regex.h \
 src/handlers/../conf/conf.h src/handlers/../conf/../core/regex.h \
 src/handlers/../core/log.h src/handlers/../core/hayate.h \
 src/handlers/../core/types.h
src/handlers/rewrite.h:
src/handlers/../http/request.h:
src/handlers/../http/../core/hayate.h:
src/handlers/../http/../core/types.h:
src/handlers/../http/../core/str.h:
src/handlers/../http/../core/types.h:
src/handlers/../http/../core/mem.h:
src/handlers/../http/../core/hayate.h:
src/handlers/../http/../core/outq.h:
src/handlers/../http/../core/regex.h:
src/handlers/../http/../core/mem.h:
src/handlers/../http/../core/str.h:
src/handlers/../http/core.h:
src/handlers/../http/../conf/conf.h:
src/handlers/../http/../conf/../core/hayate.h:
src/handlers/../http/../conf/../core/types.h:
src/handlers/../http/../conf/../core/str.h:
src/handlers/../http/../conf/../core/mem.h:
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
src/handlers/../http/phases.h:
src/handlers/../http/vars.h:
src/handlers/../http/request.h:
src/handlers/../http/vars-t.h:
src/handlers/../http/vars_builtin.h:
src/handlers/../http/../conf/suggest.h:
src/handlers/../http/limit_rate.h:
src/handlers/../conf/cycle.h:
src/handlers/../conf/../core/hayate.h:
src/handlers/../conf/../core/types.h:
src/handlers/../conf/../core/str.h:
src/handlers/../conf/../core/mem.h:
src/handlers/../conf/conf_regex.h:
src/handlers/../conf/conf.h:
src/handlers/../conf/../core/regex.h:
src/handlers/../core/log.h:
src/handlers/../core/hayate.h:
src/handlers/../core/types.h:
