build-x/src/process/modules.o: src/process/modules.c \
 src/process/../conf/conf.h src/process/../conf/../core/hayate.h \
 src/process/../conf/../core/types.h src/process/../conf/../core/str.h \
 src/process/../conf/../core/types.h src/process/../conf/../core/mem.h \
 src/process/../conf/../core/hayate.h src/process/core_conf.h \
 src/process/../conf/cycle.h src/process/../http/core.h \
 src/process/../http/../core/regex.h src/process/../http/../core/mem.h \
 src/process/../http/../core/str.h src/process/../http/../conf/conf.h \
 src/process/../http/../event/listen.h \
 src/process/../http/../event/loop.h \
 src/process/../http/../event/../core/hayate.h \
 src/process/../http/../event/../core/types.h \
 src/process/../http/ssl_module.h src/process/../http/core.h \
 src/process/../http/ssl-t.h src/process/../http/http2_module.h \
 src/process/../handlers/index.h \
 src/process/../handlers/../http/request.h \
 src/process/../handlers/../http/../core/hayate.h \
 src/process/../handlers/../http/../core/types.h \
 src/process/../handlers/../http/../core/str.h \
 src/process/../handlers/../http/../core/mem.h \
 src/process/../handlers/../http/../core/outq.h \
 src/process/../handlers/../http/../core/hayate.h \
 src/process/../handlers/../http/../core/types.h \
 src/process/../handlers/../http/../core/regex.h \
 src/process/../handlers/../http/core.h \
 src/process/../handlers/../http/conn.h \
 src/process/../handlers/../http/../event/sock.h \
 src/process/../handlers/../http/../event/loop.h \
 src/process/../handlers/../http/../event/../core/buf.h \
 src/process/../handlers/../http/../event/../core/hayate.h \
 src/process/../handlers/../http/../event/../core/types.h \
 src/process/../handlers/../http/../event/../core/outq.h \
 src/process/../handlers/../http/../event/../core/str.h \
 src/process/../handlers/../http/../event/listen.h \
 src/process/../handlers/../http/../event/proxy_protocol.h \
 src/process/../handlers/../http/../event/loop.h \
 src/process/../handlers/autoindex.h \
 src/process/../handlers/../core/str.h \
 src/process/../handlers/../conf/conf.h \
 src/process/../filters/gzip_static.h \
 src/process/../filters/../http/request.h \
 src/process/../handlers/static.h src/process/../http/vars.h \
 src/process/../http/request.h src/process/../http/vars-t.h \
 src/process/../http/../core/str.h src/process/../http/../core/types.h \
 src/process/../http/vars_builtin.h src/process/../http/../conf/suggest.h \
 src/process/../filters/gzip.h src/process/../filters/../core/file.h \
 src/process/../filters/../core/hayate.h \
 src/process/../filters/../core/types.h src/process/../http/error_page.h \
 src/process/../filters/headers.h src/process/../filters/not_modified.h \
 src/process/../filters/range_filter.h src/process/../handlers/rewrite.h \
 src/process/../handlers/try_files.h src/process/../handlers/empty_gif.h \
 src/process/../http/split_clients.h src/process/../http/secure_link.h \
 src/process/../http/realip.h src/process/../http/stub_status.h \
 src/process/../http/metrics.h src/process/../http/limit_req.h \
 src/process/../http/../conf/zone.h src/process/../http/../conf/conf.h \
 src/process/../http/../conf/../core/shm.h \
 src/process/../http/../conf/../core/hayate.h \
 src/process/../http/../conf/../core/slab.h \
 src/process/../http/limit_table.h src/process/../http/../core/slab.h \
 src/process/../http/limit_conn.h src/process/../http/limit_rate.h \
 src/process/../http/access.h src/process/../http/auth_basic.h
src/process/../conf/conf.h:
src/process/../conf/../core/hayate.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/str.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/mem.h:
src/process/../conf/../core/hayate.h:
src/process/core_conf.h:
src/process/../conf/cycle.h:
src/process/../http/core.h:
src/process/../http/../core/regex.h:
src/process/../http/../core/mem.h:
src/process/../http/../core/str.h:
src/process/../http/../conf/conf.h:
src/process/../http/../event/listen.h:
src/process/../http/../event/loop.h:
src/process/../http/../event/../core/hayate.h:
src/process/../http/../event/../core/types.h:
src/process/../http/ssl_module.h:
src/process/../http/core.h:
src/process/../http/ssl-t.h:
src/process/../http/http2_module.h:
src/process/../handlers/index.h:
src/process/../handlers/../http/request.h:
src/process/../handlers/../http/../core/hayate.h:
src/process/../handlers/../http/../core/types.h:
src/process/../handlers/../http/../core/str.h:
src/process/../handlers/../http/../core/mem.h:
src/process/../handlers/../http/../core/outq.h:
src/process/../handlers/../http/../core/hayate.h:
src/process/../handlers/../http/../core/types.h:
src/process/../handlers/../http/../core/regex.h:
src/process/../handlers/../http/core.h:
src/process/../handlers/../http/conn.h:
src/process/../handlers/../http/../event/sock.h:
src/process/../handlers/../http/../event/loop.h:
src/process/../handlers/../http/../event/../core/buf.h:
src/process/../handlers/../http/../event/../core/hayate.h:
src/process/../handlers/../http/../event/../core/types.h:
src/process/../handlers/../http/../event/../core/outq.h:
src/process/../handlers/../http/../event/../core/str.h:
src/process/../handlers/../http/../event/listen.h:
src/process/../handlers/../http/../event/proxy_protocol.h:
src/process/../handlers/../http/../event/loop.h:
src/process/../handlers/autoindex.h:
src/process/../handlers/../core/str.h:
src/process/../handlers/../conf/conf.h:
src/process/../filters/gzip_static.h:
src/process/../filters/../http/request.h:
src/process/../handlers/static.h:
src/process/../http/vars.h:
src/process/../http/request.h:
src/process/../http/vars-t.h:
src/process/../http/../core/str.h:
src/process/../http/../core/types.h:
src/process/../http/vars_builtin.h:
src/process/../http/../conf/suggest.h:
src/process/../filters/gzip.h:
src/process/../filters/../core/file.h:
src/process/../filters/../core/hayate.h:
src/process/../filters/../core/types.h:
src/process/../http/error_page.h:
src/process/../filters/headers.h:
src/process/../filters/not_modified.h:
src/process/../filters/range_filter.h:
src/process/../handlers/rewrite.h:
src/process/../handlers/try_files.h:
src/process/../handlers/empty_gif.h:
src/process/../http/split_clients.h:
src/process/../http/secure_link.h:
src/process/../http/realip.h:
src/process/../http/stub_status.h:
src/process/../http/metrics.h:
src/process/../http/limit_req.h:
src/process/../http/../conf/zone.h:
src/process/../http/../conf/conf.h:
src/process/../http/../conf/../core/shm.h:
src/process/../http/../conf/../core/hayate.h:
src/process/../http/../conf/../core/slab.h:
src/process/../http/limit_table.h:
src/process/../http/../core/slab.h:
src/process/../http/limit_conn.h:
src/process/../http/limit_rate.h:
src/process/../http/access.h:
src/process/../http/auth_basic.h:
