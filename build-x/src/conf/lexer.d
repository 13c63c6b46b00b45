build-x/src/conf/lexer.o: src/conf/lexer.c src/conf/lexer.h \
 src/conf/conf.h src/conf/../core/hayate.h src/conf/../core/types.h \
 src/conf/../core/str.h src/conf/../core/types.h src/conf/../core/mem.h \
 src/conf/../core/hayate.h
src/conf/lexer.h:
src/conf/conf.h:
src/conf/../core/hayate.h:
src/conf/../core/types.h:
src/conf/../core/str.h:
src/conf/../core/types.h:
src/conf/../core/mem.h:
src/conf/../core/hayate.h:
