build-x/src/main.o: src/main.c src/core/hayate.h src/core/log.h \
 src/core/hayate.h src/core/types.h src/core/mem.h src/core/paths.h \
 src/process/process.h src/process/../conf/cycle.h \
 src/process/../conf/../core/hayate.h src/process/../conf/../core/types.h \
 src/process/../conf/../core/str.h src/process/../conf/../core/types.h \
 src/process/../conf/../core/mem.h src/process/core_conf.h \
 src/process/../conf/conf.h src/process/title.h src/conf/lexer.h \
 src/conf/conf.h
src/core/hayate.h:
src/core/log.h:
src/core/hayate.h:
src/core/types.h:
src/core/mem.h:
src/core/paths.h:
src/process/process.h:
src/process/../conf/cycle.h:
src/process/../conf/../core/hayate.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/str.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/mem.h:
src/process/core_conf.h:
src/process/../conf/conf.h:
src/process/title.h:
src/conf/lexer.h:
src/conf/conf.h:
