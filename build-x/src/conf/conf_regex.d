build-x/src/conf/conf_regex.o: src/conf/conf_regex.c \
 src/conf/conf_regex.h src/conf/conf.h src/conf/../core/hayate.h \
 src/conf/../core/types.h src/conf/../core/str.h src/conf/../core/types.h \
 src/conf/../core/mem.h src/conf/../core/hayate.h \
 src/conf/../core/regex.h src/conf/../core/mem.h src/conf/../core/str.h
src/conf/conf_regex.h:
src/conf/conf.h:
src/conf/../core/hayate.h:
src/conf/../core/types.h:
src/conf/../core/str.h:
src/conf/../core/types.h:
src/conf/../core/mem.h:
src/conf/../core/hayate.h:
src/conf/../core/regex.h:
src/conf/../core/mem.h:
src/conf/../core/str.h:
