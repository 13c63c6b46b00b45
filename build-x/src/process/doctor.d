build-x/src/process/doctor.o: src/process/doctor.c src/process/process.h \
 src/process/../conf/cycle.h src/process/../conf/../core/hayate.h \
 src/process/../conf/../core/types.h src/process/../conf/../core/str.h \
 src/process/../conf/../core/types.h src/process/../conf/../core/mem.h \
 src/process/../conf/../core/hayate.h src/process/perms.h \
 src/process/core_conf.h src/process/../conf/conf.h src/process/limits.h \
 src/process/../http/core.h src/process/../http/../core/regex.h \
 src/process/../http/../core/mem.h src/process/../http/../core/str.h \
 src/process/../http/../conf/conf.h src/process/../http/../event/listen.h \
 src/process/../http/../event/loop.h \
 src/process/../http/../event/../core/hayate.h \
 src/process/../http/../event/../core/types.h \
 src/process/../event/listen.h
src/process/process.h:
src/process/../conf/cycle.h:
src/process/../conf/../core/hayate.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/str.h:
src/process/../conf/../core/types.h:
src/process/../conf/../core/mem.h:
src/process/../conf/../core/hayate.h:
src/process/perms.h:
src/process/core_conf.h:
src/process/../conf/conf.h:
src/process/limits.h:
src/process/../http/core.h:
src/process/../http/../core/regex.h:
src/process/../http/../core/mem.h:
src/process/../http/../core/str.h:
src/process/../http/../conf/conf.h:
src/process/../http/../event/listen.h:
src/process/../http/../event/loop.h:
src/process/../http/../event/../core/hayate.h:
src/process/../http/../event/../core/types.h:
src/process/../event/listen.h:
