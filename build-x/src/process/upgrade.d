build-x/src/process/upgrade.o: src/process/upgrade.c \
 src/process/upgrade.h src/process/lset.h src/process/../conf/cycle.h \
 src/process/../conf/../core/hayate.h src/process/../conf/../core/types.h \
 src/process/../conf/../core/str.h src/process/../conf/../core/types.h \
 src/process/../conf/../core/mem.h src/process/../conf/../core/hayate.h \
 src/process/../event/listen.h src/process/../event/loop.h \
 src/process/../event/../core/hayate.h \
 src/process/../event/../core/types.h src/process/title.h \
 src/process/../core/coverage.h src/process/../core/log.h \
 src/process/../core/hayate.h src/process/../core/types.h \
 src/process/../core/mem.h src/process/../http/core.h \
 src/process/../http/../core/regex.h src/process/../http/../core/mem.h \
 src/process/../http/../core/str.h src/process/../http/../conf/conf.h \
 src/process/../http/../conf/../core/hayate.h \
 src/process/../http/../conf/../core/types.h \
 src/process/../http/../conf/../core/str.h \
 src/process/../http/../conf/../core/mem.h \
 src/process/../http/../event/listen.h
src/process/upgrade.h:
src/process/lset.h:
src/process/../conf/cycle.h:
src/process/../conf/../core/hayate.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/str.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/mem.h:
src/process/../conf/../core/hayate.h:
src/process/../event/listen.h:
src/process/../event/loop.h:
src/process/../event/../core/hayate.h:
src/process/../event/../core/types.h:
src/process/title.h:
src/process/../core/coverage.h:
src/process/../core/log.h:
src/process/../core/hayate.h:
src/process/../core/types.h:
src/process/../core/mem.h:
src/process/../http/core.h:
src/process/../http/../core/regex.h:
src/process/../http/../core/mem.h:
src/process/../http/../core/str.h:
src/process/../http/../conf/conf.h:
src/process/../http/../conf/../core/hayate.h:
src/process/../http/../conf/../core/types.h:
src/process/../http/../conf/../core/str.h:
src/process/../http/../conf/../core/mem.h:
src/process/../http/../event/listen.h:
