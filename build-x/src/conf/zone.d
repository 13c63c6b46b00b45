build-x/src/conf/zone.o: src/conf/zone.c src/conf/zone.h src/conf/conf.h \
 src/conf/../core/hayate.h src/conf/../core/types.h \
 src/conf/../core/str.h src/conf/../core/types.h src/conf/../core/mem.h \
 src/conf/../core/hayate.h src/conf/../core/shm.h src/conf/../core/slab.h \
 src/conf/cycle.h src/conf/../core/log.h
src/conf/zone.h:
src/conf/conf.h:
src/conf/../core/hayate.h:
src/conf/../core/types.h:
src/conf/../core/str.h:
src/conf/../core/types.h:
src/conf/../core/mem.h:
src/conf/../core/hayate.h:
src/conf/../core/shm.h:
src/conf/../core/slab.h:
src/conf/cycle.h:
src/conf/../core/log.h:
