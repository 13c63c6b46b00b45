build-x/src/http/server.o: src/http/server.c src/http/core.h \
 src/http/../core/regex.h src/http/../core/mem.h \
 src/http/../core/hayate.h src/http/../core/types.h \
 src/http/../core/str.h src/http/../conf/conf.h \
 src/http/../conf/../core/hayate.h src/http/../conf/../core/types.h \
 src/http/../conf/../core/str.h src/http/../conf/../core/mem.h \
 src/http/../event/listen.h src/http/../event/loop.h \
 src/http/../event/../core/hayate.h src/http/../event/../core/types.h
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
