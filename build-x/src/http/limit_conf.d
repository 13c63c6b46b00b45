build-x/src/http/limit_conf.o: src/http/limit_conf.c \
 src/http/limit_conf.h src/http/../conf/conf.h \
 src/http/../conf/../core/hayate.h src/http/../conf/../core/types.h \
 src/http/../conf/../core/str.h src/http/../conf/../core/types.h \
 src/http/../conf/../core/mem.h src/http/../conf/../core/hayate.h \
 src/http/../core/log.h src/http/../core/hayate.h \
 src/http/../core/types.h src/http/../core/mem.h
src/http/limit_conf.h:
src/http/../conf/conf.h:
src/http/../conf/../core/hayate.h:
src/http/../conf/../core/types.h:
src/http/../conf/../core/str.h:
src/http/../conf/../core/types.h:
src/http/../conf/../core/mem.h:
src/http/../conf/../core/hayate.h:
src/http/../core/log.h:
src/http/../core/hayate.h:
src/http/../core/types.h:
src/http/../core/mem.h:
