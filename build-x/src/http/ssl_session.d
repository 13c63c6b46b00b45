build-x/src/http/ssl_session.o: src/http/ssl_session.c \
 src/http/ssl_session.h src/http/ssl-t.h src/http/core.h \
 src/http/../core/regex.h src/http/../core/mem.h \
 src/http/../core/hayate.h src/http/../core/types.h \
 src/http/../core/str.h src/http/../conf/conf.h \
 src/http/../conf/../core/hayate.h src/http/../conf/../core/types.h \
 src/http/../conf/../core/str.h src/http/../conf/../core/mem.h \
 src/http/../event/listen.h src/http/../event/loop.h \
 src/http/../event/../core/hayate.h src/http/../event/../core/types.h \
 src/http/../conf/zone.h src/http/../conf/conf.h \
 src/http/../conf/../core/shm.h src/http/../conf/../core/hayate.h \
 src/http/../conf/../core/slab.h src/http/../core/clock.h \
 src/http/../core/log.h src/http/../core/slab.h
src/http/ssl_session.h:
src/http/ssl-t.h:
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
src/http/../conf/zone.h:
src/http/../conf/conf.h:
src/http/../conf/../core/shm.h:
src/http/../conf/../core/hayate.h:
src/http/../conf/../core/slab.h:
src/http/../core/clock.h:
src/http/../core/log.h:
src/http/../core/slab.h:
