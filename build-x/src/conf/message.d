build-x/src/conf/message.o: src/conf/message.c src/conf/conf.h \
 src/conf/../core/hayate.h src/conf/../core/types.h \
 src/conf/../core/str.h src/conf/../core/types.h src/conf/../core/mem.h \
 src/conf/../core/hayate.h
src/conf/conf.h:
src/conf/../core/hayate.h:
src/conf/../core/types.h:
src/conf/../core/str.h:
src/conf/../core/types.h:
src/conf/../core/mem.h:
src/conf/../core/hayate.h:
